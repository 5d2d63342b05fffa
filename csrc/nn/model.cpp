#include "csrc/nn/model.h"

#include <chrono>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <memory>
#include <numeric>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>

namespace hulk::nn {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

void fit_columns(const Tensor& t, std::vector<float>& mean, std::vector<float>& std_dev) {
  const int64_t n = t.rows(), c = t.cols();
  mean.assign(c, 0.0f);
  std_dev.assign(c, 1.0f);
  if (n == 0) return;
  for (int64_t j = 0; j < c; ++j) {
    double s = 0.0, s2 = 0.0;
    for (int64_t i = 0; i < n; ++i) s += t.at(i, j);
    const double mu = s / n;
    for (int64_t i = 0; i < n; ++i) s2 += (t.at(i, j) - mu) * (t.at(i, j) - mu);
    const double sd = std::sqrt(s2 / n);
    mean[j] = static_cast<float>(mu);
    // A constant column carries no information; std 1 maps it to zero without blowing up.
    std_dev[j] = sd > 1e-12 * (1.0 + std::fabs(mu)) ? static_cast<float>(sd) : 1.0f;
  }
}

// fit_columns for sparse features x [N, F]: the same statistics, the zeros counted without
// filling them in (two passes as there: the mean, then the squared deviations). An entry
// repeated within a row means the sum of its values, as in scipy.
void fit_sparse_columns(const Csr& x, std::vector<float>& mean, std::vector<float>& std_dev) {
  const int64_t n = x.num_rows, c = x.num_cols;
  mean.assign(c, 0.0f);
  std_dev.assign(c, 1.0f);
  if (n == 0) return;
  std::vector<double> mu(c, 0.0), s2(c, 0.0), value(c, 0.0);
  std::vector<int64_t> stored(c, 0), last_row(c, -1);  // rows with an entry in column j
  std::vector<int32_t> touched;
  for (int64_t k = 0; k < x.nnz(); ++k) mu[x.indices[k]] += x.values[k];
  for (int64_t j = 0; j < c; ++j) mu[j] /= n;
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t k = x.indptr[r]; k < x.indptr[r + 1]; ++k) {
      const int32_t j = x.indices[k];
      if (last_row[j] != r) {
        last_row[j] = r;
        value[j] = 0.0;
        touched.push_back(j);
      }
      value[j] += x.values[k];
    }
    for (int32_t j : touched) {
      s2[j] += (value[j] - mu[j]) * (value[j] - mu[j]);
      ++stored[j];
    }
    touched.clear();
  }
  for (int64_t j = 0; j < c; ++j) {
    const double sd = std::sqrt((s2[j] + static_cast<double>(n - stored[j]) * mu[j] * mu[j]) / n);  // + the zeros
    mean[j] = static_cast<float>(mu[j]);
    std_dev[j] = sd > 1e-12 * (1.0 + std::fabs(mu[j])) ? static_cast<float>(sd) : 1.0f;
  }
}

// The model's view of sparse node features: the graph's CSR as it is, or, with a fitted scaler,
// copies with column j divided by std_j and the centring term mean / std kept apart [1, F] (a
// centred matrix would be dense). Equals apply_columns on the dense features, in exact arithmetic.
void prepare_sparse_features(const Graph& g, const FeatureScaler& scaler, Device device, GraphInputs& in) {
  in.x = Tensor(g.num_nodes(), 0, device);
  if (scaler.x_mean.empty()) {
    in.x_sparse = &g.x_sparse();
    in.x_sparse_t = &g.x_sparse_t();
    return;
  }
  auto scaled = std::make_shared<Csr>(g.x_sparse());  // a copy starts without a device copy
  for (int64_t k = 0; k < scaled->nnz(); ++k) scaled->values[k] /= scaler.x_std[scaled->indices[k]];
  in.x_scaled = scaled;
  in.x_scaled_t = std::make_shared<const Csr>(transpose(*scaled));
  in.x_sparse = in.x_scaled.get();
  in.x_sparse_t = in.x_scaled_t.get();
  Tensor center(1, g.num_node_features());
  for (int64_t j = 0; j < center.cols(); ++j) center.data()[j] = scaler.x_mean[j] / scaler.x_std[j];
  in.x_center = center.to(device);
}

