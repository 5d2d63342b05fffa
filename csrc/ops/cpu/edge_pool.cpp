// EdgePool (paper eq. 4) on the CPU.
//
// Fast path: because W is linear and the activation sits outside the sum,
//   sum_u scale_v ([h_v || h_u || e_vu] W + b)
//     = self_coef_v (h_v W_self + b) + nbr_coef_v ((A h)_v W_nbr + S_v W_edge)
// so one unweighted SpMM, one segment sum of edge features (constant across epochs)
// and one GEMM on the stacked input replace the per-edge work.
#include <algorithm>
#include <stdexcept>

#include "../ops.h"

namespace hulk::ops {
namespace {

void check_edge_pool_weights(const Tensor& w, const Tensor& b, int64_t f, int64_t fe) {
  check_shape(w, 2 * f + fe, -1, "edge_pool: weight w (rows must be 2F + Fe)");
  check_shape(b, 1, w.cols(), "edge_pool: bias b");
}

// Copies src [N, width] into the column block of dst starting at col0, scaling row v by coef[v].
void put_block(const Tensor& src, const std::vector<float>& coef, int64_t col0, Tensor& dst) {
  const int64_t width = src.cols();
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < src.rows(); ++v) {
    const float* s = src.row(v);
    float* d = dst.row(v) + col0;
    for (int64_t j = 0; j < width; ++j) d[j] = coef[v] * s[j];
  }
}

// Extracts the column block [col0, col0 + width) of src, scaling row v by coef[v].
Tensor take_block(const Tensor& src, int64_t col0, int64_t width, const std::vector<float>& coef) {
  Tensor out(src.rows(), width);
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < src.rows(); ++v) {
    const float* s = src.row(v) + col0;
    float* d = out.row(v);
    for (int64_t j = 0; j < width; ++j) d[j] = coef[v] * s[j];
  }
  return out;
}

}  // namespace

PoolCoefficients pool_coefficients(const Csr& a, Pooling pooling) {
  PoolCoefficients c;
  c.self_coef.resize(a.num_rows);
  c.nbr_coef.resize(a.num_rows);
  for (int64_t v = 0; v < a.num_rows; ++v) {
    const int64_t deg = a.degree(v);
    if (pooling == Pooling::Sum) {
      c.self_coef[v] = static_cast<float>(deg);
      c.nbr_coef[v] = 1.0f;
    } else {
      c.self_coef[v] = deg > 0 ? 1.0f : 0.0f;
      c.nbr_coef[v] = deg > 0 ? 1.0f / static_cast<float>(deg) : 0.0f;
    }
  }
  return c;
}

void edge_pool_forward(const Csr& a, const PoolCoefficients& coef, const Tensor& h, const Tensor& edge_sum,
                       const Tensor& w, const Tensor& b, Tensor& z, Tensor& p) {
  const int64_t n = a.num_rows, f = h.cols(), fe = edge_sum.cols();
  check_shape(h, n, -1, "edge_pool_forward: h");
  check_shape(edge_sum, n, -1, "edge_pool_forward: edge_sum");
  check_edge_pool_weights(w, b, f, fe);
  Tensor agg;
  spmm(a, h, agg, /*weighted=*/false);  // [N, F]
  p.reset(n, 2 * f + fe);
  put_block(h, coef.self_coef, 0, p);
  put_block(agg, coef.nbr_coef, f, p);
  put_block(edge_sum, coef.nbr_coef, 2 * f, p);
  gemm(p, false, w, false, z);  // [N, O]
  const int64_t o = w.cols();
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < n; ++v) {
    float* row = z.row(v);
    for (int64_t j = 0; j < o; ++j) row[j] += coef.self_coef[v] * b.data()[j];
  }
}

void edge_pool_backward(const Csr& a_t, const PoolCoefficients& coef, const Tensor& p, const Tensor& w,
                        const Tensor& dz, int64_t f, Tensor& dw, Tensor& db, Tensor* dh) {
  const int64_t n = p.rows();
  check_shape(dz, n, w.cols(), "edge_pool_backward: dz");
  check_shape(p, n, w.rows(), "edge_pool_backward: stacked input p");
  if (f < 0 || 2 * f > w.rows()) {
    throw std::invalid_argument("edge_pool_backward: f = " + std::to_string(f) + " does not fit w with " +
                                std::to_string(w.rows()) + " rows");
  }
  gemm(p, true, dz, false, dw);                     // [2F+Fe, O]
  bias_grad(dz, coef.self_coef.data(), db, false);  // [1, O]
  if (dh == nullptr) return;
  Tensor dp;
  gemm(dz, false, w, true, dp);  // [N, 2F+Fe]
  // h enters p twice: scaled in the self block, and through A in the neighbour block.
  Tensor d_nbr = take_block(dp, f, f, coef.nbr_coef);  // [N, F]
  spmm(a_t, d_nbr, *dh, /*weighted=*/false);           // A^T (nbr_coef * dP_nbr)
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < n; ++v) {
    const float* s = dp.row(v);
    float* d = dh->row(v);
    for (int64_t j = 0; j < f; ++j) d[j] += coef.self_coef[v] * s[j];
  }
}

