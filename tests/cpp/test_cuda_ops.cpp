// Every CUDA primitive against the CPU op (itself checked against the float64 references in
// test_ops.cpp), on fresh random inputs: power-law degrees (a hub row long enough for the
// block-per-row SpMM kernel), empty rows, isolated nodes, graphs of 0 and 1 nodes, feature
// widths 1, 3, 4, 31, 32, 33, 64 and 256, forward and backward.
//
// These run on a GPU in the nvcc build and on the CPU simulator in the SIMT build
// (HULK_CUDA=SIMT, what CI runs). In the SIMT build cuBLAS and cuSPARSE are stood in for by
// the CPU BLAS and SpMM, so the GEMM and cuSPARSE comparisons check the code around the
// libraries; the libraries themselves are checked only on a GPU.
//
// Tolerances, CUDA vs CPU:
//  - exact: masks and selections (ReLU, dropout, pooling coefficients, GCN structure),
//    and the GCN values (both sides compute w / sqrt(d_r d_c) in double, then round once);
//  - kSumTol (1e-5, relative to the largest value of the expected tensor): sums in the same
//    order but with fused multiply-adds on a GPU, or (long rows, bias gradient, loss) added in
//    a different but fixed order. Relative to the largest value, not to each element: a sum of
//    hundreds of terms that cancel carries the rounding of its terms, not of its result;
//  - kGemmTol (1e-4): cuBLAS may block the inner products differently from the CPU BLAS;
//  - kAtomicTol (1e-4): the per-edge reference's neighbour gradient, added with atomics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "csrc/device.h"
#include "csrc/graph.h"
#include "csrc/ops/ops.h"
#include "tests/cpp/reference.h"
#include "cuda/runtime/runtime.h"
#include "cuda/runtime/spmm_path.h"
#include "csrc/tensor.h"

