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

}  // namespace hulk::plan::detail