// The buffers of an input Dropout on sparse features (GraphInputs::x_dropped): a copy of the
// CSR whose values each step rewrites, and its transpose, whose edge ids are the position map
// from its entries to the CSR's (built once, by transposing the entries' own positions).
void prepare_sparse_dropout(Device device, GraphInputs& in) {
  auto dropped = std::make_shared<Csr>(*in.x_sparse);
  dropped->edge_ids.resize(dropped->nnz());
  std::iota(dropped->edge_ids.begin(), dropped->edge_ids.end(), int64_t{0});
  in.x_dropped_t = std::make_shared<Csr>(transpose(*dropped));
  dropped->edge_ids = std::vector<int64_t>();
  in.x_dropped = std::move(dropped);
  in.x_dropped_h = Tensor(in.x.rows(), 0, device);
}

Tensor apply_columns(const Tensor& t, const std::vector<float>& mean, const std::vector<float>& std_dev) {
  Tensor out = t;
  if (mean.empty()) return out;
  for (int64_t i = 0; i < t.rows(); ++i) {
    float* row = out.row(i);
    for (int64_t j = 0; j < t.cols(); ++j) row[j] = (row[j] - mean[j]) / std_dev[j];
  }
  return out;
}

// t on `device`, moved rather than copied when it is already there (Tensor::to copies).
Tensor moved_to(Tensor&& t, Device device) { return t.device() == device ? std::move(t) : t.to(device); }

// Makes a CUDA model's stream current for the scope and waits for it at the end (nothing for
// a CPU model). Every public call thus finishes its device work before it returns: the
// model's tensors may then be read or freed from any stream, and its time is its own.
class StreamScope {
 public:
  explicit StreamScope(const std::unique_ptr<device::Stream>& stream) : unwinding_(std::uncaught_exceptions()) {
    if (stream) guard_.emplace(*stream);
  }
  // May throw a CUDA error; not while an exception is already on its way out.
  ~StreamScope() noexcept(false) {
    if (guard_ && std::uncaught_exceptions() == unwinding_) device::synchronize();
  }
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  int unwinding_;
  std::optional<device::StreamGuard> guard_;
};

int64_t count_set(const std::vector<uint8_t>& mask, const std::vector<int64_t>& labels) {
  int64_t n = 0;
  for (size_t i = 0; i < labels.size(); ++i) n += (mask.empty() || mask[i]) && labels[i] >= 0;
  return n;
}

// labels [N] in [-1, num_classes); each named mask empty or [N].
void check_targets(const Graph& g, const std::vector<int64_t>& labels, int64_t num_classes,
                   std::initializer_list<std::pair<const char*, const std::vector<uint8_t>*>> masks) {
  const auto n = static_cast<size_t>(g.num_nodes());
  require(labels.size() == n, "labels: expected " + std::to_string(n) + " entries (one per node), got " +
                                  std::to_string(labels.size()));
  for (const auto& [name, mask] : masks)
    require(mask->empty() || mask->size() == n,
            std::string(name) + ": expected " + std::to_string(n) + " entries, got " + std::to_string(mask->size()));
  for (size_t i = 0; i < n; ++i)
    require(labels[i] >= -1 && labels[i] < num_classes,
            "labels[" + std::to_string(i) + "] = " + std::to_string(labels[i]) + " is outside [-1, num_classes = " +
                std::to_string(num_classes) + ")");
}

}  // namespace

std::vector<LayerSpec> ModelConfig::stack() const {
  return layers.empty() ? gnn_stack(hidden, edge_pool, dropout, num_classes) : layers;
}

