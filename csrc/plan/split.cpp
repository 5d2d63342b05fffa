// The layer split of one job over fixed machines, optimised on the job's whole iteration
// time (split.h: SplitProblem, split_objective, optimise_split).
//
// The objective is the cost model's (cost.h) for D replicas sharing one split n_0..n_{S-1}:
//   T(n) = max_r [ sum_s (n_s c_rs + x_rs) + (m - 1) max_s (n_s c_rs + x_rs) ]   GPipe, slowest replica
//        + max_s (a_s + b_s n_s)                                                 gradient all-reduce (D > 1)
//        + max_s o_s n_s                                                          optimiser step
// with c_rs the compute time per layer of replica r's stage s, x_rs its send time, a_s + b_s n
// the ring all-reduce of n layers' gradients at position s (allreduce_time is linear in the
// bytes, so a_s = allreduce_time(ring_s, 0) and b_s its increase per layer) and o_s the slowest
// replica's optimiser time per layer. Every term is taken from pipeline_cost's own formulas
// (layer_compute_s, stage_optimizer_s, gpipe_time, allreduce_time in cost.h), so T equals
// pipeline_cost(...).iteration_s up to rounding, as long as every layer costs the same (always
// with the FLOP model; with a measured profile whose layers differ, c_rs is their mean and T
// an approximation that pipeline_cost then corrects).
//
// Search, in order:
// 1. Small spaces (at most `exhaustive_limit` splits, scaled by 4 / D beyond 4 replicas;
//    caps on layers per stage respected): every split is evaluated; the result is exact.
// 2. Otherwise an exact solver of the pipeline part with a bounded search around it:
//    - for a threshold tau on the pipeline bottleneck, the split of least
//      sum_s (n_s c_s + x_s) with every stage at most tau is a greedy (the sum is linear in n
//      under per-stage caps: one layer each, then the rest to the stages of least c_s), and
//      the least feasible tau is the least stage value n c_s + x_s at which a split exists
//      (least_bottleneck: bisection on tau, then binary search over the few values left);
//      so for one replica min over tau of sum + (m - 1) tau is exact when every tau up to
//      tau* + (sum(tau*) - least sum) / (m - 1) is tried (beyond it (m - 1) tau alone loses);
//      at most kMaxTau thresholds are tried, spread evenly, and c, x are the worst replica's;
//    - the all-reduce maximum is enumerated as a cap on layers per stage (n_s <= cap_s):
//      first no cap, then the levels that admit a split and can still win (level plus a
//      lower bound of the pipeline part below the best so far), at most kMaxArLevels of them
//      spread evenly;
//    - candidates are compared on the exact T up to kExactCandidates replicas, beyond that on
//      the worst replica's c and x (O(S) each; exact when the replicas are alike); the exact T
//      then picks among the best of them, the even split and
//      the least-bottleneck split (bottleneck_split, the planner's old objective), so the
//      result is never worse than either;
//    - the best candidate is polished by moving single layers between neighbouring stages
//      while T decreases (first improvement, at most kMaxPolish rounds; moves judged on the
//      worst-replica proxy when D S > kExactPolish, kept only if the exact T agrees), which
//      also takes care of the optimiser term.
#include "csrc/plan/split.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "csrc/plan/job_helpers.h"

