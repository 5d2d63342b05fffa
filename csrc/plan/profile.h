// Measured per-layer profiles (format hulk-profile/1, written by `hulk profile`, documented in
// hulk/plan/profile.py and the README): the cost model's compute term when one is given.
//
// A Profile holds, for one model on one GPU type, measurements at a few micro-batch sizes
// (sequences per GPU) and tensor-parallel degrees: per layer the forward and backward time of
// one micro-batch and the activation bytes it keeps, plus the optimiser step's time per
// parameter. How the cost model uses it (cost.h states the formulas):
// - A machine of g GPUs runs a micro-batch of b sequences as its g GPUs each running b / g
//   sequences (intra-server data parallelism, its all-reduce free, as the cluster model treats a
//   server's GPUs as one device). Layers [first, last) then take
//     sum_l forward_l(b / g) + backward_l(b / g)  (+ forward_l(b / g) again with recomputation).
// - Micro-batch sizes between measured ones: linear interpolation between the two nearest
//   measured sizes. Outside the measured range: proportional to b from the nearest measured
//   size (t(b) = t(b_near) * b / b_near), i.e. the efficiency of the nearest measurement is
//   kept. Activation bytes likewise.
// - Tensor parallel over n machines uses the entries measured at degree n when there are any;
//   otherwise the degree-1 entries divided by n.
// - Optimiser step of n_p parameters on a machine of g GPUs: optimizer_s_per_param * n_p / g.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hulk::plan {

struct ProfileEntry {
  double micro_batch = 0;           // sequences per GPU, > 0
  int64_t tensor_parallel = 1;      // degree the layer was split over when measured
  std::vector<double> forward_s;    // [layers] seconds, one micro-batch, forward
  std::vector<double> backward_s;   // [layers] seconds, one micro-batch, backward
  std::vector<double> activation_bytes;  // [layers] bytes kept for backward, one micro-batch
};

struct Profile {
  std::string source;   // where it came from (a file name), for messages and reports
  std::string model;    // the ModelSpec name it measures
  std::string gpu;      // the GPU type (the cluster's Machine::gpu) it was measured on
  int64_t layers = 0;
  double optimizer_s_per_param = 0;
  std::vector<ProfileEntry> entries;

  // Throws std::invalid_argument naming the source and the field: no entries, a list whose
  // length is not `layers`, a negative / NaN / infinite time or byte count, a micro-batch <= 0,
  // a degree < 1, two entries with the same (micro_batch, tensor_parallel).
  void validate() const;

  // Forward + backward (+ forward again when `recompute`) seconds of layers [first, last) for
  // one micro-batch of b sequences on one GPU, tensor-parallel degree tp (rules above).
  double compute_s(int64_t first, int64_t last, double b, int64_t tp, bool recompute) const;
  // Activation bytes kept by layers [first, last) for one micro-batch of b sequences.
  double activation_bytes(int64_t first, int64_t last, double b, int64_t tp) const;
};

}  // namespace hulk::plan
