// Kernels of test_simt.cpp. Compiled by nvcc in the CUDA build and as C++ in the SIMT build.
#include "cuda/runtime/compat.h"

#include <chrono>
#include <stdexcept>
#include <vector>

#include "cuda/runtime/check.h"
#include "cuda/runtime/launch.h"
#include "tests/cpp/simt_kernels.h"

namespace simt_test {
namespace {

constexpr unsigned kFull = 0xffffffffu;

// ---- device buffers -----------------------------------------------------------------------------
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t n) : n_(n) { HULK_CUDA_CHECK(cudaMalloc(&p_, (n > 0 ? n : 1) * sizeof(T))); }
  explicit DeviceBuffer(const std::vector<T>& v) : DeviceBuffer(v.size()) {
    HULK_CUDA_CHECK(cudaMemcpy(p_, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(p_); }
  T* get() const { return p_; }
  std::vector<T> host() const {
    std::vector<T> v(n_);
    HULK_CUDA_CHECK(cudaMemcpy(v.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
  }

 private:
  T* p_ = nullptr;
  size_t n_;
};

int blocks_for(size_t n, int block) { return static_cast<int>((n + block - 1) / block); }

// ---- block reduction ---------------------------------------------------------------------------
__global__ void block_sum_kernel(const float* __restrict__ x, int n, float* __restrict__ out) {
  __shared__ float partial[1024];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

// ---- shuffles ------------------------------------------------------------------------------------
template <typename T>
__global__ void shuffle_kernel(const T* x, int width, T* xor_sum, T* down_sum, T* up_scan, T* idx) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x % warpSize;
  const T v = x[i];
  T s = v;
  for (int o = width / 2; o > 0; o /= 2) s += __shfl_xor_sync(kFull, s, o, width);
  xor_sum[i] = s;
  T d = v;
  for (int o = width / 2; o > 0; o /= 2) d += __shfl_down_sync(kFull, d, o, width);
  down_sum[i] = d;
  T u = v;
  for (int o = 1; o < width; o *= 2) {
    const T t = __shfl_up_sync(kFull, u, o, width);
    if (lane % width >= o) u += t;
  }
  up_scan[i] = u;
  idx[i] = __shfl_sync(kFull, v, lane * 7 + 3, width);
}

__global__ void shuffle_raw_kernel(const int* x, int kind, int arg, int width, int* out) {
  const int v = x[threadIdx.x];
  int r = 0;
  switch (kind) {
    case 0: r = __shfl_sync(kFull, v, arg, width); break;
    case 1: r = __shfl_up_sync(kFull, v, static_cast<unsigned>(arg), width); break;
    case 2: r = __shfl_down_sync(kFull, v, static_cast<unsigned>(arg), width); break;
    default: r = __shfl_xor_sync(kFull, v, arg, width); break;
  }
  out[threadIdx.x] = r;
}

// ---- votes ---------------------------------------------------------------------------------------
__global__ void vote_kernel(const int* x, unsigned* ballot, unsigned* any, unsigned* all, unsigned* ballot_low,
                            unsigned* any_low, unsigned* all_low) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int pred = x[i] > 0;
  ballot[i] = __ballot_sync(kFull, pred);
  any[i] = __any_sync(kFull, pred);
  all[i] = __all_sync(kFull, pred);
  const int lane = threadIdx.x % warpSize;
  unsigned bl = 0, an = 0, al = 0;
  if (lane < 16) {
    bl = __ballot_sync(0x0000ffffu, pred);
    an = __any_sync(0x0000ffffu, pred);
    al = __all_sync(0x0000ffffu, pred);
  }
  ballot_low[i] = bl;
  any_low[i] = an;
  all_low[i] = al;
}

__global__ void warp_reduce_kernel(const int* x, int* add, int* mn, int* mx, unsigned* mnu, unsigned* mxu,
                                   unsigned* and_, unsigned* or_, unsigned* xor_, unsigned* match_any,
                                   unsigned* match_all, int* pred) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = x[i];
  const unsigned u = static_cast<unsigned>(v);
  add[i] = __reduce_add_sync(kFull, v);
  mn[i] = __reduce_min_sync(kFull, v);
  mx[i] = __reduce_max_sync(kFull, v);
  mnu[i] = __reduce_min_sync(kFull, u);
  mxu[i] = __reduce_max_sync(kFull, u);
  and_[i] = __reduce_and_sync(kFull, u);
  or_[i] = __reduce_or_sync(kFull, u);
  xor_[i] = __reduce_xor_sync(kFull, u);
  match_any[i] = __match_any_sync(kFull, v);
  int p = -1;
  match_all[i] = __match_all_sync(kFull, v, &p);
  pred[i] = p;
}

// ---- atomics -------------------------------------------------------------------------------------
__global__ void atomics_kernel(const int* x, int n, int bins, int* hist, float* fsum, double* dsum,
                               unsigned long long* usum, int* mx, int* mn, unsigned* umax, int* cas_counter,
                               int* exch_slot, int* exch_seen) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int v = x[i];
  atomicAdd(&hist[((v % bins) + bins) % bins], 1);
  atomicAdd(fsum, 0.5f * static_cast<float>(v % 8));
  atomicAdd(dsum, 0.25 * v);
  atomicAdd(usum, static_cast<unsigned long long>(v) + 1000000000ull);
  atomicMax(mx, v);
  atomicMin(mn, v);
  atomicMax(umax, static_cast<unsigned>(v) * 3u);
  int old = *cas_counter, assumed;
  do {
    assumed = old;
    old = atomicCAS(cas_counter, assumed, assumed + 1);
  } while (old != assumed);
  // Every thread swaps its id in; the previous holder's id is counted once.
  const int prev = atomicExch(exch_slot, i);
  if (prev >= 0) atomicAdd(exch_seen, 1);
}

// ---- dynamic shared memory -------------------------------------------------------------------
__global__ void reverse_kernel(const float* x, int n, float* y) {
  HULK_DYNAMIC_SHARED(float, buf);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  const int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - threadIdx.x);
  if (j < n) y[j] = buf[threadIdx.x];
}