namespace hulk::plan::detail {

namespace {

constexpr size_t kMaxArLevels = 8;
constexpr size_t kMaxTau = 16;
constexpr int kMaxPolish = 64;
constexpr size_t kExactPolish = 128;  // D S up to which the polish uses the exact T
constexpr size_t kExactCandidates = 2;  // D up to which DP candidates are compared on the exact T

// Number of compositions of L into S positive parts, saturated at `limit` + 1.
double compositions(int64_t L, int64_t S, double limit) {
  // C(L - 1, S - 1)
  double r = 1;
  const int64_t k = std::min(S - 1, L - S);
  for (int64_t i = 1; i <= k; ++i) {
    r = r * static_cast<double>(L - 1 - k + i) / static_cast<double>(i);
    if (r > limit) return limit + 1;
  }
  return r;
}

// Most layers stage s may hold with n c + x <= tau and n <= cap (n c + x grows with n).
int64_t most_layers(double c, double x, int64_t cap, double tau) {
  if (x > tau) return 0;
  if (c <= 0) return cap;
  double k = std::floor((tau - x) / c);
  if (k >= static_cast<double>(cap)) return cap;
  int64_t n = static_cast<int64_t>(std::max(0.0, k));
  const double limit = tau * (1 + 1e-12) + 1e-300;  // the threshold itself is a stage's value
  while (n < cap && static_cast<double>(n + 1) * c + x <= limit) ++n;
  return n;
}

// Least sum_s (n_s c_s + x_s) with n_s in [1, cap_s], sum n_s = L and every n_s c_s + x_s <=
// tau. Exact by a greedy: the sum is sum_s x_s + sum_s n_s c_s, linear in n under per-stage
// caps, so after one layer each the remaining layers go to the stages of least c_s first
// (`order`: stages by increasing c). O(S). Returns bounds, or empty when no split qualifies.
std::vector<int64_t> min_sum_split(const std::vector<double>& c, const std::vector<double>& x,
                                   const std::vector<int64_t>& cap, int64_t L, double tau,
                                   const std::vector<size_t>& order) {
  const size_t S = c.size();
  std::vector<int64_t> n(S, 1);
  int64_t rest = L - static_cast<int64_t>(S);
  std::vector<int64_t> u(S);
  for (size_t s = 0; s < S; ++s) {
    u[s] = most_layers(c[s], x[s], cap[s], tau);
    if (u[s] < 1) return {};
  }
  for (size_t s : order) {
    const int64_t add = std::min(u[s] - 1, rest);
    n[s] += add;
    rest -= add;
  }
  if (rest > 0) return {};
  std::vector<int64_t> bounds(S + 1, 0);
  for (size_t s = 0; s < S; ++s) bounds[s + 1] = bounds[s] + n[s];
  return bounds;
}

// `v` in increasing order without repeats.
void sort_unique(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

bool finite_stages(const std::vector<double>& c, const std::vector<double>& x) {
  for (size_t s = 0; s < c.size(); ++s)
    if (!std::isfinite(c[s]) || !(c[s] >= 0) || !std::isfinite(x[s])) return false;
  return true;
}

// Whether a split under bottleneck tau exists: every stage can hold a layer and the most
// layers under tau add up to L. Monotone in tau (most_layers is).
bool bottleneck_feasible(const std::vector<double>& c, const std::vector<double>& x, const std::vector<int64_t>& cap,
                         int64_t L, double tau) {
  int64_t total = 0;
  for (size_t s = 0; s < c.size(); ++s) {
    const int64_t u = most_layers(c[s], x[s], cap[s], tau);
    if (u < 1) return false;
    total += u;
  }
  return total >= L;
}

// The least of `values` (increasing) at which bottleneck_feasible holds, by binary search; +inf
// when none.
double first_feasible(const std::vector<double>& c, const std::vector<double>& x, const std::vector<int64_t>& cap,
                      int64_t L, const std::vector<double>& values) {
  size_t lo = 0, hi = values.size();
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (bottleneck_feasible(c, x, cap, L, values[mid])) hi = mid; else lo = mid + 1;
  }
  return lo < values.size() ? values[lo] : kInf;
}

}  // namespace

std::vector<double> all_stage_values(const std::vector<double>& c, const std::vector<double>& x,
                                     const std::vector<int64_t>& cap, int64_t L) {
  std::vector<double> v;
  for (size_t s = 0; s < c.size(); ++s)
    for (int64_t n = 1; n <= std::min(cap[s], L); ++n) v.push_back(static_cast<double>(n) * c[s] + x[s]);
  sort_unique(v);
  return v;
}

std::vector<double> stage_values_between(const std::vector<double>& c, const std::vector<double>& x,
                                         const std::vector<int64_t>& cap, int64_t L, double lo, double hi) {
  std::vector<double> v;
  if (!finite_stages(c, x) || std::isnan(lo) || std::isnan(hi)) {
    for (double value : all_stage_values(c, x, cap, L))
      if (lo < value && !(hi < value)) v.push_back(value);
    return v;
  }
  // Each stage's values grow with n (c >= 0), so the ones in (lo, hi] are a run of n: start
  // from the closed form and settle the rounding on the values themselves.
  for (size_t s = 0; s < c.size(); ++s) {
    const int64_t m = std::min(cap[s], L);
    if (m < 1) continue;
    auto value = [&](int64_t n) { return static_cast<double>(n) * c[s] + x[s]; };
    auto near_n = [&](double t) {  // about the n at which the value reaches t, within [1, m]
      const double q = c[s] > 0 ? std::floor((t - x[s]) / c[s]) : 1.0;
      return static_cast<int64_t>(std::clamp(q, 1.0, static_cast<double>(m)));
    };
    int64_t a = 1, b = m;
    if (!(lo < value(1))) {
      a = near_n(lo);
      while (a <= m && !(lo < value(a))) ++a;
      while (a > 1 && lo < value(a - 1)) --a;
    }
    if (hi < value(m)) {
      b = near_n(hi);
      while (b >= 1 && hi < value(b)) --b;
      while (b < m && !(hi < value(b + 1))) ++b;
    }
    for (int64_t n = a; n <= b; ++n) v.push_back(value(n));
  }
  sort_unique(v);
  return v;
}

double least_bottleneck(const std::vector<double>& c, const std::vector<double>& x, const std::vector<int64_t>& cap,
                        int64_t L) {
  if (!finite_stages(c, x)) return first_feasible(c, x, cap, L, all_stage_values(c, x, cap, L));
  // The answer is the least stage value at which a split exists. Rather than sort all S L
  // values, bisect on tau (feasibility is monotone in it) until few values are left between
  // an infeasible `lo` and a feasible `up`, then search those.
  struct Probe {
    bool feasible;
    int64_t values;  // stage values at most tau (most_layers counts them), within min(cap, L)
  };
  auto probe = [&](double tau) {
    int64_t total = 0, values = 0;
    bool each = true;
    for (size_t s = 0; s < c.size(); ++s) {
      const int64_t u = most_layers(c[s], x[s], cap[s], tau);
      each = each && u >= 1;
      total += u;
      values += std::min(u, std::min(cap[s], L));
    }
    return Probe{each && total >= L, values};
  };
  double widest = -kInf, up = -kInf;
  for (size_t s = 0; s < c.size(); ++s) {
    const int64_t m = std::min(cap[s], L);
    if (m < 1) return kInf;
    widest = std::max(widest, c[s] + x[s]);
    up = std::max(up, static_cast<double>(m) * c[s] + x[s]);
  }
  if (c.empty()) return kInf;
  Probe at_up = probe(up);
  if (!at_up.feasible) return kInf;
  // Every stage holds a layer, so no tau below the widest first value is feasible; the margin
  // covers most_layers' rounding slack (the probe confirms it; should it not, list all values).
  double lo = widest - std::abs(widest) * 1e-9 - 1e-300;
  Probe at_lo = probe(lo);
  if (at_lo.feasible) return first_feasible(c, x, cap, L, all_stage_values(c, x, cap, L));
  for (int step = 0; step < 64 && at_up.values - at_lo.values > 16; ++step) {
    const double mid = lo + (up - lo) / 2;
    if (!(lo < mid && mid < up)) break;
    const Probe at_mid = probe(mid);
    if (at_mid.feasible) {
      up = mid;
      at_up = at_mid;
    } else {
      lo = mid;
      at_lo = at_mid;
    }
  }
  // The least value at or above `up` is feasible too, and no value lies between up and it, so
  // the answer is among the values in (lo, that value]. (Feasibility only changes at stage
  // values, so a value at most `up` is feasible too, up to most_layers' 1e-12 slack.)
  double hi = kInf;
  for (size_t s = 0; s < c.size(); ++s) {
    const int64_t m = std::min(cap[s], L);
    auto value = [&](int64_t n) { return static_cast<double>(n) * c[s] + x[s]; };
    if (value(m) < up) continue;
    int64_t n = c[s] > 0 ? static_cast<int64_t>(std::clamp(std::ceil((up - x[s]) / c[s]), 1.0, static_cast<double>(m))) : 1;
    while (n < m && value(n) < up) ++n;
    while (n > 1 && !(value(n - 1) < up)) --n;
    hi = std::min(hi, value(n));
  }
  return first_feasible(c, x, cap, L, stage_values_between(c, x, cap, L, lo, hi));
}

namespace {

double sum_of(const std::vector<double>& c, const std::vector<double>& x, const std::vector<int64_t>& b) {
  double s = 0;
  for (size_t k = 0; k + 1 < b.size(); ++k) s += static_cast<double>(b[k + 1] - b[k]) * c[k] + x[k];
  return s;
}

bool within_caps(const std::vector<int64_t>& b, const std::vector<int64_t>& cap) {
  for (size_t k = 0; k + 1 < b.size(); ++k)
    if (b[k + 1] - b[k] < 1 || b[k + 1] - b[k] > cap[k]) return false;
  return true;
}

}  // namespace

void SplitProblem::resize(size_t D, size_t S) {
  replicas = D;
  c.assign(D * S, 0);
  x.assign(D * S, 0);
  o.assign(S, 0);
  ar_a.assign(S, 0);
  ar_b.assign(S, 0);
  max_layers.assign(S, layers);
}

SplitProblem split_problem(const Cluster& c, const ModelSpec& m, const std::vector<std::vector<int64_t>>& replicas,
                           const CostOptions& opts, int64_t batch_replicas) {
  SplitProblem p;
  fill_split_problem(p, c, m, replicas, opts, batch_replicas);
  return p;
}

namespace {

// Tables let go by a MachineTerms, for the thread's next: one best_pipeline call makes one.
std::vector<MachineTerms::Table>& spare_tables() {
  thread_local std::vector<MachineTerms::Table> spare;
  return spare;
}

}  // namespace

MachineTerms::MachineTerms(const Cluster& c, const ModelSpec& m, const CostOptions& opts) : c_(c), m_(m), opts_(opts) {
  auto& spare = spare_tables();
  if (!spare.empty()) {
    table_ = std::move(spare.back());
    spare.pop_back();
  }
  const size_t n = static_cast<size_t>(c.size());
  if (table_.stamp.size() < n) {
    table_.stamp.assign(n, 0);
    table_.terms.resize(n);
    table_.generation = 0;
  }
}

MachineTerms::~MachineTerms() { spare_tables().push_back(std::move(table_)); }

const MachineTerms::Terms& MachineTerms::of(int64_t machine, int64_t batch_replicas, double b) {
  if (batch_replicas != batch_replicas_) {  // a new generation: every machine's terms are stale
    if (++table_.generation == 0) {
      std::fill(table_.stamp.begin(), table_.stamp.end(), 0);
      table_.generation = 1;
    }
    batch_replicas_ = batch_replicas;
  }
  const size_t i = static_cast<size_t>(machine);
  Terms& t = table_.terms[i];
  if (table_.stamp[i] != table_.generation) {
    t = Terms{layer_compute_s(c_, m_, machine, b), stage_optimizer_s(c_, m_, machine, 1.0, opts_),
              layers_that_fit(m_, b, capacity_bytes(c_, machine))};
    table_.stamp[i] = table_.generation;
  }
  return t;
}

void fill_split_problem(SplitProblem& p, const Cluster& c, const ModelSpec& m, const std::vector<std::vector<int64_t>>& replicas,
                        const CostOptions& opts, int64_t batch_replicas, MachineTerms* terms) {
  p.layers = m.layers;
  p.micro_batches = m.micro_batches;
  const size_t D = replicas.size();
  const size_t S = D ? replicas.front().size() : 0;
  const int64_t batch_of = batch_replicas > 0 ? batch_replicas : static_cast<int64_t>(D);
  const double b = micro_batch(m, batch_of);
  // The cost model's per-stage formulas (cost.h), per layer.
  const double boundary = m.boundary_bytes(b);
  p.resize(D, S);
  LayersThatFit fit(m, b);
  for (size_t r = 0; r < D; ++r)
    for (size_t s = 0; s < S; ++s) {
      const int64_t i = replicas[r][s];
      if (terms) {
        const MachineTerms::Terms& t = terms->of(i, batch_of, b);
        p.c[p.at(r, s)] = t.compute_s;
        p.o[s] = std::max(p.o[s], t.optimizer_s);
        p.max_layers[s] = std::min(p.max_layers[s], t.max_layers);
      } else {
        p.c[p.at(r, s)] = layer_compute_s(c, m, i, b);
        p.o[s] = std::max(p.o[s], stage_optimizer_s(c, m, i, 1.0, opts));
        p.max_layers[s] = std::min(p.max_layers[s], fit(capacity_bytes(c, i)));
      }
      if (s + 1 < S) p.x[p.at(r, s)] = 2.0 * c.send_time(i, replicas[r][s + 1], boundary);
    }
  if (D > 1) {
    std::vector<int64_t> ring(D);
    for (size_t s = 0; s < S; ++s) {
      for (size_t r = 0; r < D; ++r) ring[r] = replicas[r][s];
      const RingLinks links = ring_links(c, ring);  // the replicas' machines are distinct: no checks
      p.ar_a[s] = allreduce_time(links, 0.0);
      p.ar_b[s] = std::isfinite(p.ar_a[s]) ? allreduce_time(links, 2.0 * m.params_per_layer()) - p.ar_a[s] : 0.0;
    }
  }
}

double split_objective(const SplitProblem& p, const std::vector<int64_t>& bounds) {
  const size_t S = p.max_layers.size();
  if (bounds.size() != S + 1 || S == 0) return kInf;
  double worst = 0;
  for (size_t r = 0; r < p.replicas; ++r) {
    double sum = 0, bottleneck = -1;
    for (size_t s = 0; s < S; ++s) {
      const double cx = static_cast<double>(bounds[s + 1] - bounds[s]) * p.c[p.at(r, s)] + p.x[p.at(r, s)];
      sum += cx;
      bottleneck = std::max(bottleneck, cx);
    }
    worst = std::max(worst, gpipe_time(sum, bottleneck, p.micro_batches));
  }
  double ar = 0, opt = 0;
  for (size_t s = 0; s < S; ++s) {
    const int64_t n = bounds[s + 1] - bounds[s];
    if (n < 1 || n > p.max_layers[s]) return kInf;
    if (p.replicas > 1) ar = std::max(ar, p.ar_a[s] + p.ar_b[s] * static_cast<double>(n));
    opt = std::max(opt, p.o[s] * static_cast<double>(n));
  }
  return worst + ar + opt;
}

double split_lower_bound(const SplitProblem& p) {
  const size_t S = p.max_layers.size();
  if (S == 0 || static_cast<int64_t>(S) > p.layers) return kInf;
  const int64_t Si = static_cast<int64_t>(S);
  const double extra = static_cast<double>(p.layers - Si);            // layers beyond one per stage
  const double fullest = static_cast<double>((p.layers + Si - 1) / Si);  // some stage holds at least this many
  double worst = 0;
  for (size_t r = 0; r < p.replicas; ++r) {
    double sum = 0, one_layer = 0, cheapest = kInf, least_send = kInf;
    for (size_t s = 0; s < S; ++s) {
      const double cx = p.c[p.at(r, s)] + p.x[p.at(r, s)];
      sum += cx;
      one_layer = std::max(one_layer, cx);
      cheapest = std::min(cheapest, p.c[p.at(r, s)]);
      least_send = std::min(least_send, p.x[p.at(r, s)]);
    }
    sum += extra * cheapest;
    const double bottleneck = std::max({one_layer, sum / static_cast<double>(S), fullest * cheapest + least_send});
    worst = std::max(worst, gpipe_time(sum, bottleneck, p.micro_batches));
  }
  double ar = 0, opt = 0, inverse_o = 0;
  for (size_t s = 0; s < S; ++s) {
    if (p.replicas > 1 && std::isfinite(p.ar_a[s]) && std::isfinite(p.ar_b[s])) ar = std::max(ar, p.ar_a[s] + p.ar_b[s]);
    opt = std::max(opt, p.o[s]);
    inverse_o += p.o[s] > 0 ? 1.0 / p.o[s] : kInf;
  }
  if (inverse_o < kInf) opt = std::max(opt, static_cast<double>(p.layers) / inverse_o);
  return worst + ar + opt;
}

namespace {

// ---- optimise_split's phases -------------------------------------------------------------

// The split of least exact T among those offered.
struct ExactBest {
  explicit ExactBest(const SplitProblem& problem) : p(problem) {}
  const SplitProblem& p;
  std::vector<int64_t> b;
  double t = kInf;
  void consider(const std::vector<int64_t>& cand) {
    if (cand.empty()) return;
    const double ct = split_objective(p, cand);
    if (ct < t) {
      t = ct;
      b = cand;
    }
  }
};

// Phase 1: every split (each stage at least one layer, within its cap); exact. The splits are
// walked depth first with each replica's running sum and bottleneck (and the all-reduce and
// optimiser maxima) kept per depth, so a split costs O(D) rather than split_objective's O(D S);
// the terms are summed and maximised in split_objective's order, so T is the same double and
// the first split of least T wins as before.
class ExhaustiveSplit {
 public:
  explicit ExhaustiveSplit(const SplitProblem& p)
      : p_(p), S_(p.max_layers.size()), D_(p.replicas), L_(p.layers), b_(S_ + 1, 0),
        sum_((S_ + 1) * D_, 0.0), bot_((S_ + 1) * D_, -1.0), ar_(S_ + 1, 0.0), opt_(S_ + 1, 0.0),
        rest_cx_((S_ + 1) * D_, 0.0), rest_min_c_((S_ + 1) * D_, kInf), rest_max_cx_((S_ + 1) * D_, -1.0),
        rest_ar_(S_ + 1, 0.0), rest_opt_(S_ + 1, 0.0) {
    // Per depth s, what stages s.. add at the least (one layer each, the other layers on the
    // cheapest of them): the bound that prunes a subtree (lower_bound).
    for (size_t s = S_; s-- > 0;) {
      for (size_t r = 0; r < D_; ++r) {
        const double c = p_.c[p_.at(r, s)], cx = c + p_.x[p_.at(r, s)];
        rest_cx_[s * D_ + r] = rest_cx_[(s + 1) * D_ + r] + cx;
        rest_min_c_[s * D_ + r] = std::min(rest_min_c_[(s + 1) * D_ + r], c);
        rest_max_cx_[s * D_ + r] = std::max(rest_max_cx_[(s + 1) * D_ + r], cx);
      }
      rest_ar_[s] = D_ > 1 ? std::max(rest_ar_[s + 1], p_.ar_a[s] + p_.ar_b[s]) : 0.0;
      rest_opt_[s] = std::max(rest_opt_[s + 1], p_.o[s]);
    }
    // Pruning starts from the even split's time (when it fits): the least time is at most that.
    if (S_ > 0 && static_cast<int64_t>(S_) <= L_) prune_above_ = split_objective(p_, even_bounds(static_cast<int64_t>(S_), L_));
  }

