// Sparse node features (issue 20): the first layer's products against a float64 reference,
// finite differences of its weight gradient, a sparse-feature model against the same model with
// the same features dense (losses, logits, scaler, batching), and the bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "csrc/graph.h"
#include "csrc/nn/model.h"
#include "tests/cpp/reference.h"

namespace {

using hulk::Csr;
using hulk::Graph;
using hulk::Tensor;
using hulk::nn::Model;
using hulk::nn::ModelConfig;
using ref::DMat;

constexpr int64_t kNodes = 40;
constexpr int64_t kClasses = 3;

Tensor dense_of(const Csr& x) { return ref::to_f(ref::csr_to_dense(x)); }

// The same graph twice: features as a CSR and as the dense matrix it stands for.
struct GraphPair {
  Graph sparse, dense;
};

GraphPair make_pair(uint32_t seed, int64_t features, double density, int64_t n = kNodes) {
  const ref::EdgeList el = ref::random_graph(ref::GraphKind::Skewed, n, 3 * n, true, /*weighted=*/true, seed);
  std::mt19937 rng(seed + 1);
  const Csr x = ref::random_csr(n, features, density, rng, /*full_row=*/1, /*full_col=*/2);
  const Tensor e(el.num_edges(), 0);
  return {Graph(n, el.src, el.dst, x, e, el.weights, true), Graph(n, el.src, el.dst, dense_of(x), e, el.weights, true)};
}

ModelConfig gcn_config(int64_t features, std::vector<int64_t> hidden, bool standardize, float dropout) {
  ModelConfig c;
  c.in_features = features;
  c.num_classes = kClasses;
  c.hidden = std::move(hidden);
  c.edge_pool = false;
  c.standardize = standardize;
  c.dropout = dropout;
  c.seed = 5;
  return c;
}

// ---- the first layer's products against float64 ----------------------------------------------

TEST(SparseFeatures, InputProductsMatchFloat64Reference) {
  std::mt19937 rng(31);
  const int64_t n = 60, f = 45, o = 7;
  const Csr x = ref::random_csr(n, f, 0.1, rng, 0, 3);
  // Standardised as Model::prepare does it: columns scaled, the centre term apart.
  std::vector<double> mean(f), inv_std(f);
  Csr scaled = x;
  Tensor center(1, f);
  for (int64_t j = 0; j < f; ++j) {
    mean[j] = std::uniform_real_distribution<double>(-0.3, 0.3)(rng);
    inv_std[j] = std::uniform_real_distribution<double>(0.5, 2.0)(rng);
    center.data()[j] = static_cast<float>(mean[j] * inv_std[j]);
  }
  for (int64_t k = 0; k < scaled.nnz(); ++k) scaled.values[k] = static_cast<float>(x.values[k] * inv_std[x.indices[k]]);
  const Csr scaled_t = hulk::transpose(scaled);
  DMat z = ref::csr_to_dense(x);  // (X - mean) / std in float64
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < f; ++j) z(i, j) = (z(i, j) - mean[j]) * inv_std[j];

  for (bool centre : {false, true}) {
    SCOPED_TRACE(centre ? "centred" : "scaled only");
    hulk::nn::GraphInputs in;
    in.x = Tensor(n, 0);
    in.x_sparse = &scaled;
    in.x_sparse_t = &scaled_t;
    if (centre) in.x_center = center;
    const DMat want_x = centre ? z : ref::csr_to_dense(scaled);
    const DMat w = ref::random_dmat(f, o, rng);
    const DMat dout = ref::random_dmat(n, o, rng);
    Tensor out, dw, scratch;
    hulk::nn::input_times(in, in.x, ref::to_f(w), out, scratch);
    EXPECT_TRUE(ref::all_close(out, ref::matmul(want_x, w), 1e-5, 1e-5));
    hulk::nn::input_t_times(in, in.x, ref::to_f(dout), dw, scratch);
    EXPECT_TRUE(ref::all_close(dw, ref::gemm(want_x, true, dout, false, DMat(), 1.0, 0.0), 1e-5, 1e-5));
    // Any other tensor than the graph's own input goes through the dense products.
    const DMat h = ref::random_dmat(n, f, rng);
    hulk::nn::input_times(in, ref::to_f(h), ref::to_f(w), out, scratch);
    EXPECT_TRUE(ref::all_close(out, ref::matmul(h, w), 1e-5, 1e-5));
  }
}

// ---- finite differences through the model ---------------------------------------------------

