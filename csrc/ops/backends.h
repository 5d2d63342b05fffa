// The two backends' primitives, declared from one list (backend_ops.inc) so that the CPU
// and the CUDA implementation of an op can never drift apart in signature.
#pragma once

#include <initializer_list>
#include <utility>

#include "csrc/ops/ops.h"

namespace hulk::ops::cpu {
#include "csrc/ops/backend_ops.inc"
// spmm on host pointers (see ops::spmm_host).
void spmm_host(const Csr& a, const float* x, int64_t f, float* out, bool weighted);
}  // namespace hulk::ops::cpu

#ifdef HULK_WITH_CUDA
namespace hulk::ops::cuda {
#include "csrc/ops/backend_ops.inc"
// The loss's block sums, left on the device for LossBatch: the loss sums of at most kLossBlocks
// blocks at sums[0, kLossBlocks), their correct counts at sums[kLossBlocks, 2 kLossBlocks).
// labels: device, mask: device or null; count > 0 rows counted.
constexpr int64_t kLossBlocks = 64;
constexpr int64_t kLossSums = 2 * kLossBlocks;
void softmax_cross_entropy_sums(const Tensor& logits, const int64_t* labels, const uint8_t* mask, int64_t count,
                                Tensor* grad, double* sums);
// The result from those sums (on the host), added in block order.
LossResult loss_from_sums(const double* sums, int64_t rows, int64_t count);
}  // namespace hulk::ops::cuda
#endif

// The one place that picks a backend: runs primitive `op` on device `on_device`.
#ifdef HULK_WITH_CUDA
#define HULK_BACKEND(on_device, op, ...) \
  ((on_device) == ::hulk::Device::CPU ? ::hulk::ops::cpu::op(__VA_ARGS__) : ::hulk::ops::cuda::op(__VA_ARGS__))
#else
#define HULK_BACKEND(on_device, op, ...)                                                                       \
  ((on_device) == ::hulk::Device::CPU ? ::hulk::ops::cpu::op(__VA_ARGS__)                                       \
                                   : (::hulk::device::require_cuda(), ::hulk::ops::cpu::op(__VA_ARGS__)))
#endif

namespace hulk::ops {
// The device shared by every tensor named (null entries are skipped); throws
// std::invalid_argument naming the op and the odd tensor out when they differ.
Device common_device(const char* op, std::initializer_list<std::pair<const char*, const Tensor*>> tensors);
}  // namespace hulk::ops
