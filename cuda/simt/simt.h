// SIMT layer: what a `.cu` file needs from CUDA when it is compiled as plain C++ (HULK_SIMT).
// Kernels then run on the CPU: every block's threads are fibers with real barrier and warp
// semantics (see scheduler.cpp), device memory is host memory (see runtime.cpp).
// Include it through cuda/runtime/compat.h, never directly.
#pragma once

#ifndef HULK_SIMT
#error "cuda/simt/simt.h is the SIMT build's CUDA replacement; include cuda/runtime/compat.h instead"
#endif

#include <math.h>  // fminf, expf, ... in the global namespace, as in device code

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

// ---- qualifiers ------------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __align__(n) alignas(n)
#define __launch_bounds__(...)
// Static shared memory: one instance per host thread. Blocks run one after another on the
// launching thread, so the threads of a block (fibers of that host thread) share it, as on a GPU.
#define __shared__ static thread_local

// ---- vector types (CUDA's layouts and alignments) ----------------------------------------------
#define HULK_SIMT_VEC2(T, N, A)                                      \
  struct alignas(A) N##2 {                                           \
    T x, y;                                                          \
  };                                                                 \
  inline constexpr N##2 make_##N##2(T x, T y) { return N##2{x, y}; }
#define HULK_SIMT_VEC3(T, N)                                                    \
  struct N##3 {                                                                 \
    T x, y, z;                                                                  \
  };                                                                            \
  inline constexpr N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }
#define HULK_SIMT_VEC4(T, N, A)                                                          \
  struct alignas(A) N##4 {                                                               \
    T x, y, z, w;                                                                        \
  };                                                                                     \
  inline constexpr N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }

HULK_SIMT_VEC2(char, char, 2)
HULK_SIMT_VEC4(char, char, 4)
HULK_SIMT_VEC2(unsigned char, uchar, 2)
HULK_SIMT_VEC4(unsigned char, uchar, 4)
HULK_SIMT_VEC2(short, short, 4)
HULK_SIMT_VEC4(short, short, 8)
HULK_SIMT_VEC2(int, int, 8)
HULK_SIMT_VEC3(int, int)
HULK_SIMT_VEC4(int, int, 16)
HULK_SIMT_VEC2(unsigned int, uint, 8)
HULK_SIMT_VEC3(unsigned int, uint)
HULK_SIMT_VEC4(unsigned int, uint, 16)
HULK_SIMT_VEC2(float, float, 8)
HULK_SIMT_VEC3(float, float)
HULK_SIMT_VEC4(float, float, 16)
HULK_SIMT_VEC2(double, double, 16)
HULK_SIMT_VEC2(long long, longlong, 16)
HULK_SIMT_VEC2(unsigned long long, ulonglong, 16)
#undef HULK_SIMT_VEC2
#undef HULK_SIMT_VEC3
#undef HULK_SIMT_VEC4

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

// ---- runtime API (host memory; streams are synchronous) ----------------------------------------
enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidSymbol = 13,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorLaunchFailure = 719,
  cudaErrorNotSupported = 801,
};
typedef cudaError cudaError_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

struct CUstream_st;
typedef CUstream_st* cudaStream_t;
#define cudaStreamLegacy (reinterpret_cast<cudaStream_t>(0x1))
#define cudaStreamPerThread (reinterpret_cast<cudaStream_t>(0x2))
struct CUevent_st;
typedef CUevent_st* cudaEvent_t;
constexpr unsigned int cudaStreamDefault = 0x00;
constexpr unsigned int cudaStreamNonBlocking = 0x01;
constexpr unsigned int cudaEventDefault = 0x00;

enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};

enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxBlockDimX = 2,
  cudaDevAttrMaxBlockDimY = 3,
  cudaDevAttrMaxBlockDimZ = 4,
  cudaDevAttrMaxGridDimX = 5,
  cudaDevAttrMaxGridDimY = 6,
  cudaDevAttrMaxGridDimZ = 7,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
};

struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  size_t sharedMemPerBlockOptin;
  int warpSize;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int multiProcessorCount;
  int major;
  int minor;
};

