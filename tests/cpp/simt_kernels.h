// Host entry points of the kernels in simt_kernels.cu (tests of CUDA semantics: on a GPU in
// the nvcc build, on the CPU simulator in the SIMT build). Each uploads its inputs, launches
// through hulk::cuda::launch and returns the results.
#pragma once

#include <cstdint>
#include <vector>

namespace simt_test {

// One sum per block of `block` threads: static shared memory and a barrier tree.
std::vector<float> block_sums(const std::vector<float>& x, int block);

// Per thread of a (block)-thread launch, for one width: xor-butterfly sum, shfl_down sum,
// shfl_up inclusive scan, and __shfl_sync from lane (lane * 7 + 3) (taken modulo width).
template <typename T>
struct ShuffleResults {
  std::vector<T> xor_sum, down_sum, up_scan, idx;
};
template <typename T>
ShuffleResults<T> shuffles(const std::vector<T>& x, int width, int block);

// Raw single shuffles with an explicit offset (up/down/xor/idx by `arg`), for edge cases.
std::vector<int> shuffle_raw(const std::vector<int>& x, int kind, int arg, int width);

// Per thread: __ballot_sync, __any_sync, __all_sync of (x > 0) over the full warp, and the
// same over a mask of the lower 16 lanes for lanes < 16 (0 for the others).
struct VoteResults {
  std::vector<unsigned> ballot, any, all, ballot_low, any_low, all_low;
};
VoteResults votes(const std::vector<int>& x);

// sm_80 warp reductions and matches over the full warp, per thread.
struct WarpReduceResults {
  std::vector<int> add, min, max;
  std::vector<unsigned> min_u, max_u, and_, or_, xor_, match_any, match_all;
  std::vector<int> match_pred;
};
WarpReduceResults warp_reductions(const std::vector<int>& x);

// Atomics from every thread of many blocks into a few counters.
struct AtomicResults {
  std::vector<int> histogram;  // atomicAdd(int) of x % bins
  float float_sum;             // atomicAdd(float) of exact halves
  double double_sum;           // atomicAdd(double)
  unsigned long long ull_sum;  // atomicAdd(unsigned long long)
  int max, min;                // atomicMax / atomicMin (int)
  unsigned umax;               // atomicMax (unsigned)
  int cas_count;               // atomicCAS loop incrementing a counter
  int exch_seen;               // atomicExch chain: how many distinct values went through
};
AtomicResults atomics(const std::vector<int>& x, int bins, int block);

// Reverses each block's slice through dynamic shared memory of `shared_bytes` (>= block floats).
std::vector<float> reverse_blocks(const std::vector<float>& x, int block, size_t shared_bytes);

// y = a * x + b with float4 and int2 loads; also returns the alignments of the vector types.
std::vector<float> scale_float4(const std::vector<float>& x, float a, float b);
std::vector<int> add_int2(const std::vector<int>& x);
std::vector<int> vector_alignments();  // float2 float4 int2 int4 uint2 uint4 longlong2

// Linear thread ids of a 3D block, the warp-base read back through __shfl_sync(src 0), and
// __syncthreads_count of even ids.
struct LayoutResults {
  std::vector<int> linear, warp_base, even_count, and_all, or_last, or_none;
};
LayoutResults layout(int bx, int by, int bz);

// Block sums through a __device__ helper with its own __shared__ array (warp shuffles, then
// one warp over the per-warp totals). `block` must be a multiple of 32.
std::vector<float> block_sums_warp(const std::vector<float>& x, int block);

// reverse_blocks after a per-kernel cudaFuncSetAttribute(MaxDynamicSharedMemorySize, bytes).
std::vector<float> reverse_blocks_func_optin(const std::vector<float>& x, int block, size_t shared_bytes);

// y = 2x + 1 over n elements, one thread each (no barriers); `seconds` is the launch's time.
std::vector<float> axpb(const std::vector<float>& x, double* seconds);

// Lane 0 of every warp adds 1 to a counter `iters` times under a block-wide spin lock
// (atomicCAS to take it, a __nanosleep inside, atomicExch to release). Returns the counter.
int spin_lock_counter(int blocks, int threads, int iters);

// Each thread changes its copy of a by-value parameter; every thread must see the original.
std::vector<int> param_copies(int n);

// __activemask() inside `if (lane < k)`.
std::vector<unsigned> activemask_diverged(int k);

// The benchmark kernel: 2 barriers and 5 shuffles per thread. Returns a checksum; `seconds`
// is the launch's wall time.
double barrier_shuffle_bench(int blocks, int threads, double* seconds);

// ---- misuse (the simulator reports it; undefined behaviour on a GPU) ----
void early_return_before_barrier();
void mask_mismatch();
void op_mismatch();
void lane_exits_before_syncwarp();
void lane_not_in_own_mask();
void bad_shuffle_width();
// Simulator only (device code cannot throw or launch): an exception thrown by thread `at`
// while the other threads wait at a barrier; a launch from inside a kernel; full-mask warp
// operations in a partial warp (48-thread block): mode 0 ballot (returned), mode 1 a shuffle
// that reads a lane the block does not have.
void throw_in_kernel(int at);
void nested_launch();
void spin_forever();  // thread 0 spins on a flag that thread 1, waiting at a barrier, would set
std::vector<unsigned> partial_warp(int mode);
void launch_in_stream(bool destroyed);
// y[i] = x[i] + x[i - 1] through shared memory WITHOUT the barrier between the write and the
// read (thread 0 of a block uses 0): a race.
std::vector<float> racy_neighbour_sum(const std::vector<float>& x, int block);
void launch_with(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, size_t shared_bytes);

}  // namespace simt_test
