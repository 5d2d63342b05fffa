// Weight file format, version 1 (all integers and floats little-endian):
//
//   8 bytes   magic "HULKGNN\0"
//   u32       format version (1)
//   u32 n, n bytes   model configuration as "key=value\n" lines (see write_config)
//   u32       tensor count
//   per tensor: u32 n, n bytes name; i64 rows; i64 cols; rows*cols f32 values
//
// Tensors are the parameters in model order ("edge_pool.weight", "gcn1.weight", ...,
// "classifier.bias") and, when fitted, the feature scaler ("scaler.x_mean", ...). Adam
// moments are not stored: a loaded model predicts identically; training it again starts
// the optimiser afresh.
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "model.h"

namespace hulk::nn {
namespace {

constexpr char kMagic[8] = {'H', 'U', 'L', 'K', 'G', 'N', 'N', '\0'};
constexpr uint32_t kFormatVersion = 1;

static_assert(sizeof(float) == 4, "the weight format stores IEEE float32");

template <typename T>
void put(std::ostream& out, T value) {
  out.write(reinterpret_cast<const char*>(&value), sizeof(T));
}

void put_string(std::ostream& out, const std::string& s) {
  put<uint32_t>(out, static_cast<uint32_t>(s.size()));
  out.write(s.data(), static_cast<std::streamsize>(s.size()));
}

void put_tensor(std::ostream& out, const std::string& name, const Tensor& t) {
  put_string(out, name);
  put<int64_t>(out, t.rows());
  put<int64_t>(out, t.cols());
  out.write(reinterpret_cast<const char*>(t.data()), static_cast<std::streamsize>(t.size() * sizeof(float)));
}

class Reader {
 public:
  Reader(std::istream& in, std::string path) : in_(in), path_(std::move(path)) {}
  template <typename T>
  T get(const char* what) {
    T value{};
    read(&value, sizeof(T), what);
    return value;
  }
  std::string get_string(const char* what, uint32_t limit) {
    const auto n = get<uint32_t>(what);
    if (n > limit) fail(std::string(what) + " has implausible length " + std::to_string(n));
    std::string s(n, '\0');
    read(s.data(), n, what);
    return s;
  }
  void read(void* dst, size_t n, const char* what) {
    in_.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
    if (!in_) fail(std::string("file ends inside ") + what);
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error("cannot load model from '" + path_ + "': " + why);
  }

 private:
  std::istream& in_;
  std::string path_;
};

std::string write_config(const ModelConfig& c) {
  std::ostringstream s;
  s << "in_features=" << c.in_features << "\nedge_features=" << c.edge_features << "\nnum_classes=" << c.num_classes
    << "\nhidden=";
  for (size_t i = 0; i < c.hidden.size(); ++i) s << (i ? "," : "") << c.hidden[i];
  s << "\npooling=" << (c.pooling == ops::Pooling::Sum ? "sum" : "mean") << "\nedge_pool=" << c.edge_pool
    << "\nper_edge_reference=" << c.per_edge_reference << "\ngcn_edge_weights=" << c.gcn_edge_weights
    << "\nstandardize=" << c.standardize << "\ndropout=" << c.dropout << "\nseed=" << c.seed << "\n";
  return s.str();
}

ModelConfig read_config(const std::string& text, const Reader& r) {
  std::map<std::string, std::string> kv;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) r.fail("malformed configuration line '" + line + "'");
    kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  auto field = [&](const char* key) -> const std::string& {
    auto it = kv.find(key);
    if (it == kv.end()) r.fail(std::string("configuration lacks '") + key + "'");
    return it->second;
  };
  ModelConfig c;
  try {
    c.in_features = std::stoll(field("in_features"));
    c.edge_features = std::stoll(field("edge_features"));
    c.num_classes = std::stoll(field("num_classes"));
    c.hidden.clear();
    std::istringstream hs(field("hidden"));
    for (std::string item; std::getline(hs, item, ',');) c.hidden.push_back(std::stoll(item));
    const std::string& pooling = field("pooling");
    if (pooling != "sum" && pooling != "mean") r.fail("unknown pooling '" + pooling + "'");
    c.pooling = pooling == "sum" ? ops::Pooling::Sum : ops::Pooling::Mean;
    c.edge_pool = field("edge_pool") == "1";
    c.per_edge_reference = field("per_edge_reference") == "1";
    c.gcn_edge_weights = field("gcn_edge_weights") == "1";
    c.standardize = field("standardize") == "1";
    c.dropout = std::stof(field("dropout"));
    c.seed = std::stoull(field("seed"));
  } catch (const std::logic_error& e) {  // stoll and friends on a malformed number
    r.fail(std::string("malformed number in configuration: ") + e.what());
  }
  return c;
}

}  // namespace

