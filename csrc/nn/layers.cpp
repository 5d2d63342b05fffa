#include "csrc/nn/layers.h"

#include <cmath>

#include "csrc/rng.h"

namespace hulk::nn {

Param glorot_param(const std::string& name, int64_t in, int64_t out, uint64_t seed, uint64_t stream) {
  Param p = zero_param(name, in, out);
  const float bound = std::sqrt(6.0f / static_cast<float>(in + out > 0 ? in + out : 1));
  for (int64_t i = 0; i < p.value.size(); ++i) {
    p.value.data()[i] = bound * (2.0f * counter_uniform(seed, stream, static_cast<uint64_t>(i)) - 1.0f);
  }
  return p;
}

uint64_t init_stream(uint64_t layer) { return stream_key(kStreamWeightInit, layer, 0); }

uint64_t dropout_stream(uint64_t layer, uint64_t step) { return stream_key(kStreamDropout, layer, step); }

Param zero_param(const std::string& name, int64_t rows, int64_t cols) {
  Param p;
  p.name = name;
  p.value.reset(rows, cols);
  p.grad.reset(rows, cols);
  p.m.reset(rows, cols);
  p.v.reset(rows, cols);
  return p;
}

// ---- the first layer's input products ------------------------------------------------------

bool sparse_input(const GraphInputs& g, const Tensor& h) {
  return g.x_sparse != nullptr && (&h == &g.x || &h == &g.x_dropped_h);
}

namespace {
// The feature CSR that a sparse input h stands for, and its transpose.
const Csr& features_of(const GraphInputs& g, const Tensor& h) {
  return &h == &g.x_dropped_h ? *g.x_dropped : *g.x_sparse;
}
const Csr& features_t_of(const GraphInputs& g, const Tensor& h) {
  return &h == &g.x_dropped_h ? *g.x_dropped_t : *g.x_sparse_t;
}
}  // namespace

void input_times(const GraphInputs& g, const Tensor& h, const Tensor& w, Tensor& out, Tensor& scratch) {
  if (!sparse_input(g, h)) {
    ops::gemm(h, false, w, false, out);
    return;
  }
  ops::spmm(features_of(g, h), w, out, /*weighted=*/true);  // (X / std) w
  if (g.x_center.empty()) return;
  ops::gemm(g.x_center, false, w, false, scratch, -1.0f);  // -(mean / std) w  [1, O]
  ops::add_bias(out, scratch);
}

void input_t_times(const GraphInputs& g, const Tensor& h, const Tensor& dout, Tensor& dw, Tensor& scratch) {
  if (!sparse_input(g, h)) {
    ops::gemm(h, true, dout, false, dw);
    return;
  }
  ops::spmm(features_t_of(g, h), dout, dw, /*weighted=*/true);  // (X / std)^T dout
  if (g.x_center.empty()) return;
  ops::bias_grad(dout, nullptr, scratch, false);                 // column sums of dout [1, O]
  ops::gemm(g.x_center, true, scratch, false, dw, -1.0f, 1.0f);  // -= (mean / std)^T sums
}

// ---- EdgePool ---------------------------------------------------------------------------

EdgePool::EdgePool(int64_t in, int64_t edge_in, int64_t out, ops::Pooling pooling, bool per_edge, uint64_t seed)
    : in_(in),
      pooling_(pooling),
      per_edge_(per_edge),
      w_(glorot_param("edge_pool.weight", 2 * in + edge_in, out, seed, init_stream(0))),
      b_(zero_param("edge_pool.bias", 1, out)) {}

const ops::PoolCoefficients& EdgePool::coef(const GraphInputs& g) const {
  return pooling_ == ops::Pooling::Sum ? g.sum_coef : g.mean_coef;
}

void EdgePool::forward(const GraphInputs& g, const Tensor& h, Tensor& out, Tensor& /*scratch*/) {
  if (per_edge_) {
    ops::edge_pool_forward_per_edge(g.graph->in(), pooling_, h, g.e, w_.value, b_.value, out);
  } else {
    ops::edge_pool_forward(g.graph->in(), coef(g), h, g.edge_sum, w_.value, b_.value, out, p_, agg_);
  }
}

void EdgePool::backward(const GraphInputs& g, const Tensor& h, const Tensor& dout, Tensor* dh, Tensor& /*scratch*/) {
  if (per_edge_) {
    ops::edge_pool_backward_per_edge(g.graph->in(), pooling_, h, g.e, w_.value, dout, w_.grad, b_.grad, dh);
  } else {
    ops::edge_pool_backward(g.graph->in_t(), coef(g), p_, w_.value, dout, in_, w_.grad, b_.grad, dh);
  }
}

// ---- GCNConv ----------------------------------------------------------------------------

GcnConv::GcnConv(int64_t in, int64_t out, bool use_edge_weights, uint64_t seed, int64_t index, uint64_t layer)
    : use_edge_weights_(use_edge_weights),
      w_(glorot_param("gcn" + std::to_string(index) + ".weight", in, out, seed, init_stream(layer))),
      b_(zero_param("gcn" + std::to_string(index) + ".bias", 1, out)) {}

void GcnConv::forward(const GraphInputs& g, const Tensor& h, Tensor& out, Tensor& scratch) {
  const Csr& a = g.graph->gcn(use_edge_weights_);
  if (transform_first(g, h)) {
    input_times(g, h, w_.value, scratch, input_scratch_);  // h W [N, out]
    ops::spmm(a, scratch, out, /*weighted=*/true);
  } else {
    ops::spmm(a, h, ah_, /*weighted=*/true);      // [N, in]
    ops::gemm(ah_, false, w_.value, false, out);  // [N, out]
  }
  ops::add_bias(out, b_.value);
}

void GcnConv::backward(const GraphInputs& g, const Tensor& h, const Tensor& dout, Tensor* dh, Tensor& scratch) {
  const Csr& a_t = g.graph->gcn_t(use_edge_weights_);
  ops::bias_grad(dout, nullptr, b_.grad, false);
  if (transform_first(g, h)) {
    ops::spmm(a_t, dout, scratch, /*weighted=*/true);        // [N, out]
    input_t_times(g, h, scratch, w_.grad, input_scratch_);   // h^T t [in, out]
    if (dh) ops::gemm(scratch, false, w_.value, true, *dh);  // [N, in]
  } else {
    ops::gemm(ah_, true, dout, false, w_.grad);  // [in, out]
    if (dh) {
      ops::gemm(dout, false, w_.value, true, scratch);  // [N, in]
      ops::spmm(a_t, scratch, *dh, /*weighted=*/true);
    }
  }
}

// ---- Linear -----------------------------------------------------------------------------

Linear::Linear(int64_t in, int64_t out, const std::string& name, uint64_t seed, uint64_t layer)
    : w_(glorot_param(name + ".weight", in, out, seed, init_stream(layer))), b_(zero_param(name + ".bias", 1, out)) {}

void Linear::forward(const GraphInputs& g, const Tensor& h, Tensor& out, Tensor& /*scratch*/) {
  input_times(g, h, w_.value, out, input_scratch_);
  ops::add_bias(out, b_.value);
}

void Linear::backward(const GraphInputs& g, const Tensor& h, const Tensor& dout, Tensor* dh, Tensor& /*scratch*/) {
  ops::bias_grad(dout, nullptr, b_.grad, false);
  input_t_times(g, h, dout, w_.grad, input_scratch_);
  if (dh) ops::gemm(dout, false, w_.value, true, *dh);
}

}  // namespace hulk::nn
