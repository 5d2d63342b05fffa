// The engine's ops, as the layers call them. Each works on CPU or CUDA tensors: the op
// checks shapes and that every tensor is on one device, sizes its outputs on that device,
// and hands the work to the backend (csrc/ops/dispatch.cpp, the one place that picks a
// device). The backends' primitives are declared once in ops/backend_ops.inc and
// implemented in csrc/ops/cpu/<family>.cpp and cuda/kernels/<family>.cu. EdgePool is composed of
// primitives (ops/edge_pool.cpp), the same code on both devices. Every op has a naive
// float64 reference in tests/cpp/reference.h and is tested against it; the CUDA backend
// is tested against the CPU (tests/cpp/test_cuda_ops.cpp).
//
// Shapes are given as comments: N nodes (rows of the CSR), M input edges, F, Fe, O
// feature widths. Outputs are resized by the op (on the inputs' device) unless stated
// otherwise. A CSR lives on the host; its device copy is uploaded once and cached
// (Csr::on_device()).
#pragma once

#include <cstdint>
#include <vector>

#include "csrc/graph.h"
#include "csrc/tensor.h"

namespace hulk::ops {

// ---- dense -------------------------------------------------------------------------
// c = alpha * op(a) @ op(b) + beta * c, op = transpose when the flag is set. With beta == 0
// c is resized to the product's shape; otherwise it must already have it. BLAS sgemm.
void gemm(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b, Tensor& c, float alpha = 1.0f,
          float beta = 0.0f);

// out[i, :] += bias[0, :] for every row (out [R, C], bias [1, C]).
void add_bias(Tensor& out, const Tensor& bias);
// db[0, :] (+)= sum over rows of dy, optionally scaling row i by row_scale[i] (dy [R, C],
// row_scale [R, 1] or null, db [1, C]). Summed in double in row order: deterministic.
void bias_grad(const Tensor& dy, const Tensor* row_scale, Tensor& db, bool accumulate);

void relu_forward(const Tensor& x, Tensor& y);                        // y = max(x, 0)
void relu_backward(const Tensor& y, const Tensor& dy, Tensor& dx);    // dx = dy * (y > 0)

// Inverted dropout: keep each element with probability 1 - p and scale it by 1 / (1 - p).
// The mask is a function of (seed, step, element index) only, so backward recomputes it.
void dropout_forward(const Tensor& x, float p, uint64_t seed, uint64_t step, Tensor& y);
void dropout_backward(const Tensor& dy, float p, uint64_t seed, uint64_t step, Tensor& dx);

// ---- sparse ------------------------------------------------------------------------
// out[v, :] = sum_{k in row v} w_k * x[a.indices[k], :], w_k = a.values[k] when weighted
// and a has values, else 1.  x [a.num_cols, F] -> out [a.num_rows, F].
void spmm(const Csr& a, const Tensor& x, Tensor& out, bool weighted);
// The same product on host memory the caller owns, on the CPU: x [a.num_cols, f] and
// out [a.num_rows, f], both row-major; every element of out is written (it need not be
// zeroed). Lets Graph.spmm read a numpy array in place and write straight into the result.
void spmm_host(const Csr& a, const float* x, int64_t f, float* out, bool weighted);

// Inverted dropout of sparse features x [rows, cols] (kept entries scaled by 1 / (1 - p)),
// entry for entry dropout_forward of x dense with the same seed and step: out (x's structure,
// or x itself) gets the values, on `device`. On CUDA the values are written to out's device
// copy (made on first use) and its host values go stale: a CSR whose values are rewritten each
// step, never its structure.
void dropout_csr(const Csr& x, float p, uint64_t seed, uint64_t step, Device device, Csr& out);
// out.values[k] = src.values[out.edge_ids[k]] on `device` (device copies as dropout_csr): with
// out = transpose(src with edge_ids = 0 .. nnz - 1), out becomes transpose(src) value for value.
void gather_csr_values(const Csr& src, Device device, Csr& out);

// out[v, :] = sum_{k in row v} e[a.edge_ids[k], :].  e [M, Fe] -> out [a.num_rows, Fe].
void segment_sum_edges(const Csr& a, const Tensor& e, Tensor& out);

// Throws std::invalid_argument unless every entry of a has an edge id indexing a row of e.
void check_edge_ids(const Csr& a, const Tensor& e, const char* op);

// ---- EdgePool (paper eq. 4) -----------------------------------------------------------
//   z_v = sum_{u in N(v)} scale_v * ( [h_v || h_u || e_vu] W + b )
// with scale_v = 1 (sum pooling) or 1 / deg_v (mean pooling; a node without neighbours
// gets z_v = 0). W [2F + Fe, O] stacks W_self [F, O], W_nbr [F, O], W_edge [Fe, O].
enum class Pooling { Sum, Mean };

// Per-node coefficients of the decomposition z = self_coef * (h W_self + b)
//                                              + nbr_coef * ((A h) W_nbr + S W_edge):
// Sum: self_coef = deg, nbr_coef = 1.  Mean: self_coef = [deg > 0], nbr_coef = 1/deg (0 if deg 0).
struct PoolCoefficients {
  Tensor self_coef;  // [N, 1]
  Tensor nbr_coef;   // [N, 1]
};
// Computed on `device`.
PoolCoefficients pool_coefficients(const Csr& a, Pooling pooling, Device device = Device::CPU);

// Fast path. edge_sum = segment_sum_edges(a, e) [N, Fe] (constant while e is).
// Writes z [N, O] and the stacked input p = [self_coef*h || nbr_coef*(A h) || nbr_coef*S]
// [N, 2F + Fe] that backward needs.
void edge_pool_forward(const Csr& a, const PoolCoefficients& coef, const Tensor& h, const Tensor& edge_sum,
                       const Tensor& w, const Tensor& b, Tensor& z, Tensor& p);
// The same with the aggregate A h [N, F] in a caller's buffer (reused from call to call).
void edge_pool_forward(const Csr& a, const PoolCoefficients& coef, const Tensor& h, const Tensor& edge_sum,
                       const Tensor& w, const Tensor& b, Tensor& z, Tensor& p, Tensor& agg);
// f is F, the width of h. dw [2F+Fe, O] and db [1, O] are overwritten. dh [N, F] is
// computed when non-null (a_t is the transpose of a, needed only then).
void edge_pool_backward(const Csr& a_t, const PoolCoefficients& coef, const Tensor& p, const Tensor& w,
                        const Tensor& dz, int64_t f, Tensor& dw, Tensor& db, Tensor* dh);

// Per-edge reference (gather, transform, scatter): materialises one message per CSR
// entry. What a non-linear message function would need; used to check the fast path.
void edge_pool_forward_per_edge(const Csr& a, Pooling pooling, const Tensor& h, const Tensor& e, const Tensor& w,
                                const Tensor& b, Tensor& z);
void edge_pool_backward_per_edge(const Csr& a, Pooling pooling, const Tensor& h, const Tensor& e, const Tensor& w,
                                 const Tensor& dz, Tensor& dw, Tensor& db, Tensor* dh);

// ---- loss and optimiser -------------------------------------------------------------
struct LossResult {
  double loss = 0.0;     // mean over counted rows (0 when none)
  int64_t correct = 0;   // argmax == label among counted rows
  int64_t count = 0;     // rows with mask set and label >= 0
};
// Masked softmax cross-entropy (paper eq. 5). logits [N, C]; labels [N] in [0, C) or -1 for
// unlabelled; mask [N] (nullptr = all). Throws on a label >= C or < -1 among counted rows.
// grad [N, C] (optional) receives d(mean loss)/d(logits), zero on rows not counted.
LossResult softmax_cross_entropy(const Tensor& logits, const int64_t* labels, const uint8_t* mask, Tensor* grad);

// Labels and mask are host arrays whatever the logits' device; the result is on the host.

// The targets of repeated losses (a training loop), prepared once on `device`: target[i] is
// labels[i] where the row counts (mask set, label >= 0), else -1. Labels are checked and the
// rows counted here, once, so the losses below do no host work and upload nothing.
struct LossTargets {
  Device device = Device::CPU;
  int64_t rows = 0, classes = 0, count = 0;
  std::vector<int64_t> host;       // device CPU
  DeviceArray<int64_t> on_device;  // device CUDA
};
// Throws std::invalid_argument as softmax_cross_entropy does on a bad label.
LossTargets make_loss_targets(const int64_t* labels, const uint8_t* mask, int64_t rows, int64_t classes,
                              Device device);

// Losses whose sums stay on the device until read(): each add() leaves its block sums in one
// device buffer, and read() brings them all back in one copy. On the CPU add() computes at
// once (the results are softmax_cross_entropy's, bit for bit, on either device).
class LossBatch {
 public:
  LossBatch(Device device, int64_t max_losses);
  // Loss of logits [N, C] against t (count > 0); grad as in softmax_cross_entropy.
  void add(const Tensor& logits, const LossTargets& t, Tensor* grad);
  std::vector<LossResult> read();  // the losses added since the last read, in order

 private:
  Device device_;
  int64_t max_losses_;
  std::vector<LossResult> results_;  // CPU: final; CUDA: counts only until read()
  std::vector<int64_t> rows_;        // CUDA: each loss's rows
  DeviceArray<double> sums_;         // CUDA: per loss, its block sums (cuda::kLossSums doubles)
};

// Row-wise softmax (probabilities) of logits [N, C].
void softmax(const Tensor& logits, Tensor& probs);

struct AdamConfig {
  float lr = 0.01f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // L2 added to the gradient, as torch.optim.Adam (not AdamW)
};
// One Adam step (step >= 1 counts from 1, for bias correction), in place on param, m, v.
void adam_step(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamConfig& cfg, int64_t step);

}  // namespace hulk::ops
