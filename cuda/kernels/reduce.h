// Deterministic block reductions for the CUDA kernels: a fixed tree over a fixed number of
// threads, so the same inputs give the same bits on every run (no atomics).
#pragma once

#include "cuda/runtime/compat.h"

namespace hulk::cuda {

// Sum of `value` over the block's threads (blockDim.x must be a power of two <= 1024);
// every thread must call it. The result is valid in thread 0.
template <typename T>
__device__ T block_sum(T value, T* scratch /* shared, [blockDim.x] */) {
  scratch[threadIdx.x] = value;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) scratch[threadIdx.x] += scratch[threadIdx.x + half];
    __syncthreads();
  }
  const T total = scratch[0];
  __syncthreads();  // scratch may be reused by the caller right after
  return total;
}

}  // namespace hulk::cuda
