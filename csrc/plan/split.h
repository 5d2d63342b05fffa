// The layer split of one job over fixed machines (split.cpp): the problem as the split sees
// it, its objective (the job's iteration time) and the optimiser. Internal to the planners.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "csrc/plan/planners.h"

namespace hulk::plan::detail {

// Largest number of layers a stage can hold in `cap` bytes at micro-batch b (0: not one).
int64_t layers_that_fit(const ModelSpec& m, double b, double cap);
// layers_that_fit at one micro-batch, remembered for the first kKept capacities asked: a
// cluster has few memory sizes, and a layout asks for every stage.
class LayersThatFit {
 public:
  LayersThatFit(const ModelSpec& m, double b) : m_(m), b_(b) {}
  int64_t operator()(double cap) {
    for (size_t k = 0; k < kept_; ++k)
      if (cap_[k] == cap) return n_[k];
    const int64_t n = layers_that_fit(m_, b_, cap);
    if (kept_ < kKept) {
      cap_[kept_] = cap;
      n_[kept_++] = n;
    }
    return n;
  }

 private:
  static constexpr size_t kKept = 8;
  const ModelSpec& m_;
  double b_;
  double cap_[kKept] = {};
  int64_t n_[kKept] = {};
  size_t kept_ = 0;
};
// The distinct stage values n c_s + x_s (1 <= n <= min(cap_s, L)), increasing: every value a
// pipeline's bottleneck can take. all_stage_values lists them all (S L values, sorted);
// stage_values_between only those v with lo < v and not hi < v (the range a sorted list gives
// between upper_bound(lo) and upper_bound(hi)), without listing the rest when c, x are finite.
std::vector<double> all_stage_values(const std::vector<double>& c, const std::vector<double>& x,
                                     const std::vector<int64_t>& cap, int64_t L);
std::vector<double> stage_values_between(const std::vector<double>& c, const std::vector<double>& x,
                                         const std::vector<int64_t>& cap, int64_t L, double lo, double hi);
// Least bottleneck max_s (n_s c_s + x_s) over splits of L layers with 1 <= n_s <= cap_s: the
// least stage value at which one exists; +inf when none.
double least_bottleneck(const std::vector<double>& c, const std::vector<double>& x, const std::vector<int64_t>& cap,
                        int64_t L);
// One job's D replicas of S stage positions on fixed machines, as the split sees them; the
// formula it optimises is written out at the top of split.cpp.
struct SplitProblem {
  int64_t layers = 0, micro_batches = 1;
  size_t replicas = 0;              // D
  std::vector<double> c, x;         // [D S] at(r, s): compute per layer, send after the stage (flat: one allocation)
  std::vector<double> o;            // [S] slowest replica's optimiser time per layer
  std::vector<double> ar_a, ar_b;   // [S] all-reduce of n layers = ar_a + ar_b n (D > 1)
  std::vector<int64_t> max_layers;  // [S] layers that fit every replica's machine
  // Every field sized for D replicas of S stages: zeros, and no cap below `layers`.
  void resize(size_t D, size_t S);
  size_t at(size_t r, size_t s) const { return r * max_layers.size() + s; }
};
// `batch_replicas` > 0 sets the micro-batch as for that many replicas (default: replicas.size()).
SplitProblem split_problem(const Cluster& c, const ModelSpec& m, const std::vector<std::vector<int64_t>>& replicas,
                           const CostOptions& opts = {}, int64_t batch_replicas = 0);
// The per-machine terms of a split problem (compute and optimiser time per layer, layers that
// fit) of one model, kept for the layouts one best_pipeline call builds: its layouts of one
// replica count share their machines, and these terms were over a third of building each problem
// (callgrind, bundled cluster, OPT+RoBERTa+BERT: 301,740 machine terms for 33,816 layouts).
// Kept for one micro-batch at a time (layouts come replica count by replica count): asking for
// another forgets the rest. Tables indexed by machine, stamped, reused by the thread's next.
class MachineTerms {
 public:
  struct Terms {
    double compute_s;    // layer_compute_s
    double optimizer_s;  // stage_optimizer_s of one layer
    int64_t max_layers;  // layers_that_fit in the machine's memory
  };
  MachineTerms(const Cluster& c, const ModelSpec& m, const CostOptions& opts);
  ~MachineTerms();
  MachineTerms(const MachineTerms&) = delete;
  MachineTerms& operator=(const MachineTerms&) = delete;
  // The terms at micro-batch b, the one of `batch_replicas` replicas.
  const Terms& of(int64_t machine, int64_t batch_replicas, double b);

  struct Table {
    std::vector<uint32_t> stamp;  // [machines] the generation its terms are from
    std::vector<Terms> terms;     // [machines]
    uint32_t generation = 0;
  };

 private:
  const Cluster& c_;
  const ModelSpec& m_;
  const CostOptions opts_;
  Table table_;
  int64_t batch_replicas_ = -1;  // what table_'s current generation holds
};
// split_problem written into `p`, reusing its vectors' memory; with `terms`, the per-machine
// terms come from (and are added to) it, which must be for the same cluster, model and options.
void fill_split_problem(SplitProblem& p, const Cluster& c, const ModelSpec& m, const std::vector<std::vector<int64_t>>& replicas,
                        const CostOptions& opts = {}, int64_t batch_replicas = 0, MachineTerms* terms = nullptr);
// The job's iteration time for a split (pipeline_cost's iteration_s); +inf if it does not fit.
double split_objective(const SplitProblem& p, const std::vector<int64_t>& bounds);
// A lower bound of split_objective over every split of `p` (caps ignored), in O(D S): per
// replica the pipeline's sum is at least one layer on every stage plus the other L - S layers
// on its cheapest stage, and its bottleneck at least the largest one-layer stage, the mean
// stage and ceil(L / S) layers on the cheapest stage plus the least send; the all-reduce and the optimiser terms at least their one-layer maxima (and the
// optimiser at least L over the sum of 1 / o_s). best_pipeline skips a layout whose bound
// exceeds the best iteration time found so far without splitting it.
double split_lower_bound(const SplitProblem& p);
// The split of least split_objective: exact when at most `exhaustive_limit` splits exist,
// otherwise DP + bounded search (split.cpp). Empty when no split fits.
std::vector<int64_t> optimise_split(const SplitProblem& p, double exhaustive_limit = 4096);
// The split the planner used before it optimised the whole cost: least bottleneck
// max_s (n_s c_s + x_s) (worst replica), then least sum among those. The reference that
// bottleneck_pipeline and the benchmark measure the new split against.
std::vector<int64_t> bottleneck_split(const SplitProblem& p);

}  // namespace hulk::plan::detail
