// A CSR matrix's copy in device memory, made once per Csr (Csr::on_device) and kept
// while the Csr lives, with what the CUDA kernels need beside the arrays.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "csrc/device.h"

namespace hulk {

struct Csr;

struct DeviceCsr {
  // Rows with more entries than this are listed in long_rows and cut into chunks of kChunk
  // entries (the last one shorter), one warp each: work is balanced by nonzeros, and a hub row
  // spreads over as many SMs as it has chunks. SpMM adds a long row's chunks in chunk order
  // (deterministic). The other rows go to its (sub-)warp-per-row kernel (row binning).
  static constexpr int64_t kLongRow = 512;
  static constexpr int64_t kChunk = 512;

  int64_t num_rows = 0, num_cols = 0, nnz = 0;
  DeviceArray<int64_t> indptr;    // [num_rows + 1]
  DeviceArray<int32_t> indices;   // [nnz]
  DeviceArray<float> values;      // [nnz] or empty (all ones)
  DeviceArray<int64_t> edge_ids;  // [nnz] or empty
  DeviceArray<int32_t> long_rows;        // [L] rows with degree > kLongRow, ascending
  DeviceArray<int32_t> long_row_chunks;  // [L + 1] long row i owns chunks long_row_chunks[i] ..[i + 1] - 1
  DeviceArray<int32_t> chunk_owner;      // [num_chunks] the long row (index into long_rows) of each chunk
  int64_t num_chunks = 0;
  // State of the GPU sparse library for this matrix (cuSPARSE descriptors, the SpMM
  // buffer after cusparseSpMM_preprocess), made by the CUDA backend on first use.
  std::shared_ptr<void> library_state;
};

// Fills long_rows, long_row_chunks, chunk_owner and num_chunks from the rows' lengths.
void bin_long_rows(DeviceCsr& d, const std::function<int64_t(int64_t)>& row_length);

// Uploads a host CSR as it is (structure, values, edge ids) and bins its rows.
std::unique_ptr<DeviceCsr> upload_csr(const Csr& a);

// Built on the device by the CUDA backend (cuda/kernels/gcn_normalize.cu): D^-1/2 (A + I) D^-1/2 with
// the rows of `rows` (the in-adjacency itself, or its transpose) and the degrees
// d_v = 1 + sum of row v of `in` (weights when use_weights). Equals gcn_normalize(in) or
// its transpose, value for value.
std::unique_ptr<DeviceCsr> gcn_normalize_on_device(const Csr& rows, const Csr& in, bool use_weights);

}  // namespace hulk
