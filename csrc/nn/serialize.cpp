// Weight file format, version 2 (all integers and floats little-endian):
//
//   8 bytes   magic "HULKGNN\0"
//   u32       format version (2; version 1 files still load)
//   u32 n, n bytes   model configuration as "key=value\n" lines (see write_config)
//   u32       tensor count
//   per tensor: u32 n, n bytes name; i64 rows; i64 cols; rows*cols f32 values
//
// Version 2's configuration keys: in_features, edge_features, num_classes, layers, pooling,
// per_edge_reference, gcn_edge_weights, standardize, seed. `layers` is the stack
// (csrc/nn/stack.h), its entries separated by ',', each a kind and its fields separated by ':':
// "edge_pool:W", "gcn:W", "linear:W" with an optional ":D" (the layer's weight decay), "relu",
// "dropout:P". Kipf and Welling's GCN on 7 classes: "gcn:16:0.0005,relu,dropout:0.5,gcn:7".
// Version 1 had no `layers` but the shortcut's keys hidden (comma-separated widths),
// edge_pool (0/1) and dropout: the stack csrc/nn/stack.h's gnn_stack builds from them.
//
// Tensors are the parameters in model order ("edge_pool.weight", "gcn1.weight", ...,
// "linear1.weight", ..., "classifier.bias": GCNConv and Linear layers numbered from 1 in stack
// order, a Linear last is the classifier) and, when fitted, the feature scaler
// ("scaler.x_mean", ...). Adam moments are not stored: a loaded model predicts identically;
// training it again starts the optimiser afresh.
//
// Loading trusts nothing in the file. The configuration must hold each known key exactly
// once, with a well-formed value inside the limits below (no sign on the seed, no extra
// keys). The parameter bytes the configuration implies must fit in the bytes left in the
// file before the model is built, so a header of a few hundred bytes cannot make the
// process allocate gigabytes. Every tensor must be one the configuration expects, appear
// once, have exactly the expected shape and hold finite values; the scaler comes as all four
// arrays or none, with positive standard deviations; nothing may follow the last tensor.
//
// Saving writes the whole file to a temporary file in the same folder, flushes it to disk
// and renames it over the target, so a failed or killed save leaves the old file intact.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "csrc/nn/model.h"

