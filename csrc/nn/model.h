// The Hulk node classifier: a stack of layers (csrc/nn/stack.h; the paper's EdgePool -> L x
// GCNConv -> Linear with ReLU and dropout between layers by default), masked softmax
// cross-entropy, Adam, full-batch training with early stopping, and a versioned weight file.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "csrc/device.h"

#include "csrc/graph.h"
#include "csrc/ops/ops.h"
#include "csrc/nn/layers.h"
#include "csrc/nn/stack.h"

namespace hulk::nn {

struct ModelConfig {
  int64_t in_features = 0;     // F
  int64_t edge_features = 0;   // Fe
  int64_t num_classes = 0;     // C
  // The layer stack. Empty: the paper's shortcut gnn_stack(hidden, edge_pool, dropout,
  // num_classes), which the Model then stores here; hidden, edge_pool and dropout are read
  // only when layers is empty.
  std::vector<LayerSpec> layers;
  // hidden[0] is the first layer's width (EdgePool, or GCNConv when edge_pool is off);
  // each further entry adds one GCNConv of that width. The classifier follows.
  std::vector<int64_t> hidden{64, 64};
  ops::Pooling pooling = ops::Pooling::Sum;  // EdgePool's
  bool edge_pool = true;
  bool per_edge_reference = false;  // EdgePool through the per-edge path (for checking)
  bool gcn_edge_weights = false;    // GCNConv uses the graph's edge weights
  bool standardize = true;          // z-score features with statistics of the first fit graph
  float dropout = 0.0f;  // after each hidden layer of the shortcut
  uint64_t seed = 0;

  std::vector<LayerSpec> stack() const;  // layers, or the shortcut's stack when layers is empty
  void validate() const;  // throws std::invalid_argument naming the field and value
};

// Per-column mean and standard deviation (a column with zero spread keeps std 1).
struct FeatureScaler {
  std::vector<float> x_mean, x_std;  // [F]
  std::vector<float> e_mean, e_std;  // [Fe]
  bool fitted() const { return !x_mean.empty() || !e_mean.empty(); }
};

struct TrainOptions {
  int64_t epochs = 200;
  float lr = 0.01f;
  float weight_decay = 5e-4f;  // for layers whose LayerSpec sets none
  int64_t patience = 0;      // stop after this many epochs without a better validation loss; 0 = never
  bool restore_best = true;  // with patience and a validation set: keep the best epoch's weights
  void validate() const;
};

struct EpochStats {
  int64_t epoch = 0;  // 1-based
  double train_loss = 0, train_acc = 0;
  double val_loss = 0, val_acc = 0;  // NaN without a validation set
  double seconds = 0;
};

class Model {
 public:
  explicit Model(ModelConfig config);
  Model(const Model&) = delete;  // layers own caches; copying a model is never needed
  Model& operator=(const Model&) = delete;
  Model(Model&&) = default;
  Model& operator=(Model&&) = default;
  const ModelConfig& config() const { return config_; }
  int64_t num_parameters() const;
  std::vector<const Param*> parameters() const;
  const FeatureScaler& scaler() const { return scaler_; }

  // Where the weights live and the model computes. to() moves every parameter and its
  // Adam state (a CUDA model gets its own stream); graphs stay on the host and put their
  // structure on the device once (Graph::prepare_device). Results come back to the host.
  Device device() const { return device_; }
  void to(Device device);

  // labels [N]: class in [0, C) or -1; masks [N] of 0/1 (empty train_mask = every labelled
  // node; empty val_mask = no validation). on_epoch, when set, sees each epoch's stats and
  // may return false to stop.
  std::vector<EpochStats> fit(const Graph& g, const std::vector<int64_t>& labels,
                              const std::vector<uint8_t>& train_mask, const std::vector<uint8_t>& val_mask,
                              const TrainOptions& opts,
                              const std::function<bool(const EpochStats&)>& on_epoch = nullptr);

  // Mini-batch training, one call per batch (a batch is usually a disjoint union of graphs,
  // batch_graphs): forward with dropout, masked cross-entropy, backward, one Adam step.
  // Returns the batch's loss and accuracy before the step. With standardize on, call
  // fit_scaler first with data representative of the whole training set (else the first
  // batch's statistics are used).
  ops::LossResult train_step(const Graph& g, const std::vector<int64_t>& labels, const std::vector<uint8_t>& mask,
                             float lr, float weight_decay);
  void fit_scaler(const Graph& g);  // z-score statistics from g (replaces earlier ones)

