// Sparse primitives on the CPU: one output row per iteration, rows split over OpenMP
// threads. Each row is written by one thread in a fixed order, so results are
// deterministic and need no atomics.
#include "csrc/ops/backends.h"

namespace hulk::ops::cpu {

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
  if (weighted) {
    spmm_rows<true>(a, x.data(), x.cols(), out.data());
  } else {
    spmm_rows<false>(a, x.data(), x.cols(), out.data());
  }
}

void segment_sum_edges(const Csr& a, const Tensor& e, Tensor& out) {
  const int64_t fe = e.cols();
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t v = 0; v < a.num_rows; ++v) {
    float* dst = out.row(v);
    for (int64_t k = a.indptr[v]; k < a.indptr[v + 1]; ++k) {
      const float* src = e.row(a.edge_ids[k]);
      for (int64_t j = 0; j < fe; ++j) dst[j] += src[j];
    }
  }
}

void pool_coefficients(const Csr& a, Pooling pooling, Tensor& self_coef, Tensor& nbr_coef) {
  for (int64_t v = 0; v < a.num_rows; ++v) {
    const int64_t deg = a.degree(v);
    if (pooling == Pooling::Sum) {
      self_coef.data()[v] = static_cast<float>(deg);
      nbr_coef.data()[v] = 1.0f;
    } else {
      self_coef.data()[v] = deg > 0 ? 1.0f : 0.0f;
      nbr_coef.data()[v] = deg > 0 ? 1.0f / static_cast<float>(deg) : 0.0f;
    }
  }
}

}  // namespace hulk::ops::cpu
