// Layers of the Hulk GNN: EdgePool (paper eq. 4), GCNConv (paper eq. 1) and Linear.
// backward is handed the same input h as the last forward (the caller keeps it alive:
// layers borrow their input, they never copy it) and whatever else it needs the layer kept
// from that forward, in buffers reused from call to call; it writes parameter gradients into
// its Params and returns the input gradient on request. N-row work space the layer does not
// keep between calls is the caller's `scratch` (the model lends one of its buffers, so
// that no layer holds an [N, width] matrix only for the duration of a call).
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "csrc/graph.h"
#include "csrc/ops/ops.h"
#include "csrc/tensor.h"

namespace hulk::nn {

struct Param {
  std::string name;
  Tensor value, grad;
  Tensor m, v;  // Adam moments
  float weight_decay = NAN;  // the layer's L2 decay; NaN = the fit's weight_decay
};

// A graph as a model sees it: features already standardised, per-graph constants cached.
struct GraphInputs {
  const Graph* graph = nullptr;
  Tensor x;                         // [N, F] standardised node features; [N, 0] when they are sparse
                                    // or borrowed
  // The graph's own dense features when the model reads them as they are (no standardising, on
  // the CPU): no per-graph copy (an arxiv-sized input is 339 MB). Null otherwise; input() picks.
  const Tensor* x_borrowed = nullptr;
  const Tensor& input() const { return x_borrowed ? *x_borrowed : x; }
  // Sparse node features (Graph::sparse_features): the CSR [N, F] and its transpose [F, N], the
  // graph's own or, when standardising, copies with each column divided by its std (owned by
  // x_scaled*). Centring would fill them in, so it stays out of the data: x_center [1, F] holds
  // mean / std and the products subtract its rank-1 term (input_times, input_t_times).
  const Csr* x_sparse = nullptr;
  const Csr* x_sparse_t = nullptr;
  std::shared_ptr<const Csr> x_scaled, x_scaled_t;
  Tensor x_center;                  // [1, F] or empty (no centring)
  // An input Dropout on sparse features (training): x_sparse's structure with its values
  // dropped out each step (x_dropped, ops::dropout_csr), and the transpose's with the same
  // values (x_dropped_t, whose edge_ids give each entry's position in x_dropped:
  // ops::gather_csr_values). Made by Model::prepare for a training pass of a stack that drops
  // its sparse input; a layer reads them when its h is x_dropped_h, the forward's [N, 0]
  // stand-in for the dropped features. On CUDA their values live in their device copies.
  std::shared_ptr<Csr> x_dropped, x_dropped_t;
  Tensor x_dropped_h;
  Tensor e;                         // [M, Fe] standardised edge features
  Tensor edge_sum;                  // [N, Fe] segment_sum_edges(graph.in(), e)
  ops::PoolCoefficients sum_coef;   // pool_coefficients(graph.in(), Sum)
  ops::PoolCoefficients mean_coef;  // pool_coefficients(graph.in(), Mean)
};

// The first layer's products with its input h [N, F] (issue 20). When h is the graph's own
// features and they are sparse (sparse_input: h is g.x, or g.x_dropped_h after an input
// Dropout), they are sparse-dense products with the feature CSR and with its transpose (or
// their dropped copies), and h itself is empty; otherwise dense GEMMs. No gradient for the
// input features: a first layer never needs one.
bool sparse_input(const GraphInputs& g, const Tensor& h);
// out [N, O] = h w, w [F, O]. scratch: [1, O], reused from call to call.
void input_times(const GraphInputs& g, const Tensor& h, const Tensor& w, Tensor& out, Tensor& scratch);
// dw [F, O] = h^T dout, dout [N, O]. scratch: [1, O], reused from call to call.
void input_t_times(const GraphInputs& g, const Tensor& h, const Tensor& dout, Tensor& dw, Tensor& scratch);

class Layer {
 public:
  virtual ~Layer() = default;
  // h [N, in] -> out [N, out]. scratch: overwritten, resized as needed, distinct from h and out.
  virtual void forward(const GraphInputs& g, const Tensor& h, Tensor& out, Tensor& scratch) = 0;
  // h: the last forward's input, unchanged; dout [N, out]; writes parameter grads; dh [N, in]
  // when non-null. scratch: overwritten, resized as needed, distinct from h, dout and dh.
  virtual void backward(const GraphInputs& g, const Tensor& h, const Tensor& dout, Tensor* dh, Tensor& scratch) = 0;
  virtual std::vector<Param*> params() = 0;
  virtual int64_t out_features() const = 0;
};

// Glorot-uniform weights [in, out] from a counter-based stream; zero bias [1, out].
Param glorot_param(const std::string& name, int64_t in, int64_t out, uint64_t seed, uint64_t stream);
// The stream of the weights of the model's layer with weights number `layer` (0 = the first).
uint64_t init_stream(uint64_t layer);
// The stream of the mask of the model's Dropout number `layer` (0 = the first) at optimiser step
// `step` (in the paper's shortcut, Dropout i follows hidden layer i).
uint64_t dropout_stream(uint64_t layer, uint64_t step);
Param zero_param(const std::string& name, int64_t rows, int64_t cols);

class EdgePool final : public Layer {
 public:
  // per_edge selects the gather-transform-scatter reference path instead of the fast one.
  // Always the model's first layer (layer 0).
  EdgePool(int64_t in, int64_t edge_in, int64_t out, ops::Pooling pooling, bool per_edge, uint64_t seed);
  void forward(const GraphInputs& g, const Tensor& h, Tensor& out, Tensor& scratch) override;
  void backward(const GraphInputs& g, const Tensor& h, const Tensor& dout, Tensor* dh, Tensor& scratch) override;
  std::vector<Param*> params() override { return {&w_, &b_}; }
  int64_t out_features() const override { return w_.value.cols(); }

