// A model's layer stack: the list of layer descriptors the forward and backward passes walk
// (issue 20, "composable models"). GCNConv, EdgePool and Linear hold weights; ReLU and Dropout
// do not. The last layer holds weights and gives the num_classes logits.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace hulk::nn {

enum class LayerKind { EdgePool, GcnConv, Linear, ReLU, Dropout };

struct LayerSpec {
  LayerKind kind = LayerKind::Linear;
  int64_t width = 0;         // output width (EdgePool, GCNConv, Linear); 0 for the others
  float rate = 0.0f;         // Dropout's probability, in [0, 1)
  float weight_decay = NAN;  // L2 on this layer's weight and bias; NaN = the fit's weight_decay

  bool has_params() const { return kind == LayerKind::EdgePool || kind == LayerKind::GcnConv || kind == LayerKind::Linear; }
  bool operator==(const LayerSpec& o) const;
};

// Bounds of a stack (limits of the weight file, far above any model this engine trains).
constexpr size_t kMaxStackLayers = 256;
constexpr int64_t kMaxLayerWidth = 1 << 20;

// The names of the kinds in configurations and weight files: edge_pool, gcn, linear, relu, dropout.
const char* layer_kind_name(LayerKind kind);
// Throws std::invalid_argument naming `where` and the unknown name.
LayerKind parse_layer_kind(const std::string& name, const std::string& where);

// The stack of the paper's classifier (hulk.GNN's shortcut): EdgePool(hidden[0]) or
// GCNConv(hidden[0]), then GCNConv(hidden[i]) for i >= 1, a ReLU and (dropout > 0) a Dropout after
// each of them, and Linear(num_classes).
std::vector<LayerSpec> gnn_stack(const std::vector<int64_t>& hidden, bool edge_pool, float dropout,
                                 int64_t num_classes);

// Throws std::invalid_argument naming layers[i] and the bad value: widths in [1, kMaxLayerWidth],
// rates in [0, 1), decays finite and >= 0 (or NaN), EdgePool only first (after an optional input
// Dropout), a non-empty stack of at most kMaxStackLayers ending in a layer with weights whose
// width is num_classes.
void validate_stack(const std::vector<LayerSpec>& layers, int64_t num_classes);

// Index of the first layer with weights (layers before it are input dropouts).
size_t first_weight_layer(const std::vector<LayerSpec>& layers);

}  // namespace hulk::nn
