// The device hooks of a build without the CUDA backend (HULK_CUDA=OFF, or AUTO without
// nvcc): every request for device memory or work is a clear error. With the backend
// these functions come from cuda/runtime/device.cu instead.
#ifndef HULK_WITH_CUDA

#include <stdexcept>

#include "csrc/device.h"
#include "csrc/device_csr.h"

namespace hulk::device {
namespace {
[[noreturn]] void unavailable() {
  throw std::runtime_error(
      "device='cuda': this build of hulk has no CUDA backend (it was built with HULK_CUDA=OFF or without nvcc); "
      "rebuild with nvcc on PATH, or use device='cpu'");
}
}  // namespace

bool cuda_built() { return false; }
bool cuda_simulated() { return false; }
void require_cuda() { unavailable(); }
void* allocate(size_t) { unavailable(); }
void release(void*, size_t) noexcept {}
void empty_cache() {}
size_t cached_bytes() { return 0; }
size_t allocated_bytes() { return 0; }
size_t peak_allocated_bytes() { return 0; }
void reset_peak() {}
void copy(void*, Device, const void*, Device, size_t) { unavailable(); }
void zero(void*, size_t) { unavailable(); }
void fill(float*, int64_t, float) { unavailable(); }
void synchronize() {}
TransferCounts transfer_counts() { return {}; }
Stream::Stream() = default;
Stream::~Stream() = default;

}  // namespace hulk::device

namespace hulk {
std::unique_ptr<DeviceCsr> gcn_normalize_on_device(const Csr&, const Csr&, bool) { device::require_cuda(); return nullptr; }
}  // namespace hulk

#endif  // HULK_WITH_CUDA
