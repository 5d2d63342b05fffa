// Adam with bias correction and L2 weight decay, matching torch.optim.Adam
// (weight_decay is added to the gradient; this is not AdamW).
#include <cmath>

#include "csrc/ops/backends.h"

namespace hulk::ops::cpu {

void adam_step(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamConfig& cfg, float step_size,
               float inv_sqrt_bc2) {
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

}  // namespace hulk::ops::cpu