namespace {

using hulk::Csr;
using hulk::Device;
using hulk::Tensor;
using hulk::ops::Pooling;
using ref::EdgeList;
using ref::GraphKind;

constexpr double kSumTol = 1e-5;
constexpr double kGemmTol = 1e-4;
constexpr double kAtomicTol = 1e-4;
const std::vector<int64_t> kWidths = {1, 3, 4, 31, 32, 33, 64, 256};

Tensor cuda(const Tensor& t) { return t.to(Device::CUDA); }

// |got - want| <= tol * (1 + max |want|) everywhere, with got on the device.
::testing::AssertionResult close(const Tensor& got_device, const Tensor& want, double tol) {
  if (got_device.device() != Device::CUDA) return ::testing::AssertionFailure() << "result is not on the device";
  const Tensor got = got_device.to(Device::CPU);
  if (!got.same_shape(want))
    return ::testing::AssertionFailure() << "shape " << got.shape_str() << " vs " << want.shape_str();
  double scale = 1.0;
  for (int64_t i = 0; i < want.size(); ++i) scale = std::max(scale, 1.0 + std::fabs(want.data()[i]));
  for (int64_t i = 0; i < want.size(); ++i) {
    const double g = got.data()[i], w = want.data()[i];
    if (!(std::fabs(g - w) <= tol * scale)) {
      return ::testing::AssertionFailure() << "element " << i << " (row " << i / std::max<int64_t>(want.cols(), 1)
                                           << "): cuda " << g << ", cpu " << w << ", tol " << tol * scale;
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult equal(const Tensor& got_device, const Tensor& want) { return close(got_device, want, 0.0); }

struct GraphCase {
  std::string name;
  EdgeList g;
};

std::vector<GraphCase> graph_cases() {
  std::vector<GraphCase> cases;
  cases.push_back({"uniform undirected", ref::random_graph(GraphKind::Uniform, 60, 150, true, false, 21)});
  cases.push_back({"uniform directed weighted", ref::random_graph(GraphKind::Uniform, 45, 200, false, true, 22)});
  // Node 0 joins about half of 1,400 nodes: a row longer than DeviceCsr::kLongRow.
  cases.push_back({"power-law undirected weighted with a hub", ref::random_graph(GraphKind::Skewed, 1400, 2600, true, true, 23)});
  cases.push_back({"skewed directed", ref::random_graph(GraphKind::Skewed, 90, 260, false, false, 24)});
  cases.push_back({"isolated nodes directed", ref::random_graph(GraphKind::Isolated, 40, 50, false, true, 25)});
  EdgeList none;
  none.num_nodes = 7;
  cases.push_back({"no edges", none});
  EdgeList single;
  single.num_nodes = 1;
  single.undirected = true;
  cases.push_back({"single node", single});
  return cases;
}

Csr csr_of(const EdgeList& g) { return hulk::csr_from_edges(g.num_nodes, g.src, g.dst, g.weights, g.undirected); }

Csr empty_csr() {  // a graph of 0 nodes
  Csr a;
  a.indptr = {0};
  return a;
}

class CudaOps : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!hulk::device::cuda_simulated() && hulk::cuda::device_count() == 0)
      GTEST_SKIP() << "nvcc build on a machine without a GPU: the kernels run in the SIMT build (HULK_CUDA=SIMT) "
                      "and on a GPU";
  }
  std::mt19937 rng{2024};
};

// ---- sparse -----------------------------------------------------------------------------------

TEST_F(CudaOps, SpmmMatchesCpuForEveryWidthGraphAndPath) {
  for (const auto path : {hulk::cuda::SpmmPath::Custom, hulk::cuda::SpmmPath::Library}) {
    hulk::cuda::set_spmm_path(path);
    for (const GraphCase& c : graph_cases()) {
      const Csr a = csr_of(c.g);
      for (int64_t f : kWidths) {
        for (bool weighted : {false, true}) {
          SCOPED_TRACE(c.name + ", F " + std::to_string(f) + (weighted ? ", weighted" : "") + ", path " +
                       hulk::cuda::spmm_path_name(path));
          const Tensor x = ref::random_tensor(a.num_cols, f, rng);
          Tensor want, got;
          hulk::ops::spmm(a, x, want, weighted);
          hulk::ops::spmm(a, cuda(x), got, weighted);
          EXPECT_TRUE(close(got, want, kSumTol));
        }
      }
    }
  }
  hulk::cuda::set_spmm_path(hulk::cuda::SpmmPath::Custom);
}

TEST_F(CudaOps, SpmmOnTheTransposeAndOnAnEmptyGraph) {
  const Csr a = csr_of(ref::random_graph(GraphKind::Skewed, 1200, 2000, false, true, 31));
  const Csr at = hulk::transpose(a);
  for (int64_t f : {4, 33}) {
    const Tensor x = ref::random_tensor(at.num_cols, f, rng);
    Tensor want, got;
    hulk::ops::spmm(at, x, want, true);
    hulk::ops::spmm(at, cuda(x), got, true);
    EXPECT_TRUE(close(got, want, kSumTol));
  }
  const Csr none = empty_csr();
  Tensor got;
  hulk::ops::spmm(none, cuda(Tensor(0, 8)), got, false);
  EXPECT_EQ(got.rows(), 0);
  EXPECT_EQ(got.cols(), 8);
  EXPECT_EQ(got.device(), Device::CUDA);
}

// Issue 20: sparse node features X [N, F] and X^T [F, N] use the same SpMM. Rectangular
// matrices, tall and wide, on both paths, with a full row and a full column so that the matrix
// or its transpose (the wide one: both) has rows for the long-row kernel (> kLongRow entries).
TEST_F(CudaOps, SpmmOnRectangularMatricesMatchesCpu) {
  for (const auto path : {hulk::cuda::SpmmPath::Custom, hulk::cuda::SpmmPath::Library}) {
    hulk::cuda::set_spmm_path(path);
    for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{700, 1300}, {1300, 90}}) {
      const Csr x = ref::random_csr(rows, cols, 0.01, rng, /*full_row=*/3, /*full_col=*/7);
      const Csr xt = hulk::transpose(x);
      ASSERT_GT(std::max(x.degree(3), xt.degree(7)), hulk::DeviceCsr::kLongRow);
      for (int64_t f : {1, 4, 16, 33}) {
        SCOPED_TRACE("[" + std::to_string(rows) + ", " + std::to_string(cols) + "], F " + std::to_string(f) +
                     ", path " + hulk::cuda::spmm_path_name(path));
        for (const Csr* a : {&x, &xt}) {
          const Tensor w = ref::random_tensor(a->num_cols, f, rng);
          Tensor want, got;
          hulk::ops::spmm(*a, w, want, true);
          hulk::ops::spmm(*a, cuda(w), got, true);
          EXPECT_TRUE(close(got, want, kSumTol));
        }
      }
    }
  }
  hulk::cuda::set_spmm_path(hulk::cuda::SpmmPath::Custom);
}

