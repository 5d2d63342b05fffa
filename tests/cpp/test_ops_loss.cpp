// Loss ops (csrc/ops/cpu/loss.cpp): softmax and masked softmax cross-entropy against the
// float64 references and finite differences (tests/cpp/ops_fixtures.h).
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

// The training loop's losses (targets prepared once, results read in a batch) are
// softmax_cross_entropy's, bit for bit; a bad label throws when the targets are made.
TEST(SoftmaxCrossEntropy, LossBatchMatchesTheOneShotLoss) {
  std::mt19937 rng(504);
  const int64_t n = 301, c = 5;
  const Tensor logits = ref::random_tensor(n, c, rng, -4.0, 4.0);
  std::vector<int64_t> labels(n);
  std::vector<uint8_t> mask(n);
  for (int64_t i = 0; i < n; ++i) {
    labels[i] = static_cast<int64_t>(rng() % (c + 1)) - 1;
    mask[i] = rng() % 3 != 0;
  }
  labels[0] = 2;
  mask[0] = 1;
  hulk::ops::LossBatch batch(hulk::Device::CPU, 2);
  const auto masked = hulk::ops::make_loss_targets(labels.data(), mask.data(), n, c, hulk::Device::CPU);
  const auto all = hulk::ops::make_loss_targets(labels.data(), nullptr, n, c, hulk::Device::CPU);
  Tensor grad, want_grad;
  batch.add(logits, masked, &grad);
  batch.add(logits, all, nullptr);
  const auto got = batch.read();
  ASSERT_EQ(got.size(), 2u);
  const auto want = hulk::ops::softmax_cross_entropy(logits, labels.data(), mask.data(), &want_grad);
  const auto want_all = hulk::ops::softmax_cross_entropy(logits, labels.data(), nullptr, nullptr);
  EXPECT_EQ(got[0].loss, want.loss);
  EXPECT_EQ(got[0].correct, want.correct);
  EXPECT_EQ(got[0].count, want.count);
  EXPECT_EQ(got[1].loss, want_all.loss);
  EXPECT_EQ(got[1].correct, want_all.correct);
  EXPECT_EQ(got[1].count, want_all.count);
  ASSERT_TRUE(grad.same_shape(want_grad));
  for (int64_t i = 0; i < grad.size(); ++i) EXPECT_EQ(grad.data()[i], want_grad.data()[i]) << i;
  EXPECT_TRUE(batch.read().empty());
  labels[1] = c;
  mask[1] = 1;
  EXPECT_THROW(hulk::ops::make_loss_targets(labels.data(), mask.data(), n, c, hulk::Device::CPU),
               std::invalid_argument);
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

}  // namespace
