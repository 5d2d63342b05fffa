// Sparse primitives on CUDA: SpMM (CSR x dense), segment sum of edge features and EdgePool's
// pooling coefficients. Mirrors csrc/ops/cpu/sparse.cpp.
//
// SpMM is row-split. A group of G lanes (1 to 32, the smallest power of two covering the row
// with VEC-wide loads) owns one output row; lane l handles columns l*VEC, l*VEC + G*VEC, ...
// so a group reads each source row in coalesced VEC-float (16-byte when VEC = 4) loads.
// VEC = 4 when F % 4 == 0 and the pointers are 16-byte aligned, else 1. Skewed degrees are
// balanced by row binning: rows with more than DeviceCsr::kLongRow entries are skipped by the
// group kernel and summed by a block of 8 warps each (long_rows_kernel). Every output element
// is summed by one thread (or, for long rows, by 8 warps whose partials are added in a fixed
// order): no atomics, deterministic results.
#include "cuda/runtime/compat.h"

#include <cstdint>

#include "cuda/runtime/check.h"
#include "cuda/runtime/context.h"
#include "cuda/runtime/gpu_libs.h"
#include "cuda/runtime/launch.h"
#include "csrc/ops/backends.h"
#include "cuda/runtime/spmm_path.h"

namespace hulk::cuda {
namespace {

// out[row, :] = sum_{k in row} w_k x[src[k], :], for rows up to kLongRow entries.
// src is the column index (SpMM) or the edge id (segment sum); values null = all ones.
template <int VEC, typename IndexT>
__global__ void group_rows_kernel(int64_t num_rows, const int64_t* __restrict__ indptr, const IndexT* __restrict__ src,
                                  const float* __restrict__ values, const float* __restrict__ x, int64_t f,
                                  float* __restrict__ out, int group, int64_t long_row) {
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = static_cast<int>(thread % group);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x / group;
  for (int64_t row = thread / group; row < num_rows; row += stride) {
    const int64_t begin = indptr[row], end = indptr[row + 1];
    if (end - begin > long_row) continue;  // long_rows_kernel sums it
    for (int64_t c = static_cast<int64_t>(lane) * VEC; c < f; c += static_cast<int64_t>(group) * VEC) {
      float acc[VEC];
      for (int t = 0; t < VEC; ++t) acc[t] = 0.0f;
      for (int64_t k = begin; k < end; ++k) {
        const float w = values ? values[k] : 1.0f;
        const float* s = x + static_cast<int64_t>(src[k]) * f + c;
        if constexpr (VEC == 4) {
          const float4 v = *reinterpret_cast<const float4*>(s);
          acc[0] += w * v.x;
          acc[1] += w * v.y;
          acc[2] += w * v.z;
          acc[3] += w * v.w;
        } else {
          acc[0] += w * s[0];
        }
      }
      float* d = out + row * f + c;
      if constexpr (VEC == 4) {
        *reinterpret_cast<float4*>(d) = make_float4(acc[0], acc[1], acc[2], acc[3]);
      } else {
        d[0] = acc[0];
      }
    }
  }
}

constexpr int kLongWarps = 8;

// One block of kLongWarps warps per long row: warp w sums the w-th slice of the row's entries
// for 32 columns at a time, the slices' partials meet in shared memory, warp 0 adds them in
// slice order.
template <typename IndexT>
__global__ void long_rows_kernel(const int32_t* __restrict__ rows, const int64_t* __restrict__ indptr,
                                 const IndexT* __restrict__ src, const float* __restrict__ values,
                                 const float* __restrict__ x, int64_t f, float* __restrict__ out) {
  __shared__ float partial[kLongWarps][32];
  const int64_t row = rows[blockIdx.x];
  const int64_t begin = indptr[row], end = indptr[row + 1];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t slice = (end - begin + kLongWarps - 1) / kLongWarps;
  const int64_t k0 = begin + warp * slice;
  const int64_t k1 = k0 + slice < end ? k0 + slice : end;
  for (int64_t c0 = 0; c0 < f; c0 += 32) {
    const int64_t c = c0 + lane;
    float acc = 0.0f;
    if (c < f) {
      for (int64_t k = k0; k < k1; ++k) acc += (values ? values[k] : 1.0f) * x[static_cast<int64_t>(src[k]) * f + c];
    }
    partial[warp][lane] = acc;
    __syncthreads();
    if (warp == 0 && c < f) {
      float sum = 0.0f;
      for (int w = 0; w < kLongWarps; ++w) sum += partial[w][lane];
      out[row * f + c] = sum;
    }
    __syncthreads();  // partial is rewritten by the next column tile
  }
}

template <typename IndexT>
void gather_sum_rows(const DeviceCsr& d, const IndexT* src, const float* values, const float* x, int64_t f,
                     float* out) {
  const bool vec4 = f % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0;
  const int vec = vec4 ? 4 : 1;
  const int64_t lanes = (f + vec - 1) / vec;
  int group = 1;
  while (group < 32 && group < lanes) group *= 2;
  const unsigned grid = grid_for(d.num_rows * group);
  if (vec4) {
    launch("spmm_group_rows<4>", group_rows_kernel<4, IndexT>, dim3(grid), dim3(kBlock), 0, current_stream(),
           d.num_rows, d.indptr.data(), src, values, x, f, out, group, DeviceCsr::kLongRow);
  } else {
    launch("spmm_group_rows<1>", group_rows_kernel<1, IndexT>, dim3(grid), dim3(kBlock), 0, current_stream(),
           d.num_rows, d.indptr.data(), src, values, x, f, out, group, DeviceCsr::kLongRow);
  }
  if (!d.long_rows.empty()) {
    launch("spmm_long_rows", long_rows_kernel<IndexT>, dim3(static_cast<unsigned>(d.long_rows.size())),
           dim3(kLongWarps * 32), 0, current_stream(), d.long_rows.data(), d.indptr.data(), src, values, x, f, out);
  }
}

__global__ void pool_coefficients_kernel(int64_t num_rows, const int64_t* __restrict__ indptr, bool mean,
                                         float* __restrict__ self_coef, float* __restrict__ nbr_coef) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; v < num_rows; v += stride) {
    const int64_t deg = indptr[v + 1] - indptr[v];
    if (mean) {
      self_coef[v] = deg > 0 ? 1.0f : 0.0f;
      nbr_coef[v] = deg > 0 ? 1.0f / static_cast<float>(deg) : 0.0f;
    } else {
      self_coef[v] = static_cast<float>(deg);
      nbr_coef[v] = 1.0f;
    }
  }
}

}  // namespace