TEST(SparseFeatures, GradientsMatchFiniteDifferences) {
  // Wide features (F 30 > hidden 4: transform first either way) and narrow ones (F 3 < hidden 6:
  // a dense input would aggregate first, a sparse one still transforms first).
  for (const auto& [f, hidden] : {std::pair<int64_t, std::vector<int64_t>>{30, {4, 5}}, {3, {6}}}) {
    for (bool standardize : {false, true}) {
      SCOPED_TRACE("F " + std::to_string(f) + (standardize ? ", standardised" : ""));
      const GraphPair gp = make_pair(41, f, 0.2, 16);
      const auto labels = ref::random_labels(16, kClasses, 4);
      Model model(gcn_config(f, hidden, standardize, 0.0f));
      if (standardize) model.fit_scaler(gp.sparse);
      std::mt19937 rng(17);
      std::uniform_real_distribution<float> bias(-0.5f, 0.5f);
      for (hulk::nn::Param* p : model.mutable_parameters()) {
        if (p->name.find("bias") != std::string::npos) {
          for (int64_t i = 0; i < p->value.size(); ++i) p->value.data()[i] = bias(rng);
        }
      }
      model.compute_gradients(gp.sparse, labels, {});
      for (hulk::nn::Param* p : model.mutable_parameters()) {
        const Tensor analytic = p->grad;
        ::testing::AssertionResult match = ::testing::AssertionFailure();
        for (const double step : {5e-4, 1e-4}) {  // as test_model.cpp: a second step for ReLU kinks
          const std::vector<double> numeric = ref::central_differences(p->value.data(), p->value.size(), step, [&] {
            return model.evaluate(gp.sparse, labels, {}).loss;
          });
          match = ref::gradients_match(analytic, numeric, 2e-2);
          if (match) break;
        }
        EXPECT_TRUE(match) << "parameter " << p->name;
      }
    }
  }
}

// ---- a sparse-feature model is the dense-feature model ------------------------------------------

TEST(SparseFeatures, TrainingMatchesDenseFeatures) {
  for (const auto& [f, hidden] : {std::pair<int64_t, std::vector<int64_t>>{120, {16, 8}}, {5, {12}}}) {
    for (bool standardize : {false, true}) {
      SCOPED_TRACE("F " + std::to_string(f) + (standardize ? ", standardised" : ""));
      const GraphPair gp = make_pair(51, f, 0.05);
      const auto labels = ref::random_labels(kNodes, kClasses, 6);
      hulk::nn::TrainOptions opts;
      opts.epochs = 30;
      Model sparse(gcn_config(f, hidden, standardize, 0.3f)), dense(gcn_config(f, hidden, standardize, 0.3f));
      const auto hs = sparse.fit(gp.sparse, labels, {}, {}, opts);
      const auto hd = dense.fit(gp.dense, labels, {}, {}, opts);
      ASSERT_EQ(hs.size(), hd.size());
      for (size_t i = 0; i < hs.size(); ++i) {
        EXPECT_NEAR(hs[i].train_loss, hd[i].train_loss, 1e-5 * std::fabs(hd[i].train_loss) + 1e-6) << "epoch " << i + 1;
      }
      EXPECT_TRUE(ref::all_close(sparse.logits(gp.sparse), dense.logits(gp.dense), 1e-4, 1e-4));
      if (standardize) {
        for (size_t j = 0; j < static_cast<size_t>(f); ++j) {
          EXPECT_NEAR(sparse.scaler().x_mean[j], dense.scaler().x_mean[j], 1e-6) << "column " << j;
          EXPECT_NEAR(sparse.scaler().x_std[j], dense.scaler().x_std[j], 1e-6 * dense.scaler().x_std[j]) << j;
        }
      }
    }
  }
}

TEST(SparseFeatures, ScalerSumsRepeatedEntriesLikeTheDenseMatrix) {
  std::mt19937 rng(57);
  Csr x = ref::random_csr(30, 6, 0.4, rng, 0, 1);
  // Repeat every entry of row 0 (unsorted, as scipy allows): it then means twice its value.
  const int64_t row0 = x.indptr[1];
  x.indices.insert(x.indices.begin() + row0, x.indices.begin(), x.indices.begin() + row0);
  x.values.insert(x.values.begin() + row0, x.values.begin(), x.values.begin() + row0);
  for (size_t r = 1; r < x.indptr.size(); ++r) x.indptr[r] += row0;
  const ref::EdgeList el = ref::random_graph(ref::GraphKind::Uniform, 30, 40, true, false, 8);
  const Graph sparse(30, el.src, el.dst, x, Tensor(el.num_edges(), 0), {}, true);
  const Graph dense(30, el.src, el.dst, dense_of(x), Tensor(el.num_edges(), 0), {}, true);
  Model a(gcn_config(6, {4}, true, 0.0f)), b(gcn_config(6, {4}, true, 0.0f));
  a.fit_scaler(sparse);
  b.fit_scaler(dense);
  for (size_t j = 0; j < 6; ++j) {
    EXPECT_NEAR(a.scaler().x_mean[j], b.scaler().x_mean[j], 1e-6) << "column " << j;
    EXPECT_NEAR(a.scaler().x_std[j], b.scaler().x_std[j], 1e-6) << "column " << j;
  }
}