TEST_F(CudaOps, SegmentSumAndPoolCoefficientsMatchCpu) {
  for (const GraphCase& c : graph_cases()) {
    const Csr a = csr_of(c.g);
    for (int64_t fe : {1, 3, 4, 33}) {
      SCOPED_TRACE(c.name + ", Fe " + std::to_string(fe));
      const Tensor e = ref::random_tensor(c.g.num_edges(), fe, rng);
      Tensor want, got;
      hulk::ops::segment_sum_edges(a, e, want);
      hulk::ops::segment_sum_edges(a, cuda(e), got);
      EXPECT_TRUE(close(got, want, kSumTol));
    }
    for (Pooling p : {Pooling::Sum, Pooling::Mean}) {
      const auto want = hulk::ops::pool_coefficients(a, p);
      const auto got = hulk::ops::pool_coefficients(a, p, Device::CUDA);
      EXPECT_TRUE(equal(got.self_coef, want.self_coef)) << c.name;
      EXPECT_TRUE(equal(got.nbr_coef, want.nbr_coef)) << c.name;
    }
  }
}

TEST_F(CudaOps, GcnNormalisationOnTheDeviceEqualsTheCpusExactly) {
  for (const GraphCase& c : graph_cases()) {
    for (bool use_weights : {false, true}) {
      if (use_weights && c.g.weights.empty()) continue;
      SCOPED_TRACE(c.name + (use_weights ? ", weighted" : ""));
      const Csr in = csr_of(c.g);
      const Csr in_t = hulk::transpose(in);
      const Csr want = hulk::gcn_normalize(in, use_weights);
      const Csr want_t = hulk::transpose(want);
      for (const auto& [rows, expected] : {std::pair<const Csr*, const Csr*>{&in, &want}, {&in_t, &want_t}}) {
        const auto got = hulk::gcn_normalize_on_device(*rows, in, use_weights);
        EXPECT_EQ(got->nnz, expected->nnz());
        EXPECT_EQ(got->indptr.to_host(), expected->indptr);
        EXPECT_EQ(got->indices.to_host(), expected->indices);
        EXPECT_EQ(got->values.to_host(), expected->values);
      }
    }
  }
}

// ---- EdgePool ----------------------------------------------------------------------------------

TEST_F(CudaOps, EdgePoolFastPathForwardAndBackwardMatchCpu) {
  for (const GraphCase& c : graph_cases()) {
    const Csr a = csr_of(c.g);
    const Csr at = hulk::transpose(a);
    for (Pooling pooling : {Pooling::Sum, Pooling::Mean}) {
      for (const auto& [f, fe, o] : {std::tuple<int64_t, int64_t, int64_t>{3, 2, 4}, {32, 1, 33}, {31, 0, 64}}) {
        SCOPED_TRACE(c.name + ", F " + std::to_string(f) + " Fe " + std::to_string(fe) + " O " + std::to_string(o));
        const Tensor h = ref::random_tensor(a.num_rows, f, rng);
        const Tensor e = ref::random_tensor(c.g.num_edges(), fe, rng);
        const Tensor w = ref::random_tensor(2 * f + fe, o, rng);
        const Tensor b = ref::random_tensor(1, o, rng);
        const Tensor dz = ref::random_tensor(a.num_rows, o, rng);
        const auto coef = hulk::ops::pool_coefficients(a, pooling);
        const auto coef_d = hulk::ops::pool_coefficients(a, pooling, Device::CUDA);
        Tensor es, es_d, z, p, z_d, p_d;
        hulk::ops::segment_sum_edges(a, e, es);
        hulk::ops::segment_sum_edges(a, cuda(e), es_d);
        hulk::ops::edge_pool_forward(a, coef, h, es, w, b, z, p);
        hulk::ops::edge_pool_forward(a, coef_d, cuda(h), es_d, cuda(w), cuda(b), z_d, p_d);
        EXPECT_TRUE(close(z_d, z, kGemmTol));
        EXPECT_TRUE(close(p_d, p, kSumTol));
        Tensor dw, db, dh, dw_d, db_d, dh_d;
        hulk::ops::edge_pool_backward(at, coef, p, w, dz, f, dw, db, &dh);
        hulk::ops::edge_pool_backward(at, coef_d, p_d, cuda(w), cuda(dz), f, dw_d, db_d, &dh_d);
        EXPECT_TRUE(close(dw_d, dw, kGemmTol));
        EXPECT_TRUE(close(db_d, db, kSumTol));
        EXPECT_TRUE(close(dh_d, dh, kGemmTol));
      }
    }
  }
}

