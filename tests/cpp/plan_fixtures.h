// Small hand-made clusters and models shared by the planner tests.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "csrc/plan/planners.h"

namespace plan_fixtures {

using namespace hulk::plan;

// Two regions of machines; every pair linked, with intra- or inter-region parameters.
struct Net {
  double intra_ms = 1, intra_gbps = 100, inter_ms = 50, inter_gbps = 1;
};

inline Cluster two_regions(const std::vector<double>& mem_a, const std::vector<double>& mem_b, Net net = {},
                           std::vector<double> tflops = {}) {
  std::vector<Machine> ms;
  for (size_t k = 0; k < mem_a.size(); ++k) ms.push_back({"a" + std::to_string(k), "A", mem_a[k], 100});
  for (size_t k = 0; k < mem_b.size(); ++k) ms.push_back({"b" + std::to_string(k), "B", mem_b[k], 100});
  for (size_t k = 0; k < tflops.size() && k < ms.size(); ++k) ms[k].tflops = tflops[k];
  std::vector<Link> links;
  for (int64_t i = 0; i < static_cast<int64_t>(ms.size()); ++i)
    for (int64_t j = i + 1; j < static_cast<int64_t>(ms.size()); ++j) {
      const bool same = ms[static_cast<size_t>(i)].region == ms[static_cast<size_t>(j)].region;
      links.push_back({i, j, same ? net.intra_ms : net.inter_ms, same ? net.intra_gbps : net.inter_gbps});
    }
  return Cluster(ms, links);
}

// A model whose state is 1.6 GB per layer (1e8 parameters x 16 bytes), activations small.
inline ModelSpec model(const std::string& name, int64_t layers, double params_per_layer = 1e8, int64_t batch = 8,
                       int64_t iterations = 100) {
  ModelSpec m;
  m.name = name;
  m.layers = layers;
  m.hidden = 256;
  m.seq_len = 64;
  m.params = params_per_layer * static_cast<double>(layers);
  m.flops_per_token = 6 * m.params;
  m.activation_bytes_per_token = 1e4;
  m.global_batch = batch;
  m.micro_batches = 4;
  m.iterations = iterations;
  return m;
}

inline std::set<int64_t> as_set(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

}  // namespace plan_fixtures
