// Measured profiles (profile.h) and the FLOP model's efficiency curve (cost.h) on hand-computed
// cases: interpolation and extrapolation across micro-batch sizes, recomputation, tensor-parallel
// degrees, validation, attaching a profile to a model, and pipeline_cost /
// tensor_parallel_cost with one machine profiled and one on the FLOP model.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/cpp/cost_fixtures.h"
#include "tests/cpp/reference.h"
#include "csrc/plan/cluster.h"
#include "csrc/plan/cost.h"
#include "csrc/plan/model_spec.h"
#include "csrc/plan/profile.h"

namespace {

using ref::throws_invalid_argument_with;
using namespace hulk::plan;

constexpr double kTol = 1e-12;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The toy model of test_cost.cpp: L = 4, h = 1000, seq = 100, P = 4e9, 8e9 FLOP per token,
// 1000 activation bytes per token per layer, B = 8, m = 2.
using cost_fixtures::toy;

// "toy" on GPU "X": at b = 1 forward [1, 2, 3, 4] ms, backward [2, 4, 6, 8] ms (sums 10, 20);
// at b = 4 three times that (sums 30, 60); 10 resp. 40 activation bytes per layer;
// optimiser 1e-12 s per parameter.
Profile profile() {
  Profile p;
  p.source = "x.json";
  p.model = "toy";
  p.gpu = "X";
  p.layers = 4;
  p.optimizer_s_per_param = 1e-12;
  p.entries.push_back({1, 1, {1e-3, 2e-3, 3e-3, 4e-3}, {2e-3, 4e-3, 6e-3, 8e-3}, {10, 10, 10, 10}});
  p.entries.push_back({4, 1, {3e-3, 6e-3, 9e-3, 12e-3}, {6e-3, 12e-3, 18e-3, 24e-3}, {40, 40, 40, 40}});
  return p;
}

// m0: 100 GB, 100 TFLOP/s, two GPUs of type "X"; m1: 200 GB, 50 TFLOP/s, no type (FLOP model);
// link 10 ms, 8 Gbps (1e9 B/s).
Cluster two_typed() {
  return Cluster({Machine{"a", "r", 100, 100, "X", 2}, Machine{"b", "r", 200, 50, "", 1}}, {{0, 1, 10, 8}});
}

TEST(Profile, InterpolatesAndExtrapolates) {
  const Profile p = profile();
  EXPECT_NO_THROW(p.validate());
  // Measured sizes exactly: 10 + 20 ms at b = 1, 30 + 60 ms at b = 4.
  EXPECT_NEAR(p.compute_s(0, 4, 1, 1, false), 0.030, kTol);
  EXPECT_NEAR(p.compute_s(0, 4, 4, 1, false), 0.090, kTol);
  // b = 2: a third of the way from b = 1 to b = 4: 30 + (90 - 30) / 3 = 50 ms.
  EXPECT_NEAR(p.compute_s(0, 4, 2, 1, false), 0.050, kTol);
  // Outside: proportional from the nearest size: b = 8 -> 90 * 2; b = 0.5 -> 30 / 2.
  EXPECT_NEAR(p.compute_s(0, 4, 8, 1, false), 0.180, kTol);
  EXPECT_NEAR(p.compute_s(0, 4, 0.5, 1, false), 0.015, kTol);
  // Layers [1, 3) at b = 4: forward 6 + 9, backward 12 + 18 = 45 ms.
  EXPECT_NEAR(p.compute_s(1, 3, 4, 1, false), 0.045, kTol);
  // Recomputation runs the forward pass twice: b = 2 -> 2 * 16.667 + 33.333 = 66.667 ms.
  EXPECT_NEAR(p.compute_s(0, 4, 2, 1, true), 0.2 / 3, kTol);
  // Activation bytes: 40 per layer at b = 1 over 4 layers, 160 at b = 4, 80 at b = 2 (linear).
  EXPECT_NEAR(p.activation_bytes(0, 4, 1, 1), 40, kTol);
  EXPECT_NEAR(p.activation_bytes(0, 4, 2, 1), 80, kTol);
  EXPECT_NEAR(p.activation_bytes(2, 4, 4, 1), 80, kTol);
}

TEST(Profile, TensorParallelDegrees) {
  Profile p = profile();
  // No degree-2 entries: the degree-1 time divided by 2 (b = 4: 90 / 2 = 45 ms).
  EXPECT_NEAR(p.compute_s(0, 4, 4, 2, false), 0.045, kTol);
  // A measured degree-2 entry is used as it is (and proportionally beyond it).
  p.entries.push_back({4, 2, {1e-3, 1e-3, 1e-3, 1e-3}, {2e-3, 2e-3, 2e-3, 2e-3}, {5, 5, 5, 5}});
  EXPECT_NO_THROW(p.validate());
  EXPECT_NEAR(p.compute_s(0, 4, 4, 2, false), 0.012, kTol);
  EXPECT_NEAR(p.compute_s(0, 4, 2, 2, false), 0.006, kTol);
  EXPECT_NEAR(p.compute_s(0, 4, 4, 1, false), 0.090, kTol);  // degree 1 unchanged
}

TEST(Profile, ValidateNamesSourceAndField) {
  auto broken = [](auto edit) {
    Profile p = profile();
    edit(p);
    return [p] { p.validate(); };
  };
  EXPECT_TRUE(throws_invalid_argument_with(broken([](Profile& p) { p.entries[1].forward_s.pop_back(); }),
                                           {"x.json: entries[1].forward_s has 3 values, expected one per layer (4)"}));
  EXPECT_TRUE(throws_invalid_argument_with(broken([](Profile& p) { p.entries[0].backward_s[2] = -1; }),
                                           {"entries[0].backward_s[2] must be finite and >= 0, got -1"}));
  EXPECT_TRUE(throws_invalid_argument_with(broken([](Profile& p) { p.entries[0].activation_bytes[0] = kNaN; }),
                                           {"entries[0].activation_bytes[0] must be finite"}));
  EXPECT_TRUE(throws_invalid_argument_with(broken([](Profile& p) { p.entries[1].micro_batch = 0; }),
                                           {"entries[1].micro_batch must be finite and > 0"}));
  EXPECT_TRUE(throws_invalid_argument_with(broken([](Profile& p) { p.entries[1].micro_batch = 1; }),
                                           {"entries[1].micro_batch 1 at tensor_parallel 1 is measured twice"}));
  EXPECT_TRUE(throws_invalid_argument_with(broken([](Profile& p) { p.entries[0].tensor_parallel = 0; }),
                                           {"entries[0].tensor_parallel must be >= 1"}));
  EXPECT_TRUE(throws_invalid_argument_with(broken([](Profile& p) { p.entries.clear(); }), {"entries is empty"}));
  EXPECT_TRUE(throws_invalid_argument_with(broken([](Profile& p) { p.optimizer_s_per_param = kNaN; }),
                                           {"optimizer_s_per_param must be finite"}));
  const Profile p = profile();
  EXPECT_TRUE(throws_invalid_argument_with([&] { p.compute_s(0, 5, 1, 1, false); }, {"layer range [0, 5)"}));
  EXPECT_TRUE(throws_invalid_argument_with([&] { p.compute_s(0, 4, 0, 1, false); }, {"micro-batch must be"}));
}

TEST(Profile, AttachChecksModelLayersAndGpu) {
  ModelSpec m = toy();
  m.add_profile(std::make_shared<const Profile>(profile()));
  ASSERT_NE(m.profile_for("X"), nullptr);
  EXPECT_EQ(m.profile_for("Y"), nullptr);
  EXPECT_EQ(m.profile_for(""), nullptr);
  EXPECT_TRUE(throws_invalid_argument_with([&] { m.add_profile(std::make_shared<const Profile>(profile())); },
                                           {"already has a profile for gpu 'X' (x.json)"}));
  Profile other = profile();
  other.model = "gpt";
  ModelSpec m2 = toy();
  EXPECT_TRUE(throws_invalid_argument_with([&] { m2.add_profile(std::make_shared<const Profile>(other)); },
                                           {"profile x.json: model is 'gpt' but the job's model is 'toy'"}));
  Profile six = profile();
  six.layers = 6;
  for (auto& e : six.entries) {
    e.forward_s.resize(6, 1e-3);
    e.backward_s.resize(6, 1e-3);
    e.activation_bytes.resize(6, 1);
  }
  EXPECT_TRUE(throws_invalid_argument_with([&] { m2.add_profile(std::make_shared<const Profile>(six)); },
                                           {"layers is 6 but model 'toy' has 4"}));
}

TEST(ProfileCost, PipelineOneMachineProfiled) {
  // D = 1, b = 8 / 2 = 4 sequences per micro-batch; stages [0, 2) on m0, [2, 4) on m1.
  //   C_0: m0's 2 GPUs each run b / 2 = 2 sequences; layers 0-1 sum 3 + 6 = 9 ms at b = 1,
  //        27 ms at b = 4 -> 9 + (27 - 9) / 3 = 15 ms
  //   C_1 (FLOP model): 2 * 2e9 * 400 / 5e13 = 0.032
  //   X_0 = 2 * (0.01 + 8e5 / 1e9) = 0.0216; s* = 0 (0.0366 > 0.032)
  //   compute share = 0.015 + 0.032 + 0.015 = 0.062; comm share = 0.0216 * 2 = 0.0432
  //   T_opt = max(1e-12 * 1e9 * 2 / 2 GPUs, 12 * 1e9 * 2 / 5e13) = max(1e-3, 4.8e-4) = 1e-3
  ModelSpec m = toy();
  m.add_profile(std::make_shared<const Profile>(profile()));
  JobCost jc = pipeline_cost(two_typed(), m, {Replica{{0, 1}, {0, 2, 4}}});
  ASSERT_TRUE(jc.feasible) << jc.reason;
  EXPECT_NEAR(jc.stages[0][0].compute_s, 0.015, kTol);
  EXPECT_NEAR(jc.stages[0][1].compute_s, 0.032, kTol);
  EXPECT_NEAR(jc.compute_s, 0.063, kTol);
  EXPECT_NEAR(jc.comm_s, 0.0432, kTol);
  EXPECT_NEAR(jc.iteration_s, 0.1062, kTol);
  // With recomputation m0 runs layers 0-1's forward twice: 15 + 5 = 20 ms (forward at b = 2:
  // 3 + 6 / 3 = 5 ms); the FLOP model's stage grows by 4/3: 0.032 * 4 / 3.
  m.recompute = true;
  JobCost jr = pipeline_cost(two_typed(), m, {Replica{{0, 1}, {0, 2, 4}}});
  EXPECT_NEAR(jr.stages[0][0].compute_s, 0.020, kTol);
  EXPECT_NEAR(jr.stages[0][1].compute_s, 0.032 * 4 / 3, kTol);
  // A profile for a GPU type no machine has changes nothing: the FLOP model of test_cost.cpp.
  ModelSpec y = toy();
  Profile py = profile();
  py.gpu = "Y";
  y.add_profile(std::make_shared<const Profile>(py));
  EXPECT_NEAR(pipeline_cost(two_typed(), y, {Replica{{0, 1}, {0, 2, 4}}}).stages[0][0].compute_s,
              2 * 2e9 * 400 / 1e14, kTol);
}

TEST(ProfileCost, TensorParallelUsesDegreeEntries) {
  // n = 2, b = 8 / 2 = 4; m0's GPUs run 2 sequences each at degree 2, measured:
  //   forward + backward = 4 * (10 + 10) ms = 80 ms per micro-batch;
  //   m1 (FLOP model): 8e9 * 400 / (2 * 5e13) = 0.032 -> the slowest is m0, 0.08
  //   T_opt = max(1e-12 * 4e9 / 2 GPUs / 2, 12 * 4e9 / 2 / 5e13) = max(1e-3, 4.8e-4)
  //   compute_s = 2 * 0.08 + 1e-3 = 0.161; comm_s = 2 * 4 * 4 * 0.0208 = 0.6656 (test_cost.cpp)
  Profile p = profile();
  p.entries.push_back({2, 2, {1e-2, 1e-2, 1e-2, 1e-2}, {1e-2, 1e-2, 1e-2, 1e-2}, {5, 5, 5, 5}});
  ModelSpec m = toy();
  m.add_profile(std::make_shared<const Profile>(p));
  JobCost jc = tensor_parallel_cost(two_typed(), m, {0, 1});
  ASSERT_TRUE(jc.feasible) << jc.reason;
  EXPECT_NEAR(jc.compute_s, 0.161, kTol);
  EXPECT_NEAR(jc.comm_s, 0.6656, kTol);
}

TEST(EfficiencyCurve, SaturatesInWidthAndTokens) {
  // kEffMax * h / (h + 732) * T / (T + 2312)
  EXPECT_NEAR(flop_efficiency(732, 2312), kEffMax / 4, kTol);
  EXPECT_NEAR(flop_efficiency(1000, 400), 0.8995 * 1000 / 1732 * 400 / 2712, kTol);
  // The fitted points (cost.h): 125M on A100 (h 768, 40 x 2048 tokens) 44.8%, 7B (h 4096,
  // 6 x 2048 tokens) 64.2%.
  EXPECT_NEAR(flop_efficiency(768, 40 * 2048), 0.448, 5e-4);
  EXPECT_NEAR(flop_efficiency(4096, 6 * 2048), 0.642, 5e-4);
  EXPECT_LT(flop_efficiency(1e7, 1e9), kEffMax);
  EXPECT_GT(flop_efficiency(1e7, 1e9), 0.999 * kEffMax);
  EXPECT_LT(flop_efficiency(512, 2048), flop_efficiency(1024, 2048));
  EXPECT_LT(flop_efficiency(1024, 1024), flop_efficiency(1024, 2048));
}

TEST(EfficiencyCurve, ScalesTheFlopModel) {
  // Stage [0, 2) on m0 (2 GPUs: T = 4 / 2 * 100 = 200 tokens each), [2, 4) on m1 (1 GPU,
  // T = 400): C_s = FLOP time * 0.35 / flop_efficiency(1000, T).
  ModelSpec m = toy();
  m.efficiency_curve = true;
  JobCost jc = pipeline_cost(two_typed(), m, {Replica{{0, 1}, {0, 2, 4}}});
  const double e0 = 0.8995 * 1000 / 1732 * 200 / 2512, e1 = 0.8995 * 1000 / 1732 * 400 / 2712;
  EXPECT_NEAR(jc.stages[0][0].compute_s, 0.016 * 0.35 / e0, 1e-12);
  EXPECT_NEAR(jc.stages[0][1].compute_s, 0.032 * 0.35 / e1, 1e-12);
  // Off (the default): test_cost.cpp's figures.
  m.efficiency_curve = false;
  EXPECT_NEAR(pipeline_cost(two_typed(), m, {Replica{{0, 1}, {0, 2, 4}}}).stages[0][0].compute_s, 0.016, kTol);
}

TEST(ProfileCost, MachineGpusMustBePositive) {
  EXPECT_TRUE(throws_invalid_argument_with(
      [] { Cluster({Machine{"a", "r", 100, 100, "X", 0}}, {}); }, {"machine 0 ('a'): gpus must be finite and > 0, got 0"}));
}

}  // namespace