TEST_F(CudaOps, EdgePoolPerEdgeReferenceMatchesCpu) {
  for (const GraphCase& c : graph_cases()) {
    const Csr a = csr_of(c.g);
    for (Pooling pooling : {Pooling::Sum, Pooling::Mean}) {
      for (const auto& [f, fe, o] : {std::tuple<int64_t, int64_t, int64_t>{4, 3, 5}, {33, 0, 31}}) {
        SCOPED_TRACE(c.name + ", F " + std::to_string(f) + " Fe " + std::to_string(fe));
        const Tensor h = ref::random_tensor(a.num_rows, f, rng);
        const Tensor e = ref::random_tensor(c.g.num_edges(), fe, rng);
        const Tensor w = ref::random_tensor(2 * f + fe, o, rng);
        const Tensor b = ref::random_tensor(1, o, rng);
        const Tensor dz = ref::random_tensor(a.num_rows, o, rng);
        Tensor z, z_d;
        hulk::ops::edge_pool_forward_per_edge(a, pooling, h, e, w, b, z);
        hulk::ops::edge_pool_forward_per_edge(a, pooling, cuda(h), cuda(e), cuda(w), cuda(b), z_d);
        EXPECT_TRUE(close(z_d, z, kGemmTol));
        Tensor dw, db, dh, dw_d, db_d, dh_d;
        hulk::ops::edge_pool_backward_per_edge(a, pooling, h, e, w, dz, dw, db, &dh);
        hulk::ops::edge_pool_backward_per_edge(a, pooling, cuda(h), cuda(e), cuda(w), cuda(dz), dw_d, db_d, &dh_d);
        EXPECT_TRUE(close(dw_d, dw, kGemmTol));
        EXPECT_TRUE(close(db_d, db, kSumTol));
        EXPECT_TRUE(close(dh_d, dh, kAtomicTol));
      }
    }
  }
}

// ---- dense -------------------------------------------------------------------------------------

TEST_F(CudaOps, GemmEveryTransposeAndBeta) {
  for (const auto& [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{7, 13, 5}, {64, 70, 33}, {1, 9, 1}, {300, 4, 256}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) + (ta ? " ta" : "") +
                     (tb ? " tb" : ""));
        const Tensor a = ta ? ref::random_tensor(k, m, rng) : ref::random_tensor(m, k, rng);
        const Tensor b = tb ? ref::random_tensor(n, k, rng) : ref::random_tensor(k, n, rng);
        const Tensor c0 = ref::random_tensor(m, n, rng);
        Tensor want, got;
        hulk::ops::gemm(a, ta, b, tb, want);
        hulk::ops::gemm(cuda(a), ta, cuda(b), tb, got);
        EXPECT_TRUE(close(got, want, kGemmTol));
        Tensor acc = c0, acc_d = cuda(c0);
        hulk::ops::gemm(a, ta, b, tb, acc, 0.5f, -1.5f);
        hulk::ops::gemm(cuda(a), ta, cuda(b), tb, acc_d, 0.5f, -1.5f);
        EXPECT_TRUE(close(acc_d, acc, kGemmTol));
      }
    }
  }
  // k = 0: the product is zero and beta scales c.
  const Tensor c0 = ref::random_tensor(3, 4, rng);
  Tensor acc = c0, acc_d = cuda(c0);
  hulk::ops::gemm(Tensor(3, 0), false, Tensor(0, 4), false, acc, 1.0f, 2.0f);
  hulk::ops::gemm(cuda(Tensor(3, 0)), false, cuda(Tensor(0, 4)), false, acc_d, 1.0f, 2.0f);
  EXPECT_TRUE(equal(acc_d, acc));
}

