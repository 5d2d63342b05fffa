// Adam (csrc/ops/cpu/adam.cpp) against torch.optim.Adam's update rule.
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