namespace {
SpmmPath& path_setting() {
  static SpmmPath path = SpmmPath::Custom;
  return path;
}
}  // namespace

void set_spmm_path(SpmmPath path) { path_setting() = path; }
SpmmPath spmm_path() { return path_setting(); }
SpmmPath parse_spmm_path(const std::string& name) {
  if (name == "custom") return SpmmPath::Custom;
  if (name == "cusparse") return SpmmPath::Library;
  throw std::invalid_argument("spmm path must be 'custom' or 'cusparse', got '" + name + "'");
}
const char* spmm_path_name(SpmmPath path) { return path == SpmmPath::Custom ? "custom" : "cusparse"; }

}  // namespace hulk::cuda

namespace hulk::ops::cuda {

void spmm(const Csr& a, const Tensor& x, Tensor& out, bool weighted) {
  if (hulk::cuda::spmm_path() == hulk::cuda::SpmmPath::Library) {
    hulk::cuda::sparse_library_spmm(a, x, out, weighted);
    return;
  }
  const DeviceCsr& d = a.on_device();
  hulk::cuda::gather_sum_rows(d, d.indices.data(), weighted ? d.values.data() : nullptr, x.data(), x.cols(),
                              out.data());
}

void segment_sum_edges(const Csr& a, const Tensor& e, Tensor& out) {
  const DeviceCsr& d = a.on_device();
  hulk::cuda::gather_sum_rows(d, d.edge_ids.data(), static_cast<const float*>(nullptr), e.data(), e.cols(),
                              out.data());
}

void pool_coefficients(const Csr& a, Pooling pooling, Tensor& self_coef, Tensor& nbr_coef) {
  const DeviceCsr& d = a.on_device();
  hulk::cuda::launch("pool_coefficients", hulk::cuda::pool_coefficients_kernel, dim3(hulk::cuda::grid_for(d.num_rows)),
                     dim3(hulk::cuda::kBlock), 0, hulk::cuda::current_stream(), d.num_rows, d.indptr.data(),
                     pooling == Pooling::Mean, self_coef.data(), nbr_coef.data());
}

}  // namespace hulk::ops::cuda
