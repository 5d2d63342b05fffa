// Sparse ops (csrc/ops/cpu/sparse.cpp): SpMM and the segment sum of edge features on every
// graph shape, and the GCN composition built on them (tests/cpp/ops_fixtures.h).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "csrc/graph.h"
#include "csrc/ops/ops.h"
#include "csrc/tensor.h"
#include "tests/cpp/ops_fixtures.h"
#include "tests/cpp/reference.h"

namespace {

using namespace ops_fixtures;
using hulk::Device;

// =============================================================================================
// sparse
// =============================================================================================

TEST(Spmm, MatchesReferenceOnAllGraphs) {
  std::mt19937 rng(201);
  for (const GraphCase& gc : graph_cases()) {
    SCOPED_TRACE(gc.name);
    const Csr a = csr_of(gc.g);
    // Widths reach every path of the CPU kernel: 64-column tiles, 16-column tiles, the last
    // f % 16 columns, and their combinations.
    for (int64_t f : {1, 5, 16, 17, 48, 64, 65, 130, 200}) {
      const DMat x = ref::random_dmat(gc.g.num_nodes, f, rng);
      Tensor out = Tensor::filled(2, 2, 3.0f);
      hulk::ops::spmm(a, ref::to_f(x), out, false);
      EXPECT_TRUE(ref::all_close(out, ref::spmm(gc.g, x, false), kAtol, kRtol)) << "unweighted, F " << f;
      hulk::ops::spmm(a, ref::to_f(x), out, true);
      // weighted=true uses the values when the graph has them, ones otherwise.
      EXPECT_TRUE(ref::all_close(out, ref::spmm(gc.g, x, !gc.g.weights.empty()), kAtol, kRtol)) << "weighted, F " << f;
      // Transpose: A^T x, reference through the dense adjacency.
      const DMat at = ref::transpose(ref::dense_adjacency(gc.g, true));
      hulk::ops::spmm(hulk::transpose(a), ref::to_f(x), out, true);
      EXPECT_TRUE(ref::all_close(out, ref::matmul(at, x), kAtol, kRtol)) << "transpose, F " << f;
    }
  }
}

// spmm_host writes every element of caller-owned memory (prefilled with NaN here) and gives
// the same numbers as the Tensor op.
TEST(Spmm, HostPointersWriteEveryElement) {
  std::mt19937 rng(203);
  for (const GraphCase& gc : graph_cases()) {
    SCOPED_TRACE(gc.name);
    const Csr a = csr_of(gc.g);
    for (int64_t f : {3, 16, 80}) {
      const Tensor x = ref::to_f(ref::random_dmat(gc.g.num_nodes, f, rng));
      for (bool weighted : {false, true}) {
        Tensor expected;
        hulk::ops::spmm(a, x, expected, weighted);
        std::vector<float> out(static_cast<size_t>(a.num_rows * f), std::numeric_limits<float>::quiet_NaN());
        hulk::ops::spmm_host(a, x.data(), f, out.data(), weighted);
        for (int64_t i = 0; i < a.num_rows * f; ++i) ASSERT_EQ(out[i], expected.data()[i]) << "element " << i;
      }
    }
  }
  const Csr a = csr_of(ref::random_graph(GraphKind::Uniform, 6, 8, true, false, 9));
  EXPECT_THROW(hulk::ops::spmm_host(a, nullptr, -1, nullptr, false), std::invalid_argument);
}

TEST(Spmm, GcnNormalisedAdjacency) {
  std::mt19937 rng(202);
  for (const GraphCase& gc : graph_cases()) {
    SCOPED_TRACE(gc.name);
    const Csr n = hulk::gcn_normalize(csr_of(gc.g), !gc.g.weights.empty());
    const DMat x = ref::random_dmat(gc.g.num_nodes, 6, rng);
    Tensor out;
    hulk::ops::spmm(n, ref::to_f(x), out, true);
    EXPECT_TRUE(ref::all_close(out, ref::matmul(ref::gcn_norm_dense(gc.g, !gc.g.weights.empty()), x), kAtol, kRtol));
  }
}

// Issue 20: sparse node features X [N, F] and X^T [F, N] go through the same SpMM, so it must
// handle rows != cols: tall and wide matrices, empty rows, and rows past the CUDA kernel's
// short-row limit (the full row and column below).
TEST(Spmm, RectangularMatchesReference) {
  std::mt19937 rng(203);
  struct Shape { int64_t rows, cols; double density; int64_t full_row, full_col; };
  for (const Shape& s : {Shape{50, 700, 0.02, 3, -1}, Shape{700, 37, 0.05, -1, 5}, Shape{1, 9, 0.5, -1, -1},
                         Shape{30, 1, 0.3, -1, -1}, Shape{12, 40, 0.0, -1, -1}}) {
    const Csr a = ref::random_csr(s.rows, s.cols, s.density, rng, s.full_row, s.full_col);
    const Csr at = hulk::transpose(a);
    for (int64_t f : {1, 5, 16, 33}) {
      SCOPED_TRACE("[" + std::to_string(s.rows) + ", " + std::to_string(s.cols) + "], F " + std::to_string(f));
      const DMat x = ref::random_dmat(s.cols, f, rng);
      Tensor out = Tensor::filled(2, 2, 3.0f);
      hulk::ops::spmm(a, ref::to_f(x), out, true);
      EXPECT_TRUE(ref::all_close(out, ref::matmul(ref::csr_to_dense(a), x), kAtol, kRtol));
      const DMat y = ref::random_dmat(s.rows, f, rng);
      hulk::ops::spmm(at, ref::to_f(y), out, true);
      EXPECT_TRUE(ref::all_close(out, ref::matmul(ref::transpose(ref::csr_to_dense(a)), y), kAtol, kRtol));
    }
  }
}

// Sparse features [rows, cols] with the transpose's position map in its edge ids (the model's
// input Dropout on sparse features: nn::prepare_sparse_dropout).
Csr with_positions(Csr a) {
  a.edge_ids.resize(a.nnz());
  for (int64_t k = 0; k < a.nnz(); ++k) a.edge_ids[k] = k;
  return a;
}

TEST(DropoutCsr, EqualsDenseDropoutEntryForEntryAndTheTransposeFollows) {
  std::mt19937 rng(204);
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{50, 700}, {700, 37}, {1, 9}, {12, 40}}) {
    const Csr x = ref::random_csr(rows, cols, 0.05, rng, /*full_row=*/0);
    const Csr x_t = hulk::transpose(x);
    Csr dropped = x;
    Csr dropped_t = hulk::transpose(with_positions(x));
    for (float p : {0.0f, 0.5f, 0.8f}) {
      SCOPED_TRACE("[" + std::to_string(rows) + ", " + std::to_string(cols) + "], p " + std::to_string(p));
      hulk::ops::dropout_csr(x, p, 31, 6, Device::CPU, dropped);
      Tensor want;
      hulk::ops::dropout_forward(ref::to_f(ref::csr_to_dense(x)), p, 31, 6, want);
      // The same mask and scale as the dense op, bit for bit: densified, the two are identical.
      EXPECT_TRUE(ref::identical(ref::to_f(ref::csr_to_dense(dropped)), want));
      hulk::ops::gather_csr_values(dropped, Device::CPU, dropped_t);
      EXPECT_TRUE(ref::identical(ref::to_f(ref::csr_to_dense(dropped_t)),
                                 ref::to_f(ref::csr_to_dense(hulk::transpose(dropped)))));
      EXPECT_EQ(dropped_t.indices, x_t.indices);
      // In place (a second input Dropout drops the dropped values again).
      Csr twice = dropped;
      hulk::ops::dropout_csr(twice, p, 31, 7, Device::CPU, twice);
      Tensor want_twice;
      hulk::ops::dropout_forward(want, p, 31, 7, want_twice);
      EXPECT_TRUE(ref::identical(ref::to_f(ref::csr_to_dense(twice)), want_twice));
    }
  }
  Csr x = ref::random_csr(5, 6, 0.5, rng), other = ref::random_csr(5, 7, 0.5, rng);
  EXPECT_THROW(hulk::ops::dropout_csr(x, 1.0f, 1, 1, Device::CPU, x), std::invalid_argument);
  EXPECT_THROW(hulk::ops::dropout_csr(x, 0.5f, 1, 1, Device::CPU, other), std::invalid_argument);
  EXPECT_THROW(hulk::ops::gather_csr_values(x, Device::CPU, x), std::invalid_argument);  // no positions
}

