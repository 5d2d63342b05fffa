// The layer split's building blocks (split.cpp) against plain references written here: the
// stage values a bottleneck can take and the least bottleneck, which the split finds without
// sorting all S L values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "csrc/plan/split.h"

namespace {

using hulk::plan::detail::all_stage_values;
using hulk::plan::detail::least_bottleneck;
using hulk::plan::detail::stage_values_between;
constexpr double kInf = std::numeric_limits<double>::infinity();

// A random stage problem: S stages, compute c >= 0 per layer and send x after the stage, caps
// on layers per stage. Every third draw rounds c and x to quarters (ties within and across
// stages); some stages compute for free (c = 0) and some caps are below one layer.
struct Stages {
  std::vector<double> c, x;
  std::vector<int64_t> cap;
  int64_t L = 0;
};

Stages random_stages(std::mt19937_64& rng, int trial) {
  std::uniform_real_distribution<double> u(0, 1);
  Stages st;
  const size_t S = 1 + rng() % 10;
  st.L = static_cast<int64_t>(S + rng() % 120);
  const bool ties = trial % 3 == 0;
  auto q = [&](double v) { return ties ? std::round(v * 4) / 4 : v; };
  for (size_t s = 0; s < S; ++s) {
    st.c.push_back(trial % 11 == 0 && s == 0 ? 0.0 : q(0.05 + 3 * u(rng)));
    st.x.push_back(s + 1 < S ? q(25 * u(rng)) : 0.0);
    const int64_t even = st.L / static_cast<int64_t>(S);
    st.cap.push_back(trial % 4 == 0 ? static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * even + 2))
                                    : (trial % 4 == 1 ? st.L + 5 : even + static_cast<int64_t>(rng() % 4)));
  }
  return st;
}

// Every stage value, sorted, without repeats: the list the split used to build.
std::vector<double> reference_values(const Stages& st) {
  std::vector<double> v;
  for (size_t s = 0; s < st.c.size(); ++s)
    for (int64_t n = 1; n <= std::min(st.cap[s], st.L); ++n) v.push_back(static_cast<double>(n) * st.c[s] + st.x[s]);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// The least value tau at which L layers fit with every stage holding 1..cap layers of value at
// most tau, by counting each stage's values directly; +inf when none.
double reference_least_bottleneck(const Stages& st) {
  for (double tau : reference_values(st)) {
    int64_t total = 0;
    bool each = true;
    for (size_t s = 0; s < st.c.size(); ++s) {
      int64_t k = 0;
      while (k < std::min(st.cap[s], st.L) && static_cast<double>(k + 1) * st.c[s] + st.x[s] <= tau) ++k;
      each = each && k >= 1;
      total += k;
    }
    if (each && total >= st.L) return tau;
  }
  return kInf;
}

TEST(PlanSplit, StageValuesBetweenAreTheSortedListsRange) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  int nonempty = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const Stages st = random_stages(rng, trial);
    const std::vector<double> all = reference_values(st);
    EXPECT_EQ(all_stage_values(st.c, st.x, st.cap, st.L), all) << "trial " << trial;
    // Bounds: stage values themselves (ties with the range's ends), points between, none.
    const double top = all.empty() ? 1.0 : all.back();
    const std::vector<double> pick{all.empty() ? 0.0 : all[rng() % all.size()], top * u(rng), -kInf, kInf,
                                   std::nan(""), -1.0};
    for (double lo : pick)
      for (double hi : pick) {
        std::vector<double> want;
        for (double v : all)
          if (lo < v && !(hi < v)) want.push_back(v);
        const std::vector<double> got = stage_values_between(st.c, st.x, st.cap, st.L, lo, hi);
        ASSERT_EQ(got, want) << "trial " << trial << " lo " << lo << " hi " << hi;
        nonempty += !got.empty() && got.size() < all.size();
      }
  }
  EXPECT_GT(nonempty, 1000);  // most ranges cut the list somewhere inside
}

TEST(PlanSplit, LeastBottleneckIsTheLeastFeasibleStageValue) {
  std::mt19937_64 rng(12);
  int finite = 0, infeasible = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    const Stages st = random_stages(rng, trial);
    const double want = reference_least_bottleneck(st);
    ASSERT_EQ(least_bottleneck(st.c, st.x, st.cap, st.L), want) << "trial " << trial;
    (want < kInf ? finite : infeasible)++;
  }
  EXPECT_GT(finite, 800);
  EXPECT_GT(infeasible, 100);
  // An unreachable send (x = +inf) takes the path that lists every value: the answer is still
  // the least feasible one, and +inf when that stage must hold a layer under every finite tau.
  Stages st{{1.0, 2.0}, {kInf, 0.0}, {5, 5}, 6};
  EXPECT_EQ(least_bottleneck(st.c, st.x, st.cap, st.L), kInf);
  st.x[0] = 3.0;
  EXPECT_EQ(least_bottleneck(st.c, st.x, st.cap, st.L), reference_least_bottleneck(st));
}

}  // namespace

