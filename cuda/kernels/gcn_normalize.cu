// GCN normalisation on the device, once per graph (Graph::prepare_device):
// D^-1/2 (A + I) D^-1/2 with d_v = 1 + sum of row v of the in-adjacency (weights or ones),
// the self loop inserted in column order. Built from either the in-adjacency's rows (the
// normalised matrix) or its transpose's (the normalised transpose), with the same degrees:
// entry (r, c) of weight w becomes w / sqrt(d_r d_c), computed in double as
// csrc/graph.cpp's gcn_normalize does, so the values match the CPU's bit for bit.
#include "cuda/runtime/compat.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/runtime/check.h"
#include "cuda/runtime/context.h"
#include "csrc/device_csr.h"
#include "csrc/graph.h"
#include "cuda/runtime/launch.h"

namespace hulk::cuda {
namespace {

__global__ void degree_kernel(int64_t n, const int64_t* __restrict__ indptr, const float* __restrict__ values,
                              double* __restrict__ deg) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; v < n; v += stride) {
    double d = 1.0;  // the added self loop
    for (int64_t k = indptr[v]; k < indptr[v + 1]; ++k) d += values ? static_cast<double>(values[k]) : 1.0;
    deg[v] = d;
  }
}

// Row r of the output: row r of the source with the self loop (r, r, 1) inserted before the
// first column > r; it starts at indptr[r] + r (one extra entry per earlier row).
__global__ void normalize_rows_kernel(int64_t n, const int64_t* __restrict__ indptr,
                                      const int32_t* __restrict__ indices, const float* __restrict__ values,
                                      const double* __restrict__ deg, int64_t* __restrict__ out_indptr,
                                      int32_t* __restrict__ out_indices, float* __restrict__ out_values) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < n; r += stride) {
    int64_t o = indptr[r] + r;
    out_indptr[r] = o;
    if (r == n - 1) out_indptr[n] = indptr[n] + n;
    bool self_done = false;
    for (int64_t k = indptr[r]; k < indptr[r + 1]; ++k) {
      const int64_t c = indices[k];
      if (!self_done && c > r) {
        out_indices[o] = static_cast<int32_t>(r);
        out_values[o++] = static_cast<float>(1.0 / sqrt(deg[r] * deg[r]));
        self_done = true;
      }
      const double w = values ? static_cast<double>(values[k]) : 1.0;
      out_indices[o] = static_cast<int32_t>(c);
      out_values[o++] = static_cast<float>(w / sqrt(deg[r] * deg[c]));
    }
    if (!self_done) {
      out_indices[o] = static_cast<int32_t>(r);
      out_values[o] = static_cast<float>(1.0 / sqrt(deg[r] * deg[r]));
    }
  }
}

}  // namespace
}  // namespace hulk::cuda

namespace hulk {

std::unique_ptr<DeviceCsr> gcn_normalize_on_device(const Csr& rows, const Csr& in, bool use_weights) {
  if (rows.num_rows != rows.num_cols || in.num_rows != rows.num_rows)
    throw std::invalid_argument("gcn_normalize_on_device: needs square matrices of one size");
  if (use_weights && !in.weighted())
    throw std::invalid_argument("gcn_normalize_on_device: use_weights but the graph has no edge weights");
  const int64_t n = rows.num_rows;
  const DeviceCsr& src = rows.on_device();
  const DeviceCsr& adj = in.on_device();
  DeviceArray<double> deg(static_cast<size_t>(n));
  const cudaStream_t stream = cuda::current_stream();
  cuda::launch("gcn_degree", cuda::degree_kernel, dim3(cuda::grid_for(n)), dim3(cuda::kBlock), 0, stream, n,
               adj.indptr.data(), use_weights ? adj.values.data() : nullptr, deg.data());
  // A degree <= 0 (negative weights) has no real square root: the CPU rejects it the same way.
  const std::vector<double> host_deg = deg.to_host();
  for (int64_t v = 0; v < n; ++v) {
    if (!(host_deg[v] > 0.0))
      throw std::invalid_argument("gcn_normalize: node " + std::to_string(v) + " has degree " +
                                  std::to_string(host_deg[v]) + " (1 + sum of edge weights) <= 0");
  }
  auto out = std::make_unique<DeviceCsr>();
  out->num_rows = out->num_cols = n;
  out->nnz = rows.nnz() + n;
  out->indptr = DeviceArray<int64_t>(static_cast<size_t>(n + 1));
  out->indices = DeviceArray<int32_t>(static_cast<size_t>(out->nnz));
  out->values = DeviceArray<float>(static_cast<size_t>(out->nnz));
  // The source's values are its edge weights: the transpose carries them along too.
  cuda::launch("gcn_normalize_rows", cuda::normalize_rows_kernel, dim3(cuda::grid_for(n)), dim3(cuda::kBlock), 0,
               stream, n, src.indptr.data(), src.indices.data(), use_weights ? src.values.data() : nullptr,
               static_cast<const double*>(deg.data()), out->indptr.data(), out->indices.data(), out->values.data());
  bin_long_rows(*out, [&rows](int64_t v) { return rows.degree(v) + 1; });  // + 1: the self loop
  device::synchronize();  // once per graph: the matrix is then usable from any stream
  return out;
}

}  // namespace hulk
