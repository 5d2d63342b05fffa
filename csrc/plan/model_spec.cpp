// ModelSpec validation and whole-model memory.
//
// Choices the header leaves open: every numeric field must be finite and > 0 (counts >= 1),
// activation_bytes_per_token included (a model with no activation memory is not a model the
// cost model was written for); the name may be empty. Divisibility of global_batch by the
// number of micro-batches or replicas is not required: the cost model uses real-valued
// micro-batch sizes, and planners decide what else they need.
#include "csrc/plan/model_spec.h"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace hulk::plan {

namespace {

std::string label(const ModelSpec& m) { return m.name.empty() ? std::string("ModelSpec") : "ModelSpec '" + m.name + "'"; }

void check_count(const ModelSpec& m, const char* field, int64_t v) {
  if (v < 1) throw std::invalid_argument(label(m) + ": " + field + " must be >= 1, got " + std::to_string(v));
}

void check_real(const ModelSpec& m, const char* field, double v) {
  if (!std::isfinite(v) || v <= 0) {
    std::ostringstream os;
    os << label(m) << ": " << field << " must be finite and > 0, got " << v;
    throw std::invalid_argument(os.str());
  }
}

}  // namespace

void ModelSpec::validate() const {
  check_count(*this, "layers", layers);
  check_count(*this, "hidden", hidden);
  check_count(*this, "seq_len", seq_len);
  check_real(*this, "params", params);
  check_real(*this, "flops_per_token", flops_per_token);
  check_real(*this, "bytes_per_param", bytes_per_param);
  check_real(*this, "activation_bytes_per_token", activation_bytes_per_token);
  check_count(*this, "global_batch", global_batch);
  check_count(*this, "micro_batches", micro_batches);
  check_count(*this, "iterations", iterations);
}

const Profile* ModelSpec::profile_for(const std::string& gpu) const {
  if (gpu.empty()) return nullptr;
  for (const auto& p : profiles)
    if (p->gpu == gpu) return p.get();
  return nullptr;
}

void ModelSpec::add_profile(std::shared_ptr<const Profile> p) {
  if (!p) throw std::invalid_argument(label(*this) + ": add_profile: no profile");
  p->validate();
  const std::string src = "profile " + p->source;
  if (p->model != name)
    throw std::invalid_argument(src + ": model is '" + p->model + "' but the job's model is '" + name + "'");
  if (p->layers != layers)
    throw std::invalid_argument(src + ": layers is " + std::to_string(p->layers) + " but model '" + name + "' has " +
                                std::to_string(layers));
  if (p->gpu.empty()) throw std::invalid_argument(src + ": gpu is empty");
  if (profile_for(p->gpu))
    throw std::invalid_argument(src + ": model '" + name + "' already has a profile for gpu '" + p->gpu + "' (" +
                                profile_for(p->gpu)->source + ")");
  profiles.push_back(std::move(p));
}

double ModelSpec::memory_bytes_whole(int64_t sequences) const {
  if (sequences < 0)
    throw std::invalid_argument(label(*this) + ": memory_bytes_whole: sequences must be >= 0, got " +
                                std::to_string(sequences));
  return state_bytes(layers) + static_cast<double>(sequences) * static_cast<double>(seq_len) *
                                   static_cast<double>(layers) * activation_bytes_per_token;
}

double ModelSpec::stage_activation_bytes(int64_t n_layers, double b, int64_t m) const {
  const double per_microbatch = b * static_cast<double>(seq_len) * static_cast<double>(n_layers) * activation_bytes_per_token;
  if (!recompute) return static_cast<double>(m) * per_microbatch;
  return static_cast<double>(m) * boundary_bytes(b) + per_microbatch;
}

// Same arithmetic, in the same order, as hulk/models.py, so both give the same doubles.
double flops_per_token_of(double params, int64_t layers, int64_t hidden, int64_t seq_len) {
  return 6.0 * params + 12.0 * static_cast<double>(layers) * static_cast<double>(hidden) * static_cast<double>(seq_len);
}

double activation_bytes_per_token_of(int64_t hidden) { return 34.0 * static_cast<double>(hidden); }

}  // namespace hulk::plan