// ---- vector types -------------------------------------------------------------------------------
__global__ void scale_float4_kernel(const float4* x, int n4, float a, float b, float4* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n4) return;
  const float4 v = __ldg(&x[i]);
  y[i] = make_float4(a * v.x + b, a * v.y + b, a * v.z + b, a * v.w + b);
}

__global__ void add_int2_kernel(const int2* x, int n2, int2* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n2) return;
  const int2 v = x[i];
  y[i] = make_int2(v.x + v.y, v.x - v.y);
}

// ---- layout, parameters, activemask ------------------------------------------------------------
__global__ void layout_kernel(int* linear, int* warp_base, int* even_count, int* and_all, int* or_last,
                              int* or_none) {
  const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int n = blockDim.x * blockDim.y * blockDim.z;
  linear[t] = t;
  // Lanes are consecutive linear ids: lane 0 of each warp holds the warp's first id.
  warp_base[t] = __shfl_sync(__ballot_sync(kFull, 1), t, 0);
  even_count[t] = __syncthreads_count(t % 2 == 0);
  and_all[t] = __syncthreads_and(t < n);
  or_last[t] = __syncthreads_or(t == n - 1);
  or_none[t] = __syncthreads_or(t >= n);
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down_sync(kFull, v, o);
  return v;
}

// The block's sum in every thread; shared memory declared in the helper, as kernels often do.
__device__ float block_sum(float v) {
  __shared__ float warp_totals[32];
  __shared__ float total;
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  v = warp_sum(v);
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const int warps = (blockDim.x + warpSize - 1) / warpSize;
    float w = lane < warps ? warp_totals[lane] : 0.0f;
    w = warp_sum(w);
    if (lane == 0) total = w;
  }
  __syncthreads();
  return total;
}

__global__ void block_sum_warp_kernel(const float* x, int n, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float s = block_sum(i < n ? x[i] : 0.0f);
  if (threadIdx.x == blockDim.x - 1) out[blockIdx.x] = s;  // any thread has it
}

__global__ void axpb_kernel(const float* x, int n, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}

__global__ void param_copies_kernel(int n, int* out) {
  // If threads shared one copy, those after thread 0 would read a changed n.
  const int original = n;
  n += static_cast<int>(threadIdx.x) + 1;
  __syncthreads();
  out[threadIdx.x] = n - static_cast<int>(threadIdx.x) - 1 == original ? original : -1;
}

