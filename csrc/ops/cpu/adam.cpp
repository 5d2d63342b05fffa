// Adam with bias correction and L2 weight decay, matching torch.optim.Adam
// (weight_decay is added to the gradient; this is not AdamW).
#include <cmath>
#include <stdexcept>

#include "../ops.h"

namespace hulk::ops {

void adam_step(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamConfig& cfg, int64_t step) {
  check_shape(grad, param.rows(), param.cols(), "adam_step: grad");
  check_shape(m, param.rows(), param.cols(), "adam_step: first moment m");
  check_shape(v, param.rows(), param.cols(), "adam_step: second moment v");
  if (step < 1) throw std::invalid_argument("adam_step: step counts from 1, got " + std::to_string(step));
  const double bc1 = 1.0 - std::pow(static_cast<double>(cfg.beta1), static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(static_cast<double>(cfg.beta2), static_cast<double>(step));
  const float step_size = static_cast<float>(cfg.lr / bc1);
  const float inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2));
  float* p = param.data();
  const float* g = grad.data();
  float* m1 = m.data();
  float* m2 = v.data();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < param.size(); ++i) {
    const float gi = g[i] + cfg.weight_decay * p[i];
    m1[i] = cfg.beta1 * m1[i] + (1.0f - cfg.beta1) * gi;
    m2[i] = cfg.beta2 * m2[i] + (1.0f - cfg.beta2) * gi * gi;
    p[i] -= step_size * m1[i] / (std::sqrt(m2[i]) * inv_sqrt_bc2 + cfg.eps);
  }
}

}  // namespace hulk::ops
