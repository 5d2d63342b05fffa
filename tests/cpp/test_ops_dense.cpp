// Dense ops (csrc/ops/cpu/dense.cpp): GEMM, bias, ReLU and dropout against the float64
// references and finite differences (tests/cpp/ops_fixtures.h).
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
  // And dx may be dy (the model's backward overwrites its gradient buffer).
  Tensor grad = ref::to_f(dy);
  hulk::ops::relu_backward(y, grad, grad);
  EXPECT_TRUE(ref::all_close(grad, ref::relu_backward(x, dy), 0, 0));
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

TEST(Dropout, InPlaceEqualsOutOfPlace) {
  std::mt19937 rng(135);
  // Sizes around the kernel's chunk (1 << 14 elements), so several threads' ranges are covered.
  for (int64_t rows : {1, 41, 700}) {
    const Tensor x = ref::random_tensor(rows, 57, rng);
    for (float p : {0.0f, 0.3f, 0.9f}) {
      Tensor want, in_place = x;
      hulk::ops::dropout_forward(x, p, 21, 4, want);
      hulk::ops::dropout_forward(in_place, p, 21, 4, in_place);
      EXPECT_TRUE(ref::identical(in_place, want)) << rows << " rows, p " << p;
      hulk::ops::dropout_backward(x, p, 21, 4, want);
      in_place = x;
      hulk::ops::dropout_backward(in_place, p, 21, 4, in_place);
      EXPECT_TRUE(ref::identical(in_place, want)) << rows << " rows, p " << p;
    }
  }
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

}  // namespace