__global__ void activemask_kernel(int k, unsigned* out) {
  const int lane = threadIdx.x % warpSize;
  unsigned m = 0;
  if (lane < k) m = __activemask();
  out[threadIdx.x] = m;
}

// ---- benchmark ----------------------------------------------------------------------------------
__global__ void bench_kernel(const float* x, float* out) {
  __shared__ float tile[1024];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = x[i];
  __syncthreads();
  float v = tile[blockDim.x - 1 - threadIdx.x];
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(kFull, v, o);
  __syncthreads();
  out[i] = v + tile[threadIdx.x];
}

// ---- misuse ------------------------------------------------------------------------------------
__global__ void early_return_kernel(float* y) {
  if (threadIdx.x >= 16) return;
  __syncthreads();
  y[threadIdx.x] = 1.0f;
}

__global__ void mask_mismatch_kernel(int* y) {
  const int lane = threadIdx.x % warpSize;
  const unsigned mask = lane == 5 ? 0x0000ffffu : kFull;
  y[threadIdx.x] = __shfl_sync(mask, lane, 0);
}

__global__ void op_mismatch_kernel(int* y) {
  const int lane = threadIdx.x % warpSize;
  if (lane < 16) {
    y[threadIdx.x] = static_cast<int>(__ballot_sync(kFull, 1));
  } else {
    y[threadIdx.x] = __shfl_sync(kFull, lane, 0);
  }
}

__global__ void lane_exit_kernel(int* y) {
  const int lane = threadIdx.x % warpSize;
  if (lane == 3) return;
  __syncwarp();
  y[threadIdx.x] = lane;
}

__global__ void not_in_mask_kernel(int* y) {
  const int lane = threadIdx.x % warpSize;
  y[threadIdx.x] = __shfl_sync(0x1u, lane, 0);
}

__global__ void bad_width_kernel(int* y) {
  y[threadIdx.x] = __shfl_xor_sync(kFull, static_cast<int>(threadIdx.x), 1, 3);
}

__global__ void noop_kernel(int* y) {
  if (y != nullptr && threadIdx.x == 0 && blockIdx.x == 0) *y = 1;
}

__global__ void spin_lock_kernel(int* lock, int* counter, int iters) {
  if (threadIdx.x % warpSize != 0) return;  // one lane per warp: no intra-warp lock contention
  for (int k = 0; k < iters; ++k) {
    while (atomicCAS(lock, 0, 1) != 0) {
    }
    __threadfence();
    volatile int* c = counter;  // read and written under the lock, never cached in a register
    const int v = *c;
    __nanosleep(100);  // hold the lock a while: the others must wait, not fail
    *c = v + 1;
    __threadfence();
    atomicExch(lock, 0);
  }
}

#if !defined(__CUDACC__)
// Only the simulator can run these: device code cannot throw, and a kernel launch from a
// kernel is dynamic parallelism, which the simulator rejects.
__global__ void throwing_kernel(int at) {
  if (static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) == at) throw std::invalid_argument("bad row 7");
  __syncthreads();
}

__global__ void nested_launch_kernel(int* y) { hulk::cuda::launch("inner", noop_kernel, 1, 1, 0, nullptr, y); }

__global__ void spin_forever_kernel(int* flag) {
  if (threadIdx.x == 0) {
    while (atomicCAS(flag, 1, 2) != 1) {
    }
  }
  __syncthreads();
  if (threadIdx.x == 1) atomicExch(flag, 1);
}
#endif

__global__ void racy_kernel(const float* x, int n, float* y) {
  HULK_DYNAMIC_SHARED(float, buf);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? x[i] : 0.0f;
  // missing __syncthreads()
  if (i < n) y[i] = buf[threadIdx.x] + (threadIdx.x > 0 ? buf[threadIdx.x - 1] : 0.0f);
}

__global__ void partial_warp_kernel(int mode, unsigned* out) {
  if (mode == 0) {
    out[threadIdx.x] = __ballot_sync(kFull, 1);
  } else {
    out[threadIdx.x] = __shfl_down_sync(kFull, threadIdx.x, 16);
  }
}

}  // namespace

// ---- host entry points -----------------------------------------------------------------------------

std::vector<float> block_sums(const std::vector<float>& x, int block) {
  const int blocks = blocks_for(x.size(), block);
  DeviceBuffer<float> dx(x), out(blocks);
  hulk::cuda::launch("block_sum", block_sum_kernel, blocks, block, 0, nullptr, dx.get(), static_cast<int>(x.size()),
                     out.get());
  return out.host();
}

