// The device hooks of csrc/device.h for the CUDA backend: a caching allocator, copies,
// fills and streams. The same source runs on a GPU (nvcc) and in the SIMT build, where
// "device memory" is host memory and streams are synchronous.
#include "cuda/runtime/compat.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuda/runtime/check.h"
#include "csrc/device.h"
#include "cuda/runtime/launch.h"
#include "cuda/runtime/runtime.h"

namespace hulk::device {
namespace {

cudaStream_t stream_now() { return static_cast<cudaStream_t>(current_stream()); }

// Freed blocks wait here for a request of the same rounded size on the same stream:
// work queued on one stream runs in order, so a block freed there can be reused there at
// once; another stream could still be using it, so streams never share cached blocks.
struct BlockCache {
  std::mutex mutex;
  std::unordered_map<cudaStream_t, std::unordered_multimap<size_t, void*>> free_blocks;
  size_t cached = 0;
  size_t in_use = 0, peak = 0;  // requested bytes, for benchmarks' memory figures
};

BlockCache& block_cache() {
  static BlockCache* cache = new BlockCache;  // never destroyed: frees at exit race the driver's teardown
  return *cache;
}

// Under AddressSanitizer in the SIMT build (scripts/run_sanitizers.sh) nothing is rounded or
// cached: every buffer is its own exact malloc, so ASan sees a kernel's access past the end of
// a buffer, or into one already freed.
#if defined(HULK_SIMT) && defined(__SANITIZE_ADDRESS__)
constexpr bool kCache = false;
#else
constexpr bool kCache = true;
#endif

// 512-byte steps up to 1 MiB, whole MiB above: few distinct sizes, little waste.
size_t rounded(size_t bytes) {
  if (!kCache) return bytes;
  constexpr size_t kSmall = 512, kLarge = size_t(1) << 20;
  return bytes <= kLarge ? (bytes + kSmall - 1) / kSmall * kSmall : (bytes + kLarge - 1) / kLarge * kLarge;
}

void free_cached_locked(BlockCache& c) {
  for (auto& [stream, blocks] : c.free_blocks) {
    for (auto& [size, ptr] : blocks) cudaFree(ptr);
  }
  c.free_blocks.clear();
  c.cached = 0;
}

__global__ void fill_kernel(float* data, int64_t n, float value) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride) data[i] = value;
}

}  // namespace

bool cuda_built() { return true; }
bool cuda_simulated() { return hulk::cuda::simulated(); }

void require_cuda() {
  if (cuda_simulated()) return;
  // Asked once: every device allocation passes here.
  static const std::string why_not = hulk::cuda::device_count() > 0 ? "" : hulk::cuda::unavailable_reason();
  if (!why_not.empty()) throw std::runtime_error("device='cuda' was requested but no GPU is usable: " + why_not);
}

void* allocate(size_t bytes) {
  require_cuda();
  const size_t size = rounded(bytes);
  BlockCache& c = block_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.in_use += bytes;
  c.peak = std::max(c.peak, c.in_use);
  auto& blocks = c.free_blocks[stream_now()];
  if (auto it = blocks.find(size); it != blocks.end()) {
    void* ptr = it->second;
    blocks.erase(it);
    c.cached -= size;
    return ptr;
  }
  void* ptr = nullptr;
  if (cudaMalloc(&ptr, size) != cudaSuccess) {
    cudaGetLastError();
    free_cached_locked(c);  // out of memory: give the cache back and try once more
    if (cudaMalloc(&ptr, size) != cudaSuccess) {
      const cudaError_t err = cudaGetLastError();
      c.in_use -= bytes;
      throw std::runtime_error("CUDA: cannot allocate " + std::to_string(size) +
                               " bytes of device memory: " + cudaGetErrorString(err));
    }
  }
  return ptr;
}

void release(void* ptr, size_t bytes) noexcept {
  if (ptr == nullptr) return;
  BlockCache& c = block_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (!kCache) {
    cudaFree(ptr);
    c.in_use -= bytes;
    return;
  }
  c.free_blocks[stream_now()].emplace(rounded(bytes), ptr);
  c.cached += rounded(bytes);
  c.in_use -= bytes;
}

void empty_cache() {
  BlockCache& c = block_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  HULK_CUDA_CHECK(cudaDeviceSynchronize());
  free_cached_locked(c);
}

size_t cached_bytes() {
  BlockCache& c = block_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.cached;
}

size_t allocated_bytes() {
  BlockCache& c = block_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.in_use;
}

size_t peak_allocated_bytes() {
  BlockCache& c = block_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.peak;
}

void reset_peak() {
  BlockCache& c = block_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.peak = c.in_use;
}

namespace {
std::atomic<uint64_t> g_to_device{0}, g_to_host{0};
}  // namespace

// From pageable host memory cudaMemcpyAsync stages through the driver's pinned buffer and
// returns once the source is read, so the caller may free it at once: that is what callers of
// copy() rely on (host vectors that die after the call). No copy on a per-epoch path needs
// more: graphs, weights and loss targets go up once per fit, and each epoch brings back one
// small buffer of loss sums (LossBatch::read), where a pinned staging copy would add a memcpy
// to the same wait. A bulk pageable transfer is often slower than a pinned one (the staging copy).
void copy(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) {
  if (bytes == 0) return;
  if (dst_device != src_device) ++(dst_device == Device::CPU ? g_to_host : g_to_device);
  const cudaMemcpyKind kind = dst_device == Device::CPU
                                  ? (src_device == Device::CPU ? cudaMemcpyHostToHost : cudaMemcpyDeviceToHost)
                                  : (src_device == Device::CPU ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToDevice);
  HULK_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream_now()));
  if (dst_device == Device::CPU) HULK_CUDA_CHECK(cudaStreamSynchronize(stream_now()));
}

void zero(void* ptr, size_t bytes) {
  if (bytes > 0) HULK_CUDA_CHECK(cudaMemsetAsync(ptr, 0, bytes, stream_now()));
}

void fill(float* ptr, int64_t count, float value) {
  if (count <= 0) return;
  const int64_t blocks = std::min<int64_t>((count + 255) / 256, 1024);
  hulk::cuda::launch("fill", fill_kernel, dim3(static_cast<unsigned>(blocks)), dim3(256), 0, stream_now(), ptr, count,
                     value);
}

TransferCounts transfer_counts() { return {g_to_device.load(), g_to_host.load()}; }

void synchronize() { HULK_CUDA_CHECK(cudaStreamSynchronize(stream_now())); }

Stream::Stream() {
  require_cuda();
  cudaStream_t s = nullptr;
  HULK_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  handle_ = s;
}

Stream::~Stream() {
  if (handle_ == nullptr) return;
  cudaStream_t s = static_cast<cudaStream_t>(handle_);
  cudaStreamSynchronize(s);
  {
    // Blocks cached for this stream become the default stream's: nothing runs on s any more.
    BlockCache& c = block_cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto node = c.free_blocks.extract(s);
    if (!node.empty()) {
      auto& target = c.free_blocks[nullptr];
      for (auto& entry : node.mapped()) target.insert(entry);
    }
  }
  cudaStreamDestroy(s);
}

}  // namespace hulk::device
