// Every op of csrc/ops/ops.h against the naive float64 references of reference.h, on fresh
// random inputs (fixed seeds), plus finite-difference checks of every backward:
//   (1) the reference backward against float64 central differences of the reference forward;
//   (2) the float32 op's backward against central differences of the float32 op's forward,
//       through a random projection loss L = sum(z * r).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "csrc/graph.h"
#include "csrc/ops/ops.h"
#include "tests/cpp/reference.h"
#include "csrc/tensor.h"

namespace {

using hulk::Csr;
using hulk::Tensor;
using hulk::ops::Pooling;
using ref::DMat;
using ref::EdgeList;
using ref::GraphKind;

// ---- tolerances -------------------------------------------------------------------------------
// float32 op vs float64 reference. Inputs are exact float32 numbers in [-1, 1], so the only
// error is float32 rounding inside the op: an output summing K products carries about
// sqrt(K) * 6e-8 * (sum of |terms|) of it. With K up to a few hundred (hub rows, inner
// dimensions) and outputs of size up to ~50 that is well under 1e-4; a wrong term, scale or
// index costs O(0.1) or more.
constexpr double kAtol = 1e-4;
constexpr double kRtol = 1e-4;
// The two float32 EdgePool paths (fast vs per-edge) sum in different orders: each is within
// kAtol/kRtol of float64, so of each other within twice that.
constexpr double kPathAtol = 2 * kAtol;
constexpr double kPathRtol = 2 * kRtol;
// Reference backward vs float64 central differences: truncation O(step^2) (zero for the
// ops that are linear in the perturbed input) plus rounding O(1e-16 / step).
constexpr double kFdStep64 = 1e-6;
constexpr double kFdTol64 = 1e-6;  // relative to the gradient's max-norm
// float32 op backward vs central differences of the float32 op forward. The forward is
// rounded to float32 (relative 6e-8 per output, sums of many) and divided by 2 * step, which
// gives noise of order 1e-4 relative; smooth non-linear ops (softmax) add O(step^2)
// truncation. A missing term or a wrong factor gives O(1) relative error.
constexpr double kFdStep32 = 1e-2;
constexpr double kFdTol32 = 1e-2;  // relative to the gradient's max-norm

Csr csr_of(const EdgeList& g) { return hulk::csr_from_edges(g.num_nodes, g.src, g.dst, g.weights, g.undirected); }

struct GraphCase {
  std::string name;
  EdgeList g;
};

// Sizes and shapes the sparse ops must handle: uniform, a hub with power-law degrees,
// isolated nodes (empty rows), no edges at all, a single node; directed and undirected,
// with and without weights.
std::vector<GraphCase> graph_cases() {
  std::vector<GraphCase> cases;
  cases.push_back({"uniform undirected", ref::random_graph(GraphKind::Uniform, 50, 120, true, false, 1)});
  cases.push_back({"uniform directed weighted", ref::random_graph(GraphKind::Uniform, 33, 150, false, true, 2)});
  cases.push_back({"skewed directed", ref::random_graph(GraphKind::Skewed, 120, 300, false, false, 3)});
  cases.push_back({"skewed undirected weighted", ref::random_graph(GraphKind::Skewed, 80, 200, true, true, 4)});
  cases.push_back({"isolated directed weighted", ref::random_graph(GraphKind::Isolated, 40, 50, false, true, 5)});
  cases.push_back({"isolated undirected", ref::random_graph(GraphKind::Isolated, 30, 30, true, false, 6)});
  EdgeList none;
  none.num_nodes = 5;
  cases.push_back({"no edges", none});
  EdgeList single;
  single.num_nodes = 1;
  single.undirected = true;
  cases.push_back({"single node", single});
  return cases;
}

// Small graphs for finite differences (every coordinate is perturbed): a hub, an isolated
// node, both directions.
std::vector<GraphCase> small_graph_cases() {
  std::vector<GraphCase> cases;
  cases.push_back({"small skewed directed", ref::random_graph(GraphKind::Skewed, 10, 18, false, false, 11)});
  cases.push_back({"small isolated undirected", ref::random_graph(GraphKind::Isolated, 9, 8, true, true, 12)});
  return cases;
}

const char* pooling_name(Pooling p) { return p == Pooling::Sum ? "sum" : "mean"; }

// =============================================================================================
// dense
// =============================================================================================

TEST(Gemm, AllTransposeCombinationsMatchReference) {
  std::mt19937 rng(101);
  struct Dims { int64_t m, k, n; };
  for (const Dims d : {Dims{7, 13, 5}, Dims{64, 70, 33}, Dims{1, 9, 1}, Dims{3, 1, 4}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        SCOPED_TRACE("m " + std::to_string(d.m) + " k " + std::to_string(d.k) + " n " + std::to_string(d.n) +
                     (ta ? " trans_a" : "") + (tb ? " trans_b" : ""));
        const DMat a = ta ? ref::random_dmat(d.k, d.m, rng) : ref::random_dmat(d.m, d.k, rng);
        const DMat b = tb ? ref::random_dmat(d.n, d.k, rng) : ref::random_dmat(d.k, d.n, rng);
        // beta == 0: c is resized and its old contents (wrong shape, NaN) never leak in.
        Tensor c = Tensor::filled(2, 3, std::numeric_limits<float>::quiet_NaN());
        hulk::ops::gemm(ref::to_f(a), ta, ref::to_f(b), tb, c);
        EXPECT_TRUE(ref::all_close(c, ref::gemm(a, ta, b, tb, DMat(), 1.0, 0.0), kAtol, kRtol));
        // alpha scales the product; beta == 0 with a c of the right shape never reads it either.
        Tensor c2 = Tensor::filled(d.m, d.n, std::numeric_limits<float>::quiet_NaN());
        hulk::ops::gemm(ref::to_f(a), ta, ref::to_f(b), tb, c2, -1.75f, 0.0f);
        EXPECT_TRUE(ref::all_close(c2, ref::gemm(a, ta, b, tb, DMat(), -1.75, 0.0), kAtol, kRtol));
      }
    }
  }
}