template <typename T>
ShuffleResults<T> shuffles(const std::vector<T>& x, int width, int block) {
  DeviceBuffer<T> dx(x), a(x.size()), b(x.size()), c(x.size()), d(x.size());
  hulk::cuda::launch("shuffle", shuffle_kernel<T>, blocks_for(x.size(), block), block, 0, nullptr, dx.get(), width,
                     a.get(), b.get(), c.get(), d.get());
  return ShuffleResults<T>{a.host(), b.host(), c.host(), d.host()};
}
template ShuffleResults<int> shuffles(const std::vector<int>&, int, int);
template ShuffleResults<unsigned> shuffles(const std::vector<unsigned>&, int, int);
template ShuffleResults<float> shuffles(const std::vector<float>&, int, int);
template ShuffleResults<double> shuffles(const std::vector<double>&, int, int);
template ShuffleResults<long long> shuffles(const std::vector<long long>&, int, int);
template ShuffleResults<unsigned long long> shuffles(const std::vector<unsigned long long>&, int, int);

std::vector<int> shuffle_raw(const std::vector<int>& x, int kind, int arg, int width) {
  DeviceBuffer<int> dx(x), out(x.size());
  hulk::cuda::launch("shuffle_raw", shuffle_raw_kernel, 1, static_cast<unsigned>(x.size()), 0, nullptr, dx.get(), kind,
                     arg, width, out.get());
  return out.host();
}

VoteResults votes(const std::vector<int>& x) {
  const size_t n = x.size();
  DeviceBuffer<int> dx(x);
  DeviceBuffer<unsigned> a(n), b(n), c(n), d(n), e(n), f(n);
  hulk::cuda::launch("vote", vote_kernel, blocks_for(n, 64), 64, 0, nullptr, dx.get(), a.get(), b.get(), c.get(),
                     d.get(), e.get(), f.get());
  return VoteResults{a.host(), b.host(), c.host(), d.host(), e.host(), f.host()};
}

WarpReduceResults warp_reductions(const std::vector<int>& x) {
  const size_t n = x.size();
  DeviceBuffer<int> dx(x), add(n), mn(n), mx(n), pred(n);
  DeviceBuffer<unsigned> mnu(n), mxu(n), a(n), o(n), xo(n), ma(n), ml(n);
  hulk::cuda::launch("warp_reduce", warp_reduce_kernel, blocks_for(n, 64), 64, 0, nullptr, dx.get(), add.get(),
                     mn.get(), mx.get(), mnu.get(), mxu.get(), a.get(), o.get(), xo.get(), ma.get(), ml.get(),
                     pred.get());
  WarpReduceResults r;
  r.add = add.host();
  r.min = mn.host();
  r.max = mx.host();
  r.min_u = mnu.host();
  r.max_u = mxu.host();
  r.and_ = a.host();
  r.or_ = o.host();
  r.xor_ = xo.host();
  r.match_any = ma.host();
  r.match_all = ml.host();
  r.match_pred = pred.host();
  return r;
}

AtomicResults atomics(const std::vector<int>& x, int bins, int block) {
  DeviceBuffer<int> dx(x), hist(std::vector<int>(bins, 0)), mx(std::vector<int>{-2147483647 - 1}),
      mn(std::vector<int>{2147483647}), cas(std::vector<int>{0}), slot(std::vector<int>{-1}),
      seen(std::vector<int>{0});
  DeviceBuffer<float> fsum(std::vector<float>{0.0f});
  DeviceBuffer<double> dsum(std::vector<double>{0.0});
  DeviceBuffer<unsigned long long> usum(std::vector<unsigned long long>{0});
  DeviceBuffer<unsigned> umax(std::vector<unsigned>{0});
  hulk::cuda::launch("atomics", atomics_kernel, blocks_for(x.size(), block), block, 0, nullptr, dx.get(),
                     static_cast<int>(x.size()), bins, hist.get(), fsum.get(), dsum.get(), usum.get(), mx.get(),
                     mn.get(), umax.get(), cas.get(), slot.get(), seen.get());
  AtomicResults r;
  r.histogram = hist.host();
  r.float_sum = fsum.host()[0];
  r.double_sum = dsum.host()[0];
  r.ull_sum = usum.host()[0];
  r.max = mx.host()[0];
  r.min = mn.host()[0];
  r.umax = umax.host()[0];
  r.cas_count = cas.host()[0];
  r.exch_seen = seen.host()[0];
  return r;
}

