// Sparse primitives on the CPU: one output row per iteration, rows split over OpenMP
// threads. Each row is written by one thread in a fixed order, so results are
// deterministic and need no atomics.
#include <algorithm>

#include "csrc/ops/backends.h"
#include "csrc/ops/cpu/simd_clones.h"
#include "csrc/rng.h"

namespace hulk::ops::cpu {

namespace {
// Out row v's columns [c, c + W) = the sum over v's neighbours of their (weighted) columns,
// in a local accumulator: each output element is stored once per row instead of once per
// neighbour, and the fixed width lets the compiler keep it in vector registers. With kPrefetch
// the row 4 neighbours ahead is requested while this one is added: the rows are scattered
// over memory, so the gather is latency-bound and the hardware prefetcher cannot guess them.
template <int64_t W, bool kWeighted, bool kPrefetch>
inline __attribute__((always_inline)) void spmm_tile(const int32_t* __restrict indices,
                                                     const float* __restrict values, int64_t k0, int64_t k1,
                                                     const float* __restrict x, int64_t f, int64_t c,
                                                     float* __restrict dst) {
  constexpr int64_t kAhead = 4;
  float acc[W] = {};
  for (int64_t k = k0; k < k1; ++k) {
    if (kPrefetch && k + kAhead < k1) {
      const char* next = reinterpret_cast<const char*>(x + static_cast<int64_t>(indices[k + kAhead]) * f + c);
      for (int64_t byte = 0; byte < W * 4; byte += 64) __builtin_prefetch(next + byte);
    }
    const float* __restrict src = x + static_cast<int64_t>(indices[k]) * f + c;
    const float w = kWeighted ? values[k] : 1.0f;
    for (int64_t j = 0; j < W; ++j) acc[j] += w * src[j];
  }
  for (int64_t j = 0; j < W; ++j) dst[c + j] = acc[j];
}

// Rows [begin, end) of out = A x, every element of those rows written (out need not be zeroed):
// tiles of 64 columns (prefetched), then of 16, then the last f % 16 columns one by one.
// Cloned per ISA (simd_clones.h).
template <bool kWeighted>
HULK_SIMD_CLONES void spmm_row_range(const int64_t* __restrict indptr, const int32_t* __restrict indices,
                                     const float* __restrict values, const float* __restrict x, int64_t f,
                                     float* __restrict out, int64_t begin, int64_t end) {
  for (int64_t v = begin; v < end; ++v) {
    const int64_t k0 = indptr[v], k1 = indptr[v + 1];
    float* __restrict dst = out + v * f;
    int64_t c = 0;
    for (; c + 64 <= f; c += 64) spmm_tile<64, kWeighted, true>(indices, values, k0, k1, x, f, c, dst);
    for (; c + 16 <= f; c += 16) spmm_tile<16, kWeighted, false>(indices, values, k0, k1, x, f, c, dst);
    if (c == f) continue;
    for (int64_t j = c; j < f; ++j) dst[j] = 0.0f;
    for (int64_t k = k0; k < k1; ++k) {
      const float* __restrict src = x + static_cast<int64_t>(indices[k]) * f;
      const float w = kWeighted ? values[k] : 1.0f;
      for (int64_t j = c; j < f; ++j) dst[j] += w * src[j];
    }
  }
}

// Rows go to threads in chunks of 64 (dynamic: degrees vary); each row is written by one
// thread in a fixed neighbour order, so the result is deterministic.
template <bool kWeighted>
void spmm_rows(const Csr& a, const float* x, int64_t f, float* out) {
  constexpr int64_t kChunk = 64;
  const int64_t chunks = (a.num_rows + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t i = 0; i < chunks; ++i) {
    spmm_row_range<kWeighted>(a.indptr.data(), a.indices.data(), a.values.data(), x, f, out, i * kChunk,
                              std::min(a.num_rows, (i + 1) * kChunk));
  }
}
}  // namespace

void spmm(const Csr& a, const Tensor& x, Tensor& out, bool weighted) {
  spmm_host(a, x.data(), x.cols(), out.data(), weighted);
}

void spmm_host(const Csr& a, const float* x, int64_t f, float* out, bool weighted) {
  if (weighted) {
    spmm_rows<true>(a, x, f, out);
  } else {
    spmm_rows<false>(a, x, f, out);
  }
}

void dropout_csr(const Csr& x, float p, uint64_t seed, uint64_t step, Csr& out) {
  const float scale = 1.0f / (1.0f - p);
  const auto cols = static_cast<uint64_t>(x.num_cols);
  // dropout_keep's decision with counter_hash's first two mixes (seed and stream only) taken
  // once, as the dense op does.
  const uint64_t stream_hash = mix64(mix64(seed) ^ step);
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < x.num_rows; ++r) {
    for (int64_t k = x.indptr[r]; k < x.indptr[r + 1]; ++k) {
      const uint64_t index = static_cast<uint64_t>(r) * cols + static_cast<uint64_t>(x.indices[k]);
      const float u = static_cast<float>(mix64(stream_hash ^ index) >> 40) * (1.0f / 16777216.0f);
      out.values[k] = x.values[k] * (p == 0.0f || u >= p ? scale : 0.0f);
    }
  }
}

void gather_csr_values(const Csr& src, Csr& out) {
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < out.nnz(); ++k) out.values[k] = src.values[out.edge_ids[k]];
}

void segment_sum_edges(const Csr& a, const Tensor& e, Tensor& out) {
  const int64_t fe = e.cols();
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t v = 0; v < a.num_rows; ++v) {
    float* dst = out.row(v);
    for (int64_t k = a.indptr[v]; k < a.indptr[v + 1]; ++k) {
      const float* src = e.row(a.edge_ids[k]);
      for (int64_t j = 0; j < fe; ++j) dst[j] += src[j];
    }
  }
}

void pool_coefficients(const Csr& a, Pooling pooling, Tensor& self_coef, Tensor& nbr_coef) {
  for (int64_t v = 0; v < a.num_rows; ++v) {
    const int64_t deg = a.degree(v);
    if (pooling == Pooling::Sum) {
      self_coef.data()[v] = static_cast<float>(deg);
      nbr_coef.data()[v] = 1.0f;
    } else {
      self_coef.data()[v] = deg > 0 ? 1.0f : 0.0f;
      nbr_coef.data()[v] = deg > 0 ? 1.0f / static_cast<float>(deg) : 0.0f;
    }
  }
}

}  // namespace hulk::ops::cpu
