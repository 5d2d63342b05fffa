// The toy model the cost-model tests (test_cost.cpp, test_profile.cpp) compute by hand.
#pragma once

#include "csrc/plan/model_spec.h"

namespace cost_fixtures {

// L = 4 layers, h = 1000, seq = 100, P = 4e9 (1e9 per layer), 8e9 FLOP per token (2e9 per
// layer per token), 16 B/param, 1000 activation bytes per token per layer, B = 8, m = 2.
inline hulk::plan::ModelSpec toy() {
  hulk::plan::ModelSpec m;
  m.name = "toy";
  m.layers = 4;
  m.hidden = 1000;
  m.seq_len = 100;
  m.params = 4e9;
  m.flops_per_token = 8e9;
  m.bytes_per_param = 16;
  m.activation_bytes_per_token = 1000;
  m.global_batch = 8;
  m.micro_batches = 2;
  m.iterations = 10;
  return m;
}

}  // namespace cost_fixtures