cudaError_t cudaMalloc(void** ptr, size_t bytes);
template <typename T>
inline cudaError_t cudaMalloc(T** ptr, size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(ptr), bytes);
}
cudaError_t cudaFree(void* ptr);
cudaError_t cudaMallocAsync(void** ptr, size_t bytes, cudaStream_t stream);
template <typename T>
inline cudaError_t cudaMallocAsync(T** ptr, size_t bytes, cudaStream_t stream) {
  return cudaMallocAsync(reinterpret_cast<void**>(ptr), bytes, stream);
}
cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream);
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes);
cudaError_t cudaMallocHost(void** ptr, size_t bytes);
template <typename T>
inline cudaError_t cudaMallocHost(T** ptr, size_t bytes) {
  return cudaMallocHost(reinterpret_cast<void**>(ptr), bytes);
}
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void* ptr, int value, size_t bytes);
cudaError_t cudaMemsetAsync(void* ptr, int value, size_t bytes, cudaStream_t stream = nullptr);
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags = 0);
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);
// Always an error (cudaErrorNoDevice) with count 0: the SIMT build uses no GPU. Kernels still
// run, on "device 0", which cudaSetDevice/cudaGetDevice accept.
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);

namespace hulk::simt::detail {
cudaError_t func_set_attribute(const void* func, cudaFuncAttribute attr, int value);
cudaError_t memcpy_symbol(void* symbol, size_t symbol_bytes, const void* src, size_t bytes, size_t offset, bool to);
size_t func_max_dynamic_shared(const void* func);
bool stream_valid(cudaStream_t stream);
}  // namespace hulk::simt::detail

template <typename... A>
inline cudaError_t cudaFuncSetAttribute(void (*func)(A...), cudaFuncAttribute attr, int value) {
  return hulk::simt::detail::func_set_attribute(reinterpret_cast<const void*>(func), attr, value);
}
template <typename T>
inline cudaError_t cudaMemcpyToSymbol(T& symbol, const void* src, size_t bytes, size_t offset = 0,
                                      cudaMemcpyKind = cudaMemcpyHostToDevice) {
  return hulk::simt::detail::memcpy_symbol(&symbol, sizeof(T), src, bytes, offset, true);
}
template <typename T>
inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t bytes, size_t offset = 0,
                                        cudaMemcpyKind = cudaMemcpyDeviceToHost) {
  return hulk::simt::detail::memcpy_symbol(const_cast<T*>(&symbol), sizeof(T), dst, bytes, offset, false);
}

// ---- the simulator's interface to kernels -------------------------------------------------------
namespace hulk::simt {

// What the running simulated thread sees. Updated by the scheduler on every switch.
struct ThreadContext {
  uint3 thread_idx;
  uint3 block_idx;
  dim3 block_dim;
  dim3 grid_dim;
  unsigned char* dynamic_shared;
};

// Simulated time, in steps: a deterministic stand-in for a kernel's duration (the simulator has
// no clock). A thread's steps are its loads through __ldg, its warp operations and its barriers;
// a block's steps are its busiest thread's. With unbounded SMs a launch lasts its longest
// block (span); on one SM, the sum of its blocks (work).
struct LaunchSteps {
  const char* kernel = "";
  unsigned long long blocks = 0, span = 0, work = 0;
};
// Launches on this host thread since the last call (recorded while recording is on).
void record_steps(bool on);
std::vector<LaunchSteps> take_steps();

namespace detail {
inline thread_local ThreadContext tls{};
inline thread_local unsigned long long tls_steps = 0;  // the running simulated thread's steps

enum class WarpOp : unsigned char {
  sync, shfl_idx, shfl_up, shfl_down, shfl_xor, ballot, any, all,
  reduce_add, reduce_min_i, reduce_min_u, reduce_max_i, reduce_max_u, reduce_and, reduce_or, reduce_xor,
  match_any, match_all,
};
enum class BarrierOp : unsigned char { sync, count, and_, or_ };

void syncthreads();
int syncthreads_reduce(BarrierOp op, int predicate);
// A rendezvous of the lanes in `mask`; returns this lane's result (the shuffled bits, or the vote).
unsigned long long warp_op(WarpOp op, unsigned mask, unsigned long long payload, int arg, int width);
unsigned activemask();
void yield();  // let the block's other threads run (spin-waits)
unsigned char* dynamic_shared();
[[noreturn]] void fail(const char* what);

template <typename T>
inline T shfl(WarpOp op, unsigned mask, T var, int arg, int width) {
  static_assert(std::is_arithmetic<T>::value && sizeof(T) <= 8,
                "__shfl_*_sync takes a 1-8 byte arithmetic value, as in CUDA");
  unsigned long long bits = 0;
  std::memcpy(&bits, &var, sizeof(T));
  bits = warp_op(op, mask, bits, arg, width);
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}

template <typename To, typename From>
inline To bit_cast(From v) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast between different sizes");
  To out;
  std::memcpy(&out, &v, sizeof(To));
  return out;
}

// Atomics use real atomic instructions, so they stay correct if blocks ever run on several
// host threads; the read-modify-write of floats is a compare-exchange loop.
template <typename T, typename F>
inline T atomic_update(T* addr, F f) {
  using Bits = std::conditional_t<sizeof(T) == 4, unsigned, unsigned long long>;
  static_assert(sizeof(T) == sizeof(Bits), "atomics on 4- and 8-byte values only");
  Bits* p = reinterpret_cast<Bits*>(addr);
  Bits expected = __atomic_load_n(p, __ATOMIC_RELAXED);
  for (;;) {
    const T old = bit_cast<T>(expected);
    const Bits desired = bit_cast<Bits>(static_cast<T>(f(old)));
    if (__atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return old;
  }
}
}  // namespace detail

// Entry point used by hulk::cuda::launch: validates the launch and runs every block.
// `thunk(ctx)` runs the kernel body for the current simulated thread.
void run_kernel(const char* name, const void* kernel, dim3 grid, dim3 block, size_t dynamic_shared_bytes,
                size_t max_dynamic_shared_bytes, cudaStream_t stream, void (*thunk)(void*), void* ctx);

}  // namespace hulk::simt

