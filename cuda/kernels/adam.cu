// One fused Adam step on CUDA (torch.optim.Adam semantics with L2 weight decay): moments
// and parameter updated in one pass. Mirrors csrc/ops/cpu/adam.cpp.
#include "cuda/runtime/compat.h"

#include "cuda/runtime/context.h"
#include "cuda/runtime/launch.h"
#include "csrc/ops/backends.h"

namespace hulk::cuda {
namespace {

__global__ void adam_kernel(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m1,
                            float* __restrict__ m2, int64_t n, float beta1, float beta2, float eps, float weight_decay,
                            float step_size, float inv_sqrt_bc2) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float gi = g[i] + weight_decay * p[i];
    m1[i] = beta1 * m1[i] + (1.0f - beta1) * gi;
    m2[i] = beta2 * m2[i] + (1.0f - beta2) * gi * gi;
    p[i] -= step_size * m1[i] / (sqrtf(m2[i]) * inv_sqrt_bc2 + eps);
  }
}

}  // namespace
}  // namespace hulk::cuda

namespace hulk::ops::cuda {

void adam_step(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamConfig& cfg, float step_size,
               float inv_sqrt_bc2) {
  hulk::cuda::launch("adam_step", hulk::cuda::adam_kernel, dim3(hulk::cuda::grid_for(param.size())),
                     dim3(hulk::cuda::kBlock), 0, hulk::cuda::current_stream(), param.data(), grad.data(), m.data(),
                     v.data(), param.size(), cfg.beta1, cfg.beta2, cfg.eps, cfg.weight_decay, step_size, inv_sqrt_bc2);
}

}  // namespace hulk::ops::cuda