  std::vector<int64_t> run() {
    if (S_ > 0) visit(0);
    return best_;
  }

 private:
  // Stage s's n layers on top of depth s's running terms, into depth s + 1's.
  void extend(size_t s, int64_t n) {
    const double dn = static_cast<double>(n);
    for (size_t r = 0; r < D_; ++r) {
      const double cx = dn * p_.c[p_.at(r, s)] + p_.x[p_.at(r, s)];
      sum_[(s + 1) * D_ + r] = sum_[s * D_ + r] + cx;
      bot_[(s + 1) * D_ + r] = std::max(bot_[s * D_ + r], cx);
    }
    ar_[s + 1] = D_ > 1 ? std::max(ar_[s], p_.ar_a[s] + p_.ar_b[s] * dn) : 0.0;
    opt_[s + 1] = std::max(opt_[s], p_.o[s] * dn);
  }

  // A lower bound of T over the splits that extend depth s's running terms (b_[s] layers on
  // stages 0..s-1): every term only grows, stages s.. hold a layer each and the rest of the
  // layers at least at their cheapest stage's compute.
  double lower_bound(size_t s) const {
    const double extra = static_cast<double>(L_ - b_[s] - static_cast<int64_t>(S_ - s));
    double worst = 0;
    for (size_t r = 0; r < D_; ++r) {
      const size_t k = s * D_ + r;
      worst = std::max(worst, gpipe_time(sum_[k] + rest_cx_[k] + extra * rest_min_c_[k], std::max(bot_[k], rest_max_cx_[k]),
                                         p_.micro_batches));
    }
    return worst + std::max(ar_[s], rest_ar_[s]) + std::max(opt_[s], rest_opt_[s]);
  }

