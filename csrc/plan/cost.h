// The cost model: the one ruler every planner is measured with. Every formula is here or
// in cost.cpp, once, with its assumptions. Units: seconds, bytes, FLOP.
//
// Devices. A machine (server) is one device with memory M_i (bytes) and sustained
// throughput F_i (FLOP/s). Links follow the alpha-beta model of Cluster::send_time.
//
// Compute. C(i, [l, l'), b) is the forward + backward time of layers [l, l') for one micro-batch
// of b sequences on machine i (g_i = Machine::gpus GPUs of type Machine::gpu), in this order:
// - Profile (profile.h): when the job's ModelSpec has a profile for machine i's GPU type,
//     C = Profile::compute_s(l, l', b / g_i, 1, recompute)
//   (measured per-layer forward and backward times; each GPU runs b / g_i sequences), and the
//   optimiser step of n layers is optimizer_s_per_param * params_per_layer * n / g_i.
// - FLOP model otherwise:
//     C = (l' - l) * (flops_per_token / L) * recompute_factor * b * seq / (F_i * u)
//   where u = 1 (the cluster's tflops, peak x 0.35, as it is), or with
//   ModelSpec::efficiency_curve u = flop_efficiency(hidden, b / g_i * seq) / kClusterUtilisation:
//   small layers and small micro-batches reach less of the peak (flop_efficiency below).
//
// Pipeline (GPipe) with D replicas of S stages, m micro-batches per replica per iteration,
// B global sequences, so b = B / (D m) sequences per micro-batch. Stage s of a replica holds
// layers [l_s, l_{s+1}) on machine i_s:
//   C_s = C(i_s, [l_s, l_{s+1}), b)                               compute, forward + backward
//   X_s = 2 * send_time(i_s, i_{s+1}, boundary_bytes(b))         activations out, gradients back
//         (0 for the last stage)
//   T_pipe = sum_s (C_s + X_s) + (m - 1) * max_s (C_s + X_s)     (GPipe fill, steady state, drain)
//   The replica's compute share is sum_s C_s + (m - 1) * C_{s*} (s* = the bottleneck stage);
//   the rest of T_pipe is communication.
// Data-parallel gradient sync (D > 1): the machines holding the same stage position in each
// replica all-reduce that stage's fp16 gradients (2 bytes per parameter) with a ring
// (allreduce_time); positions sync in parallel, so the slowest position counts. Replicas
// must then have the same layer split. Optimiser step: optimizer_flops_per_param FLOP per
// parameter of the stage on its machine (or the profile's time per parameter); the slowest
// stage counts.
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
// ways. Compute: each machine does 1/n of the FLOPs (FLOP model: C(i, [0, L), b) / n without
// recomputation; profile: its entries measured at degree n, else its degree-1 times / n);
// the slowest machine sets the pace.
// Communication: per layer two all-reduces of the layer's activations (b * seq * h * 2
// bytes) in the forward pass and two in the backward, for each of the m micro-batches.
// Memory: state_bytes(L) / n + activations of one micro-batch / n per machine.
//
// Ring all-reduce of x bytes over n machines in ring order r_0..r_{n-1}:
//   2 (n - 1) * max_k latency(r_k, r_{k+1}) + 2 (n - 1) / n * x / min_k bandwidth(r_k, r_{k+1})
// (reduce-scatter then all-gather; each of the 2(n-1) steps waits for the slowest link).
#pragma once

#include <limits>
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

// The cluster's utilisation: Machine::tflops is the peak x this (hulk/plan/cluster_spec.py,
// rule b), so the FLOP model with a utilisation u costs FLOPs / (tflops * u / 0.35).
constexpr double kClusterUtilisation = 0.35;

// The FLOP model's efficiency curve (ModelSpec::efficiency_curve): the fraction of a GPU's
// peak a transformer layer of width h reaches on a micro-batch of T tokens per GPU,
//   flop_efficiency(h, T) = kEffMax * h / (h + kEffHalfHidden) * T / (T + kEffHalfTokens).
// Saturating in both: narrow layers spend more of their time in memory-bound work (layer
// norms, activations, residuals: bytes grow with T h, FLOPs with T h^2), and few tokens leave
// the GEMMs too few tiles to fill the GPU. Constants fitted to public measurements,
// MosaicML llm-foundry's MPT training benchmarks (scripts/train/benchmarking/README.md,
// github.com/mosaicml/llm-foundry; bf16, FlashAttention, FSDP):
// - tokens: H100 80GB, MPT-13B (h 5120): hardware FLOPs utilisation (recomputation counted,
//   as C counts it) 39.9% at 2 x 2048 = 4,096 tokens per micro-batch against 59.0% at
//   40 x 1024 = 40,960 tokens; T / (T + T_half) falls by that ratio, 0.675, for
//   T_half = 2,312 tokens. One pair of points (different sequence lengths; the second with
//   activation checkpointing): the weakest constant here.
// - width: A100 80GB, seq 2048, 8 GPUs, no recomputation: 44.8% (125M, h 768, 40 sequences per
//   micro-batch), 51.6% (350M, h 1024, 32), 56.9% (760M, h 1536, 24), 59.9% (1B, h 2048, 14),
//   62.1% (3B, h 2560, 10), 64.2% (7B, h 4096, 6); kEffMax and kEffHalfHidden solved from the
//   125M and 7B points (with their token factors) give the other four within 1.5 points
//   (50.7, 58.2, 61.3, 62.9%).
// These are an optimised stack's numbers: plain PyTorch, consumer GPUs and pipelines with
// small micro-batches reach less, which is what measured profiles are for.
constexpr double kEffMax = 0.8995;
constexpr double kEffHalfHidden = 732;
constexpr double kEffHalfTokens = 2312;
double flop_efficiency(double hidden, double tokens);

struct CostOptions {
  double optimizer_flops_per_param = 12;  // Adam update: a dozen FLOP per parameter
};

double allreduce_time(const Cluster& c, const std::vector<int64_t>& ring, double bytes);
// What allreduce_time reads of a ring: its size, whether every machine reaches the next, the
// slowest link latency and least bandwidth. No argument checks: for hot paths whose
// rings are valid by construction (the layer split); allreduce_time(c, ring, bytes) is
// allreduce_time(ring_links(c, ring), bytes) after its checks, the same doubles.
struct RingLinks {
  size_t n = 0;
  bool reachable = true;
  double max_latency_s = 0, min_bandwidth_Bps = std::numeric_limits<double>::infinity();
};
RingLinks ring_links(const Cluster& c, const std::vector<int64_t>& ring);
double allreduce_time(const RingLinks& ring, double bytes);

// The per-stage formulas above, shared by pipeline_cost and the layer split (split.cpp):
// C(i, [first, last), b) (recomputation included), the mean per layer of C(i, [0, L), b)
// (the split treats layers as alike; exact unless a profile's layers differ), the optimiser
// step of n layers on machine i, and GPipe's sum_s (C_s + X_s) + (m - 1) max_s (C_s + X_s)
// from the sum and the maximum.
double stage_compute_s(const Cluster& c, const ModelSpec& m, int64_t machine, int64_t first, int64_t last, double b);
double layer_compute_s(const Cluster& c, const ModelSpec& m, int64_t machine, double b);
double stage_optimizer_s(const Cluster& c, const ModelSpec& m, int64_t machine, double n_layers, const CostOptions& opts);
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
