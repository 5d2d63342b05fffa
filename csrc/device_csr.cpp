#include "csrc/device_csr.h"

#include "csrc/graph.h"

#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

namespace hulk {

void bin_long_rows(DeviceCsr& d, const std::function<int64_t(int64_t)>& row_length) {
  std::vector<int32_t> long_rows, long_row_chunks{0}, chunk_owner;
  for (int64_t v = 0; v < d.num_rows; ++v) {
    const int64_t len = row_length(v);
    if (len <= DeviceCsr::kLongRow) continue;
    const int64_t chunks = (len + DeviceCsr::kChunk - 1) / DeviceCsr::kChunk;
    if (static_cast<int64_t>(chunk_owner.size()) + chunks > INT32_MAX)
      throw std::invalid_argument("DeviceCsr: more than 2^31 - 1 chunks of long rows (row " + std::to_string(v) +
                                  " of " + std::to_string(len) + " entries)");
    chunk_owner.insert(chunk_owner.end(), static_cast<size_t>(chunks), static_cast<int32_t>(long_rows.size()));
    long_rows.push_back(static_cast<int32_t>(v));
    long_row_chunks.push_back(static_cast<int32_t>(chunk_owner.size()));
  }
  d.num_chunks = static_cast<int64_t>(chunk_owner.size());
  d.long_rows = DeviceArray<int32_t>::from_host(long_rows);
  d.long_row_chunks = DeviceArray<int32_t>::from_host(long_rows.empty() ? std::vector<int32_t>{} : long_row_chunks);
  d.chunk_owner = DeviceArray<int32_t>::from_host(chunk_owner);
}

std::unique_ptr<DeviceCsr> upload_csr(const Csr& a) {
  device::require_cuda();
  auto d = std::make_unique<DeviceCsr>();
  d->num_rows = a.num_rows;
  d->num_cols = a.num_cols;
  d->nnz = a.nnz();
  d->indptr = DeviceArray<int64_t>::from_host(a.indptr);
  d->indices = DeviceArray<int32_t>::from_host(a.indices);
  d->values = DeviceArray<float>::from_host(a.values);
  d->edge_ids = DeviceArray<int64_t>::from_host(a.edge_ids);
  bin_long_rows(*d, [&a](int64_t v) { return a.degree(v); });
  device::synchronize();  // once per matrix: the copy is then usable from any stream
  return d;
}

}  // namespace hulk
