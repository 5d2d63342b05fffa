// A training job's model, described by the few numbers the cost model needs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "csrc/plan/profile.h"

namespace hulk::plan {

struct ModelSpec {
  std::string name;
  int64_t layers = 0;         // transformer blocks (encoder + decoder for T5); the unit of partition
  int64_t hidden = 0;         // hidden size h
  int64_t seq_len = 0;        // tokens per sequence s
  double params = 0;          // total parameters P (embeddings included, spread evenly over layers)
  double flops_per_token = 0; // training FLOPs per token, forward + backward (e.g. 6P + 12 L h s)
  double bytes_per_param = 16;           // mixed-precision Adam: fp16 weights and grads, fp32 master, m, v
  double activation_bytes_per_token = 0; // per layer, stored for backward (e.g. 34 h, Korthikanti et al. 2022)
  int64_t global_batch = 0;   // sequences per iteration
  int64_t micro_batches = 1;  // GPipe micro-batches per pipeline per iteration
  int64_t iterations = 1;     // iterations the job trains for (makespan = iterations x iteration time)
  // GPipe re-materialisation: a stage keeps only its input activations of every micro-batch
  // and recomputes the forward pass during backward (compute x recompute_factor()).
  bool recompute = false;
  // How compute time is costed (cost.h, "Compute"): a measured profile of this model for the
  // machine's GPU type (Machine::gpu) when one is attached, else the FLOP model, whose
  // utilisation is the cluster's (tflops = peak x 0.35) or, with efficiency_curve, depends on
  // the layer's width and the tokens per micro-batch (cost.h, flop_efficiency; off by default).
  std::vector<std::shared_ptr<const Profile>> profiles;
  bool efficiency_curve = false;

  // The profile measured on GPU type `gpu`, or nullptr (also for an empty name).
  const Profile* profile_for(const std::string& gpu) const;
  // Adds a profile after checking it is this model's (name and layers) and that no profile of
  // its GPU type is attached yet; throws std::invalid_argument naming the profile's source.
  void add_profile(std::shared_ptr<const Profile> p);

  // Forward = 1/3 of training FLOPs (backward = 2x forward), so recomputation adds 1/3.
  double recompute_factor() const { return recompute ? 4.0 / 3.0 : 1.0; }
  // Activation bytes a pipeline stage of n_layers holds for m micro-batches of b sequences:
  // without recomputation every layer's activations of every micro-batch; with it, the
  // stage inputs of every micro-batch (boundary_bytes) plus one micro-batch's full layers.
  double stage_activation_bytes(int64_t n_layers, double b, int64_t m) const;

  void validate() const;  // throws std::invalid_argument naming the field and value

  double params_per_layer() const { return params / static_cast<double>(layers); }
  // Bytes that must stay resident for the optimiser: P_layers * bytes_per_param.
  double state_bytes(int64_t n_layers) const { return params_per_layer() * static_cast<double>(n_layers) * bytes_per_param; }
  // Memory needed to train the whole model with no parallelism but the given batch size.
  double memory_bytes_whole(int64_t sequences) const;
  // Activation bytes crossing a stage boundary for `sequences` sequences (fp16: 2 bytes/value).
  double boundary_bytes(double sequences) const { return sequences * static_cast<double>(seq_len) * static_cast<double>(hidden) * 2.0; }
};

// The defaults the Python catalogue (hulk/models.py) fills in when a model leaves them out.
// Training FLOPs per token, forward + backward: 6 P + 12 L h s (attention scores included).
double flops_per_token_of(double params, int64_t layers, int64_t hidden, int64_t seq_len);
// Activation bytes per token per layer kept for backward: 34 h (Korthikanti et al. 2022,
// the attention-score term omitted).
double activation_bytes_per_token_of(int64_t hidden);

}  // namespace hulk::plan
