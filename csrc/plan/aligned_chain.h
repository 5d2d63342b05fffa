// Hulk's refinement step: the job that finishes last laid out on replica-aligned region chains.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "csrc/plan/evaluator.h"

namespace hulk::plan::detail {

// The replica counts D a chain is aligned to: 8-GPU machines in regions of 1-8 machines (the
// measured regime) give every D from 1 to 8 some region that holds a multiple of it.
constexpr int64_t kAlignedReplicas[] = {1, 2, 3, 4, 6, 8};

// A region chain's machines for one D: `order` lists them region by region along the chain,
// each region's first (fastest) machines, the largest multiple of D of them; ends[i] is the
// size of the group made of the first i + 1 regions of the chain (regions with fewer than D
// machines are not in the chain).
struct AlignedChain {
  std::vector<int64_t> order;
  std::vector<size_t> ends;
};

// dist(a)[b]: the distance from region a to region b, R = members.size() of them per row;
// nullptr where no row can be given (out of time), which ends the chain there.
using DistanceRow = std::function<const double*(size_t)>;

// The chain from region `start` (members[start] must hold at least d machines): next, always,
// the region nearest the one added last (ties: the lower index) among those with at least d
// machines not yet in it, until the group holds max_machines or more. members[r]: region r's
// machines, fastest first.
AlignedChain aligned_chain(const std::vector<std::vector<int64_t>>& members, const DistanceRow& dist, int64_t start,
                           int64_t d, size_t max_machines);

// What align_last_job did, for the notes.
struct Aligned {
  int64_t chains = 0;       // region chains walked
  int64_t evaluations = 0;  // groups laid out (cache hits included)
  bool improved = false;    // the assignment changed
  int64_t replicas = 0;     // D of the chain whose group was taken
  int64_t machines = 0;     // that group's size
};

// Lays the job that finishes last in a concurrent assignment (job index per machine, -1 idle)
// out on groups that keep each stage's replicas in one region, and takes the shortest when it
// is shorter than the job's own (its old machines outside it go idle; the other jobs keep
// theirs, so the makespan never lengthens).
//
// The groups: the job's free machines (idle or its own) by region, fastest first. For each D of
// kAlignedReplicas, regions are chained from a start region, each next one the nearest (in the
// time to send the job's boundary activations between the regions' fastest free machines) to
// the one added last; each region gives the largest multiple of D of its free machines, so
// that a pipeline of D replicas can keep a stage's D machines in one region and its gradient
// all-reduce on the LAN. The candidates are the chain's prefixes that hold the job's memory.
// A chain ends once it holds kAlignedGrowth times the job's machines, or where out_of_time cuts
// its rows of region distances (20,000 measured machines have ~1,700 regions: a chain through
// all of them costs 50-100 ms). In three rounds, each cut by out_of_time: every D's chain from
// the region with the most such machines (ties: the lower index), kAlignedFirstPrefixes of its
// prefixes; then, for each D whose first chain came within kAlignedPromise of the job's time,
// the D of the shortest group first, the chains from its other starts (up to 7, the most such
// machines first), kAlignedPrefixes of their prefixes; then every prefix near the shortest
// group's, on its chain. A chain's prefixes are spread evenly over it, the whole chain always
// among them.
//
// Why: on measured clusters of uniform GPUs one large job (OPT-175B) sets the makespan, and
// its good groups are aligned chains: on 200 measured all-A100 machines #519, OPT-175B on 104
// machines as 4 replicas x 26 stages (7.13 h) where Search's 60 s walk ends at 8.5 h and Hulk's
// 1 s plan at 9.43 h without this step (84 machines, 3 x 28), 7.40 h with it. Single-machine
// moves do not get from one to the other: every step between breaks the alignment of some
// stage. benchmarks/probe_aligned_groups.py (every prefix of every chain, the whole job set
// re-laid out) is the exhaustive version this prunes.
Aligned align_last_job(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev, std::vector<int64_t>& assign,
                       const std::function<bool()>& out_of_time);

// At most this many prefixes of one chain are laid out in the first round (every D's first
// chain) and in the second (the other starts of the promising D).
constexpr size_t kAlignedFirstPrefixes = 8;
constexpr size_t kAlignedPrefixes = 16;
// Chains start from at most this many regions (the most aligned machines first).
constexpr size_t kAlignedStarts = 8;
// The other starts of a D are tried only where its first chain's shortest group came within
// this factor of the job's own time: on the tuning clusters' all-A100 machines the first
// chain's best was within 9% of its D's best over all starts, and on mixed GPUs (fastest
// first within a region breaks the alignment's symmetry) far above the job's time, where the
// time is worth more to the steps after.
constexpr double kAlignedPromise = 1.15;
// A chain ends once its group holds this many times the machines of the job's own group: on
// the tuning clusters the shortest aligned groups held 1.0-6.6 times as many (measured 200 and
// 1,000 all-A100 machines, k = 1, 3, 51, 53, OPT-175B last), and each region added costs a row
// of region distances and larger layouts.
constexpr size_t kAlignedGrowth = 8;

}  // namespace hulk::plan::detail
