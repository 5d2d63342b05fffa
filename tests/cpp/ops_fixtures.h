// Shared by the op tests (tests/cpp/test_ops_<family>.cpp): every op of csrc/ops/ops.h is
// checked against the naive float64 references of reference.h, on fresh random inputs (fixed
// seeds), plus finite-difference checks of every backward:
//   (1) the reference backward against float64 central differences of the reference forward;
//   (2) the float32 op's backward against central differences of the float32 op's forward,
//       through a random projection loss L = sum(z * r).
// Here: the tolerances those checks use and the graphs the sparse ops run on.
#pragma once

#include <string>
#include <vector>

#include "csrc/graph.h"
#include "csrc/ops/ops.h"
#include "csrc/tensor.h"
#include "tests/cpp/reference.h"

namespace ops_fixtures {

using hulk::Csr;
using hulk::Tensor;
using hulk::ops::Pooling;
using ref::DMat;
using ref::EdgeList;
using ref::GraphKind;

// ---- tolerances -------------------------------------------------------------------------------
// float32 op vs float64 reference. Inputs are exact float32 numbers in [-1, 1], so the only
// error is float32 rounding inside the op: an output summing K products carries about
// sqrt(K) * 6e-8 * (sum of |terms|) of it. With K up to a few hundred (hub rows, inner
// dimensions) and outputs of size up to ~50 that is well under 1e-4; a wrong term, scale or
// index costs O(0.1) or more.
constexpr double kAtol = 1e-4;
constexpr double kRtol = 1e-4;
// The two float32 EdgePool paths (fast vs per-edge) sum in different orders: each is within
// kAtol/kRtol of float64, so of each other within twice that.
constexpr double kPathAtol = 2 * kAtol;
constexpr double kPathRtol = 2 * kRtol;
// Reference backward vs float64 central differences: truncation O(step^2) (zero for the
// ops that are linear in the perturbed input) plus rounding O(1e-16 / step).
constexpr double kFdStep64 = 1e-6;
constexpr double kFdTol64 = 1e-6;  // relative to the gradient's max-norm
// float32 op backward vs central differences of the float32 op forward. The forward is
// rounded to float32 (relative 6e-8 per output, sums of many) and divided by 2 * step, which
// gives noise of order 1e-4 relative; smooth non-linear ops (softmax) add O(step^2)
// truncation. A missing term or a wrong factor gives O(1) relative error.
constexpr double kFdStep32 = 1e-2;
constexpr double kFdTol32 = 1e-2;  // relative to the gradient's max-norm

inline Csr csr_of(const EdgeList& g) { return hulk::csr_from_edges(g.num_nodes, g.src, g.dst, g.weights, g.undirected); }

struct GraphCase {
  std::string name;
  EdgeList g;
};

// Sizes and shapes the sparse ops must handle: uniform, a hub with power-law degrees,
// isolated nodes (empty rows), no edges at all, a single node; directed and undirected,
// with and without weights.
inline std::vector<GraphCase> graph_cases() {
  std::vector<GraphCase> cases;
  cases.push_back({"uniform undirected", ref::random_graph(GraphKind::Uniform, 50, 120, true, false, 1)});
  cases.push_back({"uniform directed weighted", ref::random_graph(GraphKind::Uniform, 33, 150, false, true, 2)});
  cases.push_back({"skewed directed", ref::random_graph(GraphKind::Skewed, 120, 300, false, false, 3)});
  cases.push_back({"skewed undirected weighted", ref::random_graph(GraphKind::Skewed, 80, 200, true, true, 4)});
  cases.push_back({"isolated directed weighted", ref::random_graph(GraphKind::Isolated, 40, 50, false, true, 5)});
  cases.push_back({"isolated undirected", ref::random_graph(GraphKind::Isolated, 30, 30, true, false, 6)});
  EdgeList none;
  none.num_nodes = 5;
  cases.push_back({"no edges", none});
  EdgeList single;
  single.num_nodes = 1;
  single.undirected = true;
  cases.push_back({"single node", single});
  return cases;
}

// Small graphs for finite differences (every coordinate is perturbed): a hub, an isolated
// node, both directions.
inline std::vector<GraphCase> small_graph_cases() {
  std::vector<GraphCase> cases;
  cases.push_back({"small skewed directed", ref::random_graph(GraphKind::Skewed, 10, 18, false, false, 11)});
  cases.push_back({"small isolated undirected", ref::random_graph(GraphKind::Isolated, 9, 8, true, true, 12)});
  return cases;
}

inline const char* pooling_name(Pooling p) { return p == Pooling::Sum ? "sum" : "mean"; }

}  // namespace ops_fixtures
