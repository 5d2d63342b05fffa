// Dense primitives on CUDA: GEMM through cuBLAS (gpu_libs.h), element-wise kernels,
// the bias gradient as a two-pass deterministic column reduction, and dropout with the
// CPU's counter-based hash (rng.h), so masks match the CPU bit for bit. Mirrors
// csrc/ops/cpu/dense.cpp.
#include "cuda/runtime/compat.h"

#include "cuda/runtime/context.h"
#include "cuda/runtime/gpu_libs.h"
#include "cuda/runtime/launch.h"
#include "csrc/ops/backends.h"
#include "csrc/rng.h"

namespace hulk::cuda {
namespace {

#define HULK_GRID_STRIDE(i, n)                                                                               \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);                     \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

__global__ void scale_kernel(float* __restrict__ t, int64_t n, float alpha) {
  HULK_GRID_STRIDE(i, n) t[i] *= alpha;
}

__global__ void add_bias_kernel(float* __restrict__ out, int64_t rows, int64_t cols, const float* __restrict__ bias,
                                const float* __restrict__ row_scale) {
  HULK_GRID_STRIDE(i, rows * cols) {
    const int64_t r = i / cols;
    out[i] += (row_scale ? row_scale[r] : 1.0f) * bias[i % cols];
  }
}

// Pass 1 launches one thread per (row chunk, column), about kBiasThreads in all, so that
// every thread has work at any width; chunks are capped so pass 2 stays short.
constexpr int64_t kBiasThreads = 32768;
constexpr int64_t kBiasMaxChunks = 1024;

// Pass 1: partial[chunk, j] = sum over the chunk's rows of s_i dy[i, j], in double, in row
// order. Thread t takes column t % cols of chunk t / cols: neighbours read neighbouring columns.
__global__ void bias_grad_partial_kernel(const float* __restrict__ dy, int64_t rows, int64_t cols,
                                         const float* __restrict__ row_scale, int64_t chunks, int64_t chunk_rows,
                                         double* __restrict__ partial) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= chunks * cols) return;
  const int64_t chunk = t / cols, j = t % cols;
  const int64_t r0 = chunk * chunk_rows;
  const int64_t r1 = r0 + chunk_rows < rows ? r0 + chunk_rows : rows;
  double sum = 0.0;
  for (int64_t i = r0; i < r1; ++i) sum += (row_scale ? static_cast<double>(row_scale[i]) : 1.0) * dy[i * cols + j];
  partial[t] = sum;
}

// Pass 2: db[j] += sum over chunks of partial[chunk, j], chunks in order.
__global__ void bias_grad_final_kernel(const double* __restrict__ partial, int64_t chunks, int64_t cols,
                                       float* __restrict__ db) {
  HULK_GRID_STRIDE(j, cols) {
    double sum = 0.0;
    for (int64_t c = 0; c < chunks; ++c) sum += partial[c * cols + j];
    db[j] += static_cast<float>(sum);
  }
}