// ---- built-in variables ----------------------------------------------------------------------
// Read-only, as in CUDA.
#define threadIdx (static_cast<const uint3&>(::hulk::simt::detail::tls.thread_idx))
#define blockIdx (static_cast<const uint3&>(::hulk::simt::detail::tls.block_idx))
#define blockDim (static_cast<const dim3&>(::hulk::simt::detail::tls.block_dim))
#define gridDim (static_cast<const dim3&>(::hulk::simt::detail::tls.grid_dim))
constexpr int warpSize = 32;

// `T* name` = this block's dynamic shared memory (the launch's shared_bytes).
#define HULK_DYNAMIC_SHARED(T, name) T* name = reinterpret_cast<T*>(::hulk::simt::detail::dynamic_shared())

// ---- barriers, warp operations ------------------------------------------------------------------
inline void __syncthreads() { ::hulk::simt::detail::syncthreads(); }
inline int __syncthreads_count(int p) {
  return ::hulk::simt::detail::syncthreads_reduce(::hulk::simt::detail::BarrierOp::count, p);
}
inline int __syncthreads_and(int p) {
  return ::hulk::simt::detail::syncthreads_reduce(::hulk::simt::detail::BarrierOp::and_, p);
}
inline int __syncthreads_or(int p) {
  return ::hulk::simt::detail::syncthreads_reduce(::hulk::simt::detail::BarrierOp::or_, p);
}
// Fibers of one host thread see each other's writes; the fences only order the compiler.
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

inline void __nanosleep(unsigned) { ::hulk::simt::detail::yield(); }

inline void __syncwarp(unsigned mask = 0xffffffffu) {
  ::hulk::simt::detail::warp_op(::hulk::simt::detail::WarpOp::sync, mask, 0, 0, 32);
}
template <typename T>
inline T __shfl_sync(unsigned mask, T var, int src_lane, int width = warpSize) {
  return ::hulk::simt::detail::shfl(::hulk::simt::detail::WarpOp::shfl_idx, mask, var, src_lane, width);
}
template <typename T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  return ::hulk::simt::detail::shfl(::hulk::simt::detail::WarpOp::shfl_up, mask, var, static_cast<int>(delta), width);
}
template <typename T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  return ::hulk::simt::detail::shfl(::hulk::simt::detail::WarpOp::shfl_down, mask, var, static_cast<int>(delta),
                                    width);
}
template <typename T>
inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize) {
  return ::hulk::simt::detail::shfl(::hulk::simt::detail::WarpOp::shfl_xor, mask, var, lane_mask, width);
}
inline unsigned __ballot_sync(unsigned mask, int predicate) {
  return static_cast<unsigned>(
      ::hulk::simt::detail::warp_op(::hulk::simt::detail::WarpOp::ballot, mask, predicate != 0, 0, 32));
}
inline int __any_sync(unsigned mask, int predicate) {
  return static_cast<int>(
      ::hulk::simt::detail::warp_op(::hulk::simt::detail::WarpOp::any, mask, predicate != 0, 0, 32));
}
inline int __all_sync(unsigned mask, int predicate) {
  return static_cast<int>(
      ::hulk::simt::detail::warp_op(::hulk::simt::detail::WarpOp::all, mask, predicate != 0, 0, 32));
}
// sm_80 warp reductions (32-bit integers) and matches.
#define HULK_SIMT_REDUCE(NAME, OP_I, OP_U)                                                                      \
  inline int NAME(unsigned mask, int v) {                                                                     \
    return static_cast<int>(::hulk::simt::detail::warp_op(::hulk::simt::detail::WarpOp::OP_I, mask,          \
                                                          static_cast<unsigned>(v), 0, 32));                  \
  }                                                                                                           \
  inline unsigned NAME(unsigned mask, unsigned v) {                                                           \
    return static_cast<unsigned>(::hulk::simt::detail::warp_op(::hulk::simt::detail::WarpOp::OP_U, mask, v, 0, 32)); \
  }