TEST(Gemm, BetaAccumulatesIntoC) {
  std::mt19937 rng(102);
  const int64_t m = 11, k = 17, n = 6;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SCOPED_TRACE(std::string(ta ? "trans_a" : "") + (tb ? " trans_b" : ""));
      const DMat a = ta ? ref::random_dmat(k, m, rng) : ref::random_dmat(m, k, rng);
      const DMat b = tb ? ref::random_dmat(n, k, rng) : ref::random_dmat(k, n, rng);
      const DMat c0 = ref::random_dmat(m, n, rng);
      for (const auto& [alpha, beta] : {std::pair<float, float>{1.0f, 1.0f}, {0.5f, -0.3f}, {-2.0f, 2.5f}}) {
        Tensor c = ref::to_f(c0);
        hulk::ops::gemm(ref::to_f(a), ta, ref::to_f(b), tb, c, alpha, beta);
        EXPECT_TRUE(ref::all_close(c, ref::gemm(a, ta, b, tb, c0, alpha, beta), kAtol, kRtol))
            << "alpha " << alpha << " beta " << beta;
      }
    }
  }
}

TEST(Gemm, ShapeErrors) {
  const Tensor a(3, 4), b(5, 2);
  Tensor c;
  EXPECT_THROW(hulk::ops::gemm(a, false, b, false, c), std::invalid_argument);  // 4 != 5
  EXPECT_NO_THROW(hulk::ops::gemm(a, true, Tensor(3, 2), false, c));
  EXPECT_EQ(c.rows(), 4);
  EXPECT_EQ(c.cols(), 2);
  Tensor wrong(4, 3);
  EXPECT_THROW(hulk::ops::gemm(a, true, Tensor(3, 2), false, wrong, 1.0f, 1.0f), std::invalid_argument);
}

TEST(Gemm, EmptyInnerDimensionGivesZeroProduct) {
  std::mt19937 rng(103);
  const Tensor a(4, 0), b(0, 3);
  Tensor c = Tensor::filled(1, 1, 7.0f);
  hulk::ops::gemm(a, false, b, false, c);
  EXPECT_TRUE(ref::all_close(c, DMat(4, 3), 0, 0));
  // beta == 0 never reads c, even when it already has the right shape (BLAS convention).
  Tensor c_nan = Tensor::filled(4, 3, std::numeric_limits<float>::quiet_NaN());
  hulk::ops::gemm(a, false, b, false, c_nan);
  EXPECT_TRUE(ref::all_close(c_nan, DMat(4, 3), 0, 0));
  const DMat c0 = ref::random_dmat(4, 3, rng);
  Tensor c2 = ref::to_f(c0);
  hulk::ops::gemm(a, false, b, false, c2, 1.0f, 0.5f);
  DMat want = c0;
  for (auto& x : want.v) x *= 0.5;
  EXPECT_TRUE(ref::all_close(c2, want, kAtol, kRtol));
}

TEST(Bias, AddBiasMatchesReference) {
  std::mt19937 rng(111);
  const DMat y = ref::random_dmat(23, 7, rng), b = ref::random_dmat(1, 7, rng);
  Tensor out = ref::to_f(y);
  hulk::ops::add_bias(out, ref::to_f(b));
  EXPECT_TRUE(ref::all_close(out, ref::add_bias(y, b), kAtol, kRtol));
  EXPECT_THROW(hulk::ops::add_bias(out, Tensor(1, 6)), std::invalid_argument);
  EXPECT_THROW(hulk::ops::add_bias(out, Tensor(2, 7)), std::invalid_argument);
}

TEST(Bias, BiasGradWithAndWithoutRowScaleAndAccumulate) {
  std::mt19937 rng(112);
  const DMat dy = ref::random_dmat(41, 6, rng);
  const DMat scale_d = ref::random_dmat(41, 1, rng, 0.0, 3.0);
  std::vector<float> scale(41);
  std::vector<double> scale64(41);
  for (int i = 0; i < 41; ++i) scale64[i] = scale[i] = static_cast<float>(scale_d.v[i]);
  const Tensor scale_t = Tensor::from_data(41, 1, scale.data());
  Tensor db = Tensor::filled(3, 3, 9.0f);  // overwritten (and reshaped) when not accumulating
  hulk::ops::bias_grad(ref::to_f(dy), nullptr, db, false);
  EXPECT_TRUE(ref::all_close(db, ref::bias_grad(dy, nullptr), kAtol, kRtol));
  hulk::ops::bias_grad(ref::to_f(dy), &scale_t, db, false);
  const DMat scaled = ref::bias_grad(dy, &scale64);
  EXPECT_TRUE(ref::all_close(db, scaled, kAtol, kRtol));
  // accumulate: db += sum
  const DMat start = ref::random_dmat(1, 6, rng);
  Tensor acc = ref::to_f(start);
  hulk::ops::bias_grad(ref::to_f(dy), &scale_t, acc, true);
  DMat want = start;
  for (int j = 0; j < 6; ++j) want(0, j) += scaled(0, j);
  EXPECT_TRUE(ref::all_close(acc, want, kAtol, kRtol));
}

TEST(Relu, ForwardAndBackwardMatchReference) {
  std::mt19937 rng(121);
  const DMat x = ref::random_dmat(37, 19, rng), dy = ref::random_dmat(37, 19, rng);
  Tensor y, dx = Tensor::filled(1, 1, 5.0f);
  hulk::ops::relu_forward(ref::to_f(x), y);
  EXPECT_TRUE(ref::all_close(y, ref::relu(x), 0, 0));  // exact
  hulk::ops::relu_backward(y, ref::to_f(dy), dx);
  EXPECT_TRUE(ref::all_close(dx, ref::relu_backward(x, dy), 0, 0));
  // In place: y and x may be the same tensor.
  Tensor inplace = ref::to_f(x);
  hulk::ops::relu_forward(inplace, inplace);
  EXPECT_TRUE(ref::all_close(inplace, ref::relu(x), 0, 0));
}