  void visit(size_t s) {
    const int64_t l = b_[s];
    if (s + 1 == S_) {
      const int64_t n = L_ - l;
      if (n < 1 || n > p_.max_layers[s]) return;
      extend(s, n);
      double worst = 0;
      for (size_t r = 0; r < D_; ++r) worst = std::max(worst, gpipe_time(sum_[S_ * D_ + r], bot_[S_ * D_ + r], p_.micro_batches));
      const double t = worst + ar_[S_] + opt_[S_];
      if (t < best_t_) {
        best_t_ = t;
        prune_above_ = std::min(prune_above_, t);
        b_[S_] = L_;
        best_ = b_;
      }
      return;
    }
    const int64_t hi = std::min(p_.max_layers[s], L_ - l - static_cast<int64_t>(S_ - s - 1));
    for (int64_t n = 1; n <= hi; ++n) {
      b_[s + 1] = l + n;
      extend(s, n);
      // A subtree whose bound is above the least time so far (by more than rounding: the bound
      // sums in another order) holds no split as short, so the split found is the one the
      // whole enumeration finds: the first of least time.
      if (lower_bound(s + 1) > prune_above_ * (1 + kPruneMargin)) continue;
      visit(s + 1);
    }
  }

  static constexpr double kPruneMargin = 1e-9;
  const SplitProblem& p_;
  const size_t S_, D_;
  const int64_t L_;
  std::vector<int64_t> b_, best_;
  std::vector<double> sum_, bot_;  // [(S + 1) D]: per depth and replica
  std::vector<double> ar_, opt_;   // [S + 1]
  std::vector<double> rest_cx_, rest_min_c_, rest_max_cx_;  // [(S + 1) D]: stages from the depth on
  std::vector<double> rest_ar_, rest_opt_;                  // [S + 1]: one layer's, stages from the depth on
  double best_t_ = kInf;
  double prune_above_ = kInf;
};

std::vector<int64_t> exhaustive_split(const SplitProblem& p) { return ExhaustiveSplit(p).run(); }

// The worst replica's compute and send time per stage, what phase 2 plans on.
struct WorstReplica {
  std::vector<double> c, x;
  double m1 = 0;              // micro-batches - 1 (0 for one)
  std::vector<size_t> order;  // stages by increasing c (stable)
};

WorstReplica worst_replica(const SplitProblem& p) {
  const size_t Su = p.max_layers.size();
  WorstReplica w;
  w.c.assign(Su, 0);
  w.x.assign(Su, 0);
  for (size_t r = 0; r < p.replicas; ++r)
    for (size_t s = 0; s < Su; ++s) {
      w.c[s] = std::max(w.c[s], p.c[p.at(r, s)]);
      // An unreachable pair makes every split infeasible; plan the rest anyway.
      if (std::isfinite(p.x[p.at(r, s)])) w.x[s] = std::max(w.x[s], p.x[p.at(r, s)]);
    }
  w.m1 = p.micro_batches > 1 ? static_cast<double>(p.micro_batches - 1) : 0.0;
  w.order.resize(Su);
  for (size_t s = 0; s < Su; ++s) w.order[s] = s;
  std::stable_sort(w.order.begin(), w.order.end(), [&](size_t a, size_t b) { return w.c[a] < w.c[b]; });
  return w;
}

// T of a split as phase 2 compares candidates: exact up to kExactCandidates replicas, beyond
// that on the worst replica's c and x (O(S), exact when the replicas are alike).
double proxy_time(const SplitProblem& p, const WorstReplica& w, const std::vector<int64_t>& b) {
  if (p.replicas <= kExactCandidates) return split_objective(p, b);
  double sum = 0, bott = 0, ar = 0, opt = 0;
  for (size_t s = 0; s < w.c.size(); ++s) {
    const double n = static_cast<double>(b[s + 1] - b[s]);
    const double cx = n * w.c[s] + w.x[s];
    sum += cx;
    bott = std::max(bott, cx);
    if (p.replicas > 1) ar = std::max(ar, p.ar_a[s] + p.ar_b[s] * n);
    opt = std::max(opt, p.o[s] * n);
  }
  return gpipe_time(sum, bott, p.micro_batches) + ar + opt;
}

// The split of least proxy_time among those offered.
struct ProxyBest {
  ProxyBest(const SplitProblem& problem, const WorstReplica& worst) : p(problem), w(worst) {}
  const SplitProblem& p;
  const WorstReplica& w;
  std::vector<int64_t> b;
  double t = kInf;
  void consider(const std::vector<int64_t>& cand) {
    if (cand.empty()) return;
    const double ct = proxy_time(p, w, cand);
    if (ct < t) {
      t = ct;
      b = cand;
    }
  }
};

// Candidates under per-stage caps: the least sum at the least bottleneck tau0, the least sum
// without a bottleneck bound, and the least sums at up to kMaxTau thresholds between tau0 and
// the point beyond which (m - 1) tau alone loses. `tau0` is least_bottleneck(w.c, w.x, cap, L)
// and `at_tau0` the least sum under it (the caller has them for the uncapped search).
void search_under_caps(const SplitProblem& p, const WorstReplica& w, const std::vector<int64_t>& cap, double tau0,
                       const std::vector<int64_t>& at_tau0, ProxyBest& candidates) {
  const int64_t L = p.layers;
  if (tau0 == kInf) return;
  const std::vector<int64_t> loose = min_sum_split(w.c, w.x, cap, L, kInf, w.order);
  candidates.consider(at_tau0);
  candidates.consider(loose);
  if (w.m1 <= 0 || at_tau0.empty() || loose.empty()) return;
  // Beyond tau0 + (sum at tau0 - least sum) / (m - 1), (m - 1) tau alone loses.
  const double hi = tau0 + (sum_of(w.c, w.x, at_tau0) - sum_of(w.c, w.x, loose)) / w.m1;
  const std::vector<double> taus = stage_values_between(w.c, w.x, cap, L, tau0, hi);  // none if hi rounds below tau0
  const size_t count = taus.size();
  const size_t k = std::min<size_t>(count, kMaxTau);
  for (size_t q = 0; q < k; ++q) {
    const size_t pick = k == count ? q : (q + 1) * count / k - 1;
    candidates.consider(min_sum_split(w.c, w.x, cap, L, taus[pick], w.order));
  }
}

void search_under_caps(const SplitProblem& p, const WorstReplica& w, const std::vector<int64_t>& cap,
                       ProxyBest& candidates) {
  const double tau0 = least_bottleneck(w.c, w.x, cap, p.layers);
  if (tau0 == kInf) return;
  search_under_caps(p, w, cap, tau0, min_sum_split(w.c, w.x, cap, p.layers, tau0, w.order), candidates);
}

// Caps n_s <= cap_s on layers per stage that keep every stage's all-reduce a_s + b_s n_s at
// or under `level`, into `cap` [S].
void caps_at_level(const SplitProblem& p, double level, std::vector<int64_t>& cap) {
  const int64_t L = p.layers;
  cap.resize(p.max_layers.size());
  for (size_t s = 0; s < cap.size(); ++s) {
    int64_t k = 0;
    if (p.ar_b[s] > 0) {
      const double q = std::floor((level - p.ar_a[s]) / p.ar_b[s] * (1 + 1e-12) + 1e-9);
      k = q >= static_cast<double>(L) ? L : (q >= 0 ? static_cast<int64_t>(q) : 0);
    } else if (p.ar_a[s] <= level) {
      k = L;
    }
    cap[s] = std::min<int64_t>(k, p.max_layers[s]);
  }
}

// The distinct all-reduce levels a_s + b_s n (1 <= n <= min(max_layers_s, L)), increasing, up
// to the first at which `keep` fails (it must hold on a prefix of the increasing levels). Each
// stage's levels grow with n, so a merge of the S runs lists only the levels kept; with a
// non-finite or negative a or b it lists all and sorts them (NaN levels sort unspecified).
template <class Keep>
std::vector<double> levels_below(const SplitProblem& p, Keep keep) {
  const size_t S = p.max_layers.size();
  const int64_t L = p.layers;
  auto level = [&](size_t s, int64_t n) { return p.ar_a[s] + p.ar_b[s] * static_cast<double>(n); };
  std::vector<double> out;
  bool runs = true;
  for (size_t s = 0; s < S; ++s) runs = runs && std::isfinite(p.ar_a[s]) && std::isfinite(p.ar_b[s]) && p.ar_b[s] >= 0;
  if (!runs) {
    for (size_t s = 0; s < S; ++s)
      for (int64_t n = 1; n <= std::min(p.max_layers[s], L); ++n) out.push_back(level(s, n));
    sort_unique(out);
    size_t kept = 0;
    while (kept < out.size() && keep(out[kept])) ++kept;
    out.resize(kept);
    return out;
  }
  using Head = std::pair<double, size_t>;  // a stage's next level and the stage
  std::vector<Head> heap;
  std::vector<int64_t> next(S, 1);
  for (size_t s = 0; s < S; ++s)
    if (std::min(p.max_layers[s], L) >= 1) heap.emplace_back(level(s, 1), s);
  const auto later = std::greater<Head>();
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const auto [lev, s] = heap.back();
    if (!keep(lev)) break;
    if (out.empty() || out.back() != lev) out.push_back(lev);
    if (++next[s] <= std::min(p.max_layers[s], L)) {
      heap.back() = Head{level(s, next[s]), s};
      std::push_heap(heap.begin(), heap.end(), later);
    } else {
      heap.pop_back();
    }
  }
  return out;
}

// All-reduce levels as caps: the distinct values a_s + b_s n, increasing, while a level plus
// the pipeline's lower bound can still beat `best_t`; only caps that admit a split, each once.
std::vector<std::vector<int64_t>> allreduce_caps(const SplitProblem& p, double pipe_lb, double best_t) {
  const int64_t L = p.layers;
  const std::vector<double> levels = levels_below(p, [&](double lev) { return lev + pipe_lb < best_t; });
  std::vector<std::vector<int64_t>> useful;
  std::vector<int64_t> cap;  // one buffer for every level; copied only when useful
  for (double lev : levels) {
    if (!(lev + pipe_lb < best_t)) break;
    caps_at_level(p, lev, cap);
    int64_t total = 0;
    for (int64_t k : cap) total += k;
    if (total < L || *std::min_element(cap.begin(), cap.end()) < 1) continue;
    if (!useful.empty() && useful.back() == cap) continue;
    useful.push_back(cap);
  }
  return useful;
}

// Polish: move one layer across a boundary while T decreases (first improvement, at most
// kMaxPolish rounds). With many replicas (D S > kExactPolish) the moves are judged on
// proxy_time, O(S) each; the caller keeps the result only if the exact T is better.
std::vector<int64_t> polish(const SplitProblem& p, const WorstReplica& w, std::vector<int64_t> cur) {
  const size_t Su = p.max_layers.size();
  const bool exact_polish = p.replicas * Su <= kExactPolish;
  auto judge = [&](const std::vector<int64_t>& b) {
    if (exact_polish) return split_objective(p, b);
    const double t = proxy_time(p, w, b);
    return t < kInf ? t : kInf;  // NaN (an unreachable all-reduce ring) counts as +inf
  };
  double cur_t = judge(cur);
  for (int round = 0; round < kMaxPolish; ++round) {
    bool improved = false;
    for (size_t k = 1; k < Su && !improved; ++k)
      for (int64_t d : {-1, 1}) {
        const int64_t was = cur[k];  // the move is tried in place and undone unless it wins
        if (was + d <= cur[k - 1] || was + d >= cur[k + 1]) continue;
        cur[k] = was + d;
        const double t = judge(cur);
        if (t < cur_t * (1 - 1e-12)) {
          cur_t = t;
          improved = true;
          break;
        }
        cur[k] = was;
      }
    if (!improved) break;
  }
  return cur;
}

}  // namespace