 private:
  const ops::PoolCoefficients& coef(const GraphInputs& g) const;
  int64_t in_;
  ops::Pooling pooling_;
  bool per_edge_;
  Param w_, b_;   // w [2F + Fe, O], b [1, O]
  Tensor p_;      // [N, 2F + Fe] fast path: stacked input
  Tensor agg_;    // [N, F] fast path: A h (scratch)
};

class GcnConv final : public Layer {
 public:
  // The weights are named gcn<index>; `layer` is the layer's position in the model (its stream).
  GcnConv(int64_t in, int64_t out, bool use_edge_weights, uint64_t seed, int64_t index, uint64_t layer);
  void forward(const GraphInputs& g, const Tensor& h, Tensor& out, Tensor& scratch) override;
  void backward(const GraphInputs& g, const Tensor& h, const Tensor& dout, Tensor* dh, Tensor& scratch) override;
  std::vector<Param*> params() override { return {&w_, &b_}; }
  int64_t out_features() const override { return w_.value.cols(); }

 private:
  // Transform first (A (h W)) when it narrows the features, else aggregate first ((A h) W):
  // the SpMM then runs on the smaller width. Sparse input features always transform first.
  bool transform_first(const GraphInputs& g, const Tensor& h) const {
    return w_.value.cols() <= w_.value.rows() || sparse_input(g, h);
  }
  bool use_edge_weights_;
  Param w_, b_;  // w [in, out], b [1, out]
  Tensor ah_;  // aggregate first: A h [N, in], kept for the weight gradient
  // The caller's scratch holds: transform first h W [N, out] (forward), A^T dout [N, out]
  // (backward); aggregate first dout W^T [N, in] (backward).
  Tensor input_scratch_;  // [1, out]: input_times / input_t_times
};

class Linear final : public Layer {
 public:
  // The weights are named <name>.weight and <name>.bias ("classifier" for the model's last layer).
  Linear(int64_t in, int64_t out, const std::string& name, uint64_t seed, uint64_t layer);
  void forward(const GraphInputs& g, const Tensor& h, Tensor& out, Tensor& scratch) override;
  void backward(const GraphInputs& g, const Tensor& h, const Tensor& dout, Tensor* dh, Tensor& scratch) override;
  std::vector<Param*> params() override { return {&w_, &b_}; }
  int64_t out_features() const override { return w_.value.cols(); }

 private:
  Param w_, b_;
  Tensor input_scratch_;  // [1, out]: input_times / input_t_times
};

}  // namespace hulk::nn
