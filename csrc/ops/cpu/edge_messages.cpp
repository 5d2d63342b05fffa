// The per-edge EdgePool reference on the CPU (gather, pool, spread, scatter): one message
// per CSR entry. Deterministic: every output row is summed by one thread in entry order,
// except the neighbour half of the input gradient, scattered serially.
#include <algorithm>

#include "csrc/ops/backends.h"

namespace hulk::ops::cpu {

void gather_edge_inputs(const Csr& a, const Tensor& h, const Tensor& e, Tensor& msg_in) {
  const int64_t f = h.cols(), fe = e.cols();
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t v = 0; v < a.num_rows; ++v) {
    for (int64_t k = a.indptr[v]; k < a.indptr[v + 1]; ++k) {
      float* msg = msg_in.row(k);
      std::copy(h.row(v), h.row(v) + f, msg);
      std::copy(h.row(a.indices[k]), h.row(a.indices[k]) + f, msg + f);
      if (fe > 0) std::copy(e.row(a.edge_ids[k]), e.row(a.edge_ids[k]) + fe, msg + 2 * f);
    }
  }
}

void pool_edge_messages(const Csr& a, const Tensor& msg, const Tensor& b, const Tensor* row_scale, Tensor& z) {
  const int64_t o = z.cols();
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t v = 0; v < a.num_rows; ++v) {
    const float s = row_scale ? row_scale->data()[v] : 1.0f;
    float* dst = z.row(v);
    for (int64_t k = a.indptr[v]; k < a.indptr[v + 1]; ++k) {
      for (int64_t j = 0; j < o; ++j) dst[j] += s * (msg.at(k, j) + b.data()[j]);
    }
  }
}

void spread_to_edges(const Csr& a, const Tensor& dz, const Tensor* row_scale, Tensor& dmsg) {
  const int64_t o = dz.cols();
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t v = 0; v < a.num_rows; ++v) {
    const float s = row_scale ? row_scale->data()[v] : 1.0f;
    for (int64_t k = a.indptr[v]; k < a.indptr[v + 1]; ++k) {
      for (int64_t j = 0; j < o; ++j) dmsg.at(k, j) = s * dz.at(v, j);
    }
  }
}

void scatter_edge_input_grads(const Csr& a, const Tensor& dmsg_in, Tensor& dh) {
  const int64_t f = dh.cols();
  // Serial: the reference path favours obviousness over speed.
  for (int64_t v = 0; v < a.num_rows; ++v) {
    for (int64_t k = a.indptr[v]; k < a.indptr[v + 1]; ++k) {
      const float* g = dmsg_in.row(k);
      float* self = dh.row(v);
      float* nbr = dh.row(a.indices[k]);
      for (int64_t j = 0; j < f; ++j) {
        self[j] += g[j];
        nbr[j] += g[f + j];
      }
    }
  }
}

}  // namespace hulk::ops::cpu
