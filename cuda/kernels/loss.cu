// Softmax and masked softmax cross-entropy (paper eq. 5) on CUDA. Mirrors
// csrc/ops/cpu/loss.cpp: one thread per row computes the row's loss (in double), its
// argmax and its gradient; the loss and the correct count are then summed by a
// deterministic two-level block reduction (fixed row chunks per block, a fixed tree).
#include "cuda/runtime/compat.h"

#include <vector>

#include "cuda/runtime/context.h"
#include "cuda/runtime/launch.h"
#include "csrc/ops/backends.h"
#include "cuda/kernels/reduce.h"

namespace hulk::cuda {
namespace {

__global__ void softmax_kernel(const float* __restrict__ logits, float* __restrict__ probs, int64_t rows,
                               int64_t c) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows; i += stride) {
    const float* z = logits + i * c;
    float zmax = z[0];
    for (int64_t j = 1; j < c; ++j) zmax = fmaxf(zmax, z[j]);
    double sum = 0.0;
    for (int64_t j = 0; j < c; ++j) sum += exp(static_cast<double>(z[j] - zmax));
    for (int64_t j = 0; j < c; ++j) probs[i * c + j] = static_cast<float>(exp(static_cast<double>(z[j] - zmax)) / sum);
  }
}

// Block b handles rows [b * chunk, (b + 1) * chunk): per row the loss, argmax and gradient;
// then the block's sums of loss and correct go to sums[b] and sums[kLossBlocks + b] (a count
// below 2^53 is exact in a double; one array is one copy back).
__global__ void cross_entropy_kernel(const float* __restrict__ logits, int64_t rows, int64_t c,
                                     const int64_t* __restrict__ labels, const uint8_t* __restrict__ mask,
                                     double inv_count, float* __restrict__ grad, int64_t chunk,
                                     double* __restrict__ sums) {
  __shared__ double loss_scratch[kBlock];
  __shared__ long long correct_scratch[kBlock];
  const int64_t r0 = blockIdx.x * chunk;
  const int64_t r1 = r0 + chunk < rows ? r0 + chunk : rows;
  double loss = 0.0;
  long long correct = 0;
  for (int64_t i = r0 + threadIdx.x; i < r1; i += blockDim.x) {
    if ((mask && !mask[i]) || labels[i] < 0) continue;
    const float* z = logits + i * c;
    int64_t arg = 0;
    for (int64_t j = 1; j < c; ++j) {
      if (z[j] > z[arg]) arg = j;
    }
    const double zmax = z[arg];
    double sum = 0.0;
    for (int64_t j = 0; j < c; ++j) sum += exp(z[j] - zmax);
    const double log_sum = log(sum) + zmax;
    loss += log_sum - z[labels[i]];
    correct += arg == labels[i] ? 1 : 0;
    if (grad) {
      for (int64_t j = 0; j < c; ++j) {
        const double p = exp(z[j] - log_sum);
        grad[i * c + j] = static_cast<float>((p - (j == labels[i] ? 1.0 : 0.0)) * inv_count);
      }
    }
  }
  const double block_loss = block_sum(loss, loss_scratch);
  const long long block_correct = block_sum(correct, correct_scratch);
  if (threadIdx.x == 0) {
    sums[blockIdx.x] = block_loss;
    sums[hulk::ops::cuda::kLossBlocks + blockIdx.x] = static_cast<double>(block_correct);
  }
}

}  // namespace
}  // namespace hulk::cuda

namespace hulk::ops::cuda {
using hulk::cuda::current_stream;
using hulk::cuda::kBlock;
using hulk::cuda::launch;

void softmax(const Tensor& logits, Tensor& probs) {
  launch("softmax", hulk::cuda::softmax_kernel, dim3(hulk::cuda::grid_for(logits.rows())), dim3(kBlock), 0,
         current_stream(), logits.data(), probs.data(), logits.rows(), logits.cols());
}

void softmax_cross_entropy_sums(const Tensor& logits, const int64_t* labels, const uint8_t* mask, int64_t count,
                                Tensor* grad, double* sums) {
  const int64_t n = logits.rows(), c = logits.cols();
  const int64_t blocks = std::min<int64_t>(kLossBlocks, n);
  const int64_t chunk = (n + blocks - 1) / blocks;
  launch("softmax_cross_entropy", hulk::cuda::cross_entropy_kernel, dim3(static_cast<unsigned>(blocks)), dim3(kBlock),
         0, current_stream(), logits.data(), n, c, labels, mask, 1.0 / static_cast<double>(count),
         grad ? grad->data() : nullptr, chunk, sums);
}

LossResult loss_from_sums(const double* sums, int64_t rows, int64_t count) {
  const int64_t blocks = std::min<int64_t>(kLossBlocks, rows);
  LossResult r;
  r.count = count;
  double loss = 0.0;
  for (int64_t b = 0; b < blocks; ++b) loss += sums[b];
  for (int64_t b = 0; b < blocks; ++b) r.correct += static_cast<int64_t>(sums[kLossBlocks + b]);
  r.loss = loss / static_cast<double>(count);
  return r;
}

LossResult softmax_cross_entropy(const Tensor& logits, const int64_t* labels, const uint8_t* mask, Tensor* grad) {
  const int64_t n = logits.rows();
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += (!mask || mask[i]) && labels[i] >= 0;
  const auto d_labels = DeviceArray<int64_t>::from_host(labels, static_cast<size_t>(n));
  const auto d_mask = mask ? DeviceArray<uint8_t>::from_host(mask, static_cast<size_t>(n)) : DeviceArray<uint8_t>();
  DeviceArray<double> sums(static_cast<size_t>(kLossSums));
  softmax_cross_entropy_sums(logits, d_labels.data(), mask ? d_mask.data() : nullptr, count, grad, sums.data());
  return loss_from_sums(sums.to_host().data(), n, count);
}

}  // namespace hulk::ops::cuda
