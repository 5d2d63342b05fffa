#include "csrc/plan/evaluator.h"

namespace hulk::plan::detail {

std::pair<int64_t, double> slowest_job(Evaluator& ev, const std::vector<std::vector<int64_t>>& g,
                                       const std::vector<uint8_t>& done) {
  int64_t pick = -1;
  double worst = -1;
  for (size_t j = 0; j < g.size(); ++j) {
    if (done[j] || g[j].empty()) continue;
    const double t = ev.job(j, g[j]).time;
    if (pick < 0 || t > worst) {
      pick = static_cast<int64_t>(j);
      worst = t;
    }
  }
  return {pick, worst};
}

std::pair<int64_t, double> last_job_if_all_feasible(Evaluator& ev, const std::vector<std::vector<int64_t>>& groups,
                                                    int64_t& evaluations) {
  std::pair<int64_t, double> last{-1, -1.0};
  for (size_t j = 0; j < groups.size(); ++j) {
    const Evaluator::JobEval e = ev.job(j, groups[j]);
    ++evaluations;
    if (!e.feasible) return {-1, -1.0};
    if (e.time > last.second) last = {static_cast<int64_t>(j), e.time};
  }
  return last;
}

}  // namespace hulk::plan::detail
