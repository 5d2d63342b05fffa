// Crafted weight files: every count, shape, value and configuration field is checked
// against the configuration and the bytes left before anything is allocated or used, and
// a save that fails leaves the previous file intact.
#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "csrc/nn/model.h"
#include "tests/cpp/reference.h"

namespace {

using hulk::Graph;
using hulk::nn::Model;
using hulk::nn::ModelConfig;

struct Crafted {
  std::string name;
  int64_t rows, cols;
  std::vector<float> values;
};

// The configuration lines of a small model: F = 3, Fe = 2, 3 classes, hidden 4,5.
std::vector<std::pair<std::string, std::string>> base_config() {
  return {{"in_features", "3"}, {"edge_features", "2"}, {"num_classes", "3"}, {"hidden", "4,5"},
          {"pooling", "sum"},   {"edge_pool", "1"},     {"per_edge_reference", "0"},
          {"gcn_edge_weights", "0"}, {"standardize", "1"}, {"dropout", "0"}, {"seed", "7"}};
}

ModelConfig base_model_config() {
  ModelConfig c;
  c.in_features = 3;
  c.edge_features = 2;
  c.num_classes = 3;
  c.hidden = {4, 5};
  c.seed = 7;
  return c;
}

// The tensors a valid file of base_config holds: parameters (small values) and a scaler.
std::vector<Crafted> base_tensors(bool scaler = true) {
  Model m(base_model_config());
  std::vector<Crafted> out;
  for (const auto* p : m.parameters()) {
    out.push_back({p->name, p->value.rows(), p->value.cols(),
                   std::vector<float>(p->value.data(), p->value.data() + p->value.size())});
  }
  if (scaler) {
    out.push_back({"scaler.x_mean", 1, 3, {0.5f, 1.0f, -2.0f}});
    out.push_back({"scaler.x_std", 1, 3, {1.0f, 2.0f, 0.5f}});
    out.push_back({"scaler.e_mean", 1, 2, {0.0f, 3.0f}});
    out.push_back({"scaler.e_std", 1, 2, {1.0f, 4.0f}});
  }
  return out;
}

template <typename T>
void put(std::string& s, T v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

// A file of format version 1 (the crafted configurations here) unless `version` says otherwise.
std::string file_bytes(const std::vector<std::pair<std::string, std::string>>& config, const std::vector<Crafted>& tensors,
                       int64_t count = -1, uint32_t version = 1) {
  std::string cfg;
  for (const auto& [k, v] : config) cfg += k + "=" + v + "\n";
  std::string s("HULKGNN\0", 8);
  put<uint32_t>(s, version);
  put<uint32_t>(s, static_cast<uint32_t>(cfg.size()));
  s += cfg;
  put<uint32_t>(s, static_cast<uint32_t>(count >= 0 ? count : static_cast<int64_t>(tensors.size())));
  for (const auto& t : tensors) {
    put<uint32_t>(s, static_cast<uint32_t>(t.name.size()));
    s += t.name;
    put<int64_t>(s, t.rows);
    put<int64_t>(s, t.cols);
    s.append(reinterpret_cast<const char*>(t.values.data()), t.values.size() * sizeof(float));
  }
  return s;
}

class WeightFile : public ::testing::Test {
 protected:
  std::string path = ::testing::TempDir() + "hulk_weight_file_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".bin";
  void TearDown() override { std::remove(path.c_str()); }
  void write(const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }
  std::string read() {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  // The load error for these bytes ("" when it loads).
  std::string error_of(const std::string& bytes) {
    write(bytes);
    try {
      Model::load(path);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  }
};

#define EXPECT_LOAD_ERROR(bytes, fragment)                                                    \
  do {                                                                                        \
    const std::string err_ = error_of(bytes);                                                 \
    EXPECT_NE(err_.find(fragment), std::string::npos) << "error was: '" << err_ << "'";       \
  } while (0)

std::vector<std::pair<std::string, std::string>> with(std::vector<std::pair<std::string, std::string>> cfg,
                                                      const std::string& key, const std::string& value) {
  for (auto& [k, v] : cfg) {
    if (k == key) v = value;
  }
  return cfg;
}

TEST_F(WeightFile, CraftedValidFileLoadsAndPredicts) {
  write(file_bytes(base_config(), base_tensors()));
  Model m = Model::load(path);
  EXPECT_EQ(m.scaler().x_std, (std::vector<float>{1.0f, 2.0f, 0.5f}));
  std::mt19937 rng(1);
  const ref::EdgeList el = ref::random_graph(ref::GraphKind::Uniform, 6, 8, true, false, 3);
  Graph g(6, el.src, el.dst, ref::random_tensor(6, 3, rng), ref::random_tensor(el.num_edges(), 2, rng), {}, true);
  EXPECT_EQ(m.predict(g).size(), 6u);
}

TEST_F(WeightFile, EmptyOrMisshapenScalerIsRejected) {
  // The crash of the issue: scaler arrays empty while the configuration says F = 3.
  auto t = base_tensors();
  for (auto& c : t) {
    if (c.name.rfind("scaler.", 0) == 0) c.rows = 0, c.values.clear();
  }
  EXPECT_LOAD_ERROR(file_bytes(base_config(), t), "tensor 'scaler.x_mean' has shape [0, 3], the configuration implies [1, 3]");
  t = base_tensors();
  t[t.size() - 3] = {"scaler.x_std", 1, 2, {1.0f, 1.0f}};
  EXPECT_LOAD_ERROR(file_bytes(base_config(), t), "tensor 'scaler.x_std' has shape [1, 2]");
  t = base_tensors();
  t.pop_back();  // three scaler arrays of four
  EXPECT_LOAD_ERROR(file_bytes(base_config(), t), "the feature scaler is incomplete: tensor 'scaler.e_std' is missing");
  t = base_tensors();
  t.back().values[1] = 0.0f;
  EXPECT_LOAD_ERROR(file_bytes(base_config(), t), "'scaler.e_std' holds a standard deviation <= 0");
  EXPECT_LOAD_ERROR(file_bytes(with(base_config(), "standardize", "0"), base_tensors()), "standardize=0");
}

TEST_F(WeightFile, NonFiniteValuesAreRejected) {
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    auto t = base_tensors();
    t[2].values[3] = bad;
    EXPECT_LOAD_ERROR(file_bytes(base_config(), t), "tensor '" + t[2].name + "' holds a non-finite value");
  }
  auto t = base_tensors();
  t[6].values[0] = std::numeric_limits<float>::quiet_NaN();  // scaler.x_mean
  EXPECT_LOAD_ERROR(file_bytes(base_config(), t), "'scaler.x_mean' holds a non-finite value");
}

TEST_F(WeightFile, RepeatedUnknownOrTrailingContentIsRejected) {
  auto t = base_tensors();
  t.push_back(t[0]);  // a tensor twice
  EXPECT_LOAD_ERROR(file_bytes(base_config(), t), "appears twice");
  auto cfg = base_config();
  cfg.push_back({"seed", "7"});
  EXPECT_LOAD_ERROR(file_bytes(cfg, base_tensors()), "configuration key 'seed' appears twice");
  cfg = base_config();
  cfg.push_back({"colour", "blue"});
  EXPECT_LOAD_ERROR(file_bytes(cfg, base_tensors()), "unknown configuration key 'colour'");
  cfg = base_config();
  cfg.erase(cfg.begin() + 3);
  EXPECT_LOAD_ERROR(file_bytes(cfg, base_tensors()), "configuration lacks 'hidden'");
  EXPECT_LOAD_ERROR(file_bytes(base_config(), base_tensors()) + "xyz", "3 trailing bytes");
  t = base_tensors();
  t[0].name = "edge_pool.wieght";
  EXPECT_LOAD_ERROR(file_bytes(base_config(), t), "unexpected tensor 'edge_pool.wieght'");
  t = base_tensors();
  t.erase(t.begin() + 3);
  EXPECT_LOAD_ERROR(file_bytes(base_config(), t), "tensor '" + base_tensors()[3].name + "' is missing");
}

TEST_F(WeightFile, MalformedConfigurationValuesAreRejected) {
  EXPECT_LOAD_ERROR(file_bytes(with(base_config(), "seed", "-1"), base_tensors()), "'seed' = '-1' is not a non-negative integer");
  EXPECT_LOAD_ERROR(file_bytes(with(base_config(), "seed", "18446744073709551616"), base_tensors()), "'seed'");
  EXPECT_LOAD_ERROR(file_bytes(with(base_config(), "hidden", "4,,5"), base_tensors()), "'hidden' = ''");
  EXPECT_LOAD_ERROR(file_bytes(with(base_config(), "in_features", "3x"), base_tensors()), "'in_features' = '3x'");
  EXPECT_LOAD_ERROR(file_bytes(with(base_config(), "edge_pool", "yes"), base_tensors()), "'edge_pool' = 'yes' must be 0 or 1");
  EXPECT_LOAD_ERROR(file_bytes(with(base_config(), "dropout", "nan"), base_tensors()), "'dropout' = 'nan'");
  EXPECT_LOAD_ERROR(file_bytes(with(base_config(), "dropout", "1.5"), base_tensors()), "dropout must be in [0, 1)");
  EXPECT_LOAD_ERROR(file_bytes(with(base_config(), "num_classes", "1"), base_tensors()), "num_classes must be >= 2");
}

TEST_F(WeightFile, HugeClaimsFailBeforeAllocating) {
  // A header of a few hundred bytes that claims a model of 2^40 parameters.
  auto cfg = with(with(base_config(), "in_features", "1048576"), "hidden", "1048576");
  const std::string small = file_bytes(cfg, {});
  EXPECT_LT(small.size(), 400u);
  EXPECT_LOAD_ERROR(small, "but only");
  EXPECT_LOAD_ERROR(file_bytes(with(base_config(), "num_classes", "1048577"), {}), "'num_classes' = 1048577 is out of range");
  std::string many_layers = "4";
  for (int i = 0; i < 70; ++i) many_layers += ",4";
  EXPECT_LOAD_ERROR(file_bytes(with(base_config(), "hidden", many_layers), {}), "more than 64 layers");
  // A tensor claiming a huge shape: rejected on the shape, nothing allocated.
  auto t = base_tensors();
  t[0].rows = int64_t{1} << 40;
  t[0].values.clear();
  EXPECT_LOAD_ERROR(file_bytes(base_config(), t), "has shape [1099511627776");
  // Counts and lengths larger than the file.
  EXPECT_LOAD_ERROR(file_bytes(base_config(), base_tensors(), 4000000000), "file ends inside the name of tensor 10");
  std::string s("HULKGNN\0", 8);
  put<uint32_t>(s, 1);
  put<uint32_t>(s, 0xFFFFFFF0u);
  EXPECT_LOAD_ERROR(s, "the configuration claims 4294967280 bytes (at most 16384)");
  // A scaler array whose shape matches but whose bytes are not in the file.
  t = base_tensors();
  t[6].values.clear();
  EXPECT_LOAD_ERROR(file_bytes(base_config(), {t.begin(), t.begin() + 7}), "file ends inside the values of tensor 'scaler.x_mean'");
}

// Version 2: the stack travels as `layers`, and a few bytes of it cannot claim a huge model either.
TEST_F(WeightFile, Version2CarriesTheStack) {
  ModelConfig c = base_model_config();
  c.layers = {{hulk::nn::LayerKind::Dropout, 0, 0.25f, NAN}, {hulk::nn::LayerKind::GcnConv, 6, 0.0f, 5e-4f},
              {hulk::nn::LayerKind::ReLU, 0, 0.0f, NAN},      {hulk::nn::LayerKind::Linear, 3, 0.0f, NAN}};
  Model m(c);
  m.save(path);
  const Model loaded = Model::load(path);
  EXPECT_EQ(loaded.config().layers, c.layers);
  EXPECT_EQ(read().substr(8, 4), std::string("\x02\0\0\0", 4));
  std::vector<std::pair<std::string, std::string>> v2 = {
      {"in_features", "1048576"}, {"edge_features", "2"}, {"num_classes", "3"},
      {"layers", "edge_pool:1048576,relu,gcn:1048576,relu,linear:3"}, {"pooling", "sum"},
      {"per_edge_reference", "0"}, {"gcn_edge_weights", "0"}, {"standardize", "1"}, {"seed", "7"}};
  const std::string small = file_bytes(v2, {}, -1, 2);
  EXPECT_LT(small.size(), 400u);
  EXPECT_LOAD_ERROR(small, "but only");
  EXPECT_LOAD_ERROR(file_bytes(with(v2, "layers", "edge_pool:1048577,linear:3"), {}, -1, 2),
                    "'layers[0] width' = 1048577 is out of range");
}

TEST_F(WeightFile, NotARegularFileIsRejected) {
  EXPECT_THROW(Model::load("/dev/zero"), std::runtime_error);
  try {
    Model::load("/dev/zero");
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
}

TEST_F(WeightFile, SaveRefusesNonFiniteWeightsAndKeepsTheOldFile) {
  write(file_bytes(base_config(), base_tensors()));
  const std::string good = read();
  Model m(base_model_config());
  m.mutable_parameters()[1]->value.data()[0] = std::numeric_limits<float>::infinity();
  try {
    m.save(path);
    ADD_FAILURE() << "save accepted an infinite weight";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read(), good);
}

TEST_F(WeightFile, SaveThatHitsTheFileSizeLimitKeepsTheOldFile) {
  write(file_bytes(base_config(), base_tensors()));
  const std::string good = read();
  ModelConfig big = base_model_config();
  big.hidden = {256, 256};  // about 270 KB of weights
  Model m(big);
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto* previous = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 64 * 1024;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string error;
  try {
    m.save(path);
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, previous);
  EXPECT_NE(error.find("the previous file, if any, is unchanged"), std::string::npos) << error;
  EXPECT_EQ(read(), good);
  Model::load(path);  // still the good model
  // No temporary file is left behind.
  const std::string tmp_prefix = path + ".tmp-";
  for (int i = 0; i < 4; ++i) {
    std::ifstream probe(tmp_prefix + std::to_string(::getpid()) + "-" + std::to_string(i));
    EXPECT_FALSE(probe.good());
  }
}

TEST_F(WeightFile, SaveReplacesAtomicallyAndRoundTrips) {
  write("an old file");
  Model m(base_model_config());
  m.save(path);
  Model loaded = Model::load(path);
  EXPECT_EQ(loaded.num_parameters(), m.num_parameters());
  EXPECT_EQ(loaded.config().seed, 7u);
}

}  // namespace
