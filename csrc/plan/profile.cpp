// Profile validation and the interpolation rules stated in profile.h.
//
// Choices the header leaves open:
// - Entries are looked up by tensor-parallel degree first (exact degree, else degree 1 with the
//   time divided by the degree), then by micro-batch among that degree's entries.
// - Interpolation runs over the per-layer sums of the range, not per layer: both are linear, so
//   the result is the same.
#include "csrc/plan/profile.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace hulk::plan {

namespace {

std::string where(const Profile& p) { return "profile " + (p.source.empty() ? std::string("(no source)") : p.source); }

std::string num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

void check_list(const Profile& p, size_t k, const char* field, const std::vector<double>& v) {
  const std::string f = "entries[" + std::to_string(k) + "]." + field;
  if (static_cast<int64_t>(v.size()) != p.layers)
    throw std::invalid_argument(where(p) + ": " + f + " has " + std::to_string(v.size()) + " values, expected one per layer (" +
                                std::to_string(p.layers) + ")");
  for (size_t l = 0; l < v.size(); ++l)
    if (!std::isfinite(v[l]) || v[l] < 0)
      throw std::invalid_argument(where(p) + ": " + f + "[" + std::to_string(l) + "] must be finite and >= 0, got " + num(v[l]));
}

double range_sum(const std::vector<double>& v, int64_t first, int64_t last) {
  double s = 0;
  for (int64_t l = first; l < last; ++l) s += v[static_cast<size_t>(l)];
  return s;
}

// The entries measured at degree tp, sorted by micro-batch; empty if none.
std::vector<const ProfileEntry*> at_degree(const Profile& p, int64_t tp) {
  std::vector<const ProfileEntry*> out;
  for (const ProfileEntry& e : p.entries)
    if (e.tensor_parallel == tp) out.push_back(&e);
  std::sort(out.begin(), out.end(), [](const ProfileEntry* a, const ProfileEntry* b) { return a->micro_batch < b->micro_batch; });
  return out;
}

// value(entry) at micro-batch b by profile.h's rule: linear between the nearest measured sizes,
// proportional to b from the nearest one outside the range.
template <class F>
double interpolate(const std::vector<const ProfileEntry*>& es, double b, F value) {
  const ProfileEntry& lo = *es.front();
  const ProfileEntry& hi = *es.back();
  if (b <= lo.micro_batch) return value(lo) * b / lo.micro_batch;
  if (b >= hi.micro_batch) return value(hi) * b / hi.micro_batch;
  size_t k = 1;
  while (es[k]->micro_batch < b) ++k;
  const ProfileEntry& a = *es[k - 1];
  const ProfileEntry& c = *es[k];
  const double w = (b - a.micro_batch) / (c.micro_batch - a.micro_batch);
  return (1 - w) * value(a) + w * value(c);
}

// The entries to use at degree tp and the factor their values are divided by.
std::pair<std::vector<const ProfileEntry*>, double> entries_for(const Profile& p, int64_t tp) {
  auto es = at_degree(p, tp);
  if (!es.empty()) return {es, 1.0};
  es = at_degree(p, 1);
  if (es.empty())
    throw std::invalid_argument(where(p) + ": no entries at tensor_parallel = 1 or " + std::to_string(tp) +
                                " to cost that degree from");
  return {es, static_cast<double>(tp)};
}

void check_range(const Profile& p, int64_t first, int64_t last, double b, int64_t tp) {
  if (first < 0 || last > p.layers || first > last)
    throw std::invalid_argument(where(p) + ": layer range [" + std::to_string(first) + ", " + std::to_string(last) +
                                ") is not within [0, " + std::to_string(p.layers) + ")");
  if (!std::isfinite(b) || b <= 0) throw std::invalid_argument(where(p) + ": micro-batch must be finite and > 0, got " + num(b));
  if (tp < 1) throw std::invalid_argument(where(p) + ": tensor-parallel degree must be >= 1, got " + std::to_string(tp));
}

}  // namespace

void Profile::validate() const {
  if (layers < 1) throw std::invalid_argument(where(*this) + ": layers must be >= 1, got " + std::to_string(layers));
  if (!std::isfinite(optimizer_s_per_param) || optimizer_s_per_param < 0)
    throw std::invalid_argument(where(*this) + ": optimizer_s_per_param must be finite and >= 0, got " +
                                num(optimizer_s_per_param));
  if (entries.empty()) throw std::invalid_argument(where(*this) + ": entries is empty (no measurement)");
  for (size_t k = 0; k < entries.size(); ++k) {
    const ProfileEntry& e = entries[k];
    const std::string f = "entries[" + std::to_string(k) + "].";
    if (!std::isfinite(e.micro_batch) || e.micro_batch <= 0)
      throw std::invalid_argument(where(*this) + ": " + f + "micro_batch must be finite and > 0, got " + num(e.micro_batch));
    if (e.tensor_parallel < 1)
      throw std::invalid_argument(where(*this) + ": " + f + "tensor_parallel must be >= 1, got " +
                                  std::to_string(e.tensor_parallel));
    check_list(*this, k, "forward_s", e.forward_s);
    check_list(*this, k, "backward_s", e.backward_s);
    check_list(*this, k, "activation_bytes", e.activation_bytes);
    for (size_t j = 0; j < k; ++j)
      if (entries[j].micro_batch == e.micro_batch && entries[j].tensor_parallel == e.tensor_parallel)
        throw std::invalid_argument(where(*this) + ": " + f + "micro_batch " + num(e.micro_batch) +
                                    " at tensor_parallel " + std::to_string(e.tensor_parallel) +
                                    " is measured twice (entries[" + std::to_string(j) + "] too)");
  }
}

double Profile::compute_s(int64_t first, int64_t last, double b, int64_t tp, bool recompute) const {
  check_range(*this, first, last, b, tp);
  const auto [es, divide] = entries_for(*this, tp);
  const double fwd = interpolate(es, b, [&](const ProfileEntry& e) { return range_sum(e.forward_s, first, last); });
  const double bwd = interpolate(es, b, [&](const ProfileEntry& e) { return range_sum(e.backward_s, first, last); });
  return ((recompute ? 2.0 : 1.0) * fwd + bwd) / divide;
}

double Profile::activation_bytes(int64_t first, int64_t last, double b, int64_t tp) const {
  check_range(*this, first, last, b, tp);
  const auto [es, divide] = entries_for(*this, tp);
  return interpolate(es, b, [&](const ProfileEntry& e) { return range_sum(e.activation_bytes, first, last); }) / divide;
}

}  // namespace hulk::plan
