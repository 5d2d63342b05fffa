// Devices and device memory as the C++ core sees them. No CUDA header is included here:
// the CUDA backend (cuda/) implements the hooks in namespace hulk::device, and a build
// without it (HULK_CUDA=OFF) gets versions that throw a clear error (csrc/no_cuda.cpp).
//
// Device memory is owned by DeviceArray<T> (RAII, value semantics: a copy is a device
// copy). Allocations go through the backend's caching allocator. Work is queued on the
// calling thread's current stream (a Model sets its own with StreamGuard); copies to the
// host wait for that stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hulk {

enum class Device : uint8_t { CPU = 0, CUDA = 1 };

const char* device_name(Device d);           // "cpu" / "cuda"
Device parse_device(const std::string& name);  // throws std::invalid_argument naming the value

namespace device {

// True when the CUDA backend is compiled in (nvcc, or the SIMT build).
bool cuda_built();
// True in the SIMT build: kernels run on the CPU simulator, no GPU is used.
bool cuda_simulated();
// Throws std::runtime_error saying why when device="cuda" cannot run in this build or here.
void require_cuda();

void* allocate(size_t bytes);                 // caching allocator; throws on failure
void release(void* ptr, size_t bytes) noexcept;  // back to the cache
void empty_cache();                           // frees every cached block
size_t cached_bytes();                        // held by the cache, not in use
size_t allocated_bytes();                     // in use now (requested sizes)
size_t peak_allocated_bytes();                // the most in use since the last reset_peak
void reset_peak();

// Copies on the current stream; a copy to the host waits for it to finish.
void copy(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes);
void zero(void* ptr, size_t bytes);                  // device memory
void fill(float* ptr, int64_t count, float value);   // device memory
void synchronize();                                  // waits for the current stream
// Copies between host and device since start (each direction), so tests can bound them per epoch.
struct TransferCounts {
  uint64_t to_device = 0, to_host = 0;
};
TransferCounts transfer_counts();

// An owned CUDA stream (opaque here). Models hold one each.
class Stream {
 public:
  Stream();  // creates a non-blocking stream (the null stream where no CUDA is built)
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  Stream(Stream&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Stream& operator=(Stream&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  void* handle() const { return handle_; }

 private:
  void* handle_ = nullptr;
};

void* current_stream();  // the calling thread's stream handle (nullptr = default stream)

// Makes `stream` the calling thread's current stream for the guard's lifetime.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  void* previous_;
};

}  // namespace device

// A typed array in device memory. Empty arrays hold no allocation.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(size_t count) : count_(count) {
    if (count_ > 0) ptr_ = static_cast<T*>(device::allocate(bytes()));
  }
  static DeviceArray from_host(const T* src, size_t count) {
    DeviceArray out(count);
    if (count > 0) device::copy(out.ptr_, Device::CUDA, src, Device::CPU, out.bytes());
    return out;
  }
  static DeviceArray from_host(const std::vector<T>& src) { return from_host(src.data(), src.size()); }
  std::vector<T> to_host() const {
    std::vector<T> out(count_);
    if (count_ > 0) device::copy(out.data(), Device::CPU, ptr_, Device::CUDA, bytes());
    return out;
  }

  DeviceArray(const DeviceArray& other) : DeviceArray(other.count_) {
    if (count_ > 0) device::copy(ptr_, Device::CUDA, other.ptr_, Device::CUDA, bytes());
  }
  DeviceArray& operator=(const DeviceArray& other) {
    if (this != &other) {
      DeviceArray tmp(other);
      swap(tmp);
    }
    return *this;
  }
  DeviceArray(DeviceArray&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceArray& operator=(DeviceArray&& other) noexcept {
    swap(other);
    return *this;
  }
  ~DeviceArray() {
    if (ptr_) device::release(ptr_, bytes());
  }
  void swap(DeviceArray& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(count_, other.count_);
  }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }
  bool empty() const { return count_ == 0; }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

}  // namespace hulk