void ModelConfig::validate() const {
  require(in_features >= 0, "in_features must be >= 0, got " + std::to_string(in_features));
  require(edge_features >= 0, "edge_features must be >= 0, got " + std::to_string(edge_features));
  require(num_classes >= 2, "num_classes must be >= 2, got " + std::to_string(num_classes));
  if (layers.empty()) {  // the shortcut's own fields, named as the user gave them
    require(!hidden.empty(), "hidden must list at least one layer width");
    for (size_t i = 0; i < hidden.size(); ++i) {
      require(hidden[i] > 0, "hidden[" + std::to_string(i) + "] must be > 0, got " + std::to_string(hidden[i]));
    }
    require(dropout >= 0.0f && dropout < 1.0f, "dropout must be in [0, 1), got " + std::to_string(dropout));
  }
  const std::vector<LayerSpec> s = stack();
  validate_stack(s, num_classes);
  require(!per_edge_reference || s[first_weight_layer(s)].kind == LayerKind::EdgePool,
          "per_edge_reference needs an EdgePool layer");
}

void TrainOptions::validate() const {
  require(epochs >= 1, "epochs must be >= 1, got " + std::to_string(epochs));
  require(std::isfinite(lr) && lr > 0.0f, "lr must be a positive number, got " + std::to_string(lr));
  require(std::isfinite(weight_decay) && weight_decay >= 0.0f,
          "weight_decay must be >= 0, got " + std::to_string(weight_decay));
  require(patience >= 0, "patience must be >= 0, got " + std::to_string(patience));
}

Model::Model(ModelConfig config) : config_(std::move(config)) {
  config_.validate();
  config_.layers = config_.stack();
  const std::vector<LayerSpec>& stack = config_.layers;
  first_weights_ = first_weight_layer(stack);
  int64_t width = config_.in_features;  // the input width of the next layer
  uint64_t weight_layers = 0, dropouts = 0;
  int64_t gcn = 0, linear = 0;  // GCN layers are named gcn1, gcn2, ...; Linear ones linear1, ... but the last
  for (size_t i = 0; i < stack.size(); ++i) {
    const LayerSpec& spec = stack[i];
    std::unique_ptr<Layer> layer;
    switch (spec.kind) {
      case LayerKind::EdgePool:
        layer = std::make_unique<EdgePool>(width, config_.edge_features, spec.width, config_.pooling,
                                           config_.per_edge_reference, config_.seed);
        break;
      case LayerKind::GcnConv:
        layer = std::make_unique<GcnConv>(width, spec.width, config_.gcn_edge_weights, config_.seed, ++gcn,
                                          weight_layers);
        break;
      case LayerKind::Linear:
        layer = std::make_unique<Linear>(width, spec.width,
                                         i + 1 == stack.size() ? "classifier" : "linear" + std::to_string(++linear),
                                         config_.seed, weight_layers);
        break;
      case LayerKind::ReLU:
      case LayerKind::Dropout:
        break;
    }
    dropout_index_.push_back(spec.kind == LayerKind::Dropout ? dropouts++ : 0);
    weight_ordinal_.push_back(static_cast<int64_t>(weight_layers));
    if (layer) {
      for (Param* p : layer->params()) p->weight_decay = spec.weight_decay;
      width = spec.width;
      ++weight_layers;
    }
    layers_.push_back(std::move(layer));
  }
}

void Model::to(Device device) {
  if (device == device_) return;
  if (device == Device::CUDA) {
    device::require_cuda();
    if (!stream_) stream_ = std::make_unique<device::Stream>();
  }
  {
    const StreamScope scope(stream_);
    for (Param* p : mutable_parameters()) {
      for (Tensor* t : {&p->value, &p->grad, &p->m, &p->v}) *t = t->to(device);
    }
    clear_buffers();  // caches of the last forward and backward, on the old device
  }
  device_ = device;
}

