#include "csrc/device_csr.h"

#include "csrc/graph.h"

namespace hulk {

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
  std::vector<int32_t> long_rows;
  for (int64_t v = 0; v < a.num_rows; ++v) {
    if (a.degree(v) > DeviceCsr::kLongRow) long_rows.push_back(static_cast<int32_t>(v));
  }
  d->long_rows = DeviceArray<int32_t>::from_host(long_rows);
  device::synchronize();  // once per matrix: the copy is then usable from any stream
  return d;
}

}  // namespace hulk
