#include "csrc/nn/stack.h"

#include <stdexcept>

namespace hulk::nn {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

std::string where(size_t i) { return "layers[" + std::to_string(i) + "]"; }

}  // namespace

bool LayerSpec::operator==(const LayerSpec& o) const {
  const bool same_decay = (std::isnan(weight_decay) && std::isnan(o.weight_decay)) || weight_decay == o.weight_decay;
  return kind == o.kind && width == o.width && rate == o.rate && same_decay;
}

const char* layer_kind_name(LayerKind kind) {
  switch (kind) {
    case LayerKind::EdgePool: return "edge_pool";
    case LayerKind::GcnConv: return "gcn";
    case LayerKind::Linear: return "linear";
    case LayerKind::ReLU: return "relu";
    case LayerKind::Dropout: return "dropout";
  }
  return "?";
}

LayerKind parse_layer_kind(const std::string& name, const std::string& where) {
  for (LayerKind k : {LayerKind::EdgePool, LayerKind::GcnConv, LayerKind::Linear, LayerKind::ReLU, LayerKind::Dropout}) {
    if (name == layer_kind_name(k)) return k;
  }
  throw std::invalid_argument(where + ": unknown layer '" + name +
                              "' (expected edge_pool, gcn, linear, relu or dropout)");
}

std::vector<LayerSpec> gnn_stack(const std::vector<int64_t>& hidden, bool edge_pool, float dropout,
                                 int64_t num_classes) {
  std::vector<LayerSpec> out;
  for (size_t i = 0; i < hidden.size(); ++i) {
    LayerSpec layer;
    layer.kind = i == 0 && edge_pool ? LayerKind::EdgePool : LayerKind::GcnConv;
    layer.width = hidden[i];
    out.push_back(layer);
    out.push_back(LayerSpec{LayerKind::ReLU, 0, 0.0f, NAN});
    if (dropout > 0.0f) out.push_back(LayerSpec{LayerKind::Dropout, 0, dropout, NAN});
  }
  out.push_back(LayerSpec{LayerKind::Linear, num_classes, 0.0f, NAN});
  return out;
}

void validate_stack(const std::vector<LayerSpec>& layers, int64_t num_classes) {
  const int64_t max_width = kMaxLayerWidth;
  require(!layers.empty(), "layers: the stack is empty; it needs at least one GCNConv, Linear or EdgePool");
  require(layers.size() <= kMaxStackLayers, "layers: " + std::to_string(layers.size()) + " layers, more than the " +
                                                std::to_string(kMaxStackLayers) + " a model may have");
  bool seen_weights = false;
  for (size_t i = 0; i < layers.size(); ++i) {
    const LayerSpec& l = layers[i];
    const std::string name = where(i) + " (" + layer_kind_name(l.kind) + ")";
    if (l.has_params()) {
      require(l.width >= 1 && l.width <= max_width, name + ": width must be in [1, " + std::to_string(max_width) +
                                                        "], got " + std::to_string(l.width));
      require(std::isnan(l.weight_decay) || (std::isfinite(l.weight_decay) && l.weight_decay >= 0.0f),
              name + ": weight_decay must be a finite number >= 0, got " + std::to_string(l.weight_decay));
      require(l.kind != LayerKind::EdgePool || !seen_weights,
              name + ": EdgePool must be the first layer (only an input Dropout may come before it)");
      seen_weights = true;
    } else {
      require(l.width == 0, name + ": takes no width, got " + std::to_string(l.width));
      require(std::isnan(l.weight_decay), name + ": has no weights, so no weight_decay, got " +
                                              std::to_string(l.weight_decay));
      if (l.kind == LayerKind::Dropout) {
        require(l.rate >= 0.0f && l.rate < 1.0f, name + ": rate must be in [0, 1), got " + std::to_string(l.rate));
      } else {
        require(l.rate == 0.0f, name + ": takes no rate, got " + std::to_string(l.rate));
      }
    }
  }
  const LayerSpec& last = layers.back();
  require(last.has_params(), where(layers.size() - 1) + " (" + layer_kind_name(last.kind) +
                                 "): the last layer must be a GCNConv, Linear or EdgePool giving the num_classes "
                                 "logits");
  require(last.width == num_classes, where(layers.size() - 1) + ": the last layer gives " + std::to_string(last.width) +
                                         " outputs but num_classes is " + std::to_string(num_classes));
}

size_t first_weight_layer(const std::vector<LayerSpec>& layers) {
  size_t i = 0;
  while (i < layers.size() && !layers[i].has_params()) ++i;
  return i;
}

}  // namespace hulk::nn
