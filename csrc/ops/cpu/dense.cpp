// Dense ops on the CPU: GEMM through BLAS, element-wise ops parallelised with OpenMP.
#include <cblas.h>

#include <stdexcept>
#include <string>

#include "../../rng.h"
#include "../ops.h"

namespace hulk::ops {

void gemm(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b, Tensor& c, float alpha, float beta) {
  const int64_t m = trans_a ? a.cols() : a.rows();
  const int64_t k = trans_a ? a.rows() : a.cols();
  const int64_t kb = trans_b ? b.cols() : b.rows();
  const int64_t n = trans_b ? b.rows() : b.cols();
  if (k != kb) {
    throw std::invalid_argument("gemm: inner dimensions differ: op(a) is [" + std::to_string(m) + ", " +
                                std::to_string(k) + "], op(b) is [" + std::to_string(kb) + ", " +
                                std::to_string(n) + "]");
  }
  if (beta == 0.0f) {
    if (c.rows() != m || c.cols() != n) c.reset(m, n);
  } else {
    check_shape(c, m, n, "gemm: accumulated output c");
  }
  if (m == 0 || n == 0) return;
  if (k == 0) {  // BLAS would not touch c; the product is zero.
    if (beta == 0.0f) {
      c.fill(0.0f);  // beta == 0 means c is never read, even when it holds NaN
    } else {
      for (int64_t i = 0; i < c.size(); ++i) c.data()[i] *= beta;
    }
    return;
  }
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a.data(),
              static_cast<int>(a.cols() > 0 ? a.cols() : 1), b.data(), static_cast<int>(b.cols() > 0 ? b.cols() : 1),
              beta, c.data(), static_cast<int>(n));
}

void add_bias(Tensor& out, const Tensor& bias) {
  check_shape(bias, 1, out.cols(), "add_bias: bias");
  const int64_t cols = out.cols();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < out.rows(); ++i) {
    float* row = out.row(i);
    for (int64_t j = 0; j < cols; ++j) row[j] += bias.data()[j];
  }
}

void bias_grad(const Tensor& dy, const float* row_scale, Tensor& db, bool accumulate) {
  if (!accumulate) db.reset(1, dy.cols());
  check_shape(db, 1, dy.cols(), "bias_grad: db");
  // Column sums in double: a fixed summation order keeps the result deterministic.
  std::vector<double> sum(dy.cols(), 0.0);
  for (int64_t i = 0; i < dy.rows(); ++i) {
    const double s = row_scale ? row_scale[i] : 1.0;
    const float* row = dy.row(i);
    for (int64_t j = 0; j < dy.cols(); ++j) sum[j] += s * row[j];
  }
  for (int64_t j = 0; j < dy.cols(); ++j) db.data()[j] += static_cast<float>(sum[j]);
}

void relu_forward(const Tensor& x, Tensor& y) {
  if (!y.same_shape(x)) y.reset(x.rows(), x.cols());
  const float* in = x.data();
  float* out = y.data();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < x.size(); ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

void relu_backward(const Tensor& y, const Tensor& dy, Tensor& dx) {
  check_shape(dy, y.rows(), y.cols(), "relu_backward: dy");
  if (!dx.same_shape(y)) dx.reset(y.rows(), y.cols());
  const float* out = y.data();
  const float* g = dy.data();
  float* d = dx.data();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < y.size(); ++i) d[i] = out[i] > 0.0f ? g[i] : 0.0f;
}

namespace {
void check_dropout_p(float p) {
  if (!(p >= 0.0f && p < 1.0f)) throw std::invalid_argument("dropout: p must be in [0, 1), got " + std::to_string(p));
}
// Shared by forward and backward: out = in * mask / (1 - p).
void apply_dropout_mask(const Tensor& in, float p, uint64_t seed, uint64_t step, Tensor& out) {
  check_dropout_p(p);
  if (!out.same_shape(in)) out.reset(in.rows(), in.cols());
  const float scale = 1.0f / (1.0f - p);
  const float* src = in.data();
  float* dst = out.data();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < in.size(); ++i) {
    const bool keep = p == 0.0f || counter_uniform(seed, step, static_cast<uint64_t>(i)) >= p;
    dst[i] = keep ? src[i] * scale : 0.0f;
  }
}
}  // namespace

void dropout_forward(const Tensor& x, float p, uint64_t seed, uint64_t step, Tensor& y) {
  apply_dropout_mask(x, p, seed, step, y);
}

void dropout_backward(const Tensor& dy, float p, uint64_t seed, uint64_t step, Tensor& dx) {
  apply_dropout_mask(dy, p, seed, step, dx);
}

}  // namespace hulk::ops
