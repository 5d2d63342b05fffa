#include "csrc/plan/layout_memo.h"

#include <algorithm>
#include <cstring>

namespace hulk::plan::detail {

namespace {

// splitmix64's finaliser, chained: an order-dependent hash of a sequence of words.
uint64_t mix(uint64_t h, uint64_t v) {
  uint64_t x = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t bits_of(double v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

}  // namespace

uint64_t LayoutMemo::hash(const std::vector<std::vector<int64_t>>& reps, double exhaustive_limit) {
  uint64_t h = mix(bits_of(exhaustive_limit), reps.size());
  h = mix(h, reps.empty() ? 0 : reps.front().size());
  for (const auto& r : reps)
    for (int64_t x : r) h = mix(h, static_cast<uint64_t>(x));
  return h;
}

bool LayoutMemo::same(const Slot& s, const std::vector<std::vector<int64_t>>& reps, double exhaustive_limit) const {
  const size_t S = reps.empty() ? 0 : reps.front().size();
  if (s.exhaustive_limit != exhaustive_limit || s.key_size != 2 + reps.size() * S) return false;
  const int64_t* k = ids_.data() + s.at;
  if (k[0] != static_cast<int64_t>(reps.size()) || k[1] != static_cast<int64_t>(S)) return false;
  k += 2;
  for (const auto& r : reps) {
    if (r.size() != S || !std::equal(r.begin(), r.end(), k)) return false;
    k += S;
  }
  return true;
}

LayoutMemo::Slot& LayoutMemo::slot_of(uint64_t h) {
  const size_t mask = slots_.size() - 1;
  for (size_t k = static_cast<size_t>(h) & mask;; k = (k + 1) & mask)
    if (!slots_[k].used || slots_[k].hash == h) return slots_[k];
}

bool LayoutMemo::find(const std::vector<std::vector<int64_t>>& reps, double exhaustive_limit, Found& out) {
  if (slots_.empty()) return false;
  const Slot& s = slot_of(hash(reps, exhaustive_limit));
  if (!s.used || !same(s, reps, exhaustive_limit)) return false;
  ++hits_;
  out = Found{ids_.data() + s.at + s.key_size, s.bounds_size, s.feasible, s.iteration_s, s.shortfall_bytes};
  return true;
}

void LayoutMemo::clear() {
  ids_.clear();
  std::fill(slots_.begin(), slots_.end(), Slot{});
  used_ = 0;
}

void LayoutMemo::add(const std::vector<std::vector<int64_t>>& reps, double exhaustive_limit, const Outcome& outcome) {
  if (ids_.size() > kMaxIds) clear();
  if (slots_.empty()) slots_.assign(kFirstSlots, Slot{});
  if (2 * (used_ + 1) > slots_.size()) {  // keep the table at most half used
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& s : old)
      if (s.used) slot_of(s.hash) = s;
  }
  const uint64_t h = hash(reps, exhaustive_limit);
  Slot& s = slot_of(h);
  if (s.used) return;  // this layout, or another of the same hash, is kept already
  const size_t S = reps.empty() ? 0 : reps.front().size();
  s.hash = h;
  s.used = true;
  s.feasible = outcome.feasible;
  s.bounds_size = static_cast<uint32_t>(outcome.bounds.size());
  s.at = ids_.size();
  s.exhaustive_limit = exhaustive_limit;
  s.iteration_s = outcome.iteration_s;
  s.shortfall_bytes = outcome.shortfall_bytes;
  ids_.push_back(static_cast<int64_t>(reps.size()));
  ids_.push_back(static_cast<int64_t>(S));
  for (const auto& r : reps) ids_.insert(ids_.end(), r.begin(), r.end());
  s.key_size = static_cast<uint32_t>(ids_.size() - s.at);
  ids_.insert(ids_.end(), outcome.bounds.begin(), outcome.bounds.end());
  ++used_;
}

}  // namespace hulk::plan::detail