std::vector<float> reverse_blocks(const std::vector<float>& x, int block, size_t shared_bytes) {
  DeviceBuffer<float> dx(x), y(x.size());
  hulk::cuda::launch("reverse", reverse_kernel, blocks_for(x.size(), block), block, shared_bytes, nullptr, dx.get(),
                     static_cast<int>(x.size()), y.get());
  return y.host();
}

std::vector<float> scale_float4(const std::vector<float>& x, float a, float b) {
  const int n4 = static_cast<int>(x.size() / 4);
  DeviceBuffer<float> dx(x), y(x.size());
  hulk::cuda::launch("scale_float4", scale_float4_kernel, blocks_for(n4, 128), 128, 0, nullptr,
                     reinterpret_cast<const float4*>(dx.get()), n4, a, b, reinterpret_cast<float4*>(y.get()));
  return y.host();
}

std::vector<int> add_int2(const std::vector<int>& x) {
  const int n2 = static_cast<int>(x.size() / 2);
  DeviceBuffer<int> dx(x), y(x.size());
  hulk::cuda::launch("add_int2", add_int2_kernel, blocks_for(n2, 128), 128, 0, nullptr,
                     reinterpret_cast<const int2*>(dx.get()), n2, reinterpret_cast<int2*>(y.get()));
  return y.host();
}

std::vector<int> vector_alignments() {
  return {alignof(float2), alignof(float4), alignof(int2), alignof(int4), alignof(uint2), alignof(uint4),
          alignof(longlong2)};
}

LayoutResults layout(int bx, int by, int bz) {
  const int n = bx * by * bz;
  DeviceBuffer<int> a(n), b(n), c(n), d(n), e(n), f(n);
  hulk::cuda::launch("layout", layout_kernel, 1, dim3(bx, by, bz), 0, nullptr, a.get(), b.get(), c.get(), d.get(),
                     e.get(), f.get());
  return LayoutResults{a.host(), b.host(), c.host(), d.host(), e.host(), f.host()};
}

std::vector<float> block_sums_warp(const std::vector<float>& x, int block) {
  const int blocks = blocks_for(x.size(), block);
  DeviceBuffer<float> dx(x), out(blocks);
  hulk::cuda::launch("block_sum_warp", block_sum_warp_kernel, blocks, block, 0, nullptr, dx.get(),
                     static_cast<int>(x.size()), out.get());
  return out.host();
}

std::vector<float> reverse_blocks_func_optin(const std::vector<float>& x, int block, size_t shared_bytes) {
  HULK_CUDA_CHECK(
      cudaFuncSetAttribute(reverse_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)));
  return reverse_blocks(x, block, shared_bytes);
}

std::vector<float> axpb(const std::vector<float>& x, double* seconds) {
  DeviceBuffer<float> dx(x), y(x.size());
  HULK_CUDA_CHECK(cudaDeviceSynchronize());
  const auto t0 = std::chrono::steady_clock::now();
  hulk::cuda::launch("axpb", axpb_kernel, blocks_for(x.size(), 256), 256, 0, nullptr, dx.get(),
                     static_cast<int>(x.size()), y.get());
  HULK_CUDA_CHECK(cudaDeviceSynchronize());
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return y.host();
}

int spin_lock_counter(int blocks, int threads, int iters) {
  DeviceBuffer<int> lock(std::vector<int>{0}), counter(std::vector<int>{0});
  hulk::cuda::launch("spin_lock", spin_lock_kernel, blocks, threads, 0, nullptr, lock.get(), counter.get(), iters);
  return counter.host()[0];
}

void throw_in_kernel(int at) {
#if defined(HULK_SIMT)
  hulk::cuda::launch("throwing", throwing_kernel, 4, 64, 0, nullptr, at);
#else
  (void)at;
  throw std::logic_error("throw_in_kernel runs in the SIMT build only");
#endif
}

