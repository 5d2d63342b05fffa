// The cost model: the one ruler every planner is measured with. Every formula is here or
// in cost.cpp, once, with its assumptions. Units: seconds, bytes, FLOP.
//
// Devices. A machine (server) is one device with memory M_i (bytes) and sustained
// throughput F_i (FLOP/s). Links follow the alpha-beta model of Cluster::send_time.
//
// Pipeline (GPipe) with D replicas of S stages, m micro-batches per replica per iteration,
// B global sequences, so b = B / (D m) sequences per micro-batch. Stage s of a replica holds
// layers [l_s, l_{s+1}) on machine i_s:
//   C_s = n_s * (flops_per_token / L) * b * seq / F_{i_s}        compute, forward + backward
//   X_s = 2 * send_time(i_s, i_{s+1}, boundary_bytes(b))         activations out, gradients back
//         (0 for the last stage)
//   T_pipe = sum_s (C_s + X_s) + (m - 1) * max_s (C_s + X_s)     (GPipe fill, steady state, drain)
//   The replica's compute share is sum_s C_s + (m - 1) * C_{s*} (s* = the bottleneck stage);
//   the rest of T_pipe is communication.
// Data-parallel gradient sync (D > 1): the machines holding the same stage position in each
// replica all-reduce that stage's fp16 gradients (2 bytes per parameter) with a ring
// (allreduce_time); positions sync in parallel, so the slowest position counts. Replicas
// must then have the same layer split. Optimiser step: optimizer_flops_per_param FLOP per
// parameter of the stage on its machine; the slowest stage counts.
//   T_iter = max over replicas of T_pipe + max over positions of T_allreduce + T_opt
// Memory of stage s: state_bytes(n_s) + m * b * seq * n_s * activation_bytes_per_token
// (GPipe keeps every micro-batch's activations for the backward pass). With
// ModelSpec::recompute (GPipe's re-materialisation) a stage keeps only its m inputs
// (m * boundary_bytes(b)) plus one micro-batch's activations, and C_s grows by 4/3.
//
// Data parallelism (paper's System A) is the special case S = 1: each replica holds the
// whole model and its share of the batch.
//
// Tensor parallelism (Megatron, paper's System C) over n machines: every layer is split n
// ways. Compute: each machine does 1/n of the FLOPs; the slowest machine sets the pace.
// Communication: per layer two all-reduces of the layer's activations (b * seq * h * 2
// bytes) in the forward pass and two in the backward, for each of the m micro-batches.
// Memory: state_bytes(L) / n + activations of one micro-batch / n per machine.
//
// Ring all-reduce of x bytes over n machines in ring order r_0..r_{n-1}:
//   2 (n - 1) * max_k latency(r_k, r_{k+1}) + 2 (n - 1) / n * x / min_k bandwidth(r_k, r_{k+1})
// (reduce-scatter then all-gather; each of the 2(n-1) steps waits for the slowest link).
#pragma once

#include <string>
#include <vector>

#include "csrc/plan/cluster.h"
#include "csrc/plan/model_spec.h"

namespace hulk::plan {

// One pipeline replica: machines[s] runs stage s, which holds layers
// [bounds[s], bounds[s + 1]); bounds has machines.size() + 1 entries from 0 to L.
struct Replica {
  std::vector<int64_t> machines;
  std::vector<int64_t> bounds;
};

struct StageCost {
  int64_t machine = -1;
  int64_t first_layer = 0, last_layer = 0;  // [first, last)
  double compute_s = 0;   // C_s for one micro-batch
  double send_s = 0;      // X_s for one micro-batch
  double memory_bytes = 0;
  double memory_capacity_bytes = 0;
};

struct JobCost {
  bool feasible = false;
  std::string reason;        // why not feasible ("" when feasible)
  double compute_s = 0;      // per iteration
  double comm_s = 0;         // per iteration
  double iteration_s = 0;    // compute_s + comm_s
  double memory_shortfall_bytes = 0;  // sum over machines of (need - capacity) where positive
  std::vector<std::vector<StageCost>> stages;  // per replica, per stage (empty for tensor parallel)
};

struct CostOptions {
  double optimizer_flops_per_param = 12;  // Adam update: a dozen FLOP per parameter
};

double allreduce_time(const Cluster& c, const std::vector<int64_t>& ring, double bytes);

// The per-stage formulas above, shared by pipeline_cost and the layer split (split.cpp):
// C_s of n layers at b sequences per micro-batch on a machine of F FLOP/s (recomputation
// included), the optimiser step of n layers on it, and GPipe's
// sum_s (C_s + X_s) + (m - 1) max_s (C_s + X_s) from the sum and the maximum.
double stage_compute_s(const ModelSpec& m, double n_layers, double b, double flops_per_s);
double stage_optimizer_s(const ModelSpec& m, double n_layers, double flops_per_s, const CostOptions& opts);
double gpipe_time(double sum, double bottleneck, int64_t micro_batches);

// "84.13 GB" (4 significant digits, 1 GB = 1e9 bytes): how messages state memory.
std::string format_gb(double bytes);

// GPipe over the given replicas (DP x PP). Validates the replicas (machines distinct and in
// range, bounds increasing from 0 to L, equal splits across replicas when D > 1) and throws
// std::invalid_argument on malformed input; an over-full machine or an unreachable pair
// gives feasible = false with the reason and the shortfall, not an exception.
JobCost pipeline_cost(const Cluster& c, const ModelSpec& m, const std::vector<Replica>& replicas,
                      const CostOptions& opts = {});

// Megatron tensor parallelism over the machines (ring in the given order).
JobCost tensor_parallel_cost(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& machines,
                             const CostOptions& opts = {});

}  // namespace hulk::plan