namespace hulk::nn {
namespace {

constexpr char kMagic[8] = {'H', 'U', 'L', 'K', 'G', 'N', 'N', '\0'};
constexpr uint32_t kFormatVersion = 2;
constexpr uint32_t kOldestVersion = 1;
// Sane limits for what a weight file may claim (far above any model this engine trains).
constexpr int64_t kMaxWidth = kMaxLayerWidth;  // in_features, edge_features, num_classes, each layer's width
constexpr size_t kMaxLayers = 64;              // entries of hidden (version 1)
constexpr uint32_t kMaxConfigBytes = 16384;    // the configuration text (kMaxStackLayers entries of ~30 bytes)
constexpr uint32_t kMaxNameBytes = 64;        // a tensor name

static_assert(sizeof(float) == 4, "the weight format stores IEEE float32");

template <typename T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

void put_string(std::string& out, const std::string& s) {
  put<uint32_t>(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

void put_tensor(std::string& out, const std::string& name, const float* data, int64_t rows, int64_t cols) {
  put_string(out, name);
  put<int64_t>(out, rows);
  put<int64_t>(out, cols);
  out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(rows * cols) * sizeof(float));
}

// Writes bytes to a temporary file beside path, flushes it to disk and renames it over path.
void write_atomically(const std::string& path, const std::string& bytes) {
  static std::atomic<unsigned> counter{0};
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  auto fail = [&](const std::string& what, int err) {
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot save model to '" + path + "': " + what + " '" + tmp + "' failed (" +
                             std::strerror(err) + "); the previous file, if any, is unchanged");
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    throw std::runtime_error("cannot save model to '" + path + "': cannot create '" + tmp + "' (" +
                             std::strerror(err) + ")");
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      fail("writing", err);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    fail("flushing", err);
  }
  if (::close(fd) != 0) fail("closing", errno);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("renaming", errno);
}

class Reader {
 public:
  Reader(std::istream& in, std::string path, uint64_t size) : in_(in), path_(std::move(path)), left_(size) {}
  template <typename T>
  T get(const std::string& what) {
    T value{};
    read(&value, sizeof(T), what);
    return value;
  }
  std::string get_string(const std::string& what, uint32_t limit) {
    const auto n = get<uint32_t>(what + " length");
    if (n > limit) fail(what + " claims " + std::to_string(n) + " bytes (at most " + std::to_string(limit) + ")");
    if (n > left_) {
      fail("file ends inside " + what + " (it claims " + std::to_string(n) + " bytes, " + std::to_string(left_) +
           " are left)");
    }
    std::string s(n, '\0');
    read(s.data(), n, what);
    return s;
  }
  void read(void* dst, uint64_t n, const std::string& what) {
    if (n > left_) fail("file ends inside " + what + " (needs " + std::to_string(n) + " bytes, " + std::to_string(left_) + " left)");
    in_.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
    if (!in_) fail("file ends inside " + what);
    left_ -= n;
  }
  uint64_t left() const { return left_; }
  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error("cannot load model from '" + path_ + "': " + why);
  }

 private:
  std::istream& in_;
  std::string path_;
  uint64_t left_;
};

// Shortest text that reads back as the same float.
std::string float_text(float v) {
  std::ostringstream s;
  s << std::setprecision(std::numeric_limits<float>::max_digits10) << v;
  return s.str();
}

std::string write_layers(const std::vector<LayerSpec>& layers) {
  std::string out;
  for (size_t i = 0; i < layers.size(); ++i) {
    const LayerSpec& l = layers[i];
    out += (i ? "," : "") + std::string(layer_kind_name(l.kind));
    if (l.has_params()) {
      out += ":" + std::to_string(l.width);
      if (!std::isnan(l.weight_decay)) out += ":" + float_text(l.weight_decay);
    } else if (l.kind == LayerKind::Dropout) {
      out += ":" + float_text(l.rate);
    }
  }
  return out;
}

// Version 2's configuration of a model (its config's layers hold the stack).
std::string write_config(const ModelConfig& c) {
  std::ostringstream s;
  s << "in_features=" << c.in_features << "\nedge_features=" << c.edge_features << "\nnum_classes=" << c.num_classes
    << "\nlayers=" << write_layers(c.layers) << "\npooling=" << (c.pooling == ops::Pooling::Sum ? "sum" : "mean")
    << "\nper_edge_reference=" << c.per_edge_reference << "\ngcn_edge_weights=" << c.gcn_edge_weights
    << "\nstandardize=" << c.standardize << "\nseed=" << c.seed << "\n";
  return s.str();
}

// A decimal integer without sign, spaces or other characters, at most max.
uint64_t parse_uint(const std::string& key, const std::string& text, uint64_t max, const Reader& r) {
  if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos) {
    r.fail("malformed number in configuration: '" + key + "' = '" + text + "' is not a non-negative integer");
  }
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE || v > max) {
    r.fail("configuration '" + key + "' = " + text + " is out of range [0, " + std::to_string(max) + "]");
  }
  return v;
}

bool parse_bool(const std::string& key, const std::string& text, const Reader& r) {
  if (text != "0" && text != "1") r.fail("configuration '" + key + "' = '" + text + "' must be 0 or 1");
  return text == "1";
}

