// The model as a whole: finite-difference gradients through every layer, the per-edge
// EdgePool path against the fast one, determinism, batching, save/load and bad files.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <random>

#include <gtest/gtest.h>

#include "csrc/nn/model.h"
#include "tests/cpp/reference.h"

// Counts allocations of at least kLargeAllocation bytes while counting is on (test
// Model.EpochsAllocateNoLargeBuffers). Replaces the global operator new of this test binary;
// off, it costs one relaxed load.
namespace alloc_count {
std::atomic<bool> on{false};
std::atomic<int64_t> large{0};
constexpr std::size_t kLargeAllocation = 64 << 10;
}  // namespace alloc_count

// Every non-aligned form is replaced, so that each new is paired with a delete of the same
// family (AddressSanitizer reports new-vs-free mismatches when only some forms are replaced);
// the aligned forms stay the library's, paired among themselves.
namespace alloc_count {
void* allocate(std::size_t n) noexcept {
  if (on.load(std::memory_order_relaxed) && n >= kLargeAllocation) ++large;
  return std::malloc(n > 0 ? n : 1);
}
}  // namespace alloc_count

void* operator new(std::size_t n) {
  if (void* p = alloc_count::allocate(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return alloc_count::allocate(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return alloc_count::allocate(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

using hulk::Graph;
using hulk::Tensor;
using hulk::nn::Model;
using hulk::nn::ModelConfig;

constexpr int64_t kNodes = 14;
constexpr int64_t kFeatures = 3;
constexpr int64_t kEdgeFeatures = 2;
constexpr int64_t kClasses = 3;

Graph make_graph(uint32_t seed, bool undirected = true, int64_t n = kNodes, int64_t m = 30) {
  const ref::EdgeList el = ref::random_graph(ref::GraphKind::Skewed, n, m, undirected, /*weighted=*/true, seed);
  std::mt19937 rng(seed + 1);
  return Graph(n, el.src, el.dst, ref::random_tensor(n, kFeatures, rng), ref::random_tensor(el.num_edges(), kEdgeFeatures, rng),
               el.weights, undirected);
}

std::vector<int64_t> make_labels(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> cls(-1, kClasses - 1);  // some unlabelled
  std::vector<int64_t> y(n);
  for (auto& v : y) v = cls(rng);
  y[0] = 0;  // at least one labelled node
  return y;
}

ModelConfig small_config(bool edge_pool, hulk::ops::Pooling pooling, bool gcn_weights) {
  ModelConfig c;
  c.in_features = kFeatures;
  c.edge_features = kEdgeFeatures;
  c.num_classes = kClasses;
  c.hidden = {5, 4, 6};  // EdgePool 5, GCN 4 (transform first), GCN 6 (aggregate first)
  c.pooling = pooling;
  c.edge_pool = edge_pool;
  c.gcn_edge_weights = gcn_weights;
  c.standardize = false;
  c.seed = 7;
  return c;
}

// Every parameter's gradient from compute_gradients against central differences of the
// float32 loss. The step is large enough to beat float32 rounding of the loss (~1e-7
// relative) and small enough that ReLU kinks are rarely crossed. Rarely is not never: a
// unit within a step of its kink makes the difference see part of the other slope (an error
// that shrinks with the step; a wrong gradient does not). Such a parameter is checked again
// with the smaller step, which crosses fewer kinks but sees more float32 rounding; it must
// match at one of the two. (Which draws put a unit near a kink changed with the weight
// initialisation streams of issue 20; before it, bias draw 19 failed two cases at 5e-4.)
constexpr double kFdSteps[] = {5e-4, 1e-4};
constexpr double kFdRelTol = 2e-2;

class ModelGradient : public ::testing::TestWithParam<std::tuple<bool, hulk::ops::Pooling, bool, bool>> {};

TEST_P(ModelGradient, MatchesFiniteDifferences) {
  const auto [edge_pool, pooling, gcn_weights, undirected] = GetParam();
  const Graph g = make_graph(11, undirected);
  const auto labels = make_labels(kNodes, 3);
  Model model(small_config(edge_pool, pooling, gcn_weights));
  // Biases start at zero, which puts nodes with all-zero inputs exactly on a ReLU kink where
  // central differences see half a slope. Random biases move every node off the kink.
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> bias(-0.5f, 0.5f);
  for (hulk::nn::Param* p : model.mutable_parameters()) {
    if (p->name.find("bias") != std::string::npos) {
      for (int64_t i = 0; i < p->value.size(); ++i) p->value.data()[i] = bias(rng);
    }
  }
  model.compute_gradients(g, labels, {});
  for (hulk::nn::Param* p : model.mutable_parameters()) {
    const Tensor analytic = p->grad;
    ::testing::AssertionResult match = ::testing::AssertionFailure();
    for (const double step : kFdSteps) {
      const std::vector<double> numeric = ref::central_differences(p->value.data(), p->value.size(), step, [&] {
        return model.evaluate(g, labels, {}).loss;
      });
      match = ref::gradients_match(analytic, numeric, kFdRelTol);
      if (match) break;
    }
    EXPECT_TRUE(match) << "parameter " << p->name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layers, ModelGradient,
    ::testing::Combine(::testing::Bool(), ::testing::Values(hulk::ops::Pooling::Sum, hulk::ops::Pooling::Mean),
                       ::testing::Bool(), ::testing::Bool()),
    [](const ::testing::TestParamInfo<ModelGradient::ParamType>& info) {
      const auto& p = info.param;
      return std::string(std::get<0>(p) ? "EdgePool" : "GcnFirst") +
             (std::get<1>(p) == hulk::ops::Pooling::Sum ? "Sum" : "Mean") +
             (std::get<2>(p) ? "Weighted" : "Unweighted") + (std::get<3>(p) ? "Undirected" : "Directed");
    });

TEST(Model, PerEdgePathTrainsLikeFastPath) {
  const Graph g = make_graph(5);
  const auto labels = make_labels(kNodes, 9);
  for (auto pooling : {hulk::ops::Pooling::Sum, hulk::ops::Pooling::Mean}) {
    ModelConfig fast_cfg = small_config(true, pooling, false);
    ModelConfig slow_cfg = fast_cfg;
    slow_cfg.per_edge_reference = true;
    Model fast(fast_cfg), slow(slow_cfg);
    hulk::nn::TrainOptions opts;
    opts.epochs = 5;
    fast.fit(g, labels, {}, {}, opts);
    slow.fit(g, labels, {}, {}, opts);
    EXPECT_TRUE(ref::all_close(fast.logits(g), slow.logits(g), 1e-4, 1e-4));
  }
}

TEST(Model, TrainingIsDeterministicForASeed) {
  const Graph g = make_graph(8);
  const auto labels = make_labels(kNodes, 4);
  ModelConfig cfg = small_config(true, hulk::ops::Pooling::Sum, false);
  cfg.dropout = 0.3f;
  cfg.standardize = true;
  hulk::nn::TrainOptions opts;
  opts.epochs = 20;
  Model a(cfg), b(cfg);
  const auto ha = a.fit(g, labels, {}, {}, opts);
  const auto hb = b.fit(g, labels, {}, {}, opts);
  ASSERT_EQ(ha.size(), hb.size());
  for (size_t i = 0; i < ha.size(); ++i) EXPECT_EQ(ha[i].train_loss, hb[i].train_loss) << "epoch " << i + 1;
  EXPECT_TRUE(ref::identical(a.logits(g), b.logits(g)));
  cfg.seed += 1;
  Model c(cfg);
  c.fit(g, labels, {}, {}, opts);
  EXPECT_FALSE(ref::identical(a.logits(g), c.logits(g)));
}

// Issue 20: every random stream is its own. The first step's dropout mask after a hidden
// layer used to be the counter stream of a layer's weight initialisation (mask after hidden
// layer i == sign of the weight drawn from stream i, entry for entry). With one node r that
// alone carries a label and a non-zero hidden row, the mask's row r is readable: row j of
// the next layer's weight gradient is zero when column j of the hidden layer was dropped
// (or cut by the ReLU). GCN first: one node, no edge (r = 0). EdgePool first: the edge
// 0 -> 1, so node 0 (no in-neighbour) pools to zero, and only node 1 is labelled (r = 1).
// Over many seeds a kept entry must agree with the sign of any weight's entry 4 r + j about
// half the time.
TEST(Model, DropoutMasksAreIndependentOfWeightInit) {
  for (const bool edge_pool : {false, true}) {
    ModelConfig base;
    base.in_features = kFeatures;
    base.edge_features = edge_pool ? kEdgeFeatures : 0;
    base.num_classes = kClasses;
    base.hidden = {4, 4};
    base.edge_pool = edge_pool;
    base.standardize = false;
    base.dropout = 0.5f;
    // [hidden layer][weight parameter]: kept columns, and of those the ones whose weight entry is >= 0.
    std::vector<std::vector<int>> kept(2), agree(2);
    std::vector<std::string> names;
    for (uint64_t seed = 0; seed < 300; ++seed) {
      ModelConfig cfg = base;
      cfg.seed = seed;
      Model model(cfg);
      std::mt19937 rng(static_cast<uint32_t>(seed) + 1000);
      const int64_t r = edge_pool ? 1 : 0;
      const Graph g = edge_pool ? Graph(2, {0}, {1}, ref::random_tensor(2, kFeatures, rng),
                                        ref::random_tensor(1, kEdgeFeatures, rng), {}, false)
                                : Graph(1, {}, {}, ref::random_tensor(1, kFeatures, rng), Tensor(0, 0), {}, true);
      const std::vector<int64_t> labels = edge_pool ? std::vector<int64_t>{-1, 0} : std::vector<int64_t>{0};
      std::vector<const hulk::nn::Param*> weights;
      for (const hulk::nn::Param* p : model.parameters())
        if (p->name.find("weight") != std::string::npos) weights.push_back(p);
      std::vector<std::vector<float>> init;  // the initial weights (train_step changes them)
      for (const auto* p : weights) init.push_back(p->value.to_host_vector());
      if (names.empty()) {
        for (const auto* p : weights) names.push_back(p->name);
        for (auto* v : {&kept, &agree})
          for (auto& row : *v) row.assign(weights.size(), 0);
      }
      model.train_step(g, labels, {}, 0.01f, 0.0f);
      for (size_t layer = 0; layer < 2; ++layer) {
        const std::vector<float> grad = weights[layer + 1]->grad.to_host_vector();  // the next layer's weight
        const int64_t out = weights[layer + 1]->grad.cols();
        for (int64_t j = 0; j < 4; ++j) {
          bool nonzero = false;
          for (int64_t c = 0; c < out; ++c) nonzero = nonzero || grad[static_cast<size_t>(j * out + c)] != 0.0f;
          if (!nonzero) continue;
          for (size_t w = 0; w < weights.size(); ++w) {
            ++kept[layer][w];
            agree[layer][w] += init[w][static_cast<size_t>(4 * r + j)] >= 0.0f;
          }
        }
      }
    }
    for (size_t layer = 0; layer < 2; ++layer) {
      for (size_t w = 0; w < names.size(); ++w) {
        ASSERT_GT(kept[layer][w], 100) << "edge_pool " << edge_pool << " layer " << layer;
        const double frac = static_cast<double>(agree[layer][w]) / kept[layer][w];
        EXPECT_GT(frac, 0.35) << "edge_pool " << edge_pool << ": mask after hidden layer " << layer << " vs "
                              << names[w] << " (" << agree[layer][w] << " of " << kept[layer][w] << ")";
        EXPECT_LT(frac, 0.65) << "edge_pool " << edge_pool << ": mask after hidden layer " << layer << " vs "
                              << names[w] << " (" << agree[layer][w] << " of " << kept[layer][w] << ")";
      }
    }
  }
}

// Issue 20: an epoch neither copies the input features nor allocates its activations anew.
// fit() prepares the graph once (a standardised copy of the features); everything an epoch
// needs lives in buffers reused from the first epoch on. So a fit of 8 epochs makes as many
// large allocations as a fit of 2 (before: two feature copies and the layers' temporaries
// per epoch).
TEST(Model, EpochsAllocateNoLargeBuffers) {
  constexpr int64_t n = 1000, f = 64;  // features 256 KB, hidden activations 128 KB
  const ref::EdgeList el = ref::random_graph(ref::GraphKind::Skewed, n, 3000, true, false, 5);
  std::mt19937 rng(6);
  const Graph g(n, el.src, el.dst, ref::random_tensor(n, f, rng), Tensor(el.num_edges(), 0), {}, true);
  const auto labels = make_labels(n, 7);
  for (const bool edge_pool : {false, true}) {
    ModelConfig cfg;
    cfg.in_features = f;
    cfg.num_classes = kClasses;
    cfg.hidden = {32, 32};
    cfg.edge_pool = edge_pool;
    cfg.dropout = 0.5f;
    Model model(cfg);
    hulk::nn::TrainOptions opts;
    opts.epochs = 1;
    model.fit(g, labels, {}, {}, opts);  // first use: buffers sized here
    std::vector<int64_t> counts;
    for (const int64_t epochs : {2, 8}) {
      opts.epochs = epochs;
      alloc_count::large = 0;
      alloc_count::on = true;
      model.fit(g, labels, {}, {}, opts);
      alloc_count::on = false;
      counts.push_back(alloc_count::large.load());
    }
    EXPECT_EQ(counts[0], counts[1]) << "edge_pool " << edge_pool << ": large allocations in fits of 2 and 8 epochs";
  }
}

// train_step on the whole graph, k times, is fit() for k epochs (same weights, same losses):
// both take the same forward, loss, backward and Adam step, with dropout on.
TEST(Model, TrainStepsMatchFit) {
  const Graph g = make_graph(11);
  const auto labels = make_labels(kNodes, 5);
  ModelConfig cfg = small_config(true, hulk::ops::Pooling::Mean, false);
  cfg.dropout = 0.2f;
  cfg.standardize = true;
  hulk::nn::TrainOptions opts;
  opts.epochs = 12;
  opts.lr = 0.03f;
  Model a(cfg), b(cfg);
  const auto h = a.fit(g, labels, {}, {}, opts);
  b.fit_scaler(g);
  for (int64_t e = 0; e < opts.epochs; ++e) {
    const auto r = b.train_step(g, labels, {}, opts.lr, opts.weight_decay);
    EXPECT_EQ(r.loss, h[static_cast<size_t>(e)].train_loss) << "step " << e + 1;
  }
  EXPECT_TRUE(ref::identical(a.logits(g), b.logits(g)));
  EXPECT_TRUE(ref::throws_invalid_argument_with([&] { b.train_step(g, std::vector<int64_t>(kNodes, -1), {}, 0.01f, 0.0f); },
                                           {"no labelled node"}));
  EXPECT_TRUE(ref::throws_invalid_argument_with([&] { b.train_step(g, labels, {}, -1.0f, 0.0f); }, {"lr"}));
}

TEST(Model, TrainingLowersTheLoss) {
  const Graph g = make_graph(21, true, 40, 120);
  const auto labels = make_labels(40, 2);
  Model model(small_config(true, hulk::ops::Pooling::Sum, false));
  hulk::nn::TrainOptions opts;
  opts.epochs = 150;
  opts.lr = 0.02f;
  const auto h = model.fit(g, labels, {}, {}, opts);
  EXPECT_LT(h.back().train_loss, 0.6 * h.front().train_loss);
}

// Logits on a disjoint union equal the logits of each graph on its own.
TEST(Model, BatchedGraphGivesPerGraphLogits) {
  const Graph g1 = make_graph(31), g2 = make_graph(32, true, 9, 12);
  const Graph both = hulk::batch_graphs({&g1, &g2});
  Model model(small_config(true, hulk::ops::Pooling::Mean, false));
  const Tensor z = model.logits(both), z1 = model.logits(g1), z2 = model.logits(g2);
  ASSERT_EQ(z.rows(), z1.rows() + z2.rows());
  ref::DMat top(z1.rows(), kClasses), bottom(z2.rows(), kClasses);
  for (int64_t i = 0; i < z.rows(); ++i) {
    for (int64_t j = 0; j < kClasses; ++j) (i < z1.rows() ? top(i, j) : bottom(i - z1.rows(), j)) = z.at(i, j);
  }
  EXPECT_TRUE(ref::all_close(z1, top, 1e-5, 1e-5));
  EXPECT_TRUE(ref::all_close(z2, bottom, 1e-5, 1e-5));
}

std::string temp_path(const char* name) { return ::testing::TempDir() + name; }

TEST(Model, SaveLoadRoundTrip) {
  const Graph g = make_graph(12);
  const auto labels = make_labels(kNodes, 1);
  ModelConfig cfg = small_config(true, hulk::ops::Pooling::Mean, false);
  cfg.standardize = true;
  Model model(cfg);
  hulk::nn::TrainOptions opts;
  opts.epochs = 10;
  model.fit(g, labels, {}, {}, opts);
  const std::string path = temp_path("hulk_model_roundtrip.bin");
  model.save(path);
  Model loaded = Model::load(path);
  EXPECT_TRUE(ref::identical(model.logits(g), loaded.logits(g)));
  EXPECT_EQ(model.num_parameters(), loaded.num_parameters());
  EXPECT_EQ(loaded.config().layers, model.config().layers);
  EXPECT_EQ(loaded.scaler().x_mean, model.scaler().x_mean);
  std::remove(path.c_str());
}

TEST(Model, LoadRejectsBadFiles) {
  const std::string path = temp_path("hulk_model_bad.bin");
  auto write = [&](const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
  };
  auto load_error = [&]() -> std::string {
    try {
      Model::load(path);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  };
  write("not a model");
  EXPECT_NE(load_error().find("bad magic"), std::string::npos);
  write(std::string("HULKGNN\0", 8) + std::string("\x03\x00\x00\x00", 4));
  EXPECT_NE(load_error().find("format version 3"), std::string::npos);
  // A valid file cut short.
  Model model(small_config(true, hulk::ops::Pooling::Sum, false));
  model.save(path);
  std::ifstream in(path, std::ios::binary);
  const std::string full((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write(full.substr(0, full.size() - 10));
  EXPECT_NE(load_error().find("file ends inside"), std::string::npos);
  EXPECT_THROW(Model::load(temp_path("does_not_exist.bin")), std::runtime_error);
  std::remove(path.c_str());
}

TEST(Model, RejectsMismatchedInputs) {
  const Graph g = make_graph(2);
  Model model(small_config(true, hulk::ops::Pooling::Sum, false));
  hulk::nn::TrainOptions opts;
  EXPECT_THROW(model.fit(g, std::vector<int64_t>(kNodes - 1, 0), {}, {}, opts), std::invalid_argument);
  std::vector<int64_t> bad(kNodes, 0);
  bad[3] = kClasses;
  EXPECT_THROW(model.fit(g, bad, {}, {}, opts), std::invalid_argument);
  EXPECT_THROW(model.fit(g, std::vector<int64_t>(kNodes, -1), {}, {}, opts), std::invalid_argument);
  opts.epochs = 0;
  EXPECT_THROW(model.fit(g, std::vector<int64_t>(kNodes, 0), {}, {}, opts), std::invalid_argument);
  ModelConfig cfg = small_config(true, hulk::ops::Pooling::Sum, false);
  cfg.in_features = kFeatures + 1;
  Model wrong(cfg);
  EXPECT_THROW(wrong.logits(g), std::invalid_argument);
  cfg = small_config(true, hulk::ops::Pooling::Sum, false);
  cfg.hidden = {};
  EXPECT_THROW(Model{cfg}, std::invalid_argument);
}

}  // namespace