HULK_SIMT_REDUCE(__reduce_add_sync, reduce_add, reduce_add)
HULK_SIMT_REDUCE(__reduce_min_sync, reduce_min_i, reduce_min_u)
HULK_SIMT_REDUCE(__reduce_max_sync, reduce_max_i, reduce_max_u)
#undef HULK_SIMT_REDUCE
inline unsigned __reduce_and_sync(unsigned mask, unsigned v) {
  return static_cast<unsigned>(::hulk::simt::detail::warp_op(::hulk::simt::detail::WarpOp::reduce_and, mask, v, 0, 32));
}
inline unsigned __reduce_or_sync(unsigned mask, unsigned v) {
  return static_cast<unsigned>(::hulk::simt::detail::warp_op(::hulk::simt::detail::WarpOp::reduce_or, mask, v, 0, 32));
}
inline unsigned __reduce_xor_sync(unsigned mask, unsigned v) {
  return static_cast<unsigned>(::hulk::simt::detail::warp_op(::hulk::simt::detail::WarpOp::reduce_xor, mask, v, 0, 32));
}
// The lanes of the mask whose value has the same bits as the caller's.
template <typename T>
inline unsigned __match_any_sync(unsigned mask, T value) {
  static_assert(std::is_arithmetic<T>::value && sizeof(T) >= 4 && sizeof(T) <= 8, "__match_any_sync: 4- or 8-byte values");
  unsigned long long bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return static_cast<unsigned>(::hulk::simt::detail::warp_op(::hulk::simt::detail::WarpOp::match_any, mask, bits, 0, 32));
}
// The mask when every lane of it has the same value (*pred = 1), else 0 (*pred = 0).
template <typename T>
inline unsigned __match_all_sync(unsigned mask, T value, int* pred) {
  static_assert(std::is_arithmetic<T>::value && sizeof(T) >= 4 && sizeof(T) <= 8, "__match_all_sync: 4- or 8-byte values");
  unsigned long long bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  const auto r = static_cast<unsigned>(::hulk::simt::detail::warp_op(::hulk::simt::detail::WarpOp::match_all, mask, bits, 0, 32));
  *pred = r != 0;
  return r;
}

// The lanes of the caller's warp that reach this call together: resolved once no lane of the
// warp can run further (lanes that diverged elsewhere are not in it).
inline unsigned __activemask() { return ::hulk::simt::detail::activemask(); }