// A finite decimal number.
float parse_float(const std::string& key, const std::string& text, const Reader& r) {
  char* end = nullptr;
  const double d = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(d)) {
    r.fail("configuration '" + key + "' = '" + text + "' is not a finite number");
  }
  return static_cast<float>(d);
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(sep, start);
    out.push_back(text.substr(start, at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

// Version 2's `layers` (the stack is checked as a whole by ModelConfig::validate).
std::vector<LayerSpec> parse_layers(const std::string& text, const Reader& r) {
  std::vector<LayerSpec> out;
  for (const std::string& entry : split(text, ',')) {
    if (out.size() == kMaxStackLayers) {
      r.fail("configuration 'layers' lists more than " + std::to_string(kMaxStackLayers) + " layers");
    }
    const std::string key = "layers[" + std::to_string(out.size()) + "]";
    const std::vector<std::string> f = split(entry, ':');
    LayerSpec l;
    try {
      l.kind = parse_layer_kind(f[0], "configuration '" + key + "'");
    } catch (const std::invalid_argument& e) {
      r.fail(e.what());
    }
    const size_t fields = l.has_params() || l.kind == LayerKind::Dropout ? 1 : 0;  // the width or rate
    const size_t optional = l.has_params() ? 1 : 0;  // the weight decay
    if (f.size() - 1 < fields || f.size() - 1 > fields + optional) {
      r.fail("configuration '" + key + "' = '" + entry + "' has " + std::to_string(f.size() - 1) + " fields, " +
             layer_kind_name(l.kind) + " takes " + std::to_string(fields) +
             (optional ? " or " + std::to_string(fields + optional) : std::string()));
    }
    if (l.has_params()) {
      l.width = static_cast<int64_t>(parse_uint(key + " width", f[1], static_cast<uint64_t>(kMaxWidth), r));
      if (f.size() == 3) l.weight_decay = parse_float(key + " weight_decay", f[2], r);
    } else if (l.kind == LayerKind::Dropout) {
      l.rate = parse_float(key + " rate", f[1], r);
    }
    out.push_back(l);
  }
  return out;
}

// Version 1's shortcut keys: comma-separated hidden widths.
std::vector<int64_t> parse_hidden(const std::string& hidden, const Reader& r) {
  std::vector<int64_t> out;
  for (const std::string& w : split(hidden, ',')) {
    if (out.size() == kMaxLayers) r.fail("configuration 'hidden' lists more than " + std::to_string(kMaxLayers) + " layers");
    out.push_back(static_cast<int64_t>(parse_uint("hidden", w, static_cast<uint64_t>(kMaxWidth), r)));
  }
  return out;
}

ModelConfig read_config(const std::string& text, uint32_t version, const Reader& r) {
  static const std::set<std::string> common = {"in_features", "edge_features", "num_classes", "pooling",
                                               "per_edge_reference", "gcn_edge_weights", "standardize", "seed"};
  std::set<std::string> known = common;
  if (version == 1) {
    known.insert({"hidden", "edge_pool", "dropout"});
  } else {
    known.insert("layers");
  }
  std::map<std::string, std::string> kv;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) r.fail("malformed configuration line '" + line + "'");
    std::string key = line.substr(0, eq);
    if (!known.count(key)) r.fail("unknown configuration key '" + key + "'");
    if (!kv.emplace(key, line.substr(eq + 1)).second) r.fail("configuration key '" + key + "' appears twice");
  }
  for (const auto& key : known) {
    if (!kv.count(key)) r.fail("configuration lacks '" + key + "'");
  }
  const auto width = static_cast<uint64_t>(kMaxWidth);
  ModelConfig c;
  c.in_features = static_cast<int64_t>(parse_uint("in_features", kv["in_features"], width, r));
  c.edge_features = static_cast<int64_t>(parse_uint("edge_features", kv["edge_features"], width, r));
  c.num_classes = static_cast<int64_t>(parse_uint("num_classes", kv["num_classes"], width, r));
  if (version == 1) {
    c.hidden = parse_hidden(kv["hidden"], r);
    c.edge_pool = parse_bool("edge_pool", kv["edge_pool"], r);
    c.dropout = parse_float("dropout", kv["dropout"], r);
  } else {
    c.layers = parse_layers(kv["layers"], r);
  }
  const std::string& pooling = kv["pooling"];
  if (pooling != "sum" && pooling != "mean") r.fail("configuration 'pooling' = '" + pooling + "' must be sum or mean");
  c.pooling = pooling == "sum" ? ops::Pooling::Sum : ops::Pooling::Mean;
  c.per_edge_reference = parse_bool("per_edge_reference", kv["per_edge_reference"], r);
  c.gcn_edge_weights = parse_bool("gcn_edge_weights", kv["gcn_edge_weights"], r);
  c.standardize = parse_bool("standardize", kv["standardize"], r);
  c.seed = parse_uint("seed", kv["seed"], UINT64_MAX, r);
  try {
    c.validate();
  } catch (const std::invalid_argument& e) {
    r.fail(std::string("invalid configuration: ") + e.what());
  }
  c.layers = c.stack();  // version 1: the shortcut's stack
  return c;
}