TEST(Relu, FiniteDifferences) {
  std::mt19937 rng(122);
  // Inputs at least 0.1 away from the kink, which is well beyond both FD steps.
  Tensor x = ref::random_tensor_away_from_zero(6, 7, rng, 0.1);
  const DMat r = ref::random_dmat(6, 7, rng);
  // (1) reference backward vs float64 FD of the reference forward
  DMat xd = ref::to_d(x);
  const std::vector<double> num64 = ref::central_differences(xd.data(), xd.size(), kFdStep64,
                                                             [&] { return ref::dot(ref::relu(xd), r); });
  EXPECT_TRUE(ref::gradients_match(ref::relu_backward(xd, r), num64, kFdTol64));
  // (2) op backward vs FD of the op forward
  Tensor y, dx;
  const std::vector<double> num32 = ref::central_differences(x.data(), x.size(), kFdStep32, [&] {
    hulk::ops::relu_forward(x, y);
    return ref::projection(y, r);
  });
  hulk::ops::relu_forward(x, y);
  hulk::ops::relu_backward(y, ref::to_f(r), dx);
  EXPECT_TRUE(ref::gradients_match(dx, num32, kFdTol32));
}

// ---- dropout ----------------------------------------------------------------------------------

TEST(Dropout, KeepsAboutOneMinusPAndScalesKeptValues) {
  std::mt19937 rng(131);
  // Values in [0.5, 1] (never zero) so a zero output means "dropped".
  const Tensor x = ref::random_tensor(200, 500, rng, 0.5, 1.0);
  for (float p : {0.1f, 0.5f, 0.9f}) {
    SCOPED_TRACE("p = " + std::to_string(p));
    Tensor y;
    hulk::ops::dropout_forward(x, p, 42, 7, y);
    ASSERT_TRUE(y.same_shape(x));
    int64_t kept = 0;
    double worst = 0.0;
    for (int64_t i = 0; i < x.size(); ++i) {
      if (y.data()[i] == 0.0f) continue;
      ++kept;
      const double want = static_cast<double>(x.data()[i]) / (1.0 - p);
      worst = std::max(worst, std::fabs(y.data()[i] - want) / want);
    }
    // 1e5 Bernoulli draws: the kept fraction has standard deviation <= 0.0016; 0.01 is > 6 sigma.
    EXPECT_NEAR(static_cast<double>(kept) / x.size(), 1.0 - p, 0.01);
    EXPECT_LE(worst, 1e-6) << "kept values must be x / (1 - p)";
  }
}

TEST(Dropout, MaskIsAFunctionOfSeedStepAndIndex) {
  std::mt19937 rng(132);
  const Tensor x1 = ref::random_tensor(64, 50, rng, 0.5, 1.0), x2 = ref::random_tensor(64, 50, rng, -1.0, -0.5);
  const float p = 0.4f;
  auto mask = [&](const Tensor& x, uint64_t seed, uint64_t step) {
    Tensor y;
    hulk::ops::dropout_forward(x, p, seed, step, y);
    std::vector<bool> m(static_cast<size_t>(y.size()));
    for (int64_t i = 0; i < y.size(); ++i) m[i] = y.data()[i] != 0.0f;
    return m;
  };
  auto differences = [](const std::vector<bool>& a, const std::vector<bool>& b) {
    int64_t d = 0;
    for (size_t i = 0; i < a.size(); ++i) d += a[i] != b[i];
    return d;
  };
  const std::vector<bool> base = mask(x1, 5, 3);
  EXPECT_EQ(differences(base, mask(x1, 5, 3)), 0) << "same (seed, step) must give the same mask";
  EXPECT_EQ(differences(base, mask(x2, 5, 3)), 0) << "the mask must not depend on the values";
  // Two independent masks with keep probability 0.6 differ in 48% of 3200 places.
  EXPECT_GT(differences(base, mask(x1, 5, 4)), 3200 / 4) << "a different step must give a different mask";
  EXPECT_GT(differences(base, mask(x1, 6, 3)), 3200 / 4) << "a different seed must give a different mask";
}

TEST(Dropout, BackwardUsesTheForwardMask) {
  std::mt19937 rng(133);
  const Tensor x = ref::random_tensor(30, 40, rng, 0.5, 1.0);
  const DMat dy = ref::random_dmat(30, 40, rng);
  const float p = 0.3f;
  Tensor y, dx;
  hulk::ops::dropout_forward(x, p, 9, 11, y);
  hulk::ops::dropout_backward(ref::to_f(dy), p, 9, 11, dx);
  ASSERT_TRUE(dx.same_shape(x));
  DMat want(30, 40);
  for (int64_t i = 0; i < x.size(); ++i) want.v[i] = y.data()[i] != 0.0f ? dy.v[i] / (1.0 - p) : 0.0;
  EXPECT_TRUE(ref::all_close(dx, want, 0, 1e-6));
}

TEST(Dropout, ZeroProbabilityIsIdentity) {
  std::mt19937 rng(134);
  const Tensor x = ref::random_tensor(17, 9, rng);
  Tensor y, dx;
  hulk::ops::dropout_forward(x, 0.0f, 1, 1, y);
  EXPECT_TRUE(ref::identical(y, x));
  hulk::ops::dropout_backward(x, 0.0f, 1, 1, dx);
  EXPECT_TRUE(ref::identical(dx, x));
}

TEST(Dropout, InvalidProbabilityThrows) {
  const Tensor x = Tensor::filled(3, 3, 1.0f);
  Tensor y;
  for (float p : {-0.1f, 1.0f, 1.5f, std::numeric_limits<float>::quiet_NaN()}) {
    EXPECT_THROW(hulk::ops::dropout_forward(x, p, 1, 1, y), std::invalid_argument) << "p = " << p;
    EXPECT_THROW(hulk::ops::dropout_backward(x, p, 1, 1, y), std::invalid_argument) << "p = " << p;
  }
}