std::vector<int64_t> optimise_split(const SplitProblem& p, double exhaustive_limit) {
  const int64_t S = static_cast<int64_t>(p.max_layers.size()), L = p.layers;
  if (S == 0 || S > L) return {};
  int64_t room = 0;
  for (int64_t k : p.max_layers) room += std::min(k, L);
  if (room < L) return {};

  // 1. Exhaustive on small spaces (each split costs O(D S) to evaluate, so the limit on the
  //    number of splits shrinks with D beyond 4 replicas).
  const double D = static_cast<double>(std::max<size_t>(1, p.replicas));
  const double limit = D > 4 ? exhaustive_limit * 4 / D : exhaustive_limit;
  if (compositions(L, S, limit) <= limit) return exhaustive_split(p);

  // 2. DP over the right objective, bounded search around it, on the worst replica's c and x.
  const WorstReplica w = worst_replica(p);
  // Lower bound of the pipeline part of T, used to stop the all-reduce levels.
  const double tau_free = least_bottleneck(w.c, w.x, p.max_layers, L);
  if (tau_free == kInf) return {};
  const std::vector<int64_t> at_tau_free = min_sum_split(w.c, w.x, p.max_layers, L, tau_free, w.order);
  const std::vector<int64_t> free_sum = min_sum_split(w.c, w.x, p.max_layers, L, kInf, w.order);
  const double pipe_lb = w.m1 * tau_free + (free_sum.empty() ? 0.0 : sum_of(w.c, w.x, free_sum));

  ProxyBest candidates(p, w);
  // Without an all-reduce cap first: its T bounds the levels worth trying.
  search_under_caps(p, w, p.max_layers, tau_free, at_tau_free, candidates);
  if (p.replicas > 1) {
    const std::vector<std::vector<int64_t>> useful = allreduce_caps(p, pipe_lb, candidates.t);
    const size_t k = std::min<size_t>(useful.size(), kMaxArLevels);
    for (size_t q = 0; q < k; ++q)
      search_under_caps(p, w, useful[k == useful.size() ? q : q * (useful.size() - 1) / std::max<size_t>(1, k - 1)],
                        candidates);
  }

  // The exact T picks among the best candidate, the even and the least-bottleneck splits.
  ExactBest best(p);
  best.consider(candidates.b);
  const std::vector<int64_t> even = even_bounds(S, L);
  if (within_caps(even, p.max_layers)) best.consider(even);
  best.consider(at_tau_free);  // bottleneck_split(p)
  if (best.b.empty()) return best.b;
  best.consider(polish(p, w, best.b));
  return best.b;
}