// Parameter count the configuration's stack implies (mirrors the layer constructors in
// model.cpp; a mismatch is caught by the per-tensor shape checks). Widths and the stack's
// length are bounded, so no overflow.
int64_t implied_parameters(const ModelConfig& c) {
  int64_t n = 0, width = c.in_features;
  for (const LayerSpec& l : c.layers) {
    if (!l.has_params()) continue;
    n += (l.kind == LayerKind::EdgePool ? 2 * width + c.edge_features + 1 : width + 1) * l.width;
    width = l.width;
  }
  return n;
}

struct Slot {
  float* data;                 // a parameter's values, or
  std::vector<float>* scaler;  // a scaler array, sized once its shape and bytes are checked
  int64_t rows, cols;
};

std::string shape_str(int64_t rows, int64_t cols) {
  return "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
}

}  // namespace

void Model::save(const std::string& path) const {
  // Host copies of the weights (a CUDA model's live on the device); the file is the same.
  std::vector<Tensor> host;
  for (const Param* p : parameters()) host.push_back(p->value.to(Device::CPU));
  std::vector<std::tuple<std::string, const float*, int64_t, int64_t>> tensors;
  size_t k = 0;
  for (const Param* p : parameters()) {
    const Tensor& t = host[k++];
    tensors.emplace_back(p->name, t.data(), t.rows(), t.cols());
  }
  if (scaler_.fitted()) {
    for (const auto& [name, v] : {std::pair<const char*, const std::vector<float>*>{"scaler.x_mean", &scaler_.x_mean},
                                  {"scaler.x_std", &scaler_.x_std},
                                  {"scaler.e_mean", &scaler_.e_mean},
                                  {"scaler.e_std", &scaler_.e_std}}) {
      tensors.emplace_back(name, v->data(), 1, static_cast<int64_t>(v->size()));
    }
  }
  for (const auto& [name, data, rows, cols] : tensors) {
    for (int64_t i = 0; i < rows * cols; ++i) {
      if (!std::isfinite(data[i])) {
        throw std::runtime_error("cannot save model to '" + path + "': tensor '" + name + "' holds a non-finite value (" +
                                 std::to_string(data[i]) + " at index " + std::to_string(i) +
                                 "); training diverged, lower the learning rate");
      }
    }
  }
  std::string out(kMagic, sizeof(kMagic));
  put<uint32_t>(out, kFormatVersion);
  put_string(out, write_config(config_));
  put<uint32_t>(out, static_cast<uint32_t>(tensors.size()));
  for (const auto& [name, data, rows, cols] : tensors) put_tensor(out, name, data, rows, cols);
  write_atomically(path, out);
}