TEST_F(CudaOps, BiasReluDropoutMatchCpu) {
  for (int64_t cols : kWidths) {
    SCOPED_TRACE("width " + std::to_string(cols));
    const int64_t rows = 517;
    const Tensor x = ref::random_tensor(rows, cols, rng);
    const Tensor dy = ref::random_tensor(rows, cols, rng);
    const Tensor bias = ref::random_tensor(1, cols, rng);
    const Tensor scale = ref::random_tensor(rows, 1, rng, 0.0, 3.0);

    Tensor out = x, out_d = cuda(x);
    hulk::ops::add_bias(out, bias);
    hulk::ops::add_bias(out_d, cuda(bias));
    EXPECT_TRUE(close(out_d, out, kSumTol));

    for (const Tensor* s : {static_cast<const Tensor*>(nullptr), &scale}) {
      const Tensor s_d = s ? cuda(*s) : Tensor();
      Tensor db, db_d;
      hulk::ops::bias_grad(dy, s, db, false);
      hulk::ops::bias_grad(cuda(dy), s ? &s_d : nullptr, db_d, false);
      EXPECT_TRUE(close(db_d, db, kSumTol));
      hulk::ops::bias_grad(dy, s, db, true);
      hulk::ops::bias_grad(cuda(dy), s ? &s_d : nullptr, db_d, true);
      EXPECT_TRUE(close(db_d, db, kSumTol));
    }

    Tensor y, y_d, dx, dx_d;
    hulk::ops::relu_forward(x, y);
    hulk::ops::relu_forward(cuda(x), y_d);
    EXPECT_TRUE(equal(y_d, y));
    hulk::ops::relu_backward(y, dy, dx);
    hulk::ops::relu_backward(y_d, cuda(dy), dx_d);
    EXPECT_TRUE(equal(dx_d, dx));

    for (float p : {0.0f, 0.3f, 0.9f}) {
      Tensor d, d_d, g, g_d;
      hulk::ops::dropout_forward(x, p, 17, 5, d);
      hulk::ops::dropout_forward(cuda(x), p, 17, 5, d_d);
      EXPECT_TRUE(equal(d_d, d)) << "p " << p;  // the same mask, bit for bit
      hulk::ops::dropout_backward(dy, p, 17, 5, g);
      hulk::ops::dropout_backward(cuda(dy), p, 17, 5, g_d);
      EXPECT_TRUE(equal(g_d, g)) << "p " << p;
      // In place, as the model runs them on its activations and gradients.
      Tensor in_place = cuda(x);
      hulk::ops::dropout_forward(in_place, p, 17, 5, in_place);
      EXPECT_TRUE(equal(in_place, d)) << "p " << p;
    }
    Tensor relu_in_place = cuda(x), grad_in_place = cuda(dy);
    hulk::ops::relu_forward(relu_in_place, relu_in_place);
    EXPECT_TRUE(equal(relu_in_place, y));
    hulk::ops::relu_backward(y_d, grad_in_place, grad_in_place);
    EXPECT_TRUE(equal(grad_in_place, dx));
  }
}

