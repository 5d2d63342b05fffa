// Dense primitives on the CPU: GEMM through BLAS (row blocks over our OpenMP threads,
// csrc/ops/cpu/blas.h), element-wise ops parallelised with OpenMP.

#include <algorithm>
#include <vector>

#include "csrc/rng.h"
#include "csrc/ops/backends.h"
#include "csrc/ops/cpu/blas.h"
#include "csrc/ops/cpu/simd_clones.h"

namespace hulk::ops::cpu {

void gemm(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b, Tensor& c, float alpha, float beta) {
  const int64_t k = trans_a ? a.rows() : a.cols();
  sgemm_rows(trans_a, trans_b, c.rows(), c.cols(), k, alpha, a.data(), a.cols() > 0 ? a.cols() : 1, b.data(),
             b.cols() > 0 ? b.cols() : 1, beta, c.data(), c.cols() > 0 ? c.cols() : 1);
}

void scale(Tensor& t, float alpha) {
  float* p = t.data();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < t.size(); ++i) p[i] *= alpha;
}

void add_bias(Tensor& out, const Tensor& bias, const Tensor* row_scale) {
  const int64_t cols = out.cols();
  const float* b = bias.data();
  const float* s = row_scale ? row_scale->data() : nullptr;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < out.rows(); ++i) {
    float* row = out.row(i);
    const float si = s ? s[i] : 1.0f;
    for (int64_t j = 0; j < cols; ++j) row[j] += si * b[j];
  }
}

void bias_grad(const Tensor& dy, const Tensor* row_scale, Tensor& db) {
  // Column sums in double: a fixed summation order keeps the result deterministic.
  std::vector<double> sum(dy.cols(), 0.0);
  const float* s = row_scale ? row_scale->data() : nullptr;
  for (int64_t i = 0; i < dy.rows(); ++i) {
    const double si = s ? s[i] : 1.0;
    const float* row = dy.row(i);
    for (int64_t j = 0; j < dy.cols(); ++j) sum[j] += si * row[j];
  }
  for (int64_t j = 0; j < dy.cols(); ++j) db.data()[j] += static_cast<float>(sum[j]);
}

namespace {
// ReLU's loops, out of place and in place: the model runs ReLU and its backward in place, and a
// loop whose pointers may alias is compiled with a runtime overlap check that sends an exact
// overlap to the scalar loop (branchy on random signs); restrict-qualified single pointers
// vectorise.
void relu_range(const float* __restrict in, float* __restrict out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}
void relu_range_in_place(float* __restrict t, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) t[i] = t[i] > 0.0f ? t[i] : 0.0f;
}
void relu_grad_range(const float* __restrict y, const float* __restrict g, float* __restrict d, int64_t begin,
                     int64_t end) {
  for (int64_t i = begin; i < end; ++i) d[i] = y[i] > 0.0f ? g[i] : 0.0f;
}
void relu_grad_range_in_place(const float* __restrict y, float* __restrict d, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) d[i] = y[i] > 0.0f ? d[i] : 0.0f;
}
constexpr int64_t kElementChunk = 1 << 14;  // elements per OpenMP iteration of the loops above
}  // namespace

void relu_forward(const Tensor& x, Tensor& y) {
  const float* in = x.data();
  float* out = y.data();
  const int64_t n = x.size(), chunks = (n + kElementChunk - 1) / kElementChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * kElementChunk, end = std::min(n, begin + kElementChunk);
    if (in == out) {
      relu_range_in_place(out, begin, end);
    } else {
      relu_range(in, out, begin, end);
    }
  }
}

void relu_backward(const Tensor& y, const Tensor& dy, Tensor& dx) {
  const float* out = y.data();
  const float* g = dy.data();
  float* d = dx.data();
  const int64_t n = y.size(), chunks = (n + kElementChunk - 1) / kElementChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * kElementChunk, end = std::min(n, begin + kElementChunk);
    if (g == d) {
      relu_grad_range_in_place(out, d, begin, end);
    } else {
      relu_grad_range(out, g, d, begin, end);
    }
  }
}

namespace {
// Dropout's factor for element i: scale if kept, else 0. The same decisions as dropout_keep
// (counter_hash's first two mixes depend only on the seed and the stream, so they are taken
// once by the caller). Branch-free (a kept element is a coin flip the branch predictor cannot
// learn), and the 24 random bits go through a 32-bit conversion, which vectorises without
// AVX-512DQ.
inline float dropout_factor(uint64_t stream_hash, int64_t i, float p, float scale) {
  const uint32_t bits = static_cast<uint32_t>(mix64(stream_hash ^ static_cast<uint64_t>(i)) >> 40);
  const float u = static_cast<float>(static_cast<int32_t>(bits)) * (1.0f / 16777216.0f);
  return u >= p ? scale : 0.0f;
}

// Elements [begin, end) of dropout, out of place and in place (one pointer: the model drops
// its activations and gradients in place, and restrict-qualified aliases would be undefined).
HULK_SIMD_CLONES void dropout_range(const float* __restrict src, float* __restrict dst, float p, float scale,
                                    uint64_t stream_hash, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) dst[i] = src[i] * dropout_factor(stream_hash, i, p, scale);
}
HULK_SIMD_CLONES void dropout_range_in_place(float* __restrict t, float p, float scale, uint64_t stream_hash,
                                             int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) t[i] *= dropout_factor(stream_hash, i, p, scale);
}
}  // namespace

void dropout(const Tensor& in, float p, uint64_t seed, uint64_t step, Tensor& out) {
  const float scale = 1.0f / (1.0f - p);
  const float* src = in.data();
  float* dst = out.data();
  if (p == 0.0f) {  // dropout_keep keeps everything at p = 0
    if (src != dst) std::copy(src, src + in.size(), dst);
    return;
  }
  const uint64_t stream_hash = mix64(mix64(seed) ^ step);
  const int64_t chunks = (in.size() + kElementChunk - 1) / kElementChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * kElementChunk, end = std::min(in.size(), begin + kElementChunk);
    if (src == dst) {
      dropout_range_in_place(dst, p, scale, stream_hash, begin, end);
    } else {
      dropout_range(src, dst, p, scale, stream_hash, begin, end);
    }
  }
}

void put_scaled_block(const Tensor& src, const Tensor& coef, int64_t col0, Tensor& dst) {
  const int64_t width = src.cols();
  const float* c = coef.data();
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < src.rows(); ++v) {
    const float* s = src.row(v);
    float* d = dst.row(v) + col0;
    for (int64_t j = 0; j < width; ++j) d[j] = c[v] * s[j];
  }
}

void take_scaled_block(const Tensor& src, int64_t col0, const Tensor& coef, Tensor& dst, bool accumulate) {
  const int64_t width = dst.cols();
  const float* c = coef.data();
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < src.rows(); ++v) {
    const float* s = src.row(v) + col0;
    float* d = dst.row(v);
    for (int64_t j = 0; j < width; ++j) d[j] = (accumulate ? d[j] : 0.0f) + c[v] * s[j];
  }
}

}  // namespace hulk::ops::cpu