void nested_launch() {
#if defined(HULK_SIMT)
  DeviceBuffer<int> y(1);
  hulk::cuda::launch("outer", nested_launch_kernel, 1, 2, 0, nullptr, y.get());
#else
  throw std::logic_error("nested_launch runs in the SIMT build only");
#endif
}

void spin_forever() {
#if defined(HULK_SIMT)
  DeviceBuffer<int> flag(std::vector<int>{0});
  hulk::cuda::launch("spin_forever", spin_forever_kernel, 1, 64, 0, nullptr, flag.get());
#else
  throw std::logic_error("spin_forever runs in the SIMT build only");
#endif
}

void launch_in_stream(bool destroyed) {
  DeviceBuffer<int> y(1);
  cudaStream_t s = nullptr;
  HULK_CUDA_CHECK(cudaStreamCreate(&s));
  if (destroyed) HULK_CUDA_CHECK(cudaStreamDestroy(s));
  hulk::cuda::launch("in_stream", noop_kernel, 1, 32, 0, s, y.get());
  if (!destroyed) {
    HULK_CUDA_CHECK(cudaStreamSynchronize(s));
    HULK_CUDA_CHECK(cudaStreamDestroy(s));
  }
}

std::vector<float> racy_neighbour_sum(const std::vector<float>& x, int block) {
  DeviceBuffer<float> dx(x), y(x.size());
  hulk::cuda::launch("racy", racy_kernel, blocks_for(x.size(), block), block, block * sizeof(float), nullptr,
                     dx.get(), static_cast<int>(x.size()), y.get());
  return y.host();
}

std::vector<unsigned> partial_warp(int mode) {
  DeviceBuffer<unsigned> out(48);
  hulk::cuda::launch("partial_warp", partial_warp_kernel, 1, 48, 0, nullptr, mode, out.get());
  return out.host();
}

std::vector<int> param_copies(int n) {
  DeviceBuffer<int> out(64);
  hulk::cuda::launch("param_copies", param_copies_kernel, 1, 64, 0, nullptr, n, out.get());
  return out.host();
}

std::vector<unsigned> activemask_diverged(int k) {
  DeviceBuffer<unsigned> out(64);
  hulk::cuda::launch("activemask", activemask_kernel, 1, 64, 0, nullptr, k, out.get());
  return out.host();
}

double barrier_shuffle_bench(int blocks, int threads, double* seconds) {
  const size_t n = static_cast<size_t>(blocks) * threads;
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 17);
  DeviceBuffer<float> dx(x), out(n);
  HULK_CUDA_CHECK(cudaDeviceSynchronize());
  const auto t0 = std::chrono::steady_clock::now();
  hulk::cuda::launch("bench", bench_kernel, blocks, threads, 0, nullptr, dx.get(), out.get());
  HULK_CUDA_CHECK(cudaDeviceSynchronize());
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double sum = 0;
  for (float v : out.host()) sum += v;
  return sum;
}

void early_return_before_barrier() {
  DeviceBuffer<float> y(64);
  hulk::cuda::launch("early_return", early_return_kernel, 2, 64, 0, nullptr, y.get());
}

void mask_mismatch() {
  DeviceBuffer<int> y(32);
  hulk::cuda::launch("mask_mismatch", mask_mismatch_kernel, 1, 32, 0, nullptr, y.get());
}

void op_mismatch() {
  DeviceBuffer<int> y(32);
  hulk::cuda::launch("op_mismatch", op_mismatch_kernel, 1, 32, 0, nullptr, y.get());
}

void lane_exits_before_syncwarp() {
  DeviceBuffer<int> y(32);
  hulk::cuda::launch("lane_exit", lane_exit_kernel, 1, 32, 0, nullptr, y.get());
}

void lane_not_in_own_mask() {
  DeviceBuffer<int> y(32);
  hulk::cuda::launch("not_in_mask", not_in_mask_kernel, 1, 32, 0, nullptr, y.get());
}

void bad_shuffle_width() {
  DeviceBuffer<int> y(32);
  hulk::cuda::launch("bad_width", bad_width_kernel, 1, 32, 0, nullptr, y.get());
}

void launch_with(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, size_t shared_bytes) {
  DeviceBuffer<int> y(1);
  hulk::cuda::launch("noop", noop_kernel, dim3(gx, gy, gz), dim3(bx, by, bz), shared_bytes, nullptr, y.get());
  HULK_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace simt_test
