#include "csrc/plan/plausible.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace hulk::plan {

std::vector<PlausibleRange> plausible_ranges() {
  return {kMemoryGbRange, kTflopsRange, kGpusRange, kLatencyMsRange, kBandwidthGbpsRange};
}

bool is_plausible(const PlausibleRange& r, double v) {
  return std::isfinite(v) && ((v >= r.lo && v <= r.hi) || (r.zero_ok && v == 0));
}

void check_plausible(const PlausibleRange& r, double v, const std::string& where, const char* field) {
  if (is_plausible(r, v)) return;
  std::ostringstream os;
  os << where << ": " << (field ? field : r.field) << " = " << v << " is outside the plausible range "
     << (r.zero_ok ? "0 or " : "") << "[" << r.lo << ", " << r.hi << "] " << r.unit << " (" << r.why
     << "); check the value and its unit";
  throw std::invalid_argument(os.str());
}

}  // namespace hulk::plan
