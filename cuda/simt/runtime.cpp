// The SIMT build's CUDA runtime API: device memory is host memory, streams and events are
// synchronous. Device allocations are registered, so copies and memsets that fall outside one,
// or a wrong copy direction, fail with cudaErrorInvalidValue as on a GPU (where they fail or
// corrupt memory) instead of silently touching host memory.
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include "cuda/runtime/compat.h"

struct CUstream_st {
  unsigned int flags;
};
struct CUevent_st {
  std::chrono::steady_clock::time_point when;
  bool recorded;
};

namespace {

constexpr size_t kDeviceMemory = size_t{16} << 30;  // reported by the device properties only

struct Allocation {
  size_t bytes;
  bool pinned;  // cudaMallocHost: host memory that copies in any direction may use
};

struct Registry {
  std::mutex mu;
  std::map<const unsigned char*, Allocation> allocations;
  std::set<const CUstream_st*> streams;
  std::set<const CUevent_st*> events;
  std::unordered_map<const void*, int> max_dynamic_shared;
};

Registry& registry() {
  static Registry r;
  return r;
}

thread_local cudaError_t tls_last_error = cudaSuccess;

cudaError_t record(cudaError_t e) {
  if (e != cudaSuccess) tls_last_error = e;
  return e;
}

enum class Side { device, host };

// Whether [p, p + bytes) lies in one device allocation (pinned host memory counts for both).
bool inside_device_allocation(const void* p, size_t bytes) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const auto* c = static_cast<const unsigned char*>(p);
  auto it = r.allocations.upper_bound(c);
  if (it == r.allocations.begin()) return false;
  --it;
  return c >= it->first && c + bytes <= it->first + it->second.bytes;
}

// True when p is inside a (non-pinned) device allocation: such a pointer on the host side of
// a copy means the direction is wrong.
bool is_device_pointer(const void* p) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const auto* c = static_cast<const unsigned char*>(p);
  auto it = r.allocations.upper_bound(c);
  if (it == r.allocations.begin()) return false;
  --it;
  return !it->second.pinned && c < it->first + it->second.bytes;
}

bool side_ok(const void* p, size_t bytes, Side side) {
  return side == Side::device ? inside_device_allocation(p, bytes) : !is_device_pointer(p);
}

bool stream_ok(cudaStream_t s) {
  if (s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread) return true;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.streams.count(s) != 0;
}

cudaError_t allocate(void** ptr, size_t bytes, bool pinned) {
  if (ptr == nullptr) return record(cudaErrorInvalidValue);
  *ptr = nullptr;
  if (bytes == 0) return cudaSuccess;  // as CUDA: success, null pointer
  void* p = nullptr;
  // 256-byte alignment as cudaMalloc guarantees; the exact size, so AddressSanitizer builds see
  // overruns past the end.
  if (posix_memalign(&p, 256, bytes) != 0) return record(cudaErrorMemoryAllocation);
  // Fresh device memory is garbage on a GPU; here it is all-ones bytes (NaN floats, -1 ints), so
  // code that forgets to initialise a buffer fails in the simulator too instead of reading zeros.
  if (!pinned) std::memset(p, 0xff, bytes);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.allocations[static_cast<unsigned char*>(p)] = Allocation{bytes, pinned};
  *ptr = p;
  return cudaSuccess;
}

cudaError_t release(void* ptr, bool pinned) {
  if (ptr == nullptr) return cudaSuccess;
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.allocations.find(static_cast<unsigned char*>(ptr));
    if (it == r.allocations.end() || it->second.pinned != pinned) return record(cudaErrorInvalidValue);
    r.allocations.erase(it);
  }
  std::free(ptr);
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaMalloc(void** ptr, size_t bytes) { return allocate(ptr, bytes, false); }
cudaError_t cudaFree(void* ptr) { return release(ptr, false); }
cudaError_t cudaMallocAsync(void** ptr, size_t bytes, cudaStream_t stream) {
  if (!stream_ok(stream)) return record(cudaErrorInvalidResourceHandle);
  return allocate(ptr, bytes, false);
}
cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream) {
  if (!stream_ok(stream)) return record(cudaErrorInvalidResourceHandle);
  return release(ptr, false);
}

// "Device memory" is host memory: report the device size and what is not allocated of it.
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  if (free_bytes == nullptr || total_bytes == nullptr) return record(cudaErrorInvalidValue);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  size_t used = 0;
  for (const auto& a : r.allocations) {
    if (!a.second.pinned) used += a.second.bytes;
  }
  *total_bytes = kDeviceMemory;
  *free_bytes = used < kDeviceMemory ? kDeviceMemory - used : 0;
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void** ptr, size_t bytes) { return allocate(ptr, bytes, true); }
cudaError_t cudaFreeHost(void* ptr) { return release(ptr, true); }

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (bytes == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr) return record(cudaErrorInvalidValue);
  bool ok = true;
  switch (kind) {
    case cudaMemcpyHostToHost: ok = side_ok(dst, bytes, Side::host) && side_ok(src, bytes, Side::host); break;
    case cudaMemcpyHostToDevice: ok = side_ok(dst, bytes, Side::device) && side_ok(src, bytes, Side::host); break;
    case cudaMemcpyDeviceToHost: ok = side_ok(dst, bytes, Side::host) && side_ok(src, bytes, Side::device); break;
    case cudaMemcpyDeviceToDevice:
      ok = side_ok(dst, bytes, Side::device) && side_ok(src, bytes, Side::device);
      break;
    case cudaMemcpyDefault: break;  // unified addressing: any pointers
    default: return record(cudaErrorInvalidMemcpyDirection);
  }
  if (!ok) return record(cudaErrorInvalidValue);
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream) {
  if (!stream_ok(stream)) return record(cudaErrorInvalidResourceHandle);
  return cudaMemcpy(dst, src, bytes, kind);
}

