// Plausible ranges of the values that describe a machine or a link, in one place (bound as
// _core.plan.plausible_ranges for the Python checks, which name the file and the field).
//
// A finite value far outside them is a unit mistake or a typo (1e308 TFLOPS, 1e-300 ms), not
// a machine that exists: accepted, it gives 0.00 h makespans or tables of 300-digit numbers.
// Each bound lies far outside what has been built, so no real cluster is refused:
// - the largest single machine sold, NVIDIA GB200 NVL72 (one NVLink domain of 72 GPUs),
//   has about 13.5 TB of GPU memory and 180 PFLOPS of dense FP16/BF16 tensor throughput
//   (NVIDIA GB200 NVL72 product page, 2024);
// - one InfiniBand or RoCE hop takes about 1-2 us (NVIDIA ConnectX-7 datasheet), and a
//   geostationary satellite hop about 0.25 s one way;
// - the fastest NICs carry 800 Gbit/s, eight per server 6.4 Tbit/s; NVLink 5 gives a GPU
//   1.8 TB/s = 14.4 Tbit/s (NVIDIA Blackwell architecture technical brief).
#pragma once

#include <string>
#include <vector>

namespace hulk::plan {

struct PlausibleRange {
  const char* field;  // the attribute's name in cluster files
  double lo, hi;      // closed range
  bool zero_ok;       // 0 is allowed too (a latency of 0: co-located)
  const char* unit;
  const char* why;    // one line: what the bounds stand for
};

inline constexpr PlausibleRange kMemoryGbRange{"memory_gb", 1e-3, 1e5, false, "GB",
                                               "1 MB to 100 TB; the largest machine sold has about 13.5 TB"};
inline constexpr PlausibleRange kTflopsRange{"tflops", 1e-3, 1e6, false, "TFLOPS",
                                             "1 GFLOPS to 1 EFLOPS; the largest machine sold has 180 PFLOPS"};
inline constexpr PlausibleRange kGpusRange{"gpus", 1e-3, 1e4, false, "GPUs",
                                           "the largest NVLink domain sold holds 72 GPUs"};
inline constexpr PlausibleRange kLatencyMsRange{"latency_ms", 1e-4, 6e4, true, "ms",
                                                "0, or 0.1 us (below one network hop, about 1 us) to one minute"};
inline constexpr PlausibleRange kBandwidthGbpsRange{"bandwidth_gbps", 1e-6, 1e5, false, "Gbit/s",
                                                    "1 kbit/s to 100 Tbit/s; NVLink 5 gives a GPU 14.4 Tbit/s"};

// Every range above, in that order.
std::vector<PlausibleRange> plausible_ranges();
// True when v is finite and in r (or 0 where r.zero_ok).
bool is_plausible(const PlausibleRange& r, double v);
// Throws std::invalid_argument "<where>: <field> = <v> is outside the plausible range ..." unless
// is_plausible(r, v). `field` overrides r.field in the message (access_ms is a latency).
void check_plausible(const PlausibleRange& r, double v, const std::string& where, const char* field = nullptr);
// The same, with `where()` built only on a failure: a validation loop over millions of pairs
// spends more on naming them than on checking them.
template <class Where>
void check_plausible_lazy(const PlausibleRange& r, double v, const Where& where, const char* field = nullptr) {
  if (!is_plausible(r, v)) check_plausible(r, v, where(), field);
}

}  // namespace hulk::plan
