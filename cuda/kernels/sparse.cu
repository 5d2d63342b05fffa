// Sparse primitives on CUDA: SpMM (CSR x dense), segment sum of edge features and EdgePool's
// pooling coefficients. Mirrors csrc/ops/cpu/sparse.cpp. Works for any shape (rows != cols).
//
// SpMM is row-split. A group of G lanes (1 to 32, the smallest power of two covering the row
// with VEC-wide loads) owns one output row; lane l handles columns l*VEC + t*G*VEC for
// t < TILES, so a group reads each source row in coalesced VEC-float (16-byte when VEC = 4)
// loads and walks the row's entries once for up to G*VEC*TILES columns (TILES <= 4: F <= 512
// in one pass when VEC = 4). VEC = 4 when F % 4 == 0 and the pointers are 16-byte aligned,
// else 1.
//
// Row caching (GE-SpMM, Huang et al., SC'20, https://arxiv.org/abs/2007.03179): the group
// loads G column indices and values of the row at once, one per lane (coalesced), and hands
// them round with __shfl_sync, instead of every lane loading every index.
//
// Skewed degrees: rows with more than DeviceCsr::kLongRow entries are skipped by the group
// kernel. They are cut into chunks of DeviceCsr::kChunk entries, one warp per chunk (balanced
// by nonzeros: a hub row spreads over many SMs), each writing a partial row; a second kernel
// adds a row's partials in chunk order. Every output element is summed in an order fixed by
// the matrix alone: no atomics, the same bits on every run.
#include "cuda/runtime/compat.h"

#include <atomic>
#include <cstdint>

#include "cuda/runtime/check.h"
#include "cuda/runtime/context.h"
#include "cuda/runtime/gpu_libs.h"
#include "cuda/runtime/launch.h"
#include "csrc/ops/backends.h"
#include "csrc/rng.h"
#include "cuda/runtime/spmm_path.h"