namespace {

// The magic bytes and the format version (returned).
uint32_t read_header(Reader& r) {
  char magic[sizeof(kMagic)];
  r.read(magic, sizeof(magic), "the header");
  if (std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) r.fail("not a hulk model file (bad magic bytes)");
  const auto version = r.get<uint32_t>("the format version");
  if (version < kOldestVersion || version > kFormatVersion) {
    r.fail("format version " + std::to_string(version) + " is not supported (this build reads versions " +
           std::to_string(kOldestVersion) + " to " + std::to_string(kFormatVersion) + ")");
  }
  return version;
}

// Tensor i of the file (name, shape, values) into its slot of `expected`, checked against the
// configuration: known and not repeated, the implied shape, finite values, positive standard
// deviations, and a scaler only when the configuration standardises.
void read_tensor(Reader& r, const ModelConfig& config, const std::map<std::string, Slot>& expected, uint32_t i,
                 std::set<std::string>& seen) {
  const std::string name = r.get_string("the name of tensor " + std::to_string(i), kMaxNameBytes);
  const auto it = expected.find(name);
  if (it == expected.end()) r.fail("unexpected tensor '" + name + "' (not implied by the configuration)");
  if (!seen.insert(name).second) r.fail("tensor '" + name + "' appears twice");
  const auto rows = r.get<int64_t>("the shape of tensor '" + name + "'");
  const auto cols = r.get<int64_t>("the shape of tensor '" + name + "'");
  const Slot& slot = it->second;
  if (rows != slot.rows || cols != slot.cols) {
    r.fail("tensor '" + name + "' has shape " + shape_str(rows, cols) + ", the configuration implies " +
           shape_str(slot.rows, slot.cols));
  }
  const int64_t n = slot.rows * slot.cols;
  const uint64_t bytes = static_cast<uint64_t>(n) * sizeof(float);
  if (bytes > r.left()) {
    r.fail("file ends inside the values of tensor '" + name + "' (needs " + std::to_string(bytes) + " bytes, " +
           std::to_string(r.left()) + " left)");
  }
  float* data = slot.data;
  if (slot.scaler != nullptr) {
    if (!config.standardize) r.fail("the file holds a feature scaler ('" + name + "') but the configuration says standardize=0");
    slot.scaler->assign(static_cast<size_t>(n), 0.0f);
    data = slot.scaler->data();
  }
  r.read(data, bytes, "the values of tensor '" + name + "'");
  const bool is_std = name == "scaler.x_std" || name == "scaler.e_std";
  for (int64_t k = 0; k < n; ++k) {
    if (!std::isfinite(data[k])) {
      r.fail("tensor '" + name + "' holds a non-finite value (" + std::to_string(data[k]) + ") at index " +
             std::to_string(k));
    }
    if (is_std && !(data[k] > 0.0f)) {
      r.fail("tensor '" + name + "' holds a standard deviation <= 0 (" + std::to_string(data[k]) + ") at index " +
             std::to_string(k));
    }
  }
}

// Every parameter read, and the feature scaler either absent or complete.
void check_every_tensor_read(Reader& r, const std::map<std::string, Slot>& expected, const std::set<std::string>& seen) {
  size_t scaler_seen = 0;
  for (const auto& [name, slot] : expected) {
    if (slot.scaler != nullptr) {
      scaler_seen += seen.count(name);
    } else if (!seen.count(name)) {
      r.fail("tensor '" + name + "' is missing");
    }
  }
  if (scaler_seen != 0 && scaler_seen != 4) {
    for (const char* name : {"scaler.x_mean", "scaler.x_std", "scaler.e_mean", "scaler.e_std"}) {
      if (!seen.count(name)) r.fail("the feature scaler is incomplete: tensor '" + std::string(name) + "' is missing");
    }
  }
}

}  // namespace

Model Model::load(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    throw std::runtime_error("cannot open '" + path + "' for reading (" + std::strerror(err) + ")");
  }
  if (!S_ISREG(st.st_mode)) throw std::runtime_error("cannot load model from '" + path + "': not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open '" + path + "' for reading");
  Reader r(in, path, static_cast<uint64_t>(st.st_size));
  const uint32_t version = read_header(r);
  const ModelConfig config = read_config(r.get_string("the configuration", kMaxConfigBytes), version, r);
  // The parameters alone need this many bytes: check before the model allocates them.
  const uint64_t need = static_cast<uint64_t>(implied_parameters(config)) * sizeof(float);
  if (need > r.left()) {
    r.fail("file ends inside the parameters: the configuration implies " + std::to_string(need / sizeof(float)) +
           " parameters (" + std::to_string(need) + " bytes) but only " + std::to_string(r.left()) +
           " bytes are left in the file");
  }
  Model model(config);
  // Where each expected tensor goes: a parameter (allocated by the model, within the bytes
  // checked above) or a scaler array (sized only once its shape and bytes are checked).
  std::map<std::string, Slot> expected;
  for (Param* p : model.mutable_parameters()) expected[p->name] = {p->value.data(), nullptr, p->value.rows(), p->value.cols()};
  FeatureScaler& sc = model.scaler_;
  expected["scaler.x_mean"] = {nullptr, &sc.x_mean, 1, config.in_features};
  expected["scaler.x_std"] = {nullptr, &sc.x_std, 1, config.in_features};
  expected["scaler.e_mean"] = {nullptr, &sc.e_mean, 1, config.edge_features};
  expected["scaler.e_std"] = {nullptr, &sc.e_std, 1, config.edge_features};
  // Every tensor takes at least 20 bytes, so the count is bounded by the file; a tensor
  // beyond the expected ones is unexpected or repeated and fails below.
  const auto count = r.get<uint32_t>("the tensor count");
  std::set<std::string> seen;
  for (uint32_t i = 0; i < count; ++i) read_tensor(r, config, expected, i, seen);
  check_every_tensor_read(r, expected, seen);
  if (r.left() != 0 || in.peek() != std::char_traits<char>::eof()) {
    r.fail(std::to_string(r.left()) + " trailing bytes after the last tensor");
  }
  return model;
}

}  // namespace hulk::nn