std::vector<const Param*> Model::parameters() const {
  std::vector<const Param*> out;
  for (const auto& layer : layers_) {
    if (!layer) continue;
    for (const Param* p : layer->params()) out.push_back(p);
  }
  return out;
}

std::vector<Param*> Model::mutable_parameters() {
  std::vector<Param*> out;
  for (const auto& layer : layers_) {
    if (!layer) continue;
    for (Param* p : layer->params()) out.push_back(p);
  }
  return out;
}

int64_t Model::num_parameters() const {
  int64_t n = 0;
  for (const Param* p : parameters()) n += p->value.size();
  return n;
}

GraphInputs Model::prepare(const Graph& g, bool training) const {
  require(g.num_node_features() == config_.in_features, "graph has " + std::to_string(g.num_node_features()) +
                                                   " node features but the model expects " +
                                                   std::to_string(config_.in_features));
  require(g.e().cols() == config_.edge_features, "graph has " + std::to_string(g.e().cols()) +
                                                     " edge features but the model expects " +
                                                     std::to_string(config_.edge_features));
  require(!config_.gcn_edge_weights || !g.weights().empty(),
          "the model uses edge weights in GCNConv (gcn_edge_weights) but the graph has none");
  const std::vector<LayerSpec>& stack = config_.layers;
  bool drops_input = false;  // an input Dropout drops in training passes
  for (size_t i = 0; i < first_weights_; ++i) drops_input |= drops(i, training);
  if (g.sparse_features()) {
    require(stack[first_weights_].kind != LayerKind::EdgePool,
            "the graph has sparse node features, which an EdgePool first layer cannot take (its input "
            "[h_v || h_u || e_vu] is dense); build the model with a GCNConv or Linear first layer "
            "(hulk.GNN: edge_pool=False)");
    for (size_t i = 0; i < first_weights_; ++i) {
      require(stack[i].kind == LayerKind::Dropout,
              "the graph has sparse node features, which layers[" + std::to_string(i) + "] (" +
                  layer_kind_name(stack[i].kind) + ") before the first layer with weights cannot take (only "
                  "Dropout works on them); remove it, or pass the features dense");
    }
    // Centring is kept out of the sparse data (x_center): a centred matrix with dropped entries
    // would be dense.
    require(!drops_input || scaler_.x_mean.empty(),
            "the graph has sparse node features and layers[0] (dropout) drops them, but the model "
            "standardises its features (standardize=True), and centred features with dropped entries are "
            "dense: build it with standardize=False (hulk.normalize_rows gives Kipf and Welling's row "
            "normalisation), or pass the features dense");
  }
  if (device_ == Device::CUDA) g.prepare_device();
  GraphInputs in;
  in.graph = &g;
  if (g.sparse_features()) {
    prepare_sparse_features(g, scaler_, device_, in);
    if (drops_input) prepare_sparse_dropout(device_, in);
  } else if (device_ == Device::CPU && scaler_.x_mean.empty()) {
    in.x = Tensor(g.num_nodes(), 0);
    in.x_borrowed = &g.x();
  } else {
    in.x = moved_to(apply_columns(g.x(), scaler_.x_mean, scaler_.x_std), device_);
  }
  in.e = moved_to(apply_columns(g.e(), scaler_.e_mean, scaler_.e_std), device_);
  ops::segment_sum_edges(g.in(), in.e, in.edge_sum);
  in.sum_coef = ops::pool_coefficients(g.in(), ops::Pooling::Sum, device_);
  in.mean_coef = ops::pool_coefficients(g.in(), ops::Pooling::Mean, device_);
  return in;
}

void Model::clear_buffers() {
  outputs_.clear();
  results_.clear();
  inputs_.clear();
  for (Tensor& g : grads_) g = Tensor();
  last_scratch_ = Tensor();
  step_logits_ = Tensor();
  step_dlogits_ = Tensor();
}

