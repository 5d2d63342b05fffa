// libFuzzer target: the weight-file loader (csrc/nn/serialize.cpp). Any byte string must
// either load into a model that predicts without fault, or fail with std::runtime_error;
// never crash, leak, hit undefined behaviour or allocate beyond what the file can hold
// (run with -rss_limit_mb and -malloc_limit_mb; see scripts/run_fuzz.sh).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "csrc/nn/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/hulk_fuzz_weight_file_" + std::to_string(::getpid()) + ".gnn";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    hulk::nn::Model model = hulk::nn::Model::load(path);
    const auto& c = model.config();
    // Use the loaded model the way predict does: a 3-node path graph with the configured widths.
    hulk::Tensor x(3, c.in_features), e(2, c.edge_features);
    for (int64_t i = 0; i < x.size(); ++i) x.data()[i] = 0.25f * static_cast<float>(i % 7);
    for (int64_t i = 0; i < e.size(); ++i) e.data()[i] = 0.5f * static_cast<float>(i % 5);
    hulk::Graph g(3, {0, 1}, {1, 2}, std::move(x), std::move(e), {}, true);
    const auto pred = model.predict(g);
    if (pred.size() != 3) __builtin_trap();
    for (int64_t p : pred) {
      if (p < 0 || p >= c.num_classes) __builtin_trap();  // a class outside the model: a bug
    }
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