// ---- atomics ----------------------------------------------------------------------------------
#define HULK_SIMT_ATOMIC_INT(T)                                                                         \
  inline T atomicAdd(T* a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_RELAXED); }                 \
  inline T atomicSub(T* a, T v) { return __atomic_fetch_sub(a, v, __ATOMIC_RELAXED); }                 \
  inline T atomicAnd(T* a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_RELAXED); }                 \
  inline T atomicOr(T* a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_RELAXED); }                   \
  inline T atomicXor(T* a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_RELAXED); }                 \
  inline T atomicExch(T* a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_RELAXED); }               \
  inline T atomicMax(T* a, T v) {                                                                       \
    return ::hulk::simt::detail::atomic_update(a, [v](T old) { return old < v ? v : old; });           \
  }                                                                                                     \
  inline T atomicMin(T* a, T v) {                                                                       \
    return ::hulk::simt::detail::atomic_update(a, [v](T old) { return v < old ? v : old; });           \
  }                                                                                                     \
  inline T atomicCAS(T* a, T compare, T v) {                                                            \
    if (!__atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {      \
      ::hulk::simt::detail::yield(); /* a failed CAS is a spin-wait: let the holder run */             \
    }                                                                                                   \
    return compare;                                                                                     \
  }
HULK_SIMT_ATOMIC_INT(int)
HULK_SIMT_ATOMIC_INT(unsigned int)
HULK_SIMT_ATOMIC_INT(unsigned long long)
#undef HULK_SIMT_ATOMIC_INT
inline long long atomicMax(long long* a, long long v) {
  return ::hulk::simt::detail::atomic_update(a, [v](long long old) { return old < v ? v : old; });
}
inline long long atomicMin(long long* a, long long v) {
  return ::hulk::simt::detail::atomic_update(a, [v](long long old) { return v < old ? v : old; });
}
inline float atomicAdd(float* a, float v) {
  return ::hulk::simt::detail::atomic_update(a, [v](float old) { return old + v; });
}
inline double atomicAdd(double* a, double v) {
  return ::hulk::simt::detail::atomic_update(a, [v](double old) { return old + v; });
}
inline float atomicExch(float* a, float v) {
  return ::hulk::simt::detail::bit_cast<float>(
      __atomic_exchange_n(reinterpret_cast<unsigned*>(a), ::hulk::simt::detail::bit_cast<unsigned>(v),
                          __ATOMIC_RELAXED));
}
// CUDA's wrapping increment/decrement: ((old >= limit) ? 0 : old + 1), ((old == 0 || old > limit) ? limit : old - 1).
inline unsigned atomicInc(unsigned* a, unsigned limit) {
  return ::hulk::simt::detail::atomic_update(a, [limit](unsigned old) { return old >= limit ? 0u : old + 1u; });
}
inline unsigned atomicDec(unsigned* a, unsigned limit) {
  return ::hulk::simt::detail::atomic_update(
      a, [limit](unsigned old) { return (old == 0u || old > limit) ? limit : old - 1u; });
}

// ---- loads, bit casts, intrinsics -------------------------------------------------------------
// A load through the read-only path; one step of simulated time (LaunchSteps).
template <typename T>
inline T __ldg(const T* p) {
  ++::hulk::simt::detail::tls_steps;
  return *p;
}
inline unsigned __float_as_uint(float v) { return ::hulk::simt::detail::bit_cast<unsigned>(v); }
inline float __uint_as_float(unsigned v) { return ::hulk::simt::detail::bit_cast<float>(v); }
inline int __float_as_int(float v) { return ::hulk::simt::detail::bit_cast<int>(v); }
inline float __int_as_float(int v) { return ::hulk::simt::detail::bit_cast<float>(v); }
inline long long __double_as_longlong(double v) { return ::hulk::simt::detail::bit_cast<long long>(v); }
inline double __longlong_as_double(long long v) { return ::hulk::simt::detail::bit_cast<double>(v); }

inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
inline int __clz(int v) { return v == 0 ? 32 : __builtin_clz(static_cast<unsigned>(v)); }
inline int __clzll(long long v) { return v == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(v)); }
inline int __ffs(int v) { return __builtin_ffs(v); }
inline int __ffsll(long long v) { return __builtin_ffsll(v); }
inline unsigned __brev(unsigned v) {
  v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
  v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
  v = ((v >> 4) & 0x0f0f0f0fu) | ((v & 0x0f0f0f0fu) << 4);
  v = ((v >> 8) & 0x00ff00ffu) | ((v & 0x00ff00ffu) << 8);
  return (v >> 16) | (v << 16);
}

// Fast-math intrinsics: the accurate functions (the GPU's are approximations of these).
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : (x == x ? x : 0.0f)); }

// CUDA's integer and floating min/max overloads (mixed signedness goes to unsigned, as there).
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
#define HULK_SIMT_MINMAX(R, A, B)                                                                  \
  inline R min(A a, B b) { return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); } \
  inline R max(A a, B b) { return static_cast<R>(a) > static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); }
HULK_SIMT_MINMAX(unsigned int, unsigned int, unsigned int)
HULK_SIMT_MINMAX(unsigned int, int, unsigned int)
HULK_SIMT_MINMAX(unsigned int, unsigned int, int)
HULK_SIMT_MINMAX(long, long, long)
HULK_SIMT_MINMAX(unsigned long, unsigned long, unsigned long)
HULK_SIMT_MINMAX(unsigned long, long, unsigned long)
HULK_SIMT_MINMAX(unsigned long, unsigned long, long)
HULK_SIMT_MINMAX(long long, long long, long long)
HULK_SIMT_MINMAX(unsigned long long, unsigned long long, unsigned long long)
HULK_SIMT_MINMAX(unsigned long long, long long, unsigned long long)
HULK_SIMT_MINMAX(unsigned long long, unsigned long long, long long)
#undef HULK_SIMT_MINMAX
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline double min(float a, double b) { return fmin(a, b); }
inline double max(float a, double b) { return fmax(a, b); }
inline double min(double a, float b) { return fmin(a, b); }
inline double max(double a, float b) { return fmax(a, b); }