TEST(SparseFeatures, BatchStacksTheCsrs) {
  const GraphPair a = make_pair(61, 20, 0.1, 15), b = make_pair(62, 20, 0.1, 25);
  const Graph sparse = hulk::batch_graphs({&a.sparse, &b.sparse});
  const Graph dense = hulk::batch_graphs({&a.dense, &b.dense});
  ASSERT_TRUE(sparse.sparse_features());
  EXPECT_EQ(sparse.num_node_features(), 20);
  EXPECT_TRUE(ref::identical(dense_of(sparse.x_sparse()), dense.x()));
  EXPECT_TRUE(ref::all_close(ref::csr_to_dense(sparse.x_sparse_t()), ref::transpose(ref::to_d(dense.x())), 0, 0));
  EXPECT_TRUE(ref::throws_invalid_argument_with([&] { hulk::batch_graphs({&a.sparse, &b.dense}); },
                                                {"graph 1", "sparse node features"}));
}

// ---- bad input ------------------------------------------------------------------------------

TEST(SparseFeatures, BadCsrIsNamedWithItsValue) {
  std::mt19937 rng(71);
  const Csr good = ref::random_csr(6, 4, 0.5, rng, 0);
  const ref::EdgeList el = ref::random_graph(ref::GraphKind::Uniform, 6, 8, true, false, 3);
  auto build = [&](const Csr& x) { Graph(6, el.src, el.dst, x, Tensor(el.num_edges(), 0), {}, true); };
  EXPECT_NO_THROW(build(good));
  Csr c = good;
  c.num_rows = 5;
  EXPECT_TRUE(ref::throws_invalid_argument_with([&] { build(c); }, {"node features x", "expected 6 rows", "got 5"}));
  c = good;
  c.indptr.pop_back();
  EXPECT_TRUE(ref::throws_invalid_argument_with([&] { build(c); }, {"indptr has 6 entries, expected 7"}));
  c = good;
  c.indices[1] = 4;
  EXPECT_TRUE(ref::throws_invalid_argument_with([&] { build(c); }, {"row 0", "column index 4", "[0, 4)"}));
  c = good;
  c.indices[1] = -3;
  EXPECT_TRUE(ref::throws_invalid_argument_with([&] { build(c); }, {"column index -3"}));
  c = good;
  c.values[2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(ref::throws_invalid_argument_with([&] { build(c); }, {"value nan", "row 0", "not finite"}));
  c = good;
  c.values.back() = -std::numeric_limits<float>::infinity();
  EXPECT_TRUE(ref::throws_invalid_argument_with([&] { build(c); }, {"value -inf", "not finite"}));
  c = good;
  std::swap(c.indptr[2], c.indptr[3]);
  ASSERT_NE(c.indptr[2], c.indptr[3]);  // row 2 is not empty at this seed
  EXPECT_TRUE(ref::throws_invalid_argument_with([&] { build(c); }, {"indptr[3]", "less than indptr[2]"}));
  c = good;
  c.indptr.back() += 1;
  EXPECT_TRUE(ref::throws_invalid_argument_with([&] { build(c); }, {"indptr[6] = ", "column indices"}));
  c = good;
  c.num_cols = int64_t(1) << 31;
  EXPECT_TRUE(ref::throws_invalid_argument_with([&] { build(c); }, {"2147483648 columns", "int32"}));
  c = good;
  c.values[0] = -2.5f;  // negative values are ordinary features
  EXPECT_NO_THROW(build(c));
}

TEST(SparseFeatures, EdgePoolFirstLayerIsRefused) {
  const GraphPair gp = make_pair(81, 10, 0.3);
  ModelConfig c = gcn_config(10, {4}, false, 0.0f);
  c.edge_pool = true;
  Model model(c);
  EXPECT_TRUE(ref::throws_invalid_argument_with([&] { model.logits(gp.sparse); },
                                                {"sparse node features", "EdgePool first layer", "edge_pool=False"}));
  EXPECT_THROW(gp.sparse.x(), std::logic_error);
}

}  // namespace