std::vector<int64_t> bottleneck_split(const SplitProblem& p) {
  const size_t S = p.max_layers.size();
  const int64_t L = p.layers;
  if (S == 0 || static_cast<int64_t>(S) > L) return {};
  const WorstReplica w = worst_replica(p);
  const double tau = least_bottleneck(w.c, w.x, p.max_layers, L);
  if (tau == kInf) return {};
  return min_sum_split(w.c, w.x, p.max_layers, L, tau, w.order);
}

// Largest n such that a stage of n layers fits in `cap` bytes (cost.h's stage memory:
// state_bytes(n) + stage_activation_bytes(n, b, m)); 0 when not even one layer fits.
int64_t layers_that_fit(const ModelSpec& m, double b, double cap) {
  // Same expressions as pipeline_cost, so both agree at the edge. The need is affine in n
  // (state and activations both grow linearly), so start from the closed form and settle
  // the rounding with the exact expression.
  auto need = [&](int64_t n) { return m.state_bytes(n) + m.stage_activation_bytes(n, b, m.micro_batches); };
  const double base = need(0), per = need(1) - base;
  int64_t n = per > 0 ? static_cast<int64_t>(std::clamp(std::floor((cap - base) / per), 0.0, static_cast<double>(m.layers)))
                      : m.layers;
  while (n > 0 && need(n) > cap) --n;
  while (n < m.layers && need(n + 1) <= cap) ++n;
  return n;
}

}  // namespace hulk::plan::detail
