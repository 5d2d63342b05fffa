// EdgePool (paper eq. 4), composed of primitives: the same code runs on both devices.
//
// Fast path: because W is linear and the activation sits outside the sum,
//   sum_u scale_v ([h_v || h_u || e_vu] W + b)
//     = self_coef_v (h_v W_self + b) + nbr_coef_v ((A h)_v W_nbr + S_v W_edge)
// so one unweighted SpMM, one segment sum of edge features (constant across epochs)
// and one GEMM on the stacked input replace the per-edge work.
#include <stdexcept>
#include <string>

#include "csrc/ops/backends.h"

namespace hulk::ops {
namespace {

void check_edge_pool_weights(const Tensor& w, const Tensor& b, int64_t f, int64_t fe) {
  check_shape(w, 2 * f + fe, -1, "edge_pool: weight w (rows must be 2F + Fe)");
  check_shape(b, 1, w.cols(), "edge_pool: bias b");
}

void check_coefficients(const PoolCoefficients& coef, int64_t n, Device dev) {
  check_shape(coef.self_coef, n, 1, "edge_pool: self_coef");
  check_shape(coef.nbr_coef, n, 1, "edge_pool: nbr_coef");
  check_device(coef.self_coef, dev, "edge_pool: self_coef");
  check_device(coef.nbr_coef, dev, "edge_pool: nbr_coef");
}

}  // namespace

void edge_pool_forward(const Csr& a, const PoolCoefficients& coef, const Tensor& h, const Tensor& edge_sum,
                       const Tensor& w, const Tensor& b, Tensor& z, Tensor& p) {
  Tensor agg;
  edge_pool_forward(a, coef, h, edge_sum, w, b, z, p, agg);
}

void edge_pool_forward(const Csr& a, const PoolCoefficients& coef, const Tensor& h, const Tensor& edge_sum,
                       const Tensor& w, const Tensor& b, Tensor& z, Tensor& p, Tensor& agg) {
  const int64_t n = a.num_rows, f = h.cols(), fe = edge_sum.cols();
  const Device dev = common_device("edge_pool_forward", {{"h", &h}, {"edge_sum", &edge_sum}, {"w", &w}, {"b", &b}});
  check_shape(h, n, -1, "edge_pool_forward: h");
  check_shape(edge_sum, n, -1, "edge_pool_forward: edge_sum");
  check_edge_pool_weights(w, b, f, fe);
  check_coefficients(coef, n, dev);
  spmm(a, h, agg, /*weighted=*/false);  // [N, F]
  p.reset(n, 2 * f + fe, dev);
  if (n > 0) {
    if (f > 0) HULK_BACKEND(dev, put_scaled_block, h, coef.self_coef, 0, p);
    if (f > 0) HULK_BACKEND(dev, put_scaled_block, agg, coef.nbr_coef, f, p);
    if (fe > 0) HULK_BACKEND(dev, put_scaled_block, edge_sum, coef.nbr_coef, 2 * f, p);
  }
  gemm(p, false, w, false, z);  // [N, O]
  if (!z.empty()) HULK_BACKEND(dev, add_bias, z, b, &coef.self_coef);
}

void edge_pool_backward(const Csr& a_t, const PoolCoefficients& coef, const Tensor& p, const Tensor& w,
                        const Tensor& dz, int64_t f, Tensor& dw, Tensor& db, Tensor* dh) {
  const int64_t n = p.rows();
  const Device dev = common_device("edge_pool_backward", {{"p", &p}, {"w", &w}, {"dz", &dz}});
  check_shape(dz, n, w.cols(), "edge_pool_backward: dz");
  check_shape(p, n, w.rows(), "edge_pool_backward: stacked input p");
  check_coefficients(coef, n, dev);
  if (f < 0 || 2 * f > w.rows()) {
    throw std::invalid_argument("edge_pool_backward: f = " + std::to_string(f) + " does not fit w with " +
                                std::to_string(w.rows()) + " rows");
  }
  gemm(p, true, dz, false, dw);                  // [2F+Fe, O]
  bias_grad(dz, &coef.self_coef, db, false);     // [1, O]
  if (dh == nullptr) return;
  Tensor dp;
  gemm(dz, false, w, true, dp);  // [N, 2F+Fe]
  // h enters p twice: scaled in the self block, and through A in the neighbour block.
  Tensor d_nbr(n, f, dev);  // [N, F]
  if (n > 0 && f > 0) HULK_BACKEND(dev, take_scaled_block, dp, f, coef.nbr_coef, d_nbr, false);
  spmm(a_t, d_nbr, *dh, /*weighted=*/false);  // A^T (nbr_coef * dP_nbr)
  if (n > 0 && f > 0) HULK_BACKEND(dev, take_scaled_block, dp, 0, coef.self_coef, *dh, true);
}

// ---- per-edge reference path ----------------------------------------------------------

namespace {
void check_per_edge_inputs(const Csr& a, const Tensor& h, const Tensor& e, const Tensor& w) {
  check_shape(h, a.num_rows, -1, "edge_pool_per_edge: h");
  check_shape(w, 2 * h.cols() + e.cols(), -1, "edge_pool_per_edge: w (rows must be 2F + Fe)");
  if (e.cols() > 0) check_edge_ids(a, e, "edge_pool_per_edge");
}
}  // namespace

void edge_pool_forward_per_edge(const Csr& a, Pooling pooling, const Tensor& h, const Tensor& e, const Tensor& w,
                                const Tensor& b, Tensor& z) {
  const Device dev = common_device("edge_pool_forward_per_edge", {{"h", &h}, {"e", &e}, {"w", &w}, {"b", &b}});
  check_per_edge_inputs(a, h, e, w);
  check_shape(b, 1, w.cols(), "edge_pool_per_edge: b");
  const PoolCoefficients coef = pool_coefficients(a, pooling, dev);
  const Tensor* scale = pooling == Pooling::Sum ? nullptr : &coef.nbr_coef;
  // Gather every message input, transform them all with one GEMM, pool them per target.
  Tensor msg_in(a.nnz(), w.rows(), dev), msg;
  if (!msg_in.empty()) HULK_BACKEND(dev, gather_edge_inputs, a, h, e, msg_in);
  gemm(msg_in, false, w, false, msg);  // [nnz, O]
  z.reset(a.num_rows, w.cols(), dev);
  if (!z.empty() && a.nnz() > 0) HULK_BACKEND(dev, pool_edge_messages, a, msg, b, scale, z);
}

void edge_pool_backward_per_edge(const Csr& a, Pooling pooling, const Tensor& h, const Tensor& e, const Tensor& w,
                                 const Tensor& dz, Tensor& dw, Tensor& db, Tensor* dh) {
  const Device dev = common_device("edge_pool_backward_per_edge", {{"h", &h}, {"e", &e}, {"w", &w}, {"dz", &dz}});
  check_per_edge_inputs(a, h, e, w);
  check_shape(dz, a.num_rows, w.cols(), "edge_pool_per_edge: dz");
  const PoolCoefficients coef = pool_coefficients(a, pooling, dev);
  const Tensor* scale = pooling == Pooling::Sum ? nullptr : &coef.nbr_coef;
  Tensor msg_in(a.nnz(), w.rows(), dev), dmsg(a.nnz(), w.cols(), dev);
  if (!msg_in.empty()) HULK_BACKEND(dev, gather_edge_inputs, a, h, e, msg_in);
  if (!dmsg.empty()) HULK_BACKEND(dev, spread_to_edges, a, dz, scale, dmsg);
  gemm(msg_in, true, dmsg, false, dw);  // [2F+Fe, O]
  bias_grad(dmsg, nullptr, db, false);
  if (dh == nullptr) return;
  Tensor dmsg_in;
  gemm(dmsg, false, w, true, dmsg_in);  // [nnz, 2F+Fe]
  dh->reset(a.num_rows, h.cols(), dev);
  if (!dh->empty() && a.nnz() > 0) HULK_BACKEND(dev, scatter_edge_input_grads, a, dmsg_in, *dh);
}

}  // namespace hulk::ops