void Model::forward(const GraphInputs& in, bool training, Tensor& logits) {
  const std::vector<LayerSpec>& stack = config_.layers;
  outputs_.resize(stack.size());
  inputs_.assign(stack.size(), nullptr);
  results_.assign(stack.size(), nullptr);
  const Tensor* h = &in.input();  // borrowed: the input is read in place, never copied
  Tensor* own = nullptr;          // h when it is a model buffer ReLU and Dropout may overwrite
  for (size_t i = 0; i < stack.size(); ++i) {
    inputs_[i] = h;
    const bool last = i + 1 == stack.size();  // the last entry has weights
    switch (stack[i].kind) {
      case LayerKind::ReLU:
      case LayerKind::Dropout: {
        if (stack[i].kind == LayerKind::Dropout && !drops(i, training)) continue;  // the identity
        if (sparse_input(in, *h)) {  // an input Dropout on sparse features: on the CSR's values
          const Csr& from = h == &in.x ? *in.x_sparse : *in.x_dropped;
          ops::dropout_csr(from, stack[i].rate, config_.seed, dropout_stream(dropout_index_[i], step_), device_,
                           *in.x_dropped);
          ops::gather_csr_values(*in.x_dropped, device_, *in.x_dropped_t);
          h = &in.x_dropped_h;
          results_[i] = h;
          continue;
        }
        Tensor& out = own ? *own : outputs_[i];
        if (stack[i].kind == LayerKind::ReLU) {
          ops::relu_forward(*h, out);
        } else {
          ops::dropout_forward(*h, stack[i].rate, config_.seed, dropout_stream(dropout_index_[i], step_), out);
        }
        own = &out;
        break;
      }
      default: {
        Tensor& out = last ? logits : outputs_[i];
        layers_[i]->forward(in, *h, out, last ? last_scratch_ : grads_[weight_ordinal_[i] % 2]);
        own = last ? nullptr : &out;
      }
    }
    h = own ? own : &logits;
    results_[i] = h;
  }
}

void Model::backward(const GraphInputs& in, const Tensor& dlogits, bool training) {
  const std::vector<LayerSpec>& stack = config_.layers;
  const Tensor* dz = &dlogits;  // gradient of entry i's output
  // Entries before the first layer with weights (input dropouts) need no gradient. Below the
  // last layer every gradient is one of grads_, which ReLU and Dropout overwrite in place: the
  // gradient of entry i's input is grads_[(j + 1) % 2], j = the weight layers before entry i.
  for (size_t i = stack.size(); i-- > first_weights_;) {
    switch (stack[i].kind) {
      case LayerKind::ReLU: {
        Tensor& dh = grads_[(weight_ordinal_[i] + 1) % 2];  // *dz itself
        ops::relu_backward(*results_[i], *dz, dh);  // where the ReLU's output is positive
        dz = &dh;
        break;
      }
      case LayerKind::Dropout: {
        if (!drops(i, training)) continue;
        Tensor& dh = grads_[(weight_ordinal_[i] + 1) % 2];  // *dz itself
        ops::dropout_backward(*dz, stack[i].rate, config_.seed, dropout_stream(dropout_index_[i], step_), dh);
        dz = &dh;
        break;
      }
      default: {
        const bool last = i + 1 == stack.size();
        Tensor* dh = i > first_weights_ ? &grads_[(weight_ordinal_[i] + 1) % 2] : nullptr;
        layers_[i]->backward(in, *inputs_[i], *dz, dh, last ? last_scratch_ : outputs_[i]);
        dz = dh;
      }
    }
  }
}