namespace hulk::cuda {
namespace {

constexpr int kMaxTiles = 4;  // column slots per lane in one pass over a row

// The lanes of the caller's group of `width` (a power of two dividing 32) in its warp.
__device__ __forceinline__ unsigned group_mask(int width) {
  if (width == 32) return 0xffffffffu;
  const unsigned lane = threadIdx.x % 32u;
  return ((1u << width) - 1u) << (lane & ~static_cast<unsigned>(width - 1));
}

// acc[t] += w * xrow[c0 + t*cstep .. + VEC) for the lane's column slots inside [0, f).
template <int VEC, int TILES>
__device__ __forceinline__ void add_scaled_row(float (&acc)[TILES][VEC], float w, const float* __restrict__ xrow,
                                               int64_t c0, int64_t cstep, int64_t f) {
#pragma unroll
  for (int t = 0; t < TILES; ++t) {
    const int64_t c = c0 + t * cstep;
    if (c >= f) break;
    if constexpr (VEC == 4) {
      const float4 v = __ldg(reinterpret_cast<const float4*>(xrow + c));
      acc[t][0] += w * v.x;
      acc[t][1] += w * v.y;
      acc[t][2] += w * v.z;
      acc[t][3] += w * v.w;
    } else {
      acc[t][0] += w * __ldg(xrow + c);
    }
  }
}

// acc += sum_{k0 <= k < k1} w_k x[src[k], lane's columns], walking the entries in order. The
// `width` lanes of the group (all in `mask`, all calling with the same k0, k1) load `width`
// entries at once, one each, and broadcast them with shuffles.
template <int VEC, int TILES, typename IndexT>
__device__ __forceinline__ void sum_entries(int64_t k0, int64_t k1, const IndexT* __restrict__ src,
                                            const float* __restrict__ values, const float* __restrict__ x,
                                            int64_t f, int64_t c0, int64_t cstep, int lane, int width,
                                            unsigned mask, float (&acc)[TILES][VEC]) {
  for (int64_t base = k0; base < k1; base += width) {
    const int64_t k = base + lane;
    IndexT my_src = 0;
    float my_w = 1.0f;
    if (k < k1) {
      my_src = __ldg(src + k);
      if (values) my_w = __ldg(values + k);
    }
    const int n = k1 - base < width ? static_cast<int>(k1 - base) : width;
    for (int j = 0; j < n; ++j) {
      const IndexT s = __shfl_sync(mask, my_src, j, width);
      const float w = values ? __shfl_sync(mask, my_w, j, width) : 1.0f;
      add_scaled_row<VEC, TILES>(acc, w, x + static_cast<int64_t>(s) * f, c0, cstep, f);
    }
  }
}

// Stores the lane's column slots of acc at dst[c0 + t*cstep ..].
template <int VEC, int TILES>
__device__ __forceinline__ void store_slots(const float (&acc)[TILES][VEC], float* __restrict__ dst, int64_t c0,
                                            int64_t cstep, int64_t f) {
#pragma unroll
  for (int t = 0; t < TILES; ++t) {
    const int64_t c = c0 + t * cstep;
    if (c >= f) break;
    if constexpr (VEC == 4) {
      *reinterpret_cast<float4*>(dst + c) = make_float4(acc[t][0], acc[t][1], acc[t][2], acc[t][3]);
    } else {
      dst[c] = acc[t][0];
    }
  }
}

// out[row, :] = sum_{k in row} w_k x[src[k], :], for rows up to long_row entries.
// src is the column index (SpMM) or the edge id (segment sum); values null = all ones.
template <int VEC, int TILES, typename IndexT>
__global__ void group_rows_kernel(int64_t num_rows, const int64_t* __restrict__ indptr, const IndexT* __restrict__ src,
                                  const float* __restrict__ values, const float* __restrict__ x, int64_t f,
                                  float* __restrict__ out, int group, int64_t long_row) {
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = static_cast<int>(thread % group);
  const unsigned mask = group_mask(group);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x / group;
  const int64_t cstep = static_cast<int64_t>(group) * VEC;
  for (int64_t row = thread / group; row < num_rows; row += stride) {
    const int64_t begin = indptr[row], end = indptr[row + 1];
    if (end - begin > long_row) continue;  // a long row: summed by chunks
    // Every lane of the group takes every pass (the shuffles need them all).
    for (int64_t pass = 0; pass < f; pass += cstep * TILES) {
      const int64_t c0 = pass + static_cast<int64_t>(lane) * VEC;
      float acc[TILES][VEC] = {};
      sum_entries<VEC, TILES>(begin, end, src, values, x, f, c0, cstep, lane, group, mask, acc);
      store_slots<VEC, TILES>(acc, out + row * f, c0, cstep, f);
    }
  }
}

// One warp per chunk of a long row: partial[chunk, :] = the chunk's entries' sum.
template <int VEC, int TILES, typename IndexT>
__global__ void long_chunks_kernel(int64_t num_chunks, const int32_t* __restrict__ chunk_owner,
                                   const int32_t* __restrict__ long_rows, const int32_t* __restrict__ long_row_chunks,
                                   const int64_t* __restrict__ indptr, const IndexT* __restrict__ src,
                                   const float* __restrict__ values, const float* __restrict__ x, int64_t f,
                                   int64_t chunk_len, float* __restrict__ partial) {
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = static_cast<int>(thread % 32);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x / 32;
  constexpr int64_t cstep = 32 * VEC;
  for (int64_t chunk = thread / 32; chunk < num_chunks; chunk += stride) {
    const int owner = chunk_owner[chunk];
    const int64_t row = long_rows[owner];
    const int64_t k0 = indptr[row] + (chunk - long_row_chunks[owner]) * chunk_len;
    const int64_t k1 = k0 + chunk_len < indptr[row + 1] ? k0 + chunk_len : indptr[row + 1];
    for (int64_t pass = 0; pass < f; pass += cstep * TILES) {
      const int64_t c0 = pass + static_cast<int64_t>(lane) * VEC;
      float acc[TILES][VEC] = {};
      sum_entries<VEC, TILES>(k0, k1, src, values, x, f, c0, cstep, lane, 32, 0xffffffffu, acc);
      store_slots<VEC, TILES>(acc, partial + chunk * f, c0, cstep, f);
    }
  }
}

// out[long_rows[i], c] = sum of the row's partials in chunk order, one thread per (i, c).
__global__ void combine_chunks_kernel(int64_t num_long_rows, const int32_t* __restrict__ long_rows,
                                      const int32_t* __restrict__ long_row_chunks, const float* __restrict__ partial,
                                      int64_t f, float* __restrict__ out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < num_long_rows * f; e += stride) {
    const int64_t i = e / f, c = e % f;
    float sum = 0.0f;
    for (int64_t j = long_row_chunks[i]; j < long_row_chunks[i + 1]; ++j) sum += __ldg(partial + j * f + c);
    out[static_cast<int64_t>(long_rows[i]) * f + c] = sum;
  }
}

// Column slots per lane for `lanes` VEC-slots over `group` lanes: 1, 2 or 4 (one pass up to 4).
int tiles_for(int64_t lanes, int group) {
  const int64_t per_lane = (lanes + group - 1) / group;
  return per_lane <= 1 ? 1 : per_lane <= 2 ? 2 : kMaxTiles;
}

// The group kernel over every row (long ones skipped), then the chunks of the long rows.
template <int VEC, int TILES, typename IndexT>
void launch_group_rows(const DeviceCsr& d, const IndexT* src, const float* values, const float* x, int64_t f,
                       float* out, int group) {
  launch("spmm_group_rows", group_rows_kernel<VEC, TILES, IndexT>, dim3(grid_for(d.num_rows * group)), dim3(kBlock),
         0, current_stream(), d.num_rows, d.indptr.data(), src, values, x, f, out, group, DeviceCsr::kLongRow);
}

template <int VEC, int TILES, typename IndexT>
void launch_long_chunks(const DeviceCsr& d, const IndexT* src, const float* values, const float* x, int64_t f,
                        float* partial) {
  launch("spmm_long_chunks", long_chunks_kernel<VEC, TILES, IndexT>, dim3(grid_for(d.num_chunks * 32)), dim3(kBlock),
         0, current_stream(), d.num_chunks, d.chunk_owner.data(), d.long_rows.data(), d.long_row_chunks.data(),
         d.indptr.data(), src, values, x, f, DeviceCsr::kChunk, partial);
}

template <int VEC, typename IndexT>
void launch_sums(const DeviceCsr& d, const IndexT* src, const float* values, const float* x, int64_t f, float* out,
                 int group, float* partial) {
  const int64_t lanes = (f + VEC - 1) / VEC;
  switch (tiles_for(lanes, group)) {
    case 1: launch_group_rows<VEC, 1>(d, src, values, x, f, out, group); break;
    case 2: launch_group_rows<VEC, 2>(d, src, values, x, f, out, group); break;
    default: launch_group_rows<VEC, kMaxTiles>(d, src, values, x, f, out, group); break;
  }
  if (d.num_chunks == 0) return;
  switch (tiles_for(lanes, 32)) {
    case 1: launch_long_chunks<VEC, 1>(d, src, values, x, f, partial); break;
    case 2: launch_long_chunks<VEC, 2>(d, src, values, x, f, partial); break;
    default: launch_long_chunks<VEC, kMaxTiles>(d, src, values, x, f, partial); break;
  }
}

template <typename IndexT>
void gather_sum_rows(const DeviceCsr& d, const IndexT* src, const float* values, const float* x, int64_t f,
                     float* out) {
  if (f == 0 || d.num_rows == 0) return;
  const bool vec4 = f % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0;
  const int vec = vec4 ? 4 : 1;
  const int64_t lanes = (f + vec - 1) / vec;
  int group = 1;
  while (group < 32 && group < lanes) group *= 2;
  DeviceArray<float> partial(static_cast<size_t>(d.num_chunks * f));  // [num_chunks, f]
  if (vec4) launch_sums<4>(d, src, values, x, f, out, group, partial.data());
  else launch_sums<1>(d, src, values, x, f, out, group, partial.data());
  if (d.num_chunks == 0) return;
  const int64_t num_long = static_cast<int64_t>(d.long_rows.size());
  launch("spmm_combine_chunks", combine_chunks_kernel, dim3(grid_for(num_long * f)), dim3(kBlock), 0,
         current_stream(), num_long, d.long_rows.data(), d.long_row_chunks.data(),
         static_cast<const float*>(partial.data()), f, out);
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

// Dropout of sparse features, one thread per row (feature rows are short): the CPU's decisions
// (csrc/rng.h) at the dense index r * cols + c. May run in place (in == out): no __restrict__.
__global__ void dropout_csr_kernel(int64_t num_rows, uint64_t cols, const int64_t* __restrict__ indptr,
                                   const int32_t* __restrict__ indices, const float* in, float* out, float p,
                                   uint64_t seed, uint64_t step) {
  const float scale = 1.0f / (1.0f - p);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < num_rows; r += stride) {
    for (int64_t k = indptr[r]; k < indptr[r + 1]; ++k) {
      const uint64_t index = static_cast<uint64_t>(r) * cols + static_cast<uint64_t>(indices[k]);
      out[k] = in[k] * (dropout_keep(p, seed, step, index) ? scale : 0.0f);
    }
  }
}

__global__ void gather_values_kernel(int64_t nnz, const int64_t* __restrict__ positions, const float* __restrict__ src,
                                     float* __restrict__ out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < nnz; k += stride) {
    out[k] = src[positions[k]];
  }
}

