// The per-edge EdgePool reference on CUDA (gather, pool, spread, scatter): one message per
// CSR entry, as a non-linear message function would need. Mirrors
// csrc/ops/cpu/edge_messages.cpp. A warp owns a row and strides over the columns; rows are
// written by their own warp in entry order (deterministic), except the neighbour half of
// the input gradient, which lands on other rows and is added with float atomics: the one
// atomic of the backend, in a reference path (its sums may differ in the last bits
// between runs).
#include "cuda/runtime/compat.h"

#include "cuda/runtime/context.h"
#include "cuda/runtime/launch.h"
#include "csrc/ops/backends.h"

namespace hulk::cuda {
namespace {

// Each warp takes rows warp_id, warp_id + warps, ...
#define HULK_WARP_ROWS(row, num_rows)                                                                          \
  const int64_t warp_id_ = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;                 \
  const int lane = threadIdx.x % 32;                                                                           \
  const int64_t warps_ = static_cast<int64_t>(gridDim.x) * blockDim.x / 32;                                    \
  for (int64_t row = warp_id_; row < (num_rows); row += warps_)

__global__ void gather_kernel(int64_t rows, const int64_t* __restrict__ indptr, const int32_t* __restrict__ indices,
                              const int64_t* __restrict__ edge_ids, const float* __restrict__ h, int64_t f,
                              const float* __restrict__ e, int64_t fe, float* __restrict__ msg_in) {
  const int64_t width = 2 * f + fe;
  HULK_WARP_ROWS(v, rows) {
    for (int64_t k = indptr[v]; k < indptr[v + 1]; ++k) {
      float* msg = msg_in + k * width;
      const float* hu = h + static_cast<int64_t>(indices[k]) * f;
      for (int64_t j = lane; j < f; j += 32) {
        msg[j] = h[v * f + j];
        msg[f + j] = hu[j];
      }
      for (int64_t j = lane; j < fe; j += 32) msg[2 * f + j] = e[edge_ids[k] * fe + j];
    }
  }
}

__global__ void pool_kernel(int64_t rows, const int64_t* __restrict__ indptr, const float* __restrict__ msg,
                            const float* __restrict__ b, const float* __restrict__ row_scale, int64_t o,
                            float* __restrict__ z) {
  HULK_WARP_ROWS(v, rows) {
    const float s = row_scale ? row_scale[v] : 1.0f;
    for (int64_t j = lane; j < o; j += 32) {
      float acc = 0.0f;
      for (int64_t k = indptr[v]; k < indptr[v + 1]; ++k) acc += s * (msg[k * o + j] + b[j]);
      z[v * o + j] = acc;
    }
  }
}

__global__ void spread_kernel(int64_t rows, const int64_t* __restrict__ indptr, const float* __restrict__ dz,
                              const float* __restrict__ row_scale, int64_t o, float* __restrict__ dmsg) {
  HULK_WARP_ROWS(v, rows) {
    const float s = row_scale ? row_scale[v] : 1.0f;
    for (int64_t k = indptr[v]; k < indptr[v + 1]; ++k) {
      for (int64_t j = lane; j < o; j += 32) dmsg[k * o + j] = s * dz[v * o + j];
    }
  }
}

// dh[v] = sum over row v's entries of dmsg_in[k, :f] (each row by its own warp).
__global__ void scatter_self_kernel(int64_t rows, const int64_t* __restrict__ indptr,
                                    const float* __restrict__ dmsg_in, int64_t width, int64_t f,
                                    float* __restrict__ dh) {
  HULK_WARP_ROWS(v, rows) {
    for (int64_t j = lane; j < f; j += 32) {
      float acc = 0.0f;
      for (int64_t k = indptr[v]; k < indptr[v + 1]; ++k) acc += dmsg_in[k * width + j];
      dh[v * f + j] += acc;
    }
  }
}

// dh[u] += dmsg_in[k, f : 2f] for each entry k with source u: atomics (see the file comment).
__global__ void scatter_neighbour_kernel(int64_t rows, const int64_t* __restrict__ indptr,
                                         const int32_t* __restrict__ indices, const float* __restrict__ dmsg_in,
                                         int64_t width, int64_t f, float* __restrict__ dh) {
  HULK_WARP_ROWS(v, rows) {
    for (int64_t k = indptr[v]; k < indptr[v + 1]; ++k) {
      float* target = dh + static_cast<int64_t>(indices[k]) * f;
      for (int64_t j = lane; j < f; j += 32) atomicAdd(target + j, dmsg_in[k * width + f + j]);
    }
  }
}

unsigned warp_grid(int64_t rows) { return grid_for(rows * 32); }

}  // namespace
}  // namespace hulk::cuda

namespace hulk::ops::cuda {
using hulk::cuda::current_stream;
using hulk::cuda::kBlock;
using hulk::cuda::launch;
using hulk::cuda::warp_grid;

void gather_edge_inputs(const Csr& a, const Tensor& h, const Tensor& e, Tensor& msg_in) {
  const DeviceCsr& d = a.on_device();
  launch("gather_edge_inputs", hulk::cuda::gather_kernel, dim3(warp_grid(d.num_rows)), dim3(kBlock), 0,
         current_stream(), d.num_rows, d.indptr.data(), d.indices.data(), d.edge_ids.data(), h.data(), h.cols(),
         e.data(), e.cols(), msg_in.data());
}

void pool_edge_messages(const Csr& a, const Tensor& msg, const Tensor& b, const Tensor* row_scale, Tensor& z) {
  const DeviceCsr& d = a.on_device();
  launch("pool_edge_messages", hulk::cuda::pool_kernel, dim3(warp_grid(d.num_rows)), dim3(kBlock), 0,
         current_stream(), d.num_rows, d.indptr.data(), msg.data(), b.data(),
         row_scale ? row_scale->data() : nullptr, z.cols(), z.data());
}

void spread_to_edges(const Csr& a, const Tensor& dz, const Tensor* row_scale, Tensor& dmsg) {
  const DeviceCsr& d = a.on_device();
  launch("spread_to_edges", hulk::cuda::spread_kernel, dim3(warp_grid(d.num_rows)), dim3(kBlock), 0,
         current_stream(), d.num_rows, d.indptr.data(), dz.data(), row_scale ? row_scale->data() : nullptr, dz.cols(),
         dmsg.data());
}

void scatter_edge_input_grads(const Csr& a, const Tensor& dmsg_in, Tensor& dh) {
  const DeviceCsr& d = a.on_device();
  launch("scatter_edge_self", hulk::cuda::scatter_self_kernel, dim3(warp_grid(d.num_rows)), dim3(kBlock), 0,
         current_stream(), d.num_rows, d.indptr.data(), dmsg_in.data(), dmsg_in.cols(), dh.cols(), dh.data());
  launch("scatter_edge_neighbour", hulk::cuda::scatter_neighbour_kernel, dim3(warp_grid(d.num_rows)), dim3(kBlock), 0,
         current_stream(), d.num_rows, d.indptr.data(), d.indices.data(), dmsg_in.data(), dmsg_in.cols(), dh.cols(),
         dh.data());
}

}  // namespace hulk::ops::cuda