TEST(Spmm, RejectsWrongInputRows) {
  const Csr a = csr_of(ref::random_graph(GraphKind::Uniform, 6, 8, true, false, 9));
  Tensor out;
  EXPECT_THROW(hulk::ops::spmm(a, Tensor(5, 2), out, false), std::invalid_argument);
}

TEST(SegmentSumEdges, MatchesReferenceOnAllGraphs) {
  std::mt19937 rng(211);
  for (const GraphCase& gc : graph_cases()) {
    SCOPED_TRACE(gc.name);
    const Csr a = csr_of(gc.g);
    for (int64_t fe : {0, 1, 4}) {
      const DMat e = ref::random_dmat(gc.g.num_edges(), fe, rng);
      Tensor out = Tensor::filled(1, 1, 3.0f);
      hulk::ops::segment_sum_edges(a, ref::to_f(e), out);
      EXPECT_TRUE(ref::all_close(out, ref::segment_sum_edges(gc.g, e), kAtol, kRtol)) << "Fe " << fe;
    }
  }
}
// =============================================================================================
// GCN-style composition: Y = spmm(gcn_normalize(A), X) @ W + b, backward through the ops
// (dW = (A_hat X)^T dY, db = column sums, dX = A_hat^T (dY W^T) via the transposed CSR).
// =============================================================================================

