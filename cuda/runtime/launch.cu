// The process-wide dynamic shared memory limit of hulk::cuda::launch.
#include "cuda/runtime/compat.h"

#include <atomic>
#include <stdexcept>
#include <string>

#include "cuda/runtime/launch.h"

namespace hulk::cuda {
namespace {
std::atomic<std::size_t> g_max_dynamic_shared{kDefaultMaxDynamicShared};
}

void set_max_dynamic_shared(std::size_t bytes) {
  if (bytes > kMaxDynamicSharedOptin) {
    throw std::invalid_argument("hulk::cuda::set_max_dynamic_shared: " + std::to_string(bytes) +
                                " bytes is more than the device's 227 KiB (232448 bytes) of shared memory per block");
  }
  g_max_dynamic_shared.store(bytes < kDefaultMaxDynamicShared ? kDefaultMaxDynamicShared : bytes);
}

std::size_t max_dynamic_shared() { return g_max_dynamic_shared.load(); }

}  // namespace hulk::cuda
