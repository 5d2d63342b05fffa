// Cost model (cost.h) on hand-computed cases: ring all-reduce, GPipe C_s / X_s / T_pipe and
// its compute/communication split, D = 2 replicas with their gradient all-reduce, the
// optimiser step, Megatron tensor parallelism, memory, shortfall, unreachable pairs, and the
// validation of replicas. Also ModelSpec::validate and memory_bytes_whole.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/cpp/cost_fixtures.h"
#include "tests/cpp/reference.h"
#include "csrc/plan/cluster.h"
#include "csrc/plan/cost.h"
#include "csrc/plan/model_spec.h"
#include "csrc/plan/plan.h"

namespace {

using ref::throws_invalid_argument_with;

using namespace hulk::plan;

constexpr double kTol = 1e-12;
constexpr double kInf = std::numeric_limits<double>::infinity();


using cost_fixtures::toy;  // L = 4, h = 1000, seq = 100, P = 4e9, 8e9 FLOP/token, B = 8, m = 2

Machine mach(const std::string& name, double mem_gb, double tflops) { return Machine{name, "r", mem_gb, tflops, "", 1}; }

// m0: 100 GB, 100 TFLOP/s (1e14); m1: 200 GB, 50 TFLOP/s (5e13); link 10 ms, 8 Gbps (1e9 B/s).
Cluster two(double mem0 = 100) { return Cluster({mach("a", mem0, 100), mach("b", 200, 50)}, {{0, 1, 10, 8}}); }

// ---- ModelSpec ------------------------------------------------------------------------------

TEST(CostModelSpec, MemoryWholeAndState) {
  ModelSpec m = toy();
  EXPECT_NO_THROW(m.validate());
  EXPECT_DOUBLE_EQ(m.params_per_layer(), 1e9);
  EXPECT_DOUBLE_EQ(m.state_bytes(4), 6.4e10);  // 4e9 * 16
  // 6.4e10 + 8 sequences * 100 tokens * 4 layers * 1000 B = 6.4e10 + 3.2e6
  EXPECT_NEAR(m.memory_bytes_whole(8), 6.40032e10, 1e-3);
  EXPECT_NEAR(m.memory_bytes_whole(0), 6.4e10, 1e-3);
  EXPECT_DOUBLE_EQ(m.boundary_bytes(4), 8e5);  // 4 * 100 * 1000 * 2
  EXPECT_THROW(m.memory_bytes_whole(-1), std::invalid_argument);
}

TEST(CostModelSpec, ValidateNamesFieldAndValue) {
  auto bad = [](std::function<void(ModelSpec&)> f) {
    return [f] {
      ModelSpec m = toy();
      f(m);
      m.validate();
    };
  };
  EXPECT_TRUE(throws_invalid_argument_with(bad([](ModelSpec& m) { m.layers = 0; }), {"toy", "layers", "0"}));
  EXPECT_TRUE(throws_invalid_argument_with(bad([](ModelSpec& m) { m.hidden = -3; }), {"hidden", "-3"}));
  EXPECT_TRUE(throws_invalid_argument_with(bad([](ModelSpec& m) { m.seq_len = 0; }), {"seq_len"}));
  EXPECT_TRUE(throws_invalid_argument_with(bad([](ModelSpec& m) { m.params = std::nan(""); }), {"params", "nan"}));
  EXPECT_TRUE(throws_invalid_argument_with(bad([](ModelSpec& m) { m.flops_per_token = -1; }),
                                           {"flops_per_token", "-1"}));
  EXPECT_TRUE(throws_invalid_argument_with(bad([](ModelSpec& m) { m.bytes_per_param = kInf; }),
                                           {"bytes_per_param", "inf"}));
  EXPECT_TRUE(throws_invalid_argument_with(bad([](ModelSpec& m) { m.activation_bytes_per_token = 0; }),
                                           {"activation_bytes_per_token", "0"}));
  EXPECT_TRUE(throws_invalid_argument_with(bad([](ModelSpec& m) { m.global_batch = 0; }), {"global_batch", "0"}));
  EXPECT_TRUE(throws_invalid_argument_with(bad([](ModelSpec& m) { m.micro_batches = 0; }), {"micro_batches"}));
  EXPECT_TRUE(throws_invalid_argument_with(bad([](ModelSpec& m) { m.iterations = -2; }), {"iterations", "-2"}));
  // Batch not divisible by micro-batches is the planner's business, not an error.
  EXPECT_NO_THROW(bad([](ModelSpec& m) { m.micro_batches = 3; })());
}

// ---- all-reduce --------------------------------------------------------------------------

TEST(CostAllReduce, RingWrapsAround) {
  // 0-1: 1 ms, 80 Gbps (1e10 B/s); 1-2: 2 ms, 40 Gbps (5e9); 2-0: 5 ms, 8 Gbps (1e9).
  // Ring 0,1,2 uses 0-1, 1-2 and the wrap 2-0: max latency 5 ms, min bandwidth 1e9.
  // x = 3e9: 2 (3 - 1) * 0.005 + 2 (3 - 1) / 3 * 3e9 / 1e9 = 0.02 + 4 = 4.02 s.
  Cluster c({mach("a", 1, 1), mach("b", 1, 1), mach("c", 1, 1)}, {{0, 1, 1, 80}, {1, 2, 2, 40}, {2, 0, 5, 8}});
  EXPECT_NEAR(allreduce_time(c, {0, 1, 2}, 3e9), 4.02, kTol);
  EXPECT_NEAR(allreduce_time(c, {2, 1, 0}, 3e9), 4.02, kTol);
  // Two machines 0, 1: 2 * 1 * 0.001 + 2 * 1/2 * 3e9 / 1e10 = 0.002 + 0.3 = 0.302 s.
  EXPECT_NEAR(allreduce_time(c, {0, 1}, 3e9), 0.302, kTol);
  // Zero bytes: only latency, 2 * 2 * 0.005 = 0.02.
  EXPECT_NEAR(allreduce_time(c, {0, 1, 2}, 0), 0.02, kTol);
  EXPECT_EQ(allreduce_time(c, {1}, 3e9), 0.0);
  EXPECT_EQ(allreduce_time(c, {}, 3e9), 0.0);
  EXPECT_TRUE(throws_invalid_argument_with([&] { allreduce_time(c, {0, 3}, 1); }, {"3", "out of range"}));
  EXPECT_TRUE(throws_invalid_argument_with([&] { allreduce_time(c, {0, 1, 0}, 1); }, {"machine 0", "twice"}));
  EXPECT_THROW(allreduce_time(c, {0, 1}, -1), std::invalid_argument);
}

TEST(CostAllReduce, RoutedAndForbiddenRing) {
  // 0-1 and 1-2 only (10 ms, 8 Gbps each). Route: 2-0 = 20 ms, 1e9 B/s.
  // Ring 0,1,2, x = 3e9: 2 * 2 * 0.02 + 4/3 * 3e9 / 1e9 = 0.08 + 4 = 4.08 s.
  std::vector<Machine> ms = {mach("a", 1, 1), mach("b", 1, 1), mach("c", 1, 1)};
  std::vector<Link> ls = {{0, 1, 10, 8}, {1, 2, 10, 8}};
  EXPECT_NEAR(allreduce_time(Cluster(ms, ls), {0, 1, 2}, 3e9), 4.08, kTol);
  // Forbid: the wrap pair 2-0 cannot talk -> +inf (also with 0 bytes: no NaN).
  Cluster f(ms, ls, MissingLinkRule::Forbid);
  EXPECT_EQ(allreduce_time(f, {0, 1, 2}, 3e9), kInf);
  EXPECT_EQ(allreduce_time(f, {0, 1, 2}, 0), kInf);
  EXPECT_EQ(allreduce_time(f, {0, 2}, 0), kInf);
  EXPECT_NEAR(allreduce_time(f, {0, 1}, 0), 0.02, kTol);
}

// ---- pipeline ------------------------------------------------------------------------------

TEST(CostPipeline, TwoStagesHandComputed) {
  // Stage 0 = layer [0, 1) on m0, stage 1 = layers [1, 4) on m1. D = 1, m = 2 -> b = 8 / 2 = 4,
  // b * seq = 400 tokens.
  //   C_0 = 1 * 2e9 * 400 / 1e14 = 0.008          C_1 = 3 * 2e9 * 400 / 5e13 = 0.048
  //   boundary = 4 * 100 * 1000 * 2 = 8e5 B; send = 0.01 + 8e5 / 1e9 = 0.0108; X_0 = 0.0216, X_1 = 0
  //   C_0 + X_0 = 0.0296 < C_1 + X_1 = 0.048 -> s* = 1
  //   T_pipe = 0.0296 + 0.048 + (2 - 1) * 0.048 = 0.1256
  //   compute share = 0.008 + 0.048 + 0.048 = 0.104; comm share = 0.0216
  //   T_opt = max(12 * 1e9 * 1 / 1e14, 12 * 1e9 * 3 / 5e13) = max(1.2e-4, 7.2e-4) = 7.2e-4
  //   compute_s = 0.10472, comm_s = 0.0216, iteration_s = 0.12632
  //   memory: stage 0 = 1e9 * 16 + 2 * 4 * 100 * 1 * 1000 = 1.6e10 + 8e5
  //           stage 1 = 3e9 * 16 + 2 * 4 * 100 * 3 * 1000 = 4.8e10 + 2.4e6
  Cluster c = two();
  JobCost jc = pipeline_cost(c, toy(), {Replica{{0, 1}, {0, 1, 4}}});
  EXPECT_TRUE(jc.feasible) << jc.reason;
  EXPECT_EQ(jc.reason, "");
  ASSERT_EQ(jc.stages.size(), 1u);
  ASSERT_EQ(jc.stages[0].size(), 2u);
  const StageCost& s0 = jc.stages[0][0];
  const StageCost& s1 = jc.stages[0][1];
  EXPECT_EQ(s0.machine, 0);
  EXPECT_EQ(s0.first_layer, 0);
  EXPECT_EQ(s0.last_layer, 1);
  EXPECT_EQ(s1.machine, 1);
  EXPECT_EQ(s1.first_layer, 1);
  EXPECT_EQ(s1.last_layer, 4);
  EXPECT_NEAR(s0.compute_s, 0.008, kTol);
  EXPECT_NEAR(s1.compute_s, 0.048, kTol);
  EXPECT_NEAR(s0.send_s, 0.0216, kTol);
  EXPECT_EQ(s1.send_s, 0.0);
  EXPECT_NEAR(s0.memory_bytes, 1.6e10 + 8e5, 1e-3);
  EXPECT_NEAR(s1.memory_bytes, 4.8e10 + 2.4e6, 1e-3);
  EXPECT_DOUBLE_EQ(s0.memory_capacity_bytes, 100e9);
  EXPECT_DOUBLE_EQ(s1.memory_capacity_bytes, 200e9);
  EXPECT_NEAR(jc.compute_s, 0.10472, kTol);
  EXPECT_NEAR(jc.comm_s, 0.0216, kTol);
  EXPECT_NEAR(jc.iteration_s, 0.12632, kTol);
  EXPECT_EQ(jc.memory_shortfall_bytes, 0.0);
}

TEST(CostPipeline, BottleneckFromCommunication) {
  // Same model, stage 0 = layers [0, 3) on m1 (slow), stage 1 = [3, 4) on m0; latency 100 ms.
  //   C_0 = 3 * 2e9 * 400 / 5e13 = 0.048; C_1 = 1 * 2e9 * 400 / 1e14 = 0.008
  //   send = 0.1 + 8e5 / 1e9 = 0.1008; X_0 = 0.2016
  //   C_0 + X_0 = 0.2496 -> s* = 0
  //   compute share = 0.048 + 0.008 + 0.048 = 0.104; comm share = 0.2016 + 0.2016 = 0.4032
  //   T_opt = max(12 * 3e9 / 5e13, 12 * 1e9 / 1e14) = 7.2e-4
  //   compute_s = 0.10472, comm_s = 0.4032, iteration = 0.50792
  Cluster c({mach("a", 100, 100), mach("b", 200, 50)}, {{0, 1, 100, 8}});
  JobCost jc = pipeline_cost(c, toy(), {Replica{{1, 0}, {0, 3, 4}}});
  EXPECT_TRUE(jc.feasible);
  EXPECT_NEAR(jc.stages[0][0].send_s, 0.2016, kTol);
  EXPECT_NEAR(jc.compute_s, 0.10472, kTol);
  EXPECT_NEAR(jc.comm_s, 0.4032, kTol);
  EXPECT_NEAR(jc.iteration_s, 0.50792, kTol);
}

TEST(CostPipeline, OneMicroBatchNoSteadyState) {
  // m = 1: b = 8, 800 tokens. C_0 = 2e9 * 800 / 1e14 = 0.016; C_1 = 3 * 2e9 * 800 / 5e13 = 0.096
  //   boundary = 8 * 100 * 1000 * 2 = 1.6e6; X_0 = 2 * (0.01 + 1.6e6 / 1e9) = 0.0232
  //   T_pipe = 0.016 + 0.0232 + 0.096 = 0.1352 (no (m - 1) term)
  //   compute_s = 0.112 + 7.2e-4 = 0.11272; comm_s = 0.0232
  ModelSpec m = toy();
  m.micro_batches = 1;
  JobCost jc = pipeline_cost(two(), m, {Replica{{0, 1}, {0, 1, 4}}});
  EXPECT_NEAR(jc.compute_s, 0.11272, kTol);
  EXPECT_NEAR(jc.comm_s, 0.0232, kTol);
  EXPECT_NEAR(jc.iteration_s, 0.13592, kTol);
}

TEST(CostPipeline, SingleStageIsWholeModel) {
  // One machine m0 holds all 4 layers: C = 4 * 2e9 * 400 / 1e14 = 0.032; T_pipe = 2 * 0.032 = 0.064
  // T_opt = 12 * 4e9 / 1e14 = 4.8e-4 -> compute_s = 0.06448, comm_s = 0
  // memory = 6.4e10 + 2 * 4 * 100 * 4 * 1000 = 6.4e10 + 3.2e6 = memory_bytes_whole(8)
  JobCost jc = pipeline_cost(two(), toy(), {Replica{{0}, {0, 4}}});
  EXPECT_TRUE(jc.feasible);
  EXPECT_NEAR(jc.compute_s, 0.06448, kTol);
  EXPECT_EQ(jc.comm_s, 0.0);
  EXPECT_NEAR(jc.stages[0][0].memory_bytes, toy().memory_bytes_whole(8), 1e-3);
}

TEST(CostPipeline, MemoryShortfall) {
  // m0 has 10 GB: stage 0 needs 1.6e10 + 8e5 -> shortfall 6.0008e9. Times still computed.
  JobCost jc = pipeline_cost(two(10), toy(), {Replica{{0, 1}, {0, 1, 4}}});
  EXPECT_FALSE(jc.feasible);
  EXPECT_NE(jc.reason.find("machine 0"), std::string::npos) << jc.reason;
  EXPECT_NE(jc.reason.find("'a'"), std::string::npos) << jc.reason;
  EXPECT_NEAR(jc.memory_shortfall_bytes, 6.0008e9, 1e-3);
  EXPECT_NEAR(jc.iteration_s, 0.12632, kTol);
  // Both machines short: m1 with 40 GB needs 4.8024e10 -> 8.0024e9 more; sum 1.40032e10.
  Cluster c({mach("a", 10, 100), mach("b", 40, 50)}, {{0, 1, 10, 8}});
  JobCost jc2 = pipeline_cost(c, toy(), {Replica{{0, 1}, {0, 1, 4}}});
  EXPECT_NEAR(jc2.memory_shortfall_bytes, 6.0008e9 + 8.0024e9, 1e-3);
  EXPECT_NE(jc2.reason.find("; "), std::string::npos) << jc2.reason;
}

// Four machines; replica 0 = (0, 1), replica 1 = (2, 3). All 200 GB, 100 TFLOP/s except m3 at 50.
//   0-1: 10 ms, 8 Gbps (1e9)   2-3: 10 ms, 8 Gbps (1e9)
//   0-2: 20 ms, 16 Gbps (2e9)  1-3: 30 ms, 4 Gbps (5e8)
Cluster four(MissingLinkRule rule = MissingLinkRule::Route, bool link13 = true) {
  std::vector<Link> ls = {{0, 1, 10, 8}, {2, 3, 10, 8}, {0, 2, 20, 16}};
  if (link13) ls.push_back({1, 3, 30, 4});
  return Cluster({mach("p", 200, 100), mach("q", 200, 100), mach("r", 200, 100), mach("s", 200, 50)}, ls, rule);
}

TEST(CostPipeline, TwoReplicasWithGradientSync) {
  // D = 2, m = 2 -> b = 8 / 4 = 2, 200 tokens. Bounds {0, 2, 4}: 2 layers per stage.
  // Replica 0 (m0, m1): C = 2 * 2e9 * 200 / 1e14 = 0.008 each; boundary = 2 * 100 * 1000 * 2 = 4e5
  //   X_0 = 2 * (0.01 + 4e5 / 1e9) = 0.0208; s* = 0 (0.0288 > 0.008)
  //   T_pipe = 0.0288 + 0.008 + 0.0288 = 0.0656; compute 0.024, comm 0.0416
  // Replica 1 (m2, m3): C_0 = 0.008, C_1 = 2 * 2e9 * 200 / 5e13 = 0.016; X_0 = 0.0208; s* = 0
  //   T_pipe = 0.0288 + 0.016 + 0.0288 = 0.0736 (slowest replica); compute 0.032, comm 0.0416
  // All-reduce of 2 * 2e9 = 4e9 bytes per position:
  //   position 0 ring (0, 2): 2 * 1 * 0.02 + 2 * 1/2 * 4e9 / 2e9 = 0.04 + 2 = 2.04
  //   position 1 ring (1, 3): 2 * 1 * 0.03 + 4e9 / 5e8 = 0.06 + 8 = 8.06 -> T_ar = 8.06
  // T_opt = max(12 * 2e9 / 1e14, 12 * 2e9 / 5e13) = 4.8e-4
  // compute_s = 0.032 + 4.8e-4 = 0.03248; comm_s = 0.0416 + 8.06 = 8.1016; iteration = 8.13408
  ModelSpec m = toy();
  JobCost jc = pipeline_cost(four(), m, {Replica{{0, 1}, {0, 2, 4}}, Replica{{2, 3}, {0, 2, 4}}});
  EXPECT_TRUE(jc.feasible) << jc.reason;
  ASSERT_EQ(jc.stages.size(), 2u);
  EXPECT_NEAR(jc.stages[0][0].compute_s, 0.008, kTol);
  EXPECT_NEAR(jc.stages[1][1].compute_s, 0.016, kTol);
  EXPECT_NEAR(jc.stages[1][0].send_s, 0.0208, kTol);
  EXPECT_EQ(jc.stages[1][1].machine, 3);
  // memory per stage: 2e9 * 16 + 2 * 2 * 100 * 2 * 1000 = 3.2e10 + 8e5
  EXPECT_NEAR(jc.stages[1][1].memory_bytes, 3.2e10 + 8e5, 1e-3);
  EXPECT_NEAR(jc.compute_s, 0.03248, kTol);
  EXPECT_NEAR(jc.comm_s, 8.1016, 1e-11);
  EXPECT_NEAR(jc.iteration_s, 8.13408, 1e-11);
}

TEST(CostPipeline, DataParallelOnly) {
  // System A shape: D = 2 replicas of one stage on m0 and m2. b = 8 / (2 * 2) = 2, 200 tokens.
  //   C = 4 * 2e9 * 200 / 1e14 = 0.016; T_pipe = 0.032, all compute
  //   all-reduce of 2 * 4e9 = 8e9 bytes on ring (0, 2): 2 * 0.02 + 8e9 / 2e9 = 4.04
  //   T_opt = 12 * 4e9 / 1e14 = 4.8e-4
  //   compute_s = 0.03248, comm_s = 4.04
  JobCost jc = pipeline_cost(four(), toy(), {Replica{{0}, {0, 4}}, Replica{{2}, {0, 4}}});
  EXPECT_TRUE(jc.feasible);
  EXPECT_NEAR(jc.compute_s, 0.03248, kTol);
  EXPECT_NEAR(jc.comm_s, 4.04, kTol);
  EXPECT_NEAR(jc.iteration_s, 4.07248, kTol);
}

TEST(CostPipeline, UnreachablePairsAreInfeasible) {
  // Forbid with no 1-3 link: consecutive stages 0 -> 1 fine; the position-1 ring (1, 3) is cut.
  Cluster f = four(MissingLinkRule::Forbid, false);
  JobCost jc = pipeline_cost(f, toy(), {Replica{{0, 1}, {0, 2, 4}}, Replica{{2, 3}, {0, 2, 4}}});
  EXPECT_FALSE(jc.feasible);
  EXPECT_NE(jc.reason.find("ring of stage 1"), std::string::npos) << jc.reason;
  EXPECT_EQ(jc.comm_s, kInf);
  EXPECT_EQ(jc.iteration_s, kInf);
  EXPECT_EQ(jc.memory_shortfall_bytes, 0.0);
  // Pipeline 1 -> 2 (no link, Forbid): infeasible, even with one micro-batch (no NaN).
  ModelSpec m = toy();
  m.micro_batches = 1;
  JobCost jc2 = pipeline_cost(f, m, {Replica{{1, 2}, {0, 2, 4}}});
  EXPECT_FALSE(jc2.feasible);
  EXPECT_NE(jc2.reason.find("stages 0 and 1"), std::string::npos) << jc2.reason;
  EXPECT_EQ(jc2.iteration_s, kInf);
  EXPECT_FALSE(std::isnan(jc2.comm_s));
  // Under Route the same pipeline relays 1 -> 0 -> 2: 30 ms, min(1e9, 2e9) = 1e9 B/s. m = 1, b = 8:
  //   C_0 = C_1 = 2 * 2e9 * 800 / 1e14 = 0.032; boundary 1.6e6; X_0 = 2 * (0.03 + 1.6e-3) = 0.0632
  //   T_opt = 12 * 2e9 / 1e14 = 2.4e-4: compute_s = 0.06424, comm_s = 0.0632
  JobCost jc3 = pipeline_cost(four(MissingLinkRule::Route, false), m, {Replica{{1, 2}, {0, 2, 4}}});
  EXPECT_TRUE(jc3.feasible);
  EXPECT_NEAR(jc3.compute_s, 0.06424, kTol);
  EXPECT_NEAR(jc3.comm_s, 0.0632, kTol);
}

TEST(CostPipeline, ValidatesReplicas) {
  Cluster c = four();
  ModelSpec m = toy();
  auto call = [&](std::vector<Replica> r) { return [&c, &m, r] { pipeline_cost(c, m, r); }; };
  EXPECT_TRUE(throws_invalid_argument_with(call({}), {"no replicas"}));
  EXPECT_TRUE(throws_invalid_argument_with(call({Replica{{}, {0}}}), {"replica 0", "no machines"}));
  EXPECT_TRUE(throws_invalid_argument_with(call({Replica{{0, 1}, {0, 4}}}), {"bounds", "3"}));
  EXPECT_TRUE(throws_invalid_argument_with(call({Replica{{0, 1}, {0, 2, 3}}}), {"0 to layers = 4"}));
  EXPECT_TRUE(throws_invalid_argument_with(call({Replica{{0, 1}, {1, 2, 4}}}), {"0 to layers = 4"}));
  EXPECT_TRUE(throws_invalid_argument_with(call({Replica{{0, 1, 2}, {0, 2, 2, 4}}}), {"strictly", "bounds[1] = 2"}));
  EXPECT_TRUE(throws_invalid_argument_with(call({Replica{{0, 7}, {0, 2, 4}}}), {"machine index 7", "out of range"}));
  EXPECT_TRUE(throws_invalid_argument_with(call({Replica{{0, 0}, {0, 2, 4}}}), {"machine 0", "more than once"}));
  EXPECT_TRUE(throws_invalid_argument_with(call({Replica{{0, 1}, {0, 2, 4}}, Replica{{1, 2}, {0, 2, 4}}}),
                                           {"replica 1", "machine 1", "more than once"}));
  EXPECT_TRUE(throws_invalid_argument_with(call({Replica{{0, 1}, {0, 2, 4}}, Replica{{2, 3}, {0, 1, 4}}}),
                                           {"replica 1", "split"}));
  EXPECT_TRUE(throws_invalid_argument_with(call({Replica{{0, 1}, {0, 2, 4}}, Replica{{2}, {0, 4}}}),
                                           {"replica 1", "split"}));
  ModelSpec bad = m;
  bad.layers = 0;
  EXPECT_TRUE(throws_invalid_argument_with([&] { pipeline_cost(c, bad, {Replica{{0}, {0, 0}}}); }, {"layers"}));
  CostOptions o;
  o.optimizer_flops_per_param = -1;
  EXPECT_TRUE(throws_invalid_argument_with([&] { pipeline_cost(c, m, {Replica{{0}, {0, 4}}}, o); },
                                           {"optimizer_flops_per_param", "-1"}));
}

TEST(CostPipeline, OptimizerOptionCounts) {
  // optimizer_flops_per_param = 0 drops T_opt: compute_s = 0.104 in the two-stage case.
  CostOptions o;
  o.optimizer_flops_per_param = 0;
  JobCost jc = pipeline_cost(two(), toy(), {Replica{{0, 1}, {0, 1, 4}}}, o);
  EXPECT_NEAR(jc.compute_s, 0.104, kTol);
  // 100 FLOP/param: T_opt = 100 * 3e9 / 5e13 = 6e-3 -> compute_s = 0.11
  o.optimizer_flops_per_param = 100;
  EXPECT_NEAR(pipeline_cost(two(), toy(), {Replica{{0, 1}, {0, 1, 4}}}, o).compute_s, 0.11, kTol);
}

// ---- tensor parallel ---------------------------------------------------------------------

TEST(CostTensorParallel, TwoMachinesHandComputed) {
  // n = 2, b = 8 / 2 = 4, 400 tokens.
  //   per micro-batch compute = max_i 8e9 * 400 / (2 F_i) = max(0.016, 0.032) = 0.032
  //   T_opt = max_i 12 * 4e9 / 2 / F_i = max(2.4e-4, 4.8e-4) = 4.8e-4
  //   compute_s = 2 * 0.032 + 4.8e-4 = 0.06448
  //   all-reduce of 4 * 100 * 1000 * 2 = 8e5 B on (0, 1): 2 * 0.01 + 8e5 / 1e9 = 0.0208
  //   comm_s = m * 4 * L * 0.0208 = 2 * 4 * 4 * 0.0208 = 0.6656
  //   memory per machine = 6.4e10 / 2 + 400 * 4 * 1000 / 2 = 3.2e10 + 8e5
  JobCost jc = tensor_parallel_cost(two(), toy(), {0, 1});
  EXPECT_TRUE(jc.feasible) << jc.reason;
  EXPECT_TRUE(jc.stages.empty());
  EXPECT_NEAR(jc.compute_s, 0.06448, kTol);
  EXPECT_NEAR(jc.comm_s, 0.6656, kTol);
  EXPECT_NEAR(jc.iteration_s, 0.73008, kTol);
  // m0 with 30 GB: shortfall 3.20008e10 - 3e10 = 2.0008e9.
  JobCost jc2 = tensor_parallel_cost(two(30), toy(), {1, 0});
  EXPECT_FALSE(jc2.feasible);
  EXPECT_NE(jc2.reason.find("machine 0"), std::string::npos) << jc2.reason;
  EXPECT_NEAR(jc2.memory_shortfall_bytes, 2.0008e9, 1e-3);
  EXPECT_NEAR(jc2.iteration_s, 0.73008, kTol);
}

TEST(CostTensorParallel, OneMachineHasNoCommunication) {
  // n = 1 on m1: compute = 2 * 8e9 * 400 / 5e13 + 12 * 4e9 / 5e13 = 0.128 + 9.6e-4 = 0.12896
  // memory = 6.4e10 + 400 * 4 * 1000 = 6.4e10 + 1.6e6
  JobCost jc = tensor_parallel_cost(two(), toy(), {1});
  EXPECT_TRUE(jc.feasible);
  EXPECT_NEAR(jc.compute_s, 0.12896, kTol);
  EXPECT_EQ(jc.comm_s, 0.0);
  ModelSpec m = toy();
  Cluster tiny({mach("a", 64, 100)}, {});
  // 64 GB < 6.4e10 + 1.6e6 -> shortfall 1.6e6
  JobCost jc2 = tensor_parallel_cost(tiny, m, {0});
  EXPECT_FALSE(jc2.feasible);
  EXPECT_NEAR(jc2.memory_shortfall_bytes, 1.6e6, 1e-3);
}

TEST(CostTensorParallel, RingOrderAndUnreachable) {
  // Four machines, ring 0, 1, 3, 2 uses 0-1, 1-3, 3-2 and 2-0 (all direct):
  //   max latency 30 ms, min bandwidth 5e8. n = 4, b = 4, x = 8e5:
  //   AR = 2 * 3 * 0.03 + 2 * 3/4 * 8e5 / 5e8 = 0.18 + 0.0024 = 0.1824
  //   comm_s = 2 * 4 * 4 * 0.1824 = 5.8368
  //   compute per micro-batch = 8e9 * 400 / (4 * 5e13) = 0.016 (m3 the slowest)
  //   T_opt = 12 * 1e9 / 5e13 = 2.4e-4 -> compute_s = 0.03224
  JobCost jc = tensor_parallel_cost(four(), toy(), {0, 1, 3, 2});
  EXPECT_TRUE(jc.feasible);
  EXPECT_NEAR(jc.comm_s, 5.8368, 1e-11);
  EXPECT_NEAR(jc.compute_s, 0.03224, kTol);
  // Forbid without 1-3: the ring 0, 1, 3, 2 is cut; ring 1, 0, 2, 3 wraps 3 -> 1, also cut.
  Cluster f = four(MissingLinkRule::Forbid, false);
  JobCost jc2 = tensor_parallel_cost(f, toy(), {0, 1, 3, 2});
  EXPECT_FALSE(jc2.feasible);
  EXPECT_NE(jc2.reason.find("cannot communicate"), std::string::npos) << jc2.reason;
  EXPECT_EQ(jc2.iteration_s, kInf);
  EXPECT_FALSE(tensor_parallel_cost(f, toy(), {1, 0, 2, 3}).feasible);
  // Ring 1, 0, 2 wraps 2 -> 1 (missing): cut. Ring 0, 2 uses 0-2 both ways: fine.
  EXPECT_FALSE(tensor_parallel_cost(f, toy(), {1, 0, 2}).feasible);
  EXPECT_TRUE(tensor_parallel_cost(f, toy(), {0, 2}).feasible);
}

TEST(CostTensorParallel, Validates) {
  Cluster c = four();
  EXPECT_TRUE(throws_invalid_argument_with([&] { tensor_parallel_cost(c, toy(), {}); }, {"no machines"}));
  EXPECT_TRUE(throws_invalid_argument_with([&] { tensor_parallel_cost(c, toy(), {0, 4}); }, {"4", "out of range"}));
  EXPECT_TRUE(throws_invalid_argument_with([&] { tensor_parallel_cost(c, toy(), {2, 1, 2}); },
                                           {"machine 2", "more than once"}));
}

// ---- plans and their schedule ------------------------------------------------------------

// A job that takes `iter_s` per iteration for `iters` iterations on the given machines.
JobPlan job(double iter_s, int64_t iters, std::vector<int64_t> machines, bool feasible = true) {
  JobPlan j;
  j.model = toy();
  j.model.iterations = iters;
  j.strategy = Strategy::Pipeline;
  for (int64_t i : machines) j.replicas.push_back(Replica{{i}, {0, 4}});
  j.cost.feasible = feasible;
  j.cost.iteration_s = iter_s;
  return j;
}

TEST(PlanCore, MachinesAndFeasible) {
  JobPlan j = job(1, 1, {});
  j.replicas = {Replica{{5, 2}, {0, 2, 4}}, Replica{{0, 3}, {0, 2, 4}}};
  EXPECT_EQ(j.machines(), (std::vector<int64_t>{0, 2, 3, 5}));
  JobPlan t = job(1, 1, {});
  t.strategy = Strategy::TensorParallel;
  t.tensor_group = {4, 1, 7};
  EXPECT_EQ(t.machines(), (std::vector<int64_t>{1, 4, 7}));
  Plan p;
  EXPECT_TRUE(p.feasible());
  p.jobs = {j, t};
  EXPECT_TRUE(p.feasible());
  p.jobs[1].cost.feasible = false;
  EXPECT_FALSE(p.feasible());
}

TEST(PlanCore, ScheduleSequential) {
  // Job 0: 10 x 2 s = 20 s; job 1: 5 x 3 s = 15 s. Back to back: [0, 20], [20, 35].
  Plan p;
  p.sequential = true;
  p.jobs = {job(2, 10, {0, 1}), job(3, 5, {0, 1})};
  p.schedule();
  EXPECT_EQ(p.jobs[0].start_s, 0.0);
  EXPECT_NEAR(p.jobs[0].finish_s, 20.0, kTol);
  EXPECT_NEAR(p.jobs[1].start_s, 20.0, kTol);
  EXPECT_NEAR(p.jobs[1].finish_s, 35.0, kTol);
  EXPECT_NEAR(p.makespan_s, 35.0, kTol);
  // Waiting for an earlier job changes nothing when sequential.
  p.schedule({-1, 0});
  EXPECT_NEAR(p.makespan_s, 35.0, kTol);
}

TEST(PlanCore, ScheduleConcurrent) {
  // Disjoint machines: both start at 0; makespan = max(20, 15) = 20.
  Plan p;
  p.jobs = {job(2, 10, {0}), job(3, 5, {1})};
  p.schedule();
  EXPECT_EQ(p.jobs[0].start_s, 0.0);
  EXPECT_EQ(p.jobs[1].start_s, 0.0);
  EXPECT_NEAR(p.jobs[1].finish_s, 15.0, kTol);
  EXPECT_NEAR(p.makespan_s, 20.0, kTol);
}

TEST(PlanCore, ScheduleWaiting) {
  // Job 1 waits for job 0 (they share machine 1): [0, 20], [20, 35]; job 2 runs alongside
  // on machine 2: [0, 4]; job 3 waits for job 1: 35 + 1 x 0.5 = 35.5.
  Plan p;
  p.jobs = {job(2, 10, {0, 1}), job(3, 5, {1}), job(4, 1, {2}), job(0.5, 1, {0})};
  p.schedule({-1, 0, -1, 1});
  EXPECT_NEAR(p.jobs[1].start_s, 20.0, kTol);
  EXPECT_NEAR(p.jobs[1].finish_s, 35.0, kTol);
  EXPECT_EQ(p.jobs[2].start_s, 0.0);
  EXPECT_NEAR(p.jobs[2].finish_s, 4.0, kTol);
  EXPECT_NEAR(p.jobs[3].start_s, 35.0, kTol);
  EXPECT_NEAR(p.makespan_s, 35.5, kTol);
  // A job may wait for a later one: job 0 waits for job 1 -> job 1 [0, 15], job 0 [15, 35].
  Plan q;
  q.jobs = {job(2, 10, {0, 1}), job(3, 5, {1})};
  q.schedule({1, -1});
  EXPECT_NEAR(q.jobs[0].start_s, 15.0, kTol);
  EXPECT_NEAR(q.makespan_s, 35.0, kTol);
}

TEST(PlanCore, InfeasibleJobGivesInfiniteMakespan) {
  Plan p;
  p.jobs = {job(2, 10, {0}), job(3, 5, {1}, false)};
  p.schedule();
  EXPECT_NEAR(p.jobs[0].finish_s, 20.0, kTol);
  EXPECT_EQ(p.jobs[1].finish_s, kInf);
  EXPECT_EQ(p.makespan_s, kInf);
  p.sequential = true;
  p.jobs = {job(2, 10, {0}, false), job(3, 5, {1})};
  p.schedule();
  EXPECT_EQ(p.jobs[1].start_s, kInf);
  EXPECT_EQ(p.makespan_s, kInf);
  Plan empty;
  empty.makespan_s = 7;
  empty.schedule();
  EXPECT_EQ(empty.makespan_s, 0.0);
}

TEST(PlanCore, ScheduleRejectsBadInput) {
  Plan p;
  p.jobs = {job(2, 10, {0}), job(3, 5, {1})};
  EXPECT_TRUE(throws_invalid_argument_with([&] { p.schedule({-1}); }, {"waits_for", "1 entries"}));
  EXPECT_TRUE(throws_invalid_argument_with([&] { p.schedule({-1, 2}); }, {"waits_for[1] = 2"}));
  EXPECT_TRUE(throws_invalid_argument_with([&] { p.schedule({-2, -1}); }, {"waits_for[0] = -2"}));
  EXPECT_TRUE(throws_invalid_argument_with([&] { p.schedule({0, -1}); }, {"job 0 waits for itself"}));
  EXPECT_TRUE(throws_invalid_argument_with([&] { p.schedule({1, 0}); }, {"cycle"}));
  p.sequential = true;
  EXPECT_TRUE(throws_invalid_argument_with([&] { p.schedule({1, -1}); }, {"cycle"}));
  // Concurrent jobs sharing a machine without waiting double-book it.
  Plan q;
  q.jobs = {job(2, 10, {0, 1}), job(3, 5, {1, 2})};
  EXPECT_TRUE(throws_invalid_argument_with([&] { q.schedule(); }, {"jobs 0 and 1", "machine 1"}));
  EXPECT_NO_THROW(q.schedule({-1, 0}));
  // Touching intervals whose ends differ by rounding are not an overlap: job 0 takes
  // 3 x 0.1 s (0.30000000000000004 in floating point), job 1 on the same machine waits for
  // nothing but job 2 (3 x 0.1 s on machine 9) and starts when job 2 ends.
  Plan r;
  r.jobs = {job(0.1, 3, {0}), job(1, 1, {0}), job(0.1, 3, {9})};
  EXPECT_NO_THROW(r.schedule({-1, 2, -1}));
  EXPECT_NEAR(r.jobs[1].start_s, 0.3, 1e-12);
  // A real overlap with job 0 is still caught: job 1 waits for a shorter job.
  r.jobs[2].cost.iteration_s = 0.05;
  EXPECT_TRUE(throws_invalid_argument_with([&] { r.schedule({-1, 2, -1}); }, {"jobs 0 and 1", "machine 0"}));
}

}  // namespace