namespace {

// A random SplitProblem small enough for the exhaustive path: D replicas of S stages, ties on
// every third draw (quarters), caps on some stages, all-reduce and optimiser terms.
hulk::plan::detail::SplitProblem random_small_problem(std::mt19937_64& rng, int trial) {
  std::uniform_real_distribution<double> u(0, 1);
  hulk::plan::detail::SplitProblem p;
  const size_t S = 1 + rng() % 4, D = 1 + rng() % 6;
  p.layers = static_cast<int64_t>(S + rng() % 24);
  p.micro_batches = 1 + static_cast<int64_t>(rng() % 8);
  const bool ties = trial % 3 == 0;
  auto q = [&](double v) { return ties ? std::round(v * 4) / 4 : v; };
  p.resize(D, S);
  for (size_t r = 0; r < D; ++r)
    for (size_t s = 0; s < S; ++s) {
      p.c[p.at(r, s)] = q(0.05 + 3 * u(rng));
      p.x[p.at(r, s)] = s + 1 < S ? q(20 * u(rng)) : 0.0;
    }
  for (size_t s = 0; s < S; ++s) {
    p.o[s] = 0.05 * u(rng);
    p.ar_a[s] = D > 1 ? q(5 * u(rng)) : 0.0;
    p.ar_b[s] = D > 1 ? q(0.5 * u(rng)) : 0.0;
    const int64_t even = p.layers / static_cast<int64_t>(S);
    p.max_layers[s] = trial % 4 == 0 ? 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * even + 1)) : p.layers;
  }
  return p;
}

// The first split of least split_objective in lexicographic order of the stage sizes: the
// exhaustive path's answer, by listing every split and scoring it with split_objective.
std::vector<int64_t> reference_exhaustive(const hulk::plan::detail::SplitProblem& p) {
  const size_t S = p.max_layers.size();
  std::vector<int64_t> n(S, 1), best;
  double best_t = kInf;
  for (;;) {
    int64_t total = 0;
    for (int64_t k : n) total += k;
    if (total == p.layers) {
      std::vector<int64_t> b{0};
      for (int64_t k : n) b.push_back(b.back() + k);
      const double t = hulk::plan::detail::split_objective(p, b);
      if (t < best_t) {
        best_t = t;
        best = b;
      }
    }
    size_t s = S;  // next composition candidate: odometer over n_s in [1, L], last stage fastest
    while (s > 0 && n[s - 1] == p.layers) n[--s] = 1;
    if (s == 0) return best;
    ++n[s - 1];
  }
}

}  // namespace

// The exhaustive path (at most `exhaustive_limit` splits) gives the first split of least T,
// bit for bit the one scoring every split with split_objective would give, ties and caps included.
TEST(PlanSplit, ExhaustivePathIsTheFirstSplitOfLeastObjective) {
  std::mt19937_64 rng(41);
  int compared = 0, capped = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const auto p = random_small_problem(rng, trial);
    const std::vector<int64_t> got = hulk::plan::detail::optimise_split(p, 1e9);
    const std::vector<int64_t> want = reference_exhaustive(p);
    ASSERT_EQ(got, want) << "trial " << trial;
    if (!want.empty()) {
      ++compared;
      EXPECT_EQ(hulk::plan::detail::split_objective(p, got), hulk::plan::detail::split_objective(p, want));
    }
    if (trial % 4 == 0) ++capped;
  }
  EXPECT_GE(compared, 300);
  EXPECT_GE(capped, 100);
}

// split_lower_bound is at most the least T of any split (the exhaustive reference's), and equal
// to it where it is tight: one replica, alike stages, no sends, L a multiple of S.
TEST(PlanSplit, LowerBoundIsBelowEverySplitAndTightWhenStagesAreAlike) {
  std::mt19937_64 rng(43);
  int compared = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const auto p = random_small_problem(rng, trial);
    const std::vector<int64_t> best = reference_exhaustive(p);
    if (best.empty()) continue;
    const double t = hulk::plan::detail::split_objective(p, best);
    const double lb = hulk::plan::detail::split_lower_bound(p);
    EXPECT_LE(lb, t * (1 + 1e-12)) << "trial " << trial;
    EXPECT_GT(lb, 0.25 * t) << "trial " << trial;  // not a vacuous bound on these problems
    ++compared;
  }
  EXPECT_GE(compared, 400);
  hulk::plan::detail::SplitProblem p;
  p.layers = 12;
  p.micro_batches = 4;
  p.resize(1, 3);
  p.c = {0.5, 0.5, 0.5};
  p.o = {0.01, 0.01, 0.01};
  EXPECT_DOUBLE_EQ(hulk::plan::detail::split_lower_bound(p), hulk::plan::detail::split_objective(p, {0, 4, 8, 12}));
}