TEST(GcnComposition, OpBackwardMatchesFiniteDifferences) {
  std::mt19937 rng(401);
  for (const GraphCase& gc : small_graph_cases()) {
    for (bool use_w : {false, true}) {
      if (use_w && gc.g.weights.empty()) continue;
      SCOPED_TRACE(gc.name + (use_w ? ", weighted" : ""));
      const Csr an = hulk::gcn_normalize(csr_of(gc.g), use_w);
      const Csr an_t = hulk::transpose(an);
      const DMat a_hat = ref::gcn_norm_dense(gc.g, use_w);
      DMat x = ref::random_dmat(gc.g.num_nodes, 4, rng), w = ref::random_dmat(4, 3, rng), b = ref::random_dmat(1, 3, rng);
      const DMat r = ref::random_dmat(gc.g.num_nodes, 3, rng);
      // (1) float64 reference composition and its hand-derived backward.
      auto loss64 = [&] { return ref::dot(ref::add_bias(ref::matmul(ref::matmul(a_hat, x), w), b), r); };
      const DMat dw64 = ref::gemm(ref::matmul(a_hat, x), true, r, false, DMat(), 1.0, 0.0);
      const DMat dx64 = ref::matmul(ref::transpose(a_hat), ref::gemm(r, false, w, true, DMat(), 1.0, 0.0));
      EXPECT_TRUE(ref::gradients_match(dx64, ref::central_differences(x.data(), x.size(), kFdStep64, loss64), kFdTol64));
      EXPECT_TRUE(ref::gradients_match(dw64, ref::central_differences(w.data(), w.size(), kFdStep64, loss64), kFdTol64));
      EXPECT_TRUE(ref::gradients_match(ref::bias_grad(r, nullptr), ref::central_differences(b.data(), b.size(), kFdStep64, loss64), kFdTol64));
      // (2) the same through the float32 ops.
      Tensor xf = ref::to_f(x), wf = ref::to_f(w), bf = ref::to_f(b);
      const Tensor rf = ref::to_f(r);
      auto forward = [&](Tensor& ax, Tensor& y) {
        hulk::ops::spmm(an, xf, ax, true);
        hulk::ops::gemm(ax, false, wf, false, y);
        hulk::ops::add_bias(y, bf);
      };
      auto loss32 = [&] {
        Tensor ax, y;
        forward(ax, y);
        return ref::projection(y, r);
      };
      Tensor ax, y, dw, db, t, dx;
      forward(ax, y);
      EXPECT_TRUE(ref::all_close(y, ref::add_bias(ref::matmul(ref::matmul(a_hat, x), w), b), kAtol, kRtol));
      hulk::ops::gemm(ax, true, rf, false, dw);
      hulk::ops::bias_grad(rf, nullptr, db, false);
      hulk::ops::gemm(rf, false, wf, true, t);
      hulk::ops::spmm(an_t, t, dx, true);
      EXPECT_TRUE(ref::gradients_match(dx, ref::central_differences(xf.data(), xf.size(), kFdStep32, loss32), kFdTol32));
      EXPECT_TRUE(ref::gradients_match(dw, ref::central_differences(wf.data(), wf.size(), kFdStep32, loss32), kFdTol32));
      EXPECT_TRUE(ref::gradients_match(db, ref::central_differences(bf.data(), bf.size(), kFdStep32, loss32), kFdTol32));
    }
  }
}

}  // namespace