// An input Dropout on sparse features: the CSR's values masked on the device as on the CPU
// (bit for bit), in place for a second Dropout, and the transpose's values gathered through its
// position map; then an SpMM reads the rewritten device values.
TEST_F(CudaOps, DropoutCsrAndGatherMatchCpu) {
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{700, 1300}, {1300, 90}, {1, 7}}) {
    SCOPED_TRACE("[" + std::to_string(rows) + ", " + std::to_string(cols) + "]");
    const Csr x = ref::random_csr(rows, cols, 0.01, rng, /*full_row=*/0);
    Csr positions = x;
    positions.edge_ids.resize(x.nnz());
    for (int64_t k = 0; k < x.nnz(); ++k) positions.edge_ids[k] = k;
    for (float p : {0.0f, 0.5f}) {
      Csr want = x, want_t = hulk::transpose(positions);
      Csr got = x, got_t = want_t;  // fresh copies: their device copies are made on first use
      hulk::ops::dropout_csr(x, p, 5, 9, Device::CPU, want);
      hulk::ops::dropout_csr(want, p, 5, 10, Device::CPU, want);
      hulk::ops::gather_csr_values(want, Device::CPU, want_t);
      hulk::ops::dropout_csr(x, p, 5, 9, Device::CUDA, got);
      hulk::ops::dropout_csr(got, p, 5, 10, Device::CUDA, got);
      hulk::ops::gather_csr_values(got, Device::CUDA, got_t);
      hulk::device::synchronize();
      EXPECT_EQ(got.on_device().values.to_host(), want.values) << "p " << p;
      EXPECT_EQ(got_t.on_device().values.to_host(), want_t.values) << "p " << p;
      const Tensor w = ref::random_tensor(cols, 5, rng), v = ref::random_tensor(rows, 3, rng);
      Tensor out, out_d, out_t, out_t_d;
      hulk::ops::spmm(want, w, out, true);
      hulk::ops::spmm(got, cuda(w), out_d, true);
      EXPECT_TRUE(close(out_d, out, kSumTol));
      hulk::ops::spmm(want_t, v, out_t, true);
      hulk::ops::spmm(got_t, cuda(v), out_t_d, true);
      EXPECT_TRUE(close(out_t_d, out_t, kSumTol));
    }
  }
}

// The bias gradient's grid depends on rows and width (chunks of rows x columns): few rows,
// rows not a multiple of the chunk, widths below and above a warp. Run twice, it gives the same bits.
TEST_F(CudaOps, BiasGradGridShapesMatchCpu) {
  for (int64_t rows : {1, 7, 4097}) {
    for (int64_t cols : {1, 3, 16, 64, 256}) {
      SCOPED_TRACE(std::to_string(rows) + " rows, width " + std::to_string(cols));
      const Tensor dy = ref::random_tensor(rows, cols, rng);
      const Tensor scale = ref::random_tensor(rows, 1, rng, 0.0, 3.0);
      const Tensor dy_d = cuda(dy), scale_d = cuda(scale);
      for (bool scaled : {false, true}) {
        Tensor db, db_d, again_d;
        hulk::ops::bias_grad(dy, scaled ? &scale : nullptr, db, false);
        hulk::ops::bias_grad(dy_d, scaled ? &scale_d : nullptr, db_d, false);
        hulk::ops::bias_grad(dy_d, scaled ? &scale_d : nullptr, again_d, false);
        EXPECT_TRUE(close(db_d, db, kSumTol)) << "scaled " << scaled;
        EXPECT_TRUE(equal(again_d, db_d.to(Device::CPU))) << "scaled " << scaled;
      }
    }
  }
}

