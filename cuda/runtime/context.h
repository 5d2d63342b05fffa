// What every CUDA op needs besides its arguments: the current stream, the library handles
// (created once per thread, bound to the current stream on each use) and launch sizes.
#pragma once

#include "cuda/runtime/compat.h"

#include <algorithm>
#include <cstdint>

#include "csrc/device.h"

namespace hulk::cuda {

inline cudaStream_t current_stream() { return static_cast<cudaStream_t>(device::current_stream()); }

constexpr int kBlock = 256;  // threads per block of the element-wise and row kernels

// Blocks for `threads` threads of kBlock, capped: kernels loop over the rest (grid-stride),
// which keeps launches cheap on the GPU and in the SIMT build alike.
inline unsigned grid_for(int64_t threads, int64_t max_blocks = 4096) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>((threads + kBlock - 1) / kBlock, max_blocks)));
}

}  // namespace hulk::cuda
