// The public ops: argument checks and output sizing, written once for both devices, then
// the backend's primitive through HULK_BACKEND (backends.h).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "csrc/ops/backends.h"

namespace hulk::ops {

Device common_device(const char* op, std::initializer_list<std::pair<const char*, const Tensor*>> tensors) {
  const std::pair<const char*, const Tensor*>* first = nullptr;
  for (const auto& t : tensors) {
    if (t.second == nullptr) continue;
    if (first == nullptr) {
      first = &t;
    } else if (t.second->device() != first->second->device()) {
      throw std::invalid_argument(std::string(op) + ": " + t.first + " is on " + device_name(t.second->device()) +
                                  " but " + first->first + " is on " + device_name(first->second->device()));
    }
  }
  return first ? first->second->device() : Device::CPU;
}

// ---- dense -------------------------------------------------------------------------------

void gemm(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b, Tensor& c, float alpha, float beta) {
  const Device dev = common_device("gemm", {{"a", &a}, {"b", &b}});
  const int64_t m = trans_a ? a.cols() : a.rows();
  const int64_t k = trans_a ? a.rows() : a.cols();
  const int64_t kb = trans_b ? b.cols() : b.rows();
  const int64_t n = trans_b ? b.rows() : b.cols();
  if (k != kb) {
    throw std::invalid_argument("gemm: inner dimensions differ: op(a) is [" + std::to_string(m) + ", " +
                                std::to_string(k) + "], op(b) is [" + std::to_string(kb) + ", " +
                                std::to_string(n) + "]");
  }
  if (beta == 0.0f) {
    if (c.rows() != m || c.cols() != n || c.device() != dev) c.reset(m, n, dev);
  } else {
    check_shape(c, m, n, "gemm: accumulated output c");
    check_device(c, dev, "gemm: accumulated output c");
  }
  if (m == 0 || n == 0) return;
  if (k == 0) {  // BLAS would not touch c; the product is zero.
    if (beta == 0.0f) {
      c.fill(0.0f);  // beta == 0 means c is never read, even when it holds NaN
    } else {
      HULK_BACKEND(dev, scale, c, beta);
    }
    return;
  }
  HULK_BACKEND(dev, gemm, a, trans_a, b, trans_b, c, alpha, beta);
}

void add_bias(Tensor& out, const Tensor& bias) {
  const Device dev = common_device("add_bias", {{"out", &out}, {"bias", &bias}});
  check_shape(bias, 1, out.cols(), "add_bias: bias");
  if (out.empty()) return;
  HULK_BACKEND(dev, add_bias, out, bias, nullptr);
}

void bias_grad(const Tensor& dy, const Tensor* row_scale, Tensor& db, bool accumulate) {
  const Device dev = common_device("bias_grad", {{"dy", &dy}, {"row_scale", row_scale}});
  if (row_scale) check_shape(*row_scale, dy.rows(), 1, "bias_grad: row_scale");
  if (!accumulate) db.reset(1, dy.cols(), dev);
  check_shape(db, 1, dy.cols(), "bias_grad: db");
  check_device(db, dev, "bias_grad: db");
  if (dy.empty()) return;
  HULK_BACKEND(dev, bias_grad, dy, row_scale, db);
}

void relu_forward(const Tensor& x, Tensor& y) {
  const Device dev = x.device();
  if (!y.same_shape(x) || y.device() != dev) y.reset(x.rows(), x.cols(), dev);
  if (x.empty()) return;
  HULK_BACKEND(dev, relu_forward, x, y);
}

void relu_backward(const Tensor& y, const Tensor& dy, Tensor& dx) {
  const Device dev = common_device("relu_backward", {{"y", &y}, {"dy", &dy}});
  check_shape(dy, y.rows(), y.cols(), "relu_backward: dy");
  if (!dx.same_shape(y) || dx.device() != dev) dx.reset(y.rows(), y.cols(), dev);
  if (y.empty()) return;
  HULK_BACKEND(dev, relu_backward, y, dy, dx);
}

namespace {
// Shared by forward and backward: out = in * mask / (1 - p).
void apply_dropout_mask(const Tensor& in, float p, uint64_t seed, uint64_t step, Tensor& out) {
  if (!(p >= 0.0f && p < 1.0f)) throw std::invalid_argument("dropout: p must be in [0, 1), got " + std::to_string(p));
  if (!out.same_shape(in) || out.device() != in.device()) out.reset(in.rows(), in.cols(), in.device());
  if (in.empty()) return;
  HULK_BACKEND(in.device(), dropout, in, p, seed, step, out);
}
}  // namespace

void dropout_forward(const Tensor& x, float p, uint64_t seed, uint64_t step, Tensor& y) {
  apply_dropout_mask(x, p, seed, step, y);
}

void dropout_backward(const Tensor& dy, float p, uint64_t seed, uint64_t step, Tensor& dx) {
  apply_dropout_mask(dy, p, seed, step, dx);
}

// ---- sparse ------------------------------------------------------------------------------

void spmm(const Csr& a, const Tensor& x, Tensor& out, bool weighted) {
  check_shape(x, a.num_cols, -1, "spmm: dense input x");
  const Device dev = x.device();
  out.reset(a.num_rows, x.cols(), dev);
  if (out.empty() || a.nnz() == 0) return;
  HULK_BACKEND(dev, spmm, a, x, out, weighted && a.weighted());
}

void dropout_csr(const Csr& x, float p, uint64_t seed, uint64_t step, Device device, Csr& out) {
  if (!(p >= 0.0f && p < 1.0f)) throw std::invalid_argument("dropout_csr: p must be in [0, 1), got " + std::to_string(p));
  if (x.values.size() != x.indices.size() || out.values.size() != out.indices.size() ||
      out.num_rows != x.num_rows || out.num_cols != x.num_cols || out.nnz() != x.nnz()) {
    throw std::invalid_argument("dropout_csr: out must have x's structure, and both a value per entry");
  }
  if (x.nnz() == 0) return;
  HULK_BACKEND(device, dropout_csr, x, p, seed, step, out);
}

void gather_csr_values(const Csr& src, Device device, Csr& out) {
  if (src.values.size() != src.indices.size() || out.values.size() != out.indices.size() ||
      out.nnz() != src.nnz() || static_cast<int64_t>(out.edge_ids.size()) != out.nnz()) {
    throw std::invalid_argument("gather_csr_values: out needs src's number of entries, values and edge ids");
  }
  if (out.nnz() == 0) return;
  HULK_BACKEND(device, gather_csr_values, src, out);
}

void spmm_host(const Csr& a, const float* x, int64_t f, float* out, bool weighted) {
  if (f < 0) throw std::invalid_argument("spmm_host: feature count must be >= 0, got " + std::to_string(f));
  if (a.num_rows == 0 || f == 0) return;
  if (a.nnz() == 0) {
    std::fill(out, out + a.num_rows * f, 0.0f);
    return;
  }
  cpu::spmm_host(a, x, f, out, weighted && a.weighted());
}

void check_edge_ids(const Csr& a, const Tensor& e, const char* op) {
  if (a.edge_ids.size() != static_cast<size_t>(a.nnz())) {
    throw std::invalid_argument(std::string(op) + ": the CSR carries no edge ids");
  }
  for (int64_t id : a.edge_ids) {
    if (id < 0 || id >= e.rows()) {
      throw std::invalid_argument(std::string(op) + ": edge id " + std::to_string(id) + " is out of range for " +
                                  std::to_string(e.rows()) + " edge feature rows");
    }
  }
}

void segment_sum_edges(const Csr& a, const Tensor& e, Tensor& out) {
  const Device dev = e.device();
  out.reset(a.num_rows, e.cols(), dev);
  if (out.empty()) return;  // nothing to gather; edge ids are not needed
  check_edge_ids(a, e, "segment_sum_edges");
  if (a.nnz() == 0) return;
  HULK_BACKEND(dev, segment_sum_edges, a, e, out);
}

PoolCoefficients pool_coefficients(const Csr& a, Pooling pooling, Device device) {
  PoolCoefficients c;
  c.self_coef.reset(a.num_rows, 1, device);
  c.nbr_coef.reset(a.num_rows, 1, device);
  if (a.num_rows > 0) HULK_BACKEND(device, pool_coefficients, a, pooling, c.self_coef, c.nbr_coef);
  return c;
}

// ---- loss and optimiser -------------------------------------------------------------------

void softmax(const Tensor& logits, Tensor& probs) {
  const Device dev = logits.device();
  if (!probs.same_shape(logits) || probs.device() != dev) probs.reset(logits.rows(), logits.cols(), dev);
  if (logits.empty()) return;
  HULK_BACKEND(dev, softmax, logits, probs);
}

LossResult softmax_cross_entropy(const Tensor& logits, const int64_t* labels, const uint8_t* mask, Tensor* grad) {
  const int64_t n = logits.rows(), c = logits.cols();
  if (c == 0) throw std::invalid_argument("softmax_cross_entropy: logits have no classes");
  LossResult r;
  for (int64_t i = 0; i < n; ++i) {
    if (mask && !mask[i]) continue;
    if (labels[i] < -1 || labels[i] >= c) {
      throw std::invalid_argument("softmax_cross_entropy: label of node " + std::to_string(i) + " is " +
                                  std::to_string(labels[i]) + ", expected -1 (unlabelled) or a class in [0, " +
                                  std::to_string(c) + ")");
    }
    if (labels[i] >= 0) ++r.count;
  }
  if (grad) grad->reset(n, c, logits.device());
  if (r.count == 0) return r;
  return HULK_BACKEND(logits.device(), softmax_cross_entropy, logits, labels, mask, grad);
}

LossTargets make_loss_targets(const int64_t* labels, const uint8_t* mask, int64_t rows, int64_t classes,
                              Device device) {
  if (classes <= 0) throw std::invalid_argument("softmax_cross_entropy: logits have no classes");
  LossTargets t;
  t.device = device;
  t.rows = rows;
  t.classes = classes;
  t.host.assign(static_cast<size_t>(rows), -1);
  for (int64_t i = 0; i < rows; ++i) {
    if (mask && !mask[i]) continue;
    if (labels[i] < -1 || labels[i] >= classes) {
      throw std::invalid_argument("softmax_cross_entropy: label of node " + std::to_string(i) + " is " +
                                  std::to_string(labels[i]) + ", expected -1 (unlabelled) or a class in [0, " +
                                  std::to_string(classes) + ")");
    }
    if (labels[i] >= 0) {
      t.host[i] = labels[i];
      ++t.count;
    }
  }
  if (device == Device::CUDA) {
    t.on_device = DeviceArray<int64_t>::from_host(t.host);
    t.host.clear();
  }
  return t;
}

LossBatch::LossBatch(Device device, int64_t max_losses) : device_(device), max_losses_(max_losses) {
#ifdef HULK_WITH_CUDA
  if (device == Device::CUDA) sums_ = DeviceArray<double>(static_cast<size_t>(max_losses * cuda::kLossSums));
#endif
}

void LossBatch::add(const Tensor& logits, const LossTargets& t, Tensor* grad) {
  check_device(logits, device_, "LossBatch: logits");
  if (t.device != device_ || t.rows != logits.rows() || t.classes != logits.cols())
    throw std::invalid_argument("LossBatch: targets of another shape or device than the logits");
  if (t.count == 0) throw std::invalid_argument("LossBatch: no row counted");
  if (static_cast<int64_t>(results_.size()) >= max_losses_) throw std::logic_error("LossBatch: full, read() first");
  if (grad) grad->reset(logits.rows(), logits.cols(), device_);
  if (device_ == Device::CPU) {
    // The targets fold the mask in: the same rows, summed in the same order.
    results_.push_back(cpu::softmax_cross_entropy(logits, t.host.data(), nullptr, grad));
    return;
  }
#ifdef HULK_WITH_CUDA
  cuda::softmax_cross_entropy_sums(logits, t.on_device.data(), nullptr, t.count, grad,
                                   sums_.data() + results_.size() * cuda::kLossSums);
#endif
  LossResult r;
  r.count = t.count;
  results_.push_back(r);
  rows_.push_back(logits.rows());
}

std::vector<LossResult> LossBatch::read() {
  std::vector<LossResult> out;
  std::vector<int64_t> rows;
  out.swap(results_);
  rows.swap(rows_);
  if (device_ == Device::CPU || out.empty()) return out;
#ifdef HULK_WITH_CUDA
  std::vector<double> sums(static_cast<size_t>(out.size() * cuda::kLossSums));
  device::copy(sums.data(), Device::CPU, sums_.data(), Device::CUDA, sums.size() * sizeof(double));
  for (size_t k = 0; k < out.size(); ++k)
    out[k] = cuda::loss_from_sums(sums.data() + k * cuda::kLossSums, rows[k], out[k].count);
#endif
  return out;
}

void adam_step(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamConfig& cfg, int64_t step) {
  const Device dev = common_device("adam_step", {{"param", &param}, {"grad", &grad}, {"m", &m}, {"v", &v}});
  check_shape(grad, param.rows(), param.cols(), "adam_step: grad");
  check_shape(m, param.rows(), param.cols(), "adam_step: first moment m");
  check_shape(v, param.rows(), param.cols(), "adam_step: second moment v");
  if (step < 1) throw std::invalid_argument("adam_step: step counts from 1, got " + std::to_string(step));
  if (param.empty()) return;
  const double bc1 = 1.0 - std::pow(static_cast<double>(cfg.beta1), static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(static_cast<double>(cfg.beta2), static_cast<double>(step));
  HULK_BACKEND(dev, adam_step, param, grad, m, v, cfg, static_cast<float>(cfg.lr / bc1),
               static_cast<float>(1.0 / std::sqrt(bc2)));
}

}  // namespace hulk::ops