cudaError_t cudaMemset(void* ptr, int value, size_t bytes) {
  if (bytes == 0) return cudaSuccess;
  if (ptr == nullptr || !inside_device_allocation(ptr, bytes)) return record(cudaErrorInvalidValue);
  std::memset(ptr, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* ptr, int value, size_t bytes, cudaStream_t stream) {
  if (!stream_ok(stream)) return record(cudaErrorInvalidResourceHandle);
  return cudaMemset(ptr, value, bytes);
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) { return cudaStreamCreateWithFlags(stream, cudaStreamDefault); }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  if (stream == nullptr || flags > cudaStreamNonBlocking) return record(cudaErrorInvalidValue);
  auto* s = new CUstream_st{flags};
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.streams.insert(s);
  *stream = s;
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (stream == nullptr) return record(cudaErrorInvalidResourceHandle);
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    if (r.streams.erase(stream) == 0) return record(cudaErrorInvalidResourceHandle);
  }
  delete stream;
  return cudaSuccess;
}

// Work is done when it is issued, so synchronising only checks the handle.
cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  return stream_ok(stream) ? cudaSuccess : record(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaStreamQuery(cudaStream_t stream) { return cudaStreamSynchronize(stream); }

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int) {
  if (!stream_ok(stream)) return record(cudaErrorInvalidResourceHandle);
  return cudaEventSynchronize(event);
}

cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int) {
  if (event == nullptr) return record(cudaErrorInvalidValue);
  auto* e = new CUevent_st{{}, false};
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.events.insert(e);
  *event = e;
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    if (r.events.erase(event) == 0) return record(cudaErrorInvalidResourceHandle);
  }
  delete event;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (!stream_ok(stream)) return record(cudaErrorInvalidResourceHandle);
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    if (r.events.count(event) == 0) return record(cudaErrorInvalidResourceHandle);
  }
  event->when = std::chrono::steady_clock::now();
  event->recorded = true;
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.events.count(event) ? cudaSuccess : record(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaEventQuery(cudaEvent_t event) { return cudaEventSynchronize(event); }

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (ms == nullptr) return record(cudaErrorInvalidValue);
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    if (r.events.count(start) == 0 || r.events.count(end) == 0) return record(cudaErrorInvalidResourceHandle);
  }
  if (!start->recorded || !end->recorded) return record(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

cudaError_t cudaGetLastError() {
  const cudaError_t e = tls_last_error;
  tls_last_error = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError() { return tls_last_error; }

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidSymbol: return "cudaErrorInvalidSymbol";
    case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
  }
  return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument (SIMT: a null pointer, a range outside one device allocation, or a copy "
             "direction that does not match the pointers)";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidSymbol: return "invalid device symbol";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorNoDevice: return "SIMT build: kernels run on the CPU simulator, no GPU is used";
    case cudaErrorInvalidDevice: return "invalid device ordinal (the SIMT build simulates device 0 only)";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorNotSupported: return "operation not supported";
  }
  return "unrecognized error code";
}

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return record(cudaErrorInvalidValue);
  *count = 0;
  return record(cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : record(cudaErrorInvalidDevice); }

cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return record(cudaErrorInvalidValue);
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (prop == nullptr) return record(cudaErrorInvalidValue);
  if (device != 0) return record(cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name, "Hulk SIMT simulator (CPU)");
  prop->totalGlobalMem = kDeviceMemory;
  prop->sharedMemPerBlock = 48 * 1024;
  prop->sharedMemPerBlockOptin = 227 * 1024;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = 1024;
  prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 2147483647;
  prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
  prop->multiProcessorCount = 1;  // blocks run one after another
  prop->major = 9;
  prop->minor = 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (value == nullptr) return record(cudaErrorInvalidValue);
  if (device != 0) return record(cudaErrorInvalidDevice);
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *value = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *value = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *value = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = static_cast<int>(p.sharedMemPerBlock); break;
    case cudaDevAttrWarpSize: *value = p.warpSize; break;
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
    case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = static_cast<int>(p.sharedMemPerBlockOptin); break;
    default: return record(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

namespace hulk::simt::detail {

bool stream_valid(cudaStream_t stream) { return stream_ok(stream); }

cudaError_t func_set_attribute(const void* func, cudaFuncAttribute attr, int value) {
  if (func == nullptr) return record(cudaErrorInvalidValue);
  if (attr == cudaFuncAttributePreferredSharedMemoryCarveout) return cudaSuccess;  // a hint only
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 || value > 227 * 1024) {
    return record(cudaErrorInvalidValue);
  }
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.max_dynamic_shared[func] = value;
  return cudaSuccess;
}

// The per-kernel limit set by cudaFuncSetAttribute, or 0 when none was set.
size_t func_max_dynamic_shared(const void* func) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.max_dynamic_shared.find(func);
  return it == r.max_dynamic_shared.end() ? 0 : static_cast<size_t>(it->second);
}

cudaError_t memcpy_symbol(void* symbol, size_t symbol_bytes, const void* other, size_t bytes, size_t offset, bool to) {
  if (offset > symbol_bytes || bytes > symbol_bytes - offset || (bytes > 0 && other == nullptr)) {
    return record(cudaErrorInvalidValue);
  }
  auto* s = static_cast<unsigned char*>(symbol) + offset;
  if (to) {
    std::memcpy(s, other, bytes);
  } else {
    std::memcpy(const_cast<void*>(other), s, bytes);
  }
  return cudaSuccess;
}

}  // namespace hulk::simt::detail
