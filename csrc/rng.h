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

// What a model draws random numbers for. Each use has its own stream, derived from
// (purpose, layer, step) by stream_key; the model's seed enters through counter_hash.
// Before issue 20 streams were small integers shared between uses: the first step's
// dropout mask after hidden layer i was the stream of a layer's weight initialisation.
constexpr uint64_t kStreamWeightInit = 1;
constexpr uint64_t kStreamDropout = 2;

// A 64-bit stream key: chained SplitMix64 mixes, a bijection of each argument for fixed
// others, so distinct uses get distinct, unrelated keys (collisions between different
// (purpose, layer, step) triples need a 64-bit coincidence). The CUDA dropout is handed the
// same key as the CPU's, so both draw the same masks.
HULK_RNG_FN uint64_t stream_key(uint64_t purpose, uint64_t layer, uint64_t step) {
  return mix64(mix64(mix64(purpose) ^ layer) ^ step);
}

// Uniform in [0, 1) with 24 bits, exactly representable as float.
HULK_RNG_FN float counter_uniform(uint64_t seed, uint64_t stream, uint64_t index) {
  return static_cast<float>(counter_hash(seed, stream, index) >> 40) * (1.0f / 16777216.0f);
}

// Inverted dropout's decision for one element: kept when its uniform number is >= p.
// `stream` is the use's key (stream_key(kStreamDropout, layer, step) in the model).
HULK_RNG_FN bool dropout_keep(float p, uint64_t seed, uint64_t stream, uint64_t index) {
  return p == 0.0f || counter_uniform(seed, stream, index) >= p;
}

}  // namespace hulk
