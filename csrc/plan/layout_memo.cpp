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

bool LayoutMemo::same(const Stored& s, const std::vector<std::vector<int64_t>>& reps, double exhaustive_limit) {
  const size_t S = reps.empty() ? 0 : reps.front().size();
  if (s.exhaustive_limit != exhaustive_limit || s.key.size() != 2 + reps.size() * S) return false;
  if (s.key[0] != static_cast<int64_t>(reps.size()) || s.key[1] != static_cast<int64_t>(S)) return false;
  const int64_t* k = s.key.data() + 2;
  for (const auto& r : reps) {
    if (r.size() != S || !std::equal(r.begin(), r.end(), k)) return false;
    k += S;
  }
  return true;
}

const LayoutMemo::Outcome* LayoutMemo::find(const std::vector<std::vector<int64_t>>& reps, double exhaustive_limit) {
  const auto it = map_.find(hash(reps, exhaustive_limit));
  if (it == map_.end() || !same(it->second, reps, exhaustive_limit)) return nullptr;
  ++hits_;
  return &it->second.outcome;
}

void LayoutMemo::add(const std::vector<std::vector<int64_t>>& reps, double exhaustive_limit, Outcome outcome) {
  if (ids_ > kMaxIds) {
    map_.clear();
    ids_ = 0;
  }
  const size_t S = reps.empty() ? 0 : reps.front().size();
  Stored s{{}, exhaustive_limit, std::move(outcome)};
  s.key.reserve(2 + reps.size() * S);
  s.key.push_back(static_cast<int64_t>(reps.size()));
  s.key.push_back(static_cast<int64_t>(S));
  for (const auto& r : reps) s.key.insert(s.key.end(), r.begin(), r.end());
  const auto [it, fresh] = map_.emplace(hash(reps, exhaustive_limit), std::move(s));
  if (fresh) ids_ += it->second.key.size();
}

}  // namespace hulk::plan::detail