std::vector<EpochStats> Model::fit(const Graph& g, const std::vector<int64_t>& labels,
                                   const std::vector<uint8_t>& train_mask, const std::vector<uint8_t>& val_mask,
                                   const TrainOptions& opts,
                                   const std::function<bool(const EpochStats&)>& on_epoch) {
  opts.validate();
  check_targets(g, labels, config_.num_classes, {{"train_mask", &train_mask}, {"val_mask", &val_mask}});
  require(count_set(train_mask, labels) > 0, "no labelled node in the training mask");
  const bool has_val = !val_mask.empty() && count_set(val_mask, labels) > 0;

  if (config_.standardize && !scaler_.fitted()) fit_scaler(g);
  const StreamScope scope(stream_);
  const GraphInputs in = prepare(g, /*training=*/true);
  // Targets on the device once per fit; each epoch's losses come back in one copy.
  const int64_t n = g.num_nodes(), classes = config_.num_classes;
  const ops::LossTargets train_t =
      ops::make_loss_targets(labels.data(), train_mask.empty() ? nullptr : train_mask.data(), n, classes, device_);
  const ops::LossTargets val_t =
      has_val ? ops::make_loss_targets(labels.data(), val_mask.data(), n, classes, device_) : ops::LossTargets();
  ops::LossBatch losses(device_, 3);
  ops::AdamConfig adam;
  adam.lr = opts.lr;
  adam.weight_decay = opts.weight_decay;

  std::vector<EpochStats> history;
  std::vector<Tensor> best_weights;
  double best_val = std::numeric_limits<double>::infinity();
  int64_t since_best = 0;
  Tensor& logits = step_logits_;  // the step's loss is taken: its logits are free
  for (int64_t epoch = 1; epoch <= opts.epochs; ++epoch) {
    const auto t0 = std::chrono::steady_clock::now();
    optimizer_step(in, train_t, losses, adam);
    // Accuracies and validation loss of the updated weights, without dropout.
    forward(in, /*training=*/false, logits);
    losses.add(logits, train_t, nullptr);
    if (has_val) losses.add(logits, val_t, nullptr);
    const std::vector<ops::LossResult> got = losses.read();
    const ops::LossResult& train = got[0];
    const ops::LossResult& train_eval = got[1];
    EpochStats s;
    s.epoch = epoch;
    s.train_loss = train.loss;
    s.train_acc = static_cast<double>(train_eval.correct) / train_eval.count;
    s.val_loss = s.val_acc = std::numeric_limits<double>::quiet_NaN();
    if (has_val) {
      const ops::LossResult& val = got[2];
      s.val_loss = val.loss;
      s.val_acc = static_cast<double>(val.correct) / val.count;
    }
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    history.push_back(s);
    if (!std::isfinite(train.loss)) {
      throw std::runtime_error("training diverged: loss is " + std::to_string(train.loss) + " at epoch " +
                               std::to_string(epoch) + " (try a smaller lr)");
    }
    bool stop = on_epoch && !on_epoch(s);
    if (has_val && opts.patience > 0) {
      if (s.val_loss < best_val) {
        best_val = s.val_loss;
        since_best = 0;
        if (opts.restore_best) {
          best_weights.clear();
          for (const Param* p : parameters()) best_weights.push_back(p->value);
        }
      } else if (++since_best >= opts.patience) {
        stop = true;
      }
    }
    if (stop) break;
  }
  if (!best_weights.empty()) {
    size_t k = 0;
    for (Param* p : mutable_parameters()) p->value = best_weights[k++];
  }
  return history;
}

void Model::fit_scaler(const Graph& g) {
  require(config_.standardize, "fit_scaler: this model was built with standardize = false");
  if (g.sparse_features()) {
    fit_sparse_columns(g.x_sparse(), scaler_.x_mean, scaler_.x_std);
  } else {
    fit_columns(g.x(), scaler_.x_mean, scaler_.x_std);
  }
  fit_columns(g.e(), scaler_.e_mean, scaler_.e_std);
}

