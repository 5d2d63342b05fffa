// Softmax and masked softmax cross-entropy (paper eq. 5) on the CPU.
#include <cmath>
#include <vector>

#include "csrc/ops/backends.h"

namespace hulk::ops::cpu {

void softmax(const Tensor& logits, Tensor& probs) {
  const int64_t c = logits.cols();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < logits.rows(); ++i) {
    const float* z = logits.row(i);
    float* p = probs.row(i);
    float zmax = -INFINITY;
    for (int64_t j = 0; j < c; ++j) zmax = std::max(zmax, z[j]);
    double sum = 0.0;
    for (int64_t j = 0; j < c; ++j) sum += std::exp(static_cast<double>(z[j] - zmax));
    for (int64_t j = 0; j < c; ++j) p[j] = static_cast<float>(std::exp(static_cast<double>(z[j] - zmax)) / sum);
  }
}

LossResult softmax_cross_entropy(const Tensor& logits, const int64_t* labels, const uint8_t* mask, Tensor* grad) {
  const int64_t n = logits.rows(), c = logits.cols();
  LossResult r;
  for (int64_t i = 0; i < n; ++i) r.count += (!mask || mask[i]) && labels[i] >= 0;
  const double inv_count = 1.0 / static_cast<double>(r.count);
  // Per-row terms first, summed serially after: a fixed order keeps the loss bit-for-bit
  // reproducible whatever the thread count (early stopping compares these values).
  std::vector<double> row_loss(n, 0.0);
  std::vector<uint8_t> row_correct(n, 0);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    if ((mask && !mask[i]) || labels[i] < 0) continue;
    const float* z = logits.row(i);
    int64_t arg = 0;
    for (int64_t j = 1; j < c; ++j) {
      if (z[j] > z[arg]) arg = j;
    }
    const double zmax = z[arg];
    double sum = 0.0;
    for (int64_t j = 0; j < c; ++j) sum += std::exp(z[j] - zmax);
    const double log_sum = std::log(sum) + zmax;
    row_loss[i] = log_sum - z[labels[i]];
    row_correct[i] = arg == labels[i] ? 1 : 0;
    if (grad) {
      float* g = grad->row(i);
      for (int64_t j = 0; j < c; ++j) {
        const double p = std::exp(z[j] - log_sum);
        g[j] = static_cast<float>((p - (j == labels[i] ? 1.0 : 0.0)) * inv_count);
      }
    }
  }
  double loss = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    loss += row_loss[i];
    r.correct += row_correct[i];
  }
  r.loss = loss * inv_count;
  return r;
}

}  // namespace hulk::ops::cpu
