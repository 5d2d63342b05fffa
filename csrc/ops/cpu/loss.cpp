// Softmax and masked softmax cross-entropy (paper eq. 5) on the CPU.
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "../ops.h"

namespace hulk::ops {

void softmax(const Tensor& logits, Tensor& probs) {
  if (!probs.same_shape(logits)) probs.reset(logits.rows(), logits.cols());
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
  if (c == 0) throw std::invalid_argument("softmax_cross_entropy: logits have no classes");
  LossResult r;
  for (int64_t i = 0; i < n; ++i) {
    if (mask && !mask[i]) continue;
    if (labels[i] < -1 || labels[i] >= c) {
      throw std::invalid_argument("softmax_cross_entropy: label of node " + std::to_string(i) + " is " +
                                  std::to_string(labels[i]) + ", expected -1 (unlabelled) or a class in [0, " +
                                  std::to_string(c) + ")");
    }
    if (labels[i] >= 0) ++r.count;
  }
  if (grad) grad->reset(n, c);
  if (r.count == 0) return r;
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

}  // namespace hulk::ops