TEST(Dropout, ReferenceBackwardMatchesFiniteDifferences) {
  std::mt19937 rng(136);
  DMat x = ref::random_dmat(7, 6, rng);
  const DMat r = ref::random_dmat(7, 6, rng);
  std::bernoulli_distribution keep_draw(0.6);
  std::vector<bool> keep(42);
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = keep_draw(rng);
  const double p = 0.4;
  const std::vector<double> num = ref::central_differences(x.data(), x.size(), kFdStep64,
                                                           [&] { return ref::dot(ref::dropout(x, keep, p), r); });
  EXPECT_TRUE(ref::gradients_match(ref::dropout_backward(r, keep, p), num, kFdTol64));
}

TEST(Dropout, OpMatchesReferenceGivenItsMask) {
  std::mt19937 rng(137);
  const DMat x = ref::random_dmat(25, 31, rng, 0.25, 1.0), dy = ref::random_dmat(25, 31, rng);
  const float p = 0.45f;
  Tensor y, dx;
  hulk::ops::dropout_forward(ref::to_f(x), p, 1234, 56, y);
  hulk::ops::dropout_backward(ref::to_f(dy), p, 1234, 56, dx);
  std::vector<bool> keep(static_cast<size_t>(y.size()));
  for (int64_t i = 0; i < y.size(); ++i) keep[i] = y.data()[i] != 0.0f;  // x > 0, so 0 means dropped
  EXPECT_TRUE(ref::all_close(y, ref::dropout(x, keep, p), 0, 1e-6));
  EXPECT_TRUE(ref::all_close(dx, ref::dropout_backward(dy, keep, p), 0, 1e-6));
}

TEST(Dropout, FiniteDifferences) {
  std::mt19937 rng(135);
  Tensor x = ref::random_tensor(8, 9, rng);
  const DMat r = ref::random_dmat(8, 9, rng);
  const float p = 0.35f;
  Tensor y, dx;
  const std::vector<double> num = ref::central_differences(x.data(), x.size(), kFdStep32, [&] {
    hulk::ops::dropout_forward(x, p, 77, 2, y);
    return ref::projection(y, r);
  });
  hulk::ops::dropout_backward(ref::to_f(r), p, 77, 2, dx);
  EXPECT_TRUE(ref::gradients_match(dx, num, kFdTol32));
  // Both kept and dropped elements occur, so the check covers both branches.
  int64_t zeros = 0;
  for (int64_t i = 0; i < dx.size(); ++i) zeros += dx.data()[i] == 0.0f;
  EXPECT_GT(zeros, 0);
  EXPECT_LT(zeros, dx.size());
}

// ---- softmax ----------------------------------------------------------------------------------

TEST(Softmax, MatchesReference) {
  std::mt19937 rng(141);
  for (const auto& [n, c] : {std::pair<int64_t, int64_t>{31, 7}, {5, 1}, {3, 40}}) {
    // Spread of 20 in the logits exercises the max-subtraction.
    const DMat logits = ref::random_dmat(n, c, rng, -10.0, 10.0);
    Tensor probs;
    hulk::ops::softmax(ref::to_f(logits), probs);
    EXPECT_TRUE(ref::all_close(probs, ref::softmax(logits), 1e-6, 1e-5));
  }
  // Large logits must not overflow.
  Tensor big = Tensor::filled(1, 3, 1000.0f), probs;
  big.at(0, 2) = 999.0f;
  hulk::ops::softmax(big, probs);
  DMat want(1, 3);
  want(0, 0) = want(0, 1) = 1.0 / (2.0 + std::exp(-1.0));
  want(0, 2) = std::exp(-1.0) / (2.0 + std::exp(-1.0));
  EXPECT_TRUE(ref::all_close(probs, want, 1e-6, 1e-5));
}

// =============================================================================================
// sparse
// =============================================================================================