ops::LossResult Model::train_step(const Graph& g, const std::vector<int64_t>& labels, const std::vector<uint8_t>& mask,
                                  float lr, float weight_decay) {
  TrainOptions o;
  o.epochs = 1;
  o.lr = lr;
  o.weight_decay = weight_decay;
  o.validate();
  check_targets(g, labels, config_.num_classes, {{"mask", &mask}});
  require(count_set(mask, labels) > 0, "no labelled node in the mask");
  if (config_.standardize && !scaler_.fitted()) fit_scaler(g);
  ops::AdamConfig adam;
  adam.lr = lr;
  adam.weight_decay = weight_decay;
  const StreamScope scope(stream_);
  const GraphInputs in = prepare(g, /*training=*/true);
  ops::LossBatch losses(device_, 1);
  optimizer_step(in, ops::make_loss_targets(labels.data(), mask.empty() ? nullptr : mask.data(), g.num_nodes(),
                                            config_.num_classes, device_),
                 losses, adam);
  const ops::LossResult r = losses.read()[0];
  if (!std::isfinite(r.loss))
    throw std::runtime_error("training diverged: loss is " + std::to_string(r.loss) + " (try a smaller lr)");
  return r;
}

void Model::optimizer_step(const GraphInputs& in, const ops::LossTargets& targets, ops::LossBatch& losses,
                           const ops::AdamConfig& adam) {
  forward(in, /*training=*/true, step_logits_);
  losses.add(step_logits_, targets, &step_dlogits_);
  backward(in, step_dlogits_, /*training=*/true);
  ++step_;
  for (Param* p : mutable_parameters()) {
    ops::AdamConfig layer_adam = adam;
    if (!std::isnan(p->weight_decay)) layer_adam.weight_decay = p->weight_decay;
    ops::adam_step(p->value, p->grad, p->m, p->v, layer_adam, step_);
  }
}

Tensor Model::logits(const Graph& g) {
  const StreamScope scope(stream_);
  const GraphInputs in = prepare(g, /*training=*/false);
  Tensor out;
  forward(in, /*training=*/false, out);
  return out.to(Device::CPU);
}

Tensor Model::predict_proba(const Graph& g) {
  const StreamScope scope(stream_);
  const GraphInputs in = prepare(g, /*training=*/false);
  Tensor out, probs;
  forward(in, /*training=*/false, out);
  ops::softmax(out, probs);
  return probs.to(Device::CPU);
}

std::vector<int64_t> Model::predict(const Graph& g) {
  const Tensor z = logits(g);
  std::vector<int64_t> out(z.rows(), 0);
  for (int64_t i = 0; i < z.rows(); ++i) {
    for (int64_t j = 1; j < z.cols(); ++j) {
      if (z.at(i, j) > z.at(i, out[i])) out[i] = j;
    }
  }
  return out;
}

double Model::compute_gradients(const Graph& g, const std::vector<int64_t>& labels,
                                const std::vector<uint8_t>& mask, bool training) {
  require(labels.size() == static_cast<size_t>(g.num_nodes()), "labels: expected one entry per node");
  require(mask.empty() || mask.size() == labels.size(), "mask: expected one entry per node");
  const StreamScope scope(stream_);
  const GraphInputs in = prepare(g, training);
  Tensor z, dz;
  forward(in, training, z);  // dropout (training) draws the masks of the next optimiser step
  const ops::LossResult r = ops::softmax_cross_entropy(z, labels.data(), mask.empty() ? nullptr : mask.data(), &dz);
  backward(in, dz, training);
  return r.loss;
}

ops::LossResult Model::evaluate(const Graph& g, const std::vector<int64_t>& labels,
                                const std::vector<uint8_t>& mask) {
  require(labels.size() == static_cast<size_t>(g.num_nodes()), "labels: expected one entry per node");
  require(mask.empty() || mask.size() == labels.size(), "mask: expected one entry per node");
  return ops::softmax_cross_entropy(logits(g), labels.data(), mask.empty() ? nullptr : mask.data(), nullptr);
}

}  // namespace hulk::nn