// ---- per-edge reference path ----------------------------------------------------------

namespace {
// Message input of CSR entry k of row v: [h_v || h_u || e_vu] -> msg [2F + Fe].
void gather_message_input(const Csr& a, const Tensor& h, const Tensor& e, int64_t v, int64_t k, float* msg) {
  const int64_t f = h.cols(), fe = e.cols();
  std::copy(h.row(v), h.row(v) + f, msg);
  std::copy(h.row(a.indices[k]), h.row(a.indices[k]) + f, msg + f);
  if (fe > 0) std::copy(e.row(a.edge_ids[k]), e.row(a.edge_ids[k]) + fe, msg + 2 * f);
}

void check_per_edge_inputs(const Csr& a, const Tensor& h, const Tensor& e, const Tensor& w) {
  check_shape(h, a.num_rows, -1, "edge_pool_per_edge: h");
  check_shape(w, 2 * h.cols() + e.cols(), -1, "edge_pool_per_edge: w (rows must be 2F + Fe)");
  if (e.cols() > 0) check_edge_ids(a, e, "edge_pool_per_edge");
}
}  // namespace

void edge_pool_forward_per_edge(const Csr& a, Pooling pooling, const Tensor& h, const Tensor& e, const Tensor& w,
                                const Tensor& b, Tensor& z) {
  check_per_edge_inputs(a, h, e, w);
  check_shape(b, 1, w.cols(), "edge_pool_per_edge: b");
  const PoolCoefficients coef = pool_coefficients(a, pooling);
  const int64_t nnz = a.nnz(), width = w.rows();
  // Gather every message input, transform them all with one GEMM, scatter to targets.
  Tensor msg_in(nnz, width);
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t v = 0; v < a.num_rows; ++v) {
    for (int64_t k = a.indptr[v]; k < a.indptr[v + 1]; ++k) gather_message_input(a, h, e, v, k, msg_in.row(k));
  }
  Tensor msg;
  gemm(msg_in, false, w, false, msg);  // [nnz, O]
  const int64_t o = w.cols();
  z.reset(a.num_rows, o);
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t v = 0; v < a.num_rows; ++v) {
    const float s = pooling == Pooling::Sum ? 1.0f : coef.nbr_coef[v];
    float* dst = z.row(v);
    for (int64_t k = a.indptr[v]; k < a.indptr[v + 1]; ++k) {
      for (int64_t j = 0; j < o; ++j) dst[j] += s * (msg.at(k, j) + b.data()[j]);
    }
  }
}

void edge_pool_backward_per_edge(const Csr& a, Pooling pooling, const Tensor& h, const Tensor& e, const Tensor& w,
                                 const Tensor& dz, Tensor& dw, Tensor& db, Tensor* dh) {
  check_per_edge_inputs(a, h, e, w);
  check_shape(dz, a.num_rows, w.cols(), "edge_pool_per_edge: dz");
  const PoolCoefficients coef = pool_coefficients(a, pooling);
  const int64_t nnz = a.nnz(), width = w.rows(), o = w.cols(), f = h.cols();
  Tensor msg_in(nnz, width), dmsg(nnz, o);
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t v = 0; v < a.num_rows; ++v) {
    const float s = pooling == Pooling::Sum ? 1.0f : coef.nbr_coef[v];
    for (int64_t k = a.indptr[v]; k < a.indptr[v + 1]; ++k) {
      gather_message_input(a, h, e, v, k, msg_in.row(k));
      for (int64_t j = 0; j < o; ++j) dmsg.at(k, j) = s * dz.at(v, j);
    }
  }
  gemm(msg_in, true, dmsg, false, dw);  // [2F+Fe, O]
  bias_grad(dmsg, nullptr, db, false);
  if (dh == nullptr) return;
  Tensor dmsg_in;
  gemm(dmsg, false, w, true, dmsg_in);  // [nnz, 2F+Fe]
  dh->reset(a.num_rows, f);
  // Scatter serially: the reference path favours obviousness over speed.
  for (int64_t v = 0; v < a.num_rows; ++v) {
    for (int64_t k = a.indptr[v]; k < a.indptr[v + 1]; ++k) {
      const float* g = dmsg_in.row(k);
      float* self = dh->row(v);
      float* nbr = dh->row(a.indices[k]);
      for (int64_t j = 0; j < f; ++j) {
        self[j] += g[j];
        nbr[j] += g[f + j];
      }
    }
  }
}

}  // namespace hulk::ops
