// Counter-based random numbers: value = hash(seed, stream, index). No state to carry
// between calls, so a dropout mask can be recomputed in backward, split over threads,
// or reproduced by a CUDA kernel bit for bit.
#pragma once

#include <cstdint>

// Shared with CUDA kernels (cuda/kernels/dense.cu): host-and-device under nvcc.
#if defined(__CUDACC__)
#define HULK_RNG_FN __host__ __device__ inline
#else
#define HULK_RNG_FN inline
#endif

namespace hulk {

// SplitMix64 finaliser (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
HULK_RNG_FN uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

HULK_RNG_FN uint64_t counter_hash(uint64_t seed, uint64_t stream, uint64_t index) {
  return mix64(mix64(mix64(seed) ^ stream) ^ index);
}

// Uniform in [0, 1) with 24 bits, exactly representable as float.
HULK_RNG_FN float counter_uniform(uint64_t seed, uint64_t stream, uint64_t index) {
  return static_cast<float>(counter_hash(seed, stream, index) >> 40) * (1.0f / 16777216.0f);
}

// Inverted dropout's decision for one element: kept when its uniform number is >= p.
HULK_RNG_FN bool dropout_keep(float p, uint64_t seed, uint64_t step, uint64_t index) {
  return p == 0.0f || counter_uniform(seed, step, index) >= p;
}

}  // namespace hulk