  Tensor logits(const Graph& g);   // [N, C], evaluation mode
  Tensor predict_proba(const Graph& g);  // [N, C]
  std::vector<int64_t> predict(const Graph& g);  // [N]

  // Loss of the current weights with every parameter's gradient written to Param::grad; no
  // optimiser step. For gradient checks. training: with the dropout masks the next optimiser
  // step would draw (a fixed function of the weights until that step), else evaluation mode.
  double compute_gradients(const Graph& g, const std::vector<int64_t>& labels, const std::vector<uint8_t>& mask,
                           bool training = false);
  std::vector<Param*> mutable_parameters();

  // Loss and accuracy of the current weights (evaluation mode) on the masked labels.
  ops::LossResult evaluate(const Graph& g, const std::vector<int64_t>& labels, const std::vector<uint8_t>& mask);

  void save(const std::string& path) const;
  static Model load(const std::string& path);

 private:
  // training: for passes that may drop out (the buffers of an input Dropout on sparse features).
  GraphInputs prepare(const Graph& g, bool training) const;
  // forward keeps pointers to `in` (its x) until the next forward: call backward with the
  // same, still living, `in`.
  void forward(const GraphInputs& in, bool training, Tensor& logits);
  void backward(const GraphInputs& in, const Tensor& dlogits, bool training);  // training: dropout was on
  void clear_buffers();
  // Forward with dropout, masked cross-entropy, backward, one Adam step (fit and train_step).
  // The loss is added to `losses`, read by the caller.
  void optimizer_step(const GraphInputs& in, const ops::LossTargets& targets, ops::LossBatch& losses,
                      const ops::AdamConfig& adam);

  // Whether stack entry i (a Dropout) drops in this pass.
  bool drops(size_t i, bool training) const { return training && config_.layers[i].rate > 0.0f; }

  ModelConfig config_;  // config_.layers is the stack, always set
  FeatureScaler scaler_;
  std::vector<std::unique_ptr<Layer>> layers_;  // per stack entry: the layer with weights, or null
  std::vector<uint64_t> dropout_index_;         // per stack entry: its ordinal among the Dropouts (its stream)
  size_t first_weights_ = 0;                    // stack entry of the first layer with weights
  // Buffers of forward and backward, reused from epoch to epoch (issue 20: no per-epoch
  // copies or allocations of N-row matrices), and as few as the stack needs: on Kipf's
  // Dropout -> GCNConv(F, H) -> ReLU -> Dropout -> GCNConv(H, C) two [N, H] matrices in all
  // (outputs_ of the first GCNConv, grads_[0]), where one per entry and per gradient was seven.
  // - A layer with weights writes its own buffer (the next layer's backward reads it as its
  //   input). ReLU and Dropout overwrite their input in place (a ReLU's backward needs only
  //   where its output is positive, which a later in-place Dropout keeps wherever the gradient
  //   is not zero), except where it is the model's input, which they never touch: then they
  //   write a buffer of their own.
  // - Gradients between layers with weights alternate between grads_[0] and grads_[1]
  //   (ReLU and Dropout again in place): the one of weight layer j's output is grads_[j % 2].
  // - Scratch: in forward, weight layer j borrows grads_[j % 2] (free until backward); in
  //   backward, its own output buffer (read by nothing once it runs). The last layer, whose
  //   output is the caller's logits, has last_scratch_.
  std::vector<Tensor> outputs_;         // per stack entry: its own output buffer, or empty (see above)
  std::vector<const Tensor*> results_;  // each entry's output in the last forward (a ReLU's backward reads it)
  std::vector<const Tensor*> inputs_;   // each entry's input in the last forward: borrowed, never copied
  std::vector<int64_t> weight_ordinal_; // per stack entry: the number of layers with weights before it
  Tensor grads_[2];
  Tensor last_scratch_;
  Tensor step_logits_, step_dlogits_;  // optimizer_step's logits and their gradient
  int64_t step_ = 0;                 // optimiser steps taken (Adam bias correction, dropout stream)
  Device device_ = Device::CPU;
  std::unique_ptr<device::Stream> stream_;  // the model's stream, when on CUDA
};

}  // namespace hulk::nn