TEST(Spmm, MatchesReferenceOnAllGraphs) {
  std::mt19937 rng(201);
  for (const GraphCase& gc : graph_cases()) {
    SCOPED_TRACE(gc.name);
    const Csr a = csr_of(gc.g);
    for (int64_t f : {1, 5, 16}) {
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
// EdgePool
// =============================================================================================

TEST(EdgePool, PoolCoefficients) {
  for (const GraphCase& gc : graph_cases()) {
    SCOPED_TRACE(gc.name);
    const Csr a = csr_of(gc.g);
    const std::vector<int64_t> deg = ref::in_degree(gc.g);
    const hulk::ops::PoolCoefficients s = hulk::ops::pool_coefficients(a, Pooling::Sum);
    const hulk::ops::PoolCoefficients m = hulk::ops::pool_coefficients(a, Pooling::Mean);
    ASSERT_EQ(static_cast<size_t>(s.self_coef.rows()), deg.size());
    ASSERT_EQ(static_cast<size_t>(s.nbr_coef.rows()), deg.size());
    ASSERT_EQ(static_cast<size_t>(m.self_coef.rows()), deg.size());
    ASSERT_EQ(static_cast<size_t>(m.nbr_coef.rows()), deg.size());
    for (size_t v = 0; v < deg.size(); ++v) {
      EXPECT_EQ(s.self_coef.at(v, 0), static_cast<float>(deg[v]));
      EXPECT_EQ(s.nbr_coef.at(v, 0), 1.0f);
      EXPECT_EQ(m.self_coef.at(v, 0), deg[v] > 0 ? 1.0f : 0.0f);
      EXPECT_NEAR(m.nbr_coef.at(v, 0), deg[v] > 0 ? 1.0 / deg[v] : 0.0, 1e-7);
    }
  }
}

// Everything one EdgePool configuration needs, float64 and float32 side by side.
struct PoolSetup {
  EdgeList g;
  Pooling pooling;
  Csr a, a_t;
  hulk::ops::PoolCoefficients coef;
  DMat h, e, w, b;
  Tensor hf, ef, wf, bf, edge_sum;

  PoolSetup(const EdgeList& graph, Pooling pl, int64_t f, int64_t fe, int64_t o, std::mt19937& rng)
      : g(graph), pooling(pl), a(csr_of(graph)), a_t(hulk::transpose(a)), coef(hulk::ops::pool_coefficients(a, pl)) {
    h = ref::random_dmat(g.num_nodes, f, rng);
    e = ref::random_dmat(g.num_edges(), fe, rng);
    w = ref::random_dmat(2 * f + fe, o, rng);
    b = ref::random_dmat(1, o, rng);
    hf = ref::to_f(h);
    ef = ref::to_f(e);
    wf = ref::to_f(w);
    bf = ref::to_f(b);
    hulk::ops::segment_sum_edges(a, ef, edge_sum);
  }
  bool mean() const { return pooling == Pooling::Mean; }
  int64_t f() const { return h.cols; }

  Tensor fast_forward(Tensor* p_out = nullptr) const {
    Tensor z = Tensor::filled(1, 1, 9.0f), p;
    hulk::ops::edge_pool_forward(a, coef, hf, edge_sum, wf, bf, z, p);
    if (p_out) *p_out = p;
    return z;
  }
  Tensor per_edge_forward() const {
    Tensor z = Tensor::filled(1, 1, 9.0f);
    hulk::ops::edge_pool_forward_per_edge(a, pooling, hf, ef, wf, bf, z);
    return z;
  }
  // Gradients of both paths. dw, db, dh start as NaN of the right shape to prove they are overwritten.
  struct Grads {
    Tensor dw, db, dh;
  };
  static Grads poisoned(int64_t n, int64_t f, int64_t rows_w, int64_t o) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    return {Tensor::filled(rows_w, o, nan), Tensor::filled(1, o, nan), Tensor::filled(n, f, nan)};
  }
  Grads fast_backward(const Tensor& dz, bool with_dh) const {
    Tensor p;
    fast_forward(&p);
    Grads gr = poisoned(g.num_nodes, f(), w.rows, w.cols);
    hulk::ops::edge_pool_backward(a_t, coef, p, wf, dz, f(), gr.dw, gr.db, with_dh ? &gr.dh : nullptr);
    return gr;
  }
  Grads per_edge_backward(const Tensor& dz, bool with_dh) const {
    Grads gr = poisoned(g.num_nodes, f(), w.rows, w.cols);
    hulk::ops::edge_pool_backward_per_edge(a, pooling, hf, ef, wf, dz, gr.dw, gr.db, with_dh ? &gr.dh : nullptr);
    return gr;
  }
};

TEST(EdgePool, ForwardBothPathsMatchReference) {
  std::mt19937 rng(301);
  for (const GraphCase& gc : graph_cases()) {
    for (Pooling pl : {Pooling::Sum, Pooling::Mean}) {
      for (int64_t fe : {0, 3}) {
        SCOPED_TRACE(gc.name + ", " + pooling_name(pl) + ", Fe " + std::to_string(fe));
        const PoolSetup s(gc.g, pl, 5, fe, 4, rng);
        const DMat want = ref::edge_pool_forward(s.g, s.mean(), s.h, s.e, s.w, s.b);
        Tensor p;
        const Tensor fast = s.fast_forward(&p);
        const Tensor slow = s.per_edge_forward();
        EXPECT_TRUE(ref::all_close(fast, want, kAtol, kRtol)) << "fast path";
        EXPECT_TRUE(ref::all_close(slow, want, kAtol, kRtol)) << "per-edge path";
        EXPECT_TRUE(ref::all_close(fast, slow, kPathAtol, kPathRtol)) << "fast vs per-edge";
        EXPECT_TRUE(ref::all_close(p, ref::edge_pool_stacked_input(s.g, s.mean(), s.h, s.e), kAtol, kRtol))
            << "stacked input p";
        // A node without neighbours outputs 0 under both poolings.
        const std::vector<int64_t> deg = ref::in_degree(s.g);
        for (int64_t v = 0; v < s.g.num_nodes; ++v) {
          if (deg[v] != 0) continue;
          for (int64_t j = 0; j < fast.cols(); ++j) {
            EXPECT_EQ(fast.at(v, j), 0.0f) << "isolated node " << v;
            EXPECT_EQ(slow.at(v, j), 0.0f) << "isolated node " << v;
          }
        }
      }
    }
  }
}

TEST(EdgePool, BackwardBothPathsMatchReference) {
  std::mt19937 rng(302);
  for (const GraphCase& gc : graph_cases()) {
    for (Pooling pl : {Pooling::Sum, Pooling::Mean}) {
      for (int64_t fe : {0, 3}) {
        for (bool with_dh : {false, true}) {
          SCOPED_TRACE(gc.name + ", " + pooling_name(pl) + ", Fe " + std::to_string(fe) + (with_dh ? ", dh" : ", no dh"));
          const PoolSetup s(gc.g, pl, 4, fe, 3, rng);
          const DMat dz = ref::random_dmat(s.g.num_nodes, 3, rng);
          const ref::EdgePoolGrads want = ref::edge_pool_backward(s.g, s.mean(), s.h, s.e, s.w, dz);
          const PoolSetup::Grads fast = s.fast_backward(ref::to_f(dz), with_dh);
          const PoolSetup::Grads slow = s.per_edge_backward(ref::to_f(dz), with_dh);
          EXPECT_TRUE(ref::all_close(fast.dw, want.dw, kAtol, kRtol)) << "fast dw";
          EXPECT_TRUE(ref::all_close(fast.db, want.db, kAtol, kRtol)) << "fast db";
          EXPECT_TRUE(ref::all_close(slow.dw, want.dw, kAtol, kRtol)) << "per-edge dw";
          EXPECT_TRUE(ref::all_close(slow.db, want.db, kAtol, kRtol)) << "per-edge db";
          EXPECT_TRUE(ref::all_close(fast.dw, slow.dw, kPathAtol, kPathRtol)) << "dw fast vs per-edge";
          EXPECT_TRUE(ref::all_close(fast.db, slow.db, kPathAtol, kPathRtol)) << "db fast vs per-edge";
          if (with_dh) {
            EXPECT_TRUE(ref::all_close(fast.dh, want.dh, kAtol, kRtol)) << "fast dh";
            EXPECT_TRUE(ref::all_close(slow.dh, want.dh, kAtol, kRtol)) << "per-edge dh";
            EXPECT_TRUE(ref::all_close(fast.dh, slow.dh, kPathAtol, kPathRtol)) << "dh fast vs per-edge";
          }
        }
      }
    }
  }
}

TEST(EdgePool, RepeatedCallsAreBitForBitIdentical) {
  // Deterministic on the CPU: the same inputs give the same bits, call after call.
  std::mt19937 rng(307);
  const PoolSetup s(ref::random_graph(GraphKind::Skewed, 300, 900, true, false, 307), Pooling::Mean, 8, 3, 5, rng);
  const Tensor dz = ref::random_tensor(300, 5, rng);
  EXPECT_TRUE(ref::identical(s.fast_forward(), s.fast_forward()));
  EXPECT_TRUE(ref::identical(s.per_edge_forward(), s.per_edge_forward()));
  for (bool fast : {true, false}) {
    const PoolSetup::Grads a = fast ? s.fast_backward(dz, true) : s.per_edge_backward(dz, true);
    const PoolSetup::Grads b = fast ? s.fast_backward(dz, true) : s.per_edge_backward(dz, true);
    EXPECT_TRUE(ref::identical(a.dw, b.dw));
    EXPECT_TRUE(ref::identical(a.db, b.db));
    EXPECT_TRUE(ref::identical(a.dh, b.dh));
  }
}

TEST(EdgePool, MeanOfConstantMessagesIsTheMessage) {
  // Hand check of eq. 4: with W = 0 every message is b, so sum pooling gives deg * b and
  // mean pooling gives b (0 for isolated nodes).
  const EdgeList g = ref::random_graph(GraphKind::Isolated, 12, 15, false, false, 303);
  std::mt19937 rng(303);
  for (Pooling pl : {Pooling::Sum, Pooling::Mean}) {
    PoolSetup s(g, pl, 2, 1, 3, rng);
    s.wf.fill(0.0f);
    const Tensor fast = s.fast_forward(), slow = s.per_edge_forward();
    const std::vector<int64_t> deg = ref::in_degree(g);
    DMat want(g.num_nodes, 3);
    for (int64_t v = 0; v < g.num_nodes; ++v)
      for (int64_t j = 0; j < 3; ++j)
        want(v, j) = (pl == Pooling::Sum ? static_cast<double>(deg[v]) : (deg[v] > 0 ? 1.0 : 0.0)) * s.b(0, j);
    EXPECT_TRUE(ref::all_close(fast, want, kAtol, kRtol)) << pooling_name(pl);
    EXPECT_TRUE(ref::all_close(slow, want, kAtol, kRtol)) << pooling_name(pl);
  }
}

TEST(EdgePool, ReferenceBackwardMatchesFiniteDifferences) {
  std::mt19937 rng(304);
  for (const GraphCase& gc : small_graph_cases()) {
    for (Pooling pl : {Pooling::Sum, Pooling::Mean}) {
      for (int64_t fe : {0, 2}) {
        SCOPED_TRACE(gc.name + ", " + pooling_name(pl) + ", Fe " + std::to_string(fe));
        const bool mean = pl == Pooling::Mean;
        DMat h = ref::random_dmat(gc.g.num_nodes, 3, rng), e = ref::random_dmat(gc.g.num_edges(), fe, rng);
        DMat w = ref::random_dmat(6 + fe, 2, rng), b = ref::random_dmat(1, 2, rng);
        const DMat r = ref::random_dmat(gc.g.num_nodes, 2, rng);
        auto loss = [&] { return ref::dot(ref::edge_pool_forward(gc.g, mean, h, e, w, b), r); };
        const ref::EdgePoolGrads an = ref::edge_pool_backward(gc.g, mean, h, e, w, r);
        EXPECT_TRUE(ref::gradients_match(an.dh, ref::central_differences(h.data(), h.size(), kFdStep64, loss), kFdTol64)) << "dh";
        EXPECT_TRUE(ref::gradients_match(an.dw, ref::central_differences(w.data(), w.size(), kFdStep64, loss), kFdTol64)) << "dw";
        EXPECT_TRUE(ref::gradients_match(an.db, ref::central_differences(b.data(), b.size(), kFdStep64, loss), kFdTol64)) << "db";
      }
    }
  }
}

TEST(EdgePool, OpBackwardMatchesFiniteDifferencesOfOpForward) {
  std::mt19937 rng(305);
  for (const GraphCase& gc : small_graph_cases()) {
    for (Pooling pl : {Pooling::Sum, Pooling::Mean}) {
      for (int64_t fe : {0, 2}) {
        for (bool fast_path : {true, false}) {
          SCOPED_TRACE(gc.name + ", " + pooling_name(pl) + ", Fe " + std::to_string(fe) +
                       (fast_path ? ", fast path" : ", per-edge path"));
          PoolSetup s(gc.g, pl, 3, fe, 2, rng);
          const DMat r = ref::random_dmat(gc.g.num_nodes, 2, rng);
          auto loss = [&] { return ref::projection(fast_path ? s.fast_forward() : s.per_edge_forward(), r); };
          const PoolSetup::Grads an = fast_path ? s.fast_backward(ref::to_f(r), true) : s.per_edge_backward(ref::to_f(r), true);
          const std::vector<double> nw = ref::central_differences(s.wf.data(), s.wf.size(), kFdStep32, loss);
          const std::vector<double> nb = ref::central_differences(s.bf.data(), s.bf.size(), kFdStep32, loss);
          const std::vector<double> nh = ref::central_differences(s.hf.data(), s.hf.size(), kFdStep32, loss);
          EXPECT_TRUE(ref::gradients_match(an.dw, nw, kFdTol32)) << "dw";
          EXPECT_TRUE(ref::gradients_match(an.db, nb, kFdTol32)) << "db";
          EXPECT_TRUE(ref::gradients_match(an.dh, nh, kFdTol32)) << "dh";
        }
      }
    }
  }
}

TEST(EdgePool, ShapeErrors) {
  std::mt19937 rng(306);
  const EdgeList g = ref::random_graph(GraphKind::Uniform, 8, 12, true, false, 306);
  const PoolSetup s(g, Pooling::Sum, 3, 2, 4, rng);
  Tensor z, p;
  // w must have 2F + Fe rows.
  EXPECT_THROW(hulk::ops::edge_pool_forward(s.a, s.coef, s.hf, s.edge_sum, Tensor(7, 4), s.bf, z, p), std::invalid_argument);
  EXPECT_THROW(hulk::ops::edge_pool_forward_per_edge(s.a, Pooling::Sum, s.hf, s.ef, Tensor(9, 4), s.bf, z),
               std::invalid_argument);
  // h must have one row per node; b must be [1, O].
  EXPECT_THROW(hulk::ops::edge_pool_forward(s.a, s.coef, Tensor(7, 3), s.edge_sum, s.wf, s.bf, z, p), std::invalid_argument);
  EXPECT_THROW(hulk::ops::edge_pool_forward(s.a, s.coef, s.hf, s.edge_sum, s.wf, Tensor(1, 3), z, p), std::invalid_argument);
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

// =============================================================================================
// loss
// =============================================================================================

struct LossCase {
  DMat logits;
  std::vector<int64_t> labels;
  std::vector<uint8_t> mask;
};

LossCase random_loss_case(int64_t n, int64_t c, std::mt19937& rng) {
  LossCase lc{ref::random_dmat(n, c, rng, -3.0, 3.0), std::vector<int64_t>(n), std::vector<uint8_t>(n)};
  std::uniform_int_distribution<int64_t> cls(0, c - 1);
  std::bernoulli_distribution keep(0.6), unlabelled(0.15);
  for (int64_t i = 0; i < n; ++i) {
    lc.labels[i] = unlabelled(rng) ? -1 : cls(rng);
    lc.mask[i] = keep(rng) ? 1 : 0;
  }
  return lc;
}

TEST(SoftmaxCrossEntropy, MatchesReferenceWithAndWithoutMask) {
  std::mt19937 rng(501);
  for (const auto& [n, c] : {std::pair<int64_t, int64_t>{60, 5}, {17, 2}, {9, 12}}) {
    const LossCase lc = random_loss_case(n, c, rng);
    for (bool use_mask : {true, false}) {
      SCOPED_TRACE("N " + std::to_string(n) + " C " + std::to_string(c) + (use_mask ? ", mask" : ", no mask"));
      const ref::LossRef want = ref::softmax_cross_entropy(lc.logits, lc.labels, use_mask ? &lc.mask : nullptr);
      ASSERT_GT(want.count, 0);
      Tensor grad = Tensor::filled(2, 2, 5.0f);
      const hulk::ops::LossResult got =
          hulk::ops::softmax_cross_entropy(ref::to_f(lc.logits), lc.labels.data(), use_mask ? lc.mask.data() : nullptr, &grad);
      EXPECT_EQ(got.count, want.count);
      EXPECT_EQ(got.correct, want.correct);
      EXPECT_NEAR(got.loss, want.loss, 1e-5 * std::max(1.0, want.loss));
      EXPECT_TRUE(ref::all_close(grad, want.grad, 1e-6, 1e-5));
      // Without a grad tensor the result is the same.
      const hulk::ops::LossResult nograd =
          hulk::ops::softmax_cross_entropy(ref::to_f(lc.logits), lc.labels.data(), use_mask ? lc.mask.data() : nullptr, nullptr);
      EXPECT_EQ(nograd.count, got.count);
      EXPECT_EQ(nograd.correct, got.correct);
      EXPECT_DOUBLE_EQ(nograd.loss, got.loss);
    }
  }
}

TEST(SoftmaxCrossEntropy, MaskExcludesRowsAndCountsAreRight) {
  // Hand case, 4 rows x 3 classes. argmax: row0 -> 2, row1 -> 0, row2 -> 1, row3 -> 1.
  const float data[] = {0.1f, 0.2f, 0.9f, 2.0f, 1.0f, 0.0f, -1.0f, 3.0f, 0.5f, 0.0f, 0.3f, 0.2f};
  const Tensor logits = Tensor::from_data(4, 3, data);
  const std::vector<int64_t> labels{2, 1, 1, -1};
  const std::vector<uint8_t> mask{1, 1, 0, 1};
  Tensor grad;
  const hulk::ops::LossResult r = hulk::ops::softmax_cross_entropy(logits, labels.data(), mask.data(), &grad);
  EXPECT_EQ(r.count, 2);    // row 2 masked, row 3 unlabelled
  EXPECT_EQ(r.correct, 1);  // row 0 right, row 1 wrong
  const DMat p = ref::softmax(ref::to_d(logits));
  EXPECT_NEAR(r.loss, -(std::log(p(0, 2)) + std::log(p(1, 1))) / 2.0, 1e-6);
  for (int64_t j = 0; j < 3; ++j) {
    EXPECT_EQ(grad.at(2, j), 0.0f) << "masked row";
    EXPECT_EQ(grad.at(3, j), 0.0f) << "unlabelled row";
    EXPECT_NEAR(grad.at(0, j), (p(0, j) - (j == 2)) / 2.0, 1e-6);
  }
  // Changing a masked-out row changes nothing.
  Tensor logits2 = logits;
  logits2.at(2, 0) = 50.0f;
  const hulk::ops::LossResult r2 = hulk::ops::softmax_cross_entropy(logits2, labels.data(), mask.data(), nullptr);
  EXPECT_DOUBLE_EQ(r2.loss, r.loss);
}

TEST(SoftmaxCrossEntropy, NothingCountedGivesZero) {
  std::mt19937 rng(502);
  const Tensor logits = ref::random_tensor(6, 4, rng);
  const std::vector<int64_t> labels{0, 1, 2, 3, 0, 1}, unlabelled(6, -1);
  const std::vector<uint8_t> none(6, 0);
  for (int variant = 0; variant < 2; ++variant) {
    Tensor grad = Tensor::filled(6, 4, 7.0f);
    const hulk::ops::LossResult r = variant == 0
                                        ? hulk::ops::softmax_cross_entropy(logits, labels.data(), none.data(), &grad)
                                        : hulk::ops::softmax_cross_entropy(logits, unlabelled.data(), nullptr, &grad);
    EXPECT_EQ(r.count, 0);
    EXPECT_EQ(r.correct, 0);
    EXPECT_EQ(r.loss, 0.0);
    ASSERT_EQ(grad.rows(), 6);
    ASSERT_EQ(grad.cols(), 4);
    for (int64_t i = 0; i < grad.size(); ++i) EXPECT_EQ(grad.data()[i], 0.0f);
  }
}

TEST(SoftmaxCrossEntropy, LabelOutOfRangeThrows) {
  std::mt19937 rng(503);
  const Tensor logits = ref::random_tensor(4, 3, rng);
  const std::vector<uint8_t> mask{1, 1, 1, 1};
  for (int64_t bad : {3, 100, -2}) {
    const std::vector<int64_t> labels{0, bad, 1, 2};
    Tensor grad;
    EXPECT_THROW(hulk::ops::softmax_cross_entropy(logits, labels.data(), mask.data(), &grad), std::invalid_argument)
        << "label " << bad;
    EXPECT_THROW(hulk::ops::softmax_cross_entropy(logits, labels.data(), nullptr, nullptr), std::invalid_argument)
        << "label " << bad;
  }
}

TEST(SoftmaxCrossEntropy, FiniteDifferences) {
  std::mt19937 rng(504);
  LossCase lc = random_loss_case(12, 4, rng);
  // (1) reference gradient vs float64 FD of the reference loss
  const ref::LossRef an = ref::softmax_cross_entropy(lc.logits, lc.labels, &lc.mask);
  ASSERT_GT(an.count, 0);
  const std::vector<double> num64 = ref::central_differences(
      lc.logits.data(), lc.logits.size(), kFdStep64, [&] { return ref::softmax_cross_entropy(lc.logits, lc.labels, &lc.mask).loss; });
  EXPECT_TRUE(ref::gradients_match(an.grad, num64, kFdTol64));
  // (2) op gradient vs FD of the op loss
  Tensor logits = ref::to_f(lc.logits), grad;
  hulk::ops::softmax_cross_entropy(logits, lc.labels.data(), lc.mask.data(), &grad);
  const std::vector<double> num32 = ref::central_differences(logits.data(), logits.size(), kFdStep32, [&] {
    return hulk::ops::softmax_cross_entropy(logits, lc.labels.data(), lc.mask.data(), nullptr).loss;
  });
  EXPECT_TRUE(ref::gradients_match(grad, num32, kFdTol32));
}

// =============================================================================================
// Adam
// =============================================================================================

TEST(Adam, MatchesTorchAdamOverSeveralStepsWithWeightDecay) {
  std::mt19937 rng(601);
  for (float wd : {0.0f, 0.05f}) {
    SCOPED_TRACE("weight decay " + std::to_string(wd));
    hulk::ops::AdamConfig cfg;
    cfg.lr = 0.03f;
    cfg.beta1 = 0.85f;
    cfg.beta2 = 0.99f;
    cfg.eps = 1e-6f;
    cfg.weight_decay = wd;
    const ref::AdamRef rc{cfg.lr, cfg.beta1, cfg.beta2, cfg.eps, cfg.weight_decay};
    DMat p = ref::random_dmat(9, 7, rng), m(9, 7), v(9, 7);
    Tensor pf = ref::to_f(p), mf(9, 7), vf(9, 7);
    for (int64_t t = 1; t <= 6; ++t) {
      const DMat g = ref::random_dmat(9, 7, rng);
      ref::adam_step(p, g, m, v, rc, t);
      hulk::ops::adam_step(pf, ref::to_f(g), mf, vf, cfg, t);
      EXPECT_TRUE(ref::all_close(mf, m, 1e-6, 1e-5)) << "m after step " << t;
      EXPECT_TRUE(ref::all_close(vf, v, 1e-7, 1e-5)) << "v after step " << t;
      EXPECT_TRUE(ref::all_close(pf, p, 1e-6, 1e-5)) << "param after step " << t;
    }
  }
}

TEST(Adam, FirstStepMovesByLearningRateAgainstTheGradient) {
  // Bias correction makes the first update lr * g / (|g| + eps): about -lr * sign(g).
  std::mt19937 rng(602);
  const Tensor p0 = ref::random_tensor(5, 4, rng);
  const Tensor g = ref::random_tensor_away_from_zero(5, 4, rng, 0.1);
  Tensor p = p0, m(5, 4), v(5, 4);
  hulk::ops::AdamConfig cfg;  // defaults: lr 0.01, no weight decay
  hulk::ops::adam_step(p, g, m, v, cfg, 1);
  for (int64_t i = 0; i < p.size(); ++i) {
    const double sign = g.data()[i] > 0 ? 1.0 : -1.0;
    EXPECT_NEAR(p.data()[i], p0.data()[i] - 0.01 * sign, 1e-6) << "element " << i;
  }
}

TEST(Adam, WeightDecayActsWithoutGradient) {
  // Zero gradient, weight decay 0.1: the decay term alone drives the update (L2 in the gradient).
  Tensor p = Tensor::filled(2, 2, 2.0f), m(2, 2), v(2, 2);
  hulk::ops::AdamConfig cfg;
  cfg.weight_decay = 0.1f;
  hulk::ops::adam_step(p, Tensor(2, 2), m, v, cfg, 1);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(p.data()[i], 2.0 - 0.01, 1e-6);
    EXPECT_NEAR(m.data()[i], 0.1 * 0.2, 1e-7);
    EXPECT_NEAR(v.data()[i], 0.001 * 0.04, 1e-9);
  }
}

TEST(Adam, BadArgumentsThrow) {
  Tensor p(3, 2), m(3, 2), v(3, 2), v_bad(3, 1);
  hulk::ops::AdamConfig cfg;
  EXPECT_THROW(hulk::ops::adam_step(p, Tensor(2, 3), m, v, cfg, 1), std::invalid_argument);
  EXPECT_THROW(hulk::ops::adam_step(p, Tensor(3, 2), m, v_bad, cfg, 1), std::invalid_argument);
  EXPECT_THROW(hulk::ops::adam_step(p, Tensor(3, 2), m, v, cfg, 0), std::invalid_argument);
}

}  // namespace