TEST_F(CudaOps, SoftmaxCrossEntropyAndAdamMatchCpu) {
  for (const auto& [n, c] : {std::pair<int64_t, int64_t>{1, 2}, {37, 4}, {3000, 7}}) {
    SCOPED_TRACE(std::to_string(n) + " rows, " + std::to_string(c) + " classes");
    const Tensor logits = ref::random_tensor(n, c, rng, -4.0, 4.0);
    std::vector<int64_t> labels(n);
    std::vector<uint8_t> mask(n);
    std::uniform_int_distribution<int64_t> label(-1, c - 1);
    for (int64_t i = 0; i < n; ++i) {
      labels[i] = i == 0 ? 0 : label(rng);
      mask[i] = i == 0 || rng() % 4 != 0;
    }
    Tensor probs, probs_d;
    hulk::ops::softmax(logits, probs);
    hulk::ops::softmax(cuda(logits), probs_d);
    EXPECT_TRUE(close(probs_d, probs, kSumTol));
    for (const uint8_t* m : {static_cast<const uint8_t*>(nullptr), static_cast<const uint8_t*>(mask.data())}) {
      Tensor grad, grad_d;
      const auto want = hulk::ops::softmax_cross_entropy(logits, labels.data(), m, &grad);
      const auto got = hulk::ops::softmax_cross_entropy(cuda(logits), labels.data(), m, &grad_d);
      EXPECT_EQ(got.count, want.count);
      EXPECT_EQ(got.correct, want.correct);
      EXPECT_NEAR(got.loss, want.loss, 1e-9 * (1.0 + std::fabs(want.loss)));
      EXPECT_TRUE(close(grad_d, grad, kSumTol));
    }
  }
  // The training loop's batched losses on the device: the one-shot loss's results, bit for
  // bit, and one copy back for all of them.
  {
    const int64_t n = 3000, c = 7;
    const Tensor logits = ref::random_tensor(n, c, rng, -4.0, 4.0), logits_d = cuda(logits);
    std::vector<int64_t> labels(n);
    std::vector<uint8_t> mask(n);
    for (int64_t i = 0; i < n; ++i) {
      labels[i] = static_cast<int64_t>(rng() % (c + 1)) - 1;
      mask[i] = rng() % 4 != 0;
    }
    labels[0] = 1;
    mask[0] = 1;
    const auto masked = hulk::ops::make_loss_targets(labels.data(), mask.data(), n, c, Device::CUDA);
    const auto all = hulk::ops::make_loss_targets(labels.data(), nullptr, n, c, Device::CUDA);
    hulk::ops::LossBatch batch(Device::CUDA, 3);
    Tensor grad_d, want_grad_d;
    const auto before = hulk::device::transfer_counts();
    batch.add(logits_d, masked, &grad_d);
    batch.add(logits_d, all, nullptr);
    batch.add(logits_d, masked, nullptr);
    const auto got = batch.read();
    const auto after = hulk::device::transfer_counts();
    EXPECT_EQ(after.to_device, before.to_device);
    EXPECT_EQ(after.to_host, before.to_host + 1);
    ASSERT_EQ(got.size(), 3u);
    const auto want = hulk::ops::softmax_cross_entropy(logits_d, labels.data(), mask.data(), &want_grad_d);
    const auto want_all = hulk::ops::softmax_cross_entropy(logits_d, labels.data(), nullptr, nullptr);
    for (const auto& [g, w] : {std::pair{got[0], want}, {got[1], want_all}, {got[2], want}}) {
      EXPECT_EQ(g.loss, w.loss);
      EXPECT_EQ(g.correct, w.correct);
      EXPECT_EQ(g.count, w.count);
    }
    EXPECT_TRUE(equal(grad_d, want_grad_d.to(Device::CPU)));
  }
  for (int64_t cols : {1, 33, 256}) {
    const Tensor p0 = ref::random_tensor(19, cols, rng), g = ref::random_tensor(19, cols, rng);
    Tensor p = p0, m(19, cols), v(19, cols);
    Tensor p_d = cuda(p0), m_d(19, cols, Device::CUDA), v_d(19, cols, Device::CUDA);
    hulk::ops::AdamConfig cfg;
    cfg.weight_decay = 0.01f;
    for (int64_t step = 1; step <= 3; ++step) {
      hulk::ops::adam_step(p, g, m, v, cfg, step);
      hulk::ops::adam_step(p_d, cuda(g), m_d, v_d, cfg, step);
    }
    EXPECT_TRUE(close(p_d, p, kSumTol));
    EXPECT_TRUE(close(m_d, m, kSumTol));
    EXPECT_TRUE(close(v_d, v, kSumTol));
  }
}

TEST_F(CudaOps, MixedDevicesAreAClearError) {
  const Tensor a = ref::random_tensor(3, 4, rng), b = ref::random_tensor(4, 2, rng);
  Tensor c;
  try {
    hulk::ops::gemm(a, false, cuda(b), false, c);
    FAIL() << "gemm took a CPU and a CUDA tensor";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("b is on cuda but a is on cpu"), std::string::npos) << e.what();
  }
}

}  // namespace