// The element-wise kernels below may run in place (the model's ReLU and Dropout overwrite
// their input): no __restrict__ on their pointers.
__global__ void relu_forward_kernel(const float* x, float* y, int64_t n) {
  HULK_GRID_STRIDE(i, n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

__global__ void relu_backward_kernel(const float* __restrict__ y, const float* dy, float* dx, int64_t n) {
  HULK_GRID_STRIDE(i, n) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

__global__ void dropout_kernel(const float* in, float* out, int64_t n, float p,
                               uint64_t seed, uint64_t step) {
  const float scale = 1.0f / (1.0f - p);
  HULK_GRID_STRIDE(i, n) out[i] = dropout_keep(p, seed, step, static_cast<uint64_t>(i)) ? in[i] * scale : 0.0f;
}

// dst[v, col0 + j] = coef[v] * src[v, j]
__global__ void put_block_kernel(const float* __restrict__ src, int64_t rows, int64_t width,
                                 const float* __restrict__ coef, float* __restrict__ dst, int64_t dst_cols,
                                 int64_t col0) {
  HULK_GRID_STRIDE(i, rows * width) {
    const int64_t v = i / width, j = i % width;
    dst[v * dst_cols + col0 + j] = coef[v] * src[i];
  }
}

// dst[v, j] (+)= coef[v] * src[v, col0 + j]
__global__ void take_block_kernel(const float* __restrict__ src, int64_t src_cols, int64_t col0,
                                  const float* __restrict__ coef, float* __restrict__ dst, int64_t rows, int64_t width,
                                  bool accumulate) {
  HULK_GRID_STRIDE(i, rows * width) {
    const int64_t v = i / width, j = i % width;
    const float value = coef[v] * src[v * src_cols + col0 + j];
    dst[i] = accumulate ? dst[i] + value : value;
  }
}

}  // namespace
}  // namespace hulk::cuda

namespace hulk::ops::cuda {
using hulk::cuda::current_stream;
using hulk::cuda::grid_for;
using hulk::cuda::kBlock;
using hulk::cuda::launch;

void gemm(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b, Tensor& c, float alpha, float beta) {
  const int64_t k = trans_a ? a.rows() : a.cols();
  hulk::cuda::blas_sgemm(trans_a, trans_b, c.rows(), c.cols(), k, alpha, a.data(), a.cols() > 0 ? a.cols() : 1,
                         b.data(), b.cols() > 0 ? b.cols() : 1, beta, c.data(), c.cols());
}

void scale(Tensor& t, float alpha) {
  launch("scale", hulk::cuda::scale_kernel, dim3(grid_for(t.size())), dim3(kBlock), 0, current_stream(), t.data(),
         t.size(), alpha);
}

void add_bias(Tensor& out, const Tensor& bias, const Tensor* row_scale) {
  launch("add_bias", hulk::cuda::add_bias_kernel, dim3(grid_for(out.size())), dim3(kBlock), 0, current_stream(),
         out.data(), out.rows(), out.cols(), bias.data(), row_scale ? row_scale->data() : nullptr);
}

void bias_grad(const Tensor& dy, const Tensor* row_scale, Tensor& db) {
  const int64_t rows = dy.rows(), cols = dy.cols();
  // The chunking depends on the shape only, so the summation order is fixed.
  const int64_t target = std::min({std::max<int64_t>(1, hulk::cuda::kBiasThreads / cols),
                                   hulk::cuda::kBiasMaxChunks, rows});
  const int64_t chunk_rows = (rows + target - 1) / target;
  const int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;  // none empty
  const int64_t threads = chunks * cols;
  DeviceArray<double> partial(static_cast<size_t>(threads));
  launch("bias_grad_partial", hulk::cuda::bias_grad_partial_kernel,
         dim3(static_cast<unsigned>((threads + kBlock - 1) / kBlock)), dim3(kBlock), 0, current_stream(), dy.data(),
         rows, cols, row_scale ? row_scale->data() : nullptr, chunks, chunk_rows, partial.data());
  launch("bias_grad_final", hulk::cuda::bias_grad_final_kernel, dim3(grid_for(cols)), dim3(kBlock), 0,
         current_stream(), static_cast<const double*>(partial.data()), chunks, cols, db.data());
}

void relu_forward(const Tensor& x, Tensor& y) {
  launch("relu_forward", hulk::cuda::relu_forward_kernel, dim3(grid_for(x.size())), dim3(kBlock), 0, current_stream(),
         x.data(), y.data(), x.size());
}

void relu_backward(const Tensor& y, const Tensor& dy, Tensor& dx) {
  launch("relu_backward", hulk::cuda::relu_backward_kernel, dim3(grid_for(y.size())), dim3(kBlock), 0,
         current_stream(), y.data(), dy.data(), dx.data(), y.size());
}

void dropout(const Tensor& in, float p, uint64_t seed, uint64_t step, Tensor& out) {
  launch("dropout", hulk::cuda::dropout_kernel, dim3(grid_for(in.size())), dim3(kBlock), 0, current_stream(),
         in.data(), out.data(), in.size(), p, seed, step);
}

void put_scaled_block(const Tensor& src, const Tensor& coef, int64_t col0, Tensor& dst) {
  launch("put_scaled_block", hulk::cuda::put_block_kernel, dim3(grid_for(src.size())), dim3(kBlock), 0,
         current_stream(), src.data(), src.rows(), src.cols(), coef.data(), dst.data(), dst.cols(), col0);
}

void take_scaled_block(const Tensor& src, int64_t col0, const Tensor& coef, Tensor& dst, bool accumulate) {
  launch("take_scaled_block", hulk::cuda::take_block_kernel, dim3(grid_for(dst.size())), dim3(kBlock), 0,
         current_stream(), src.data(), src.cols(), col0, coef.data(), dst.data(), dst.rows(), dst.cols(), accumulate);
}

}  // namespace hulk::ops::cuda
