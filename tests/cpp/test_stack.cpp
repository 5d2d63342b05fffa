// Composable models (issue 20): layer stacks checked by name, the paper's shortcut as a stack,
// finite-difference gradients through stacks the shortcut cannot build (input dropout,
// GCNConv last, Linear in the middle) and per-layer weight decay in the Adam step.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "csrc/nn/model.h"
#include "tests/cpp/reference.h"

namespace {

using hulk::Graph;
using hulk::Tensor;
using hulk::nn::LayerKind;
using hulk::nn::LayerSpec;
using hulk::nn::Model;
using hulk::nn::ModelConfig;

constexpr int64_t kNodes = 16, kFeatures = 4, kEdgeFeatures = 2, kClasses = 3;

Graph make_graph(uint32_t seed) {
  const ref::EdgeList el = ref::random_graph(ref::GraphKind::Skewed, kNodes, 36, true, true, seed);
  std::mt19937 rng(seed + 1);
  return Graph(kNodes, el.src, el.dst, ref::random_tensor(kNodes, kFeatures, rng),
               ref::random_tensor(el.num_edges(), kEdgeFeatures, rng), el.weights, true);
}


LayerSpec weights(LayerKind kind, int64_t width, float decay = NAN) { return {kind, width, 0.0f, decay}; }
LayerSpec relu() { return {LayerKind::ReLU, 0, 0.0f, NAN}; }
LayerSpec dropout(float p) { return {LayerKind::Dropout, 0, p, NAN}; }

ModelConfig stack_config(std::vector<LayerSpec> layers) {
  ModelConfig c;
  c.in_features = kFeatures;
  c.edge_features = kEdgeFeatures;
  c.num_classes = kClasses;
  c.layers = std::move(layers);
  c.standardize = false;
  c.seed = 5;
  return c;
}

// Kipf and Welling's shape with input dropout, and stacks with a Linear in the middle and an
// EdgePool after an input dropout.
std::vector<std::vector<LayerSpec>> stacks() {
  return {
      {dropout(0.4f), weights(LayerKind::GcnConv, 6, 5e-4f), relu(), dropout(0.3f), weights(LayerKind::GcnConv, kClasses)},
      {weights(LayerKind::GcnConv, 5), relu(), weights(LayerKind::Linear, 7), relu(), dropout(0.2f),
       weights(LayerKind::GcnConv, kClasses)},
      {dropout(0.25f), weights(LayerKind::EdgePool, 5), relu(), weights(LayerKind::Linear, kClasses)},
  };
}

TEST(Stack, ShortcutIsTheGnnStack) {
  ModelConfig c = stack_config({});
  c.hidden = {5, 4};
  c.dropout = 0.5f;
  const Model m(c);
  const std::vector<LayerSpec> want = {weights(LayerKind::EdgePool, 5), relu(), dropout(0.5f),
                                       weights(LayerKind::GcnConv, 4), relu(), dropout(0.5f),
                                       weights(LayerKind::Linear, kClasses)};
  EXPECT_EQ(m.config().layers, want);
  std::vector<std::string> names;
  for (const auto* p : m.parameters()) names.push_back(p->name);
  EXPECT_EQ(names, (std::vector<std::string>{"edge_pool.weight", "edge_pool.bias", "gcn1.weight", "gcn1.bias",
                                             "classifier.weight", "classifier.bias"}));
}

TEST(Stack, NamesFollowTheStack) {
  const Model m(stack_config(stacks()[1]));
  std::vector<std::string> names;
  for (const auto* p : m.parameters()) names.push_back(p->name);
  EXPECT_EQ(names, (std::vector<std::string>{"gcn1.weight", "gcn1.bias", "linear1.weight", "linear1.bias",
                                             "gcn2.weight", "gcn2.bias"}));
}

TEST(Stack, BadStacksNameTheLayerAndValue) {
  auto bad = [](std::vector<LayerSpec> layers) { return [layers] { Model m(stack_config(layers)); }; };
  const LayerSpec out = weights(LayerKind::Linear, kClasses);
  // (An empty ModelConfig::layers is the paper's shortcut; the stack itself may not be empty.)
  EXPECT_TRUE(ref::throws_invalid_argument_with([] { hulk::nn::validate_stack({}, kClasses); }, {"layers", "empty"}));
  EXPECT_TRUE(ref::throws_invalid_argument_with(bad({weights(LayerKind::GcnConv, 0), out}), {"layers[0]", "width", "0"}));
  EXPECT_TRUE(ref::throws_invalid_argument_with(bad({dropout(1.0f), out}), {"layers[0]", "rate", "1.0"}));
  EXPECT_TRUE(ref::throws_invalid_argument_with(bad({dropout(-0.1f), out}), {"layers[0]", "rate", "-0.1"}));
  EXPECT_TRUE(ref::throws_invalid_argument_with(bad({weights(LayerKind::GcnConv, 4, -1.0f), out}),
                                                {"layers[0]", "weight_decay", "-1"}));
  EXPECT_TRUE(ref::throws_invalid_argument_with(bad({weights(LayerKind::GcnConv, 4, INFINITY), out}),
                                                {"layers[0]", "weight_decay", "inf"}));
  EXPECT_TRUE(ref::throws_invalid_argument_with(bad({weights(LayerKind::GcnConv, 4), relu(), weights(LayerKind::EdgePool, 3)}),
                                                {"layers[2]", "EdgePool must be the first"}));
  EXPECT_TRUE(ref::throws_invalid_argument_with(bad({weights(LayerKind::GcnConv, kClasses), relu()}),
                                                {"layers[1]", "relu", "last layer"}));
  EXPECT_TRUE(ref::throws_invalid_argument_with(bad({weights(LayerKind::GcnConv, 4)}), {"layers[0]", "4", "num_classes is 3"}));
  EXPECT_TRUE(ref::throws_invalid_argument_with(bad({LayerSpec{LayerKind::ReLU, 2, 0.0f, NAN}, out}), {"layers[0]", "width", "2"}));
  EXPECT_TRUE(ref::throws_invalid_argument_with(bad({std::vector<LayerSpec>(300, relu())}), {"layers", "300"}));
  EXPECT_TRUE(ref::throws_invalid_argument_with([] { hulk::nn::parse_layer_kind("conv", "layers[2]"); },
                                                {"layers[2]", "unknown layer 'conv'"}));
  ModelConfig per_edge = stack_config({weights(LayerKind::GcnConv, 4), relu(), out});
  per_edge.per_edge_reference = true;
  EXPECT_TRUE(ref::throws_invalid_argument_with([&] { Model m(per_edge); }, {"per_edge_reference", "EdgePool"}));
}

// Gradients of the training loss (dropout on, with the masks of the next step) against central
// differences of the same loss; steps and tolerance as tests/cpp/test_model.cpp's.
TEST(Stack, GradientsMatchFiniteDifferencesWithDropout) {
  const Graph g = make_graph(3);
  const auto labels = ref::random_labels(kNodes, kClasses, 4);
  const auto all = stacks();
  for (size_t s = 0; s < all.size(); ++s) {
    Model model(stack_config(all[s]));
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> bias(-0.5f, 0.5f);
    for (hulk::nn::Param* p : model.mutable_parameters()) {
      if (p->name.find("bias") != std::string::npos) {
        for (int64_t i = 0; i < p->value.size(); ++i) p->value.data()[i] = bias(rng);
      }
    }
    // A few steps first, so that the masks are not the first step's.
    for (int i = 0; i < 3; ++i) model.train_step(g, labels, {}, 0.01f, 0.0f);
    const double loss = model.compute_gradients(g, labels, {}, /*training=*/true);
    EXPECT_NE(loss, model.compute_gradients(g, labels, {}, /*training=*/false)) << "dropout had no effect";
    model.compute_gradients(g, labels, {}, /*training=*/true);
    for (hulk::nn::Param* p : model.mutable_parameters()) {
      const Tensor analytic = p->grad;
      ::testing::AssertionResult match = ::testing::AssertionFailure();
      for (const double step : {5e-4, 1e-4}) {
        const std::vector<double> numeric = ref::central_differences(
            p->value.data(), p->value.size(), step, [&] { return model.compute_gradients(g, labels, {}, true); });
        match = ref::gradients_match(analytic, numeric, 2e-2);
        if (match) break;
      }
      EXPECT_TRUE(match) << "parameter " << p->name << " of stack " << s;
    }
  }
}

// One Adam step: each parameter's update uses its layer's weight decay, or the step's when the
// layer sets none (float64 Adam on the same gradients).
TEST(Stack, AdamUsesEachLayersWeightDecay) {
  const Graph g = make_graph(6);
  const auto labels = ref::random_labels(kNodes, kClasses, 7);
  Model model(stack_config({weights(LayerKind::GcnConv, 6, 0.3f), relu(), weights(LayerKind::Linear, 5, 0.0f), relu(),
                            weights(LayerKind::GcnConv, kClasses)}));
  const float lr = 0.05f, global_decay = 0.7f;
  model.train_step(g, labels, {}, lr, global_decay);  // moments are no longer zero
  model.compute_gradients(g, labels, {}, true);
  std::vector<Tensor> before, grads, m, v;
  for (const auto* p : model.parameters()) {
    before.push_back(p->value);
    grads.push_back(p->grad);
    m.push_back(p->m);
    v.push_back(p->v);
  }
  model.train_step(g, labels, {}, lr, global_decay);
  size_t k = 0;
  for (const auto* p : model.parameters()) {
    const double decay = std::isnan(p->weight_decay) ? global_decay : p->weight_decay;
    EXPECT_EQ(decay, p->name.rfind("gcn1", 0) == 0 ? 0.3f : p->name.rfind("linear1", 0) == 0 ? 0.0f : global_decay);
    const int step = 2;
    double worst = 0.0;
    for (int64_t i = 0; i < p->value.size(); ++i) {
      const double w = before[k].data()[i], gi = grads[k].data()[i] + decay * w;
      const double m1 = 0.9 * m[k].data()[i] + 0.1 * gi, m2 = 0.999 * v[k].data()[i] + 0.001 * gi * gi;
      const double want = w - lr * (m1 / (1 - std::pow(0.9, step))) / (std::sqrt(m2 / (1 - std::pow(0.999, step))) + 1e-8);
      worst = std::max(worst, std::fabs(p->value.data()[i] - want));
    }
    EXPECT_LT(worst, 2e-6) << p->name;
    ++k;
  }
}

}  // namespace