void Model::save(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot open '" + path + "' for writing");
  out.write(kMagic, sizeof(kMagic));
  put<uint32_t>(out, kFormatVersion);
  put_string(out, write_config(config_));
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const Param* p : parameters()) tensors.emplace_back(p->name, p->value.to(Device::CPU));
  auto row = [](const std::vector<float>& v) { return Tensor::from_data(1, static_cast<int64_t>(v.size()), v.data()); };
  if (scaler_.fitted()) {
    tensors.emplace_back("scaler.x_mean", row(scaler_.x_mean));
    tensors.emplace_back("scaler.x_std", row(scaler_.x_std));
    tensors.emplace_back("scaler.e_mean", row(scaler_.e_mean));
    tensors.emplace_back("scaler.e_std", row(scaler_.e_std));
  }
  put<uint32_t>(out, static_cast<uint32_t>(tensors.size()));
  for (const auto& [name, t] : tensors) put_tensor(out, name, t);
  if (!out) throw std::runtime_error("writing '" + path + "' failed");
}

Model Model::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open '" + path + "' for reading");
  Reader r(in, path);
  char magic[sizeof(kMagic)];
  r.read(magic, sizeof(magic), "the header");
  if (std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) r.fail("not a hulk model file (bad magic bytes)");
  const auto version = r.get<uint32_t>("the format version");
  if (version != kFormatVersion) {
    r.fail("format version " + std::to_string(version) + " is not supported (this build reads version " +
           std::to_string(kFormatVersion) + ")");
  }
  ModelConfig config = read_config(r.get_string("the configuration", 1 << 16), r);
  try {
    config.validate();
  } catch (const std::invalid_argument& e) {
    r.fail(std::string("invalid configuration: ") + e.what());
  }
  Model model(config);
  std::map<std::string, Tensor> tensors;
  const auto count = r.get<uint32_t>("the tensor count");
  for (uint32_t i = 0; i < count; ++i) {
    std::string name = r.get_string("a tensor name", 256);
    const auto rows = r.get<int64_t>("a tensor shape");
    const auto cols = r.get<int64_t>("a tensor shape");
    if (rows < 0 || cols < 0 || rows * cols > (int64_t{1} << 34)) {
      r.fail("tensor '" + name + "' has implausible shape [" + std::to_string(rows) + ", " + std::to_string(cols) + "]");
    }
    Tensor t(rows, cols);
    r.read(t.data(), static_cast<size_t>(t.size()) * sizeof(float), "tensor data");
    tensors[name] = std::move(t);
  }
  for (Param* p : model.mutable_parameters()) {
    auto it = tensors.find(p->name);
    if (it == tensors.end()) r.fail("tensor '" + p->name + "' is missing");
    if (!it->second.same_shape(p->value)) {
      r.fail("tensor '" + p->name + "' has shape " + it->second.shape_str() + ", the configuration implies " +
             p->value.shape_str());
    }
    p->value = std::move(it->second);
    tensors.erase(it);
  }
  auto vec = [&](const char* name, int64_t expected) {
    auto it = tensors.find(name);
    if (it == tensors.end()) r.fail(std::string("tensor '") + name + "' is missing");
    if (it->second.cols() != expected) r.fail(std::string("tensor '") + name + "' has the wrong length");
    std::vector<float> v(it->second.data(), it->second.data() + it->second.size());
    tensors.erase(it);
    return v;
  };
  if (tensors.count("scaler.x_mean")) {
    model.scaler_.x_mean = vec("scaler.x_mean", config.in_features);
    model.scaler_.x_std = vec("scaler.x_std", config.in_features);
    model.scaler_.e_mean = vec("scaler.e_mean", config.edge_features);
    model.scaler_.e_std = vec("scaler.e_std", config.edge_features);
  }
  if (!tensors.empty()) r.fail("unexpected tensor '" + tensors.begin()->first + "'");
  return model;
}

}  // namespace hulk::nn