// The values of a CSR's device copy, to rewrite: DeviceCsr is shared read-only for its
// structure, but an input Dropout's CSR changes its values each step (ops.h dropout_csr). The
// cuSPARSE path's state stays valid: cusparseSpMM_preprocess serves later calls "with the same
// sparsity pattern" (cuSPARSE documentation, cusparseSpMM), and the descriptors point at these
// same arrays.
float* device_values(const Csr& a) { return const_cast<float*>(a.on_device().values.data()); }

}  // namespace

namespace {
// Process-wide, set by one thread while models run on others: atomic.
std::atomic<SpmmPath>& path_setting() {
  static std::atomic<SpmmPath> path{SpmmPath::Custom};
  return path;
}
}  // namespace

void set_spmm_path(SpmmPath path) { path_setting().store(path, std::memory_order_relaxed); }
SpmmPath spmm_path() { return path_setting().load(std::memory_order_relaxed); }
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

void dropout_csr(const Csr& x, float p, uint64_t seed, uint64_t step, Csr& out) {
  const DeviceCsr& d = x.on_device();
  float* values = hulk::cuda::device_values(out);
  hulk::cuda::launch("dropout_csr", hulk::cuda::dropout_csr_kernel, dim3(hulk::cuda::grid_for(d.num_rows)),
                     dim3(hulk::cuda::kBlock), 0, hulk::cuda::current_stream(), d.num_rows,
                     static_cast<uint64_t>(d.num_cols), d.indptr.data(), d.indices.data(), d.values.data(), values, p,
                     seed, step);
}

void gather_csr_values(const Csr& src, Csr& out) {
  const DeviceCsr& d = out.on_device();
  const float* from = src.on_device().values.data();
  hulk::cuda::launch("gather_csr_values", hulk::cuda::gather_values_kernel, dim3(hulk::cuda::grid_for(d.nnz)),
                     dim3(hulk::cuda::kBlock), 0, hulk::cuda::current_stream(), d.nnz, d.edge_ids.data(), from,
                     hulk::cuda::device_values(out));
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
