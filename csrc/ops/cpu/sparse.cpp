// Sparse aggregation on the CPU: one output row per iteration, rows split over OpenMP
// threads. Each row is written by one thread in a fixed order, so results are
// deterministic and need no atomics.
#include <algorithm>
#include <stdexcept>

#include "../ops.h"

namespace hulk::ops {

namespace {
// Row-split SpMM over raw pointers: restrict tells the compiler that out never aliases x,
// so the feature loop vectorises without a runtime overlap check.
template <bool kWeighted>
void spmm_rows(const Csr& a, const float* __restrict x, int64_t f, float* __restrict out) {
  const int64_t* indptr = a.indptr.data();
  const int32_t* indices = a.indices.data();
  const float* values = a.values.data();
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t v = 0; v < a.num_rows; ++v) {
    float* __restrict dst = out + v * f;
    for (int64_t k = indptr[v]; k < indptr[v + 1]; ++k) {
      const float* __restrict src = x + static_cast<int64_t>(indices[k]) * f;
      const float w = kWeighted ? values[k] : 1.0f;
      for (int64_t j = 0; j < f; ++j) dst[j] += w * src[j];
    }
  }
}
}  // namespace

void spmm(const Csr& a, const Tensor& x, Tensor& out, bool weighted) {
  check_shape(x, a.num_cols, -1, "spmm: dense input x");
  const int64_t f = x.cols();
  out.reset(a.num_rows, f);
  if (f == 0) return;
  if (weighted && a.weighted()) {
    spmm_rows<true>(a, x.data(), f, out.data());
  } else {
    spmm_rows<false>(a, x.data(), f, out.data());
  }
}

void check_edge_ids(const Csr& a, const Tensor& e, const char* op) {
  if (a.edge_ids.size() != static_cast<size_t>(a.nnz())) {
    throw std::invalid_argument(std::string(op) + ": the CSR carries no edge ids");
  }
  for (int64_t id : a.edge_ids) {
    if (id < 0 || id >= e.rows()) {
      throw std::invalid_argument(std::string(op) + ": edge id " + std::to_string(id) + " is out of range for " +
                                  std::to_string(e.rows()) + " edge feature rows");
    }
  }
}

void segment_sum_edges(const Csr& a, const Tensor& e, Tensor& out) {
  const int64_t fe = e.cols();
  out.reset(a.num_rows, fe);
  if (fe == 0) return;  // nothing to gather; edge ids are not needed
  check_edge_ids(a, e, "segment_sum_edges");
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t v = 0; v < a.num_rows; ++v) {
    float* dst = out.row(v);
    for (int64_t k = a.indptr[v]; k < a.indptr[v + 1]; ++k) {
      const float* src = e.row(a.edge_ids[k]);
      for (int64_t j = 0; j < fe; ++j) dst[j] += src[j];
    }
  }
}

}  // namespace hulk::ops
