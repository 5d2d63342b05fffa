// Naive float64 references for every op in csrc/ops/ops.h and for the graph
// normalisation, plus the helpers the tests share: random tensors and graphs with fixed
// seeds, conversions between hulk::Tensor and double matrices, a central-difference
// gradient checker and comparison helpers.
//
// The references are written independently of csrc: they loop over the *edge list*
// (or a dense adjacency built from it), never over a CSR, and never call a hulk op.
// They are slow on purpose and obviously right; the ops are checked against them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/graph.h"
#include "csrc/tensor.h"

namespace ref {

// ---- float64 matrices ---------------------------------------------------------------

struct DMat {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<double> v;  // row-major

  DMat() = default;
  DMat(int64_t r, int64_t c, double fill = 0.0) : rows(r), cols(c), v(static_cast<size_t>(r * c), fill) {}
  double& operator()(int64_t r, int64_t c) { return v[static_cast<size_t>(r * cols + c)]; }
  double operator()(int64_t r, int64_t c) const { return v[static_cast<size_t>(r * cols + c)]; }
  int64_t size() const { return rows * cols; }
  double* data() { return v.data(); }
  const double* data() const { return v.data(); }
};

inline DMat to_d(const hulk::Tensor& t) {
  DMat d(t.rows(), t.cols());
  for (int64_t i = 0; i < t.size(); ++i) d.v[static_cast<size_t>(i)] = t.data()[i];
  return d;
}

inline hulk::Tensor to_f(const DMat& d) {
  hulk::Tensor t(d.rows, d.cols);
  for (int64_t i = 0; i < d.size(); ++i) t.data()[i] = static_cast<float>(d.v[static_cast<size_t>(i)]);
  return t;
}

inline DMat transpose(const DMat& a) {
  DMat t(a.cols, a.rows);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j) t(j, i) = a(i, j);
  return t;
}

inline double dot(const DMat& a, const DMat& b) {  // sum of a * b, same shapes
  double s = 0.0;
  for (int64_t i = 0; i < a.size(); ++i) s += a.v[static_cast<size_t>(i)] * b.v[static_cast<size_t>(i)];
  return s;
}

// ---- random data ------------------------------------------------------------------------

// Uniform values in [lo, hi]; never all zeros (a zero input would hide a missing term).
inline DMat random_dmat(int64_t rows, int64_t cols, std::mt19937& rng, double lo = -1.0, double hi = 1.0) {
  std::uniform_real_distribution<double> dist(lo, hi);
  DMat d(rows, cols);
  bool any_nonzero = false;
  for (auto& x : d.v) {
    // Round through float so a DMat and its float32 copy hold the very same numbers.
    x = static_cast<float>(dist(rng));
    any_nonzero = any_nonzero || x != 0.0;
  }
  if (!any_nonzero && !d.v.empty()) d.v[0] = 0.5;
  return d;
}

inline hulk::Tensor random_tensor(int64_t rows, int64_t cols, std::mt19937& rng, double lo = -1.0,
                                  double hi = 1.0) {
  return to_f(random_dmat(rows, cols, rng, lo, hi));
}

// Values in [-1, -min_abs] U [min_abs, 1]: keeps finite differences away from kinks (ReLU at 0).
inline hulk::Tensor random_tensor_away_from_zero(int64_t rows, int64_t cols, std::mt19937& rng, double min_abs) {
  std::uniform_real_distribution<double> mag(min_abs, 1.0);
  std::bernoulli_distribution sign(0.5);
  hulk::Tensor t(rows, cols);
  for (int64_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<float>(sign(rng) ? mag(rng) : -mag(rng));
  return t;
}

// A random sparse matrix [rows, cols] (sparse node features, issue 20) as a CSR with sorted
// columns: each entry present with probability `density`, values in [-1, 1] rounded through
// float and never zero. Row `full_row` and column `full_col` (when in range) have every entry,
// so the matrix and its transpose can have rows longer than any SpMM kernel's short-row limit.
inline hulk::Csr random_csr(int64_t rows, int64_t cols, double density, std::mt19937& rng, int64_t full_row = -1,
                            int64_t full_col = -1) {
  std::bernoulli_distribution present(density);
  std::uniform_real_distribution<double> mag(0.05, 1.0);
  std::bernoulli_distribution sign(0.5);
  hulk::Csr a;
  a.num_rows = rows;
  a.num_cols = cols;
  a.indptr.assign(1, 0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      if (r != full_row && c != full_col && !present(rng)) continue;
      a.indices.push_back(static_cast<int32_t>(c));
      a.values.push_back(static_cast<float>(sign(rng) ? mag(rng) : -mag(rng)));
    }
    a.indptr.push_back(static_cast<int64_t>(a.indices.size()));
  }
  return a;
}

// Class ids in [-1, classes) (-1 = unlabelled), node 0 always labelled.
inline std::vector<int64_t> random_labels(int64_t n, int64_t classes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> cls(-1, classes - 1);
  std::vector<int64_t> y(static_cast<size_t>(n));
  for (auto& v : y) v = cls(rng);
  y[0] = 0;
  return y;
}

// ---- graphs as edge lists ---------------------------------------------------------------

struct EdgeList {
  int64_t num_nodes = 0;
  std::vector<int64_t> src, dst;  // input edge i is src[i] -> dst[i]
  std::vector<float> weights;     // [M] or empty
  bool undirected = false;
  int64_t num_edges() const { return static_cast<int64_t>(src.size()); }
};

enum class GraphKind {
  Uniform,   // endpoints uniform over all nodes
  Skewed,    // node 0 is a hub joined to about half the nodes; other endpoints follow a power law
  Isolated,  // only the first ~60% of the nodes have edges; the rest are isolated (empty rows)
};

// A random simple graph: no self loops, no duplicate pairs ((u,v) and (v,u) count as the
// same pair when undirected). Undirected edges are stored in random orientation.
// Asks for m edges and gets fewer only when the graph kind cannot hold that many.
inline EdgeList random_graph(GraphKind kind, int64_t n, int64_t m, bool undirected, bool weighted, uint32_t seed) {
  std::mt19937 rng(seed);
  EdgeList g;
  g.num_nodes = n;
  g.undirected = undirected;
  std::set<std::pair<int64_t, int64_t>> seen;
  std::uniform_real_distribution<double> wdist(0.25, 2.0);
  auto try_add = [&](int64_t u, int64_t v) {
    if (u == v) return false;
    std::pair<int64_t, int64_t> key = undirected ? std::make_pair(std::min(u, v), std::max(u, v)) : std::make_pair(u, v);
    if (!seen.insert(key).second) return false;
    g.src.push_back(u);
    g.dst.push_back(v);
    if (weighted) g.weights.push_back(static_cast<float>(wdist(rng)));
    return true;
  };
  const int64_t active = kind == GraphKind::Isolated ? std::max<int64_t>(2, (n * 3) / 5) : n;
  std::uniform_int_distribution<int64_t> uni(0, std::max<int64_t>(active - 1, 0));
  std::bernoulli_distribution coin(0.5);
  // Power-law sampler over node ids: P(i) ~ (i + 1)^-1.3.
  std::vector<double> pw(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) pw[static_cast<size_t>(i)] = std::pow(static_cast<double>(i + 1), -1.3);
  std::discrete_distribution<int64_t> power(pw.begin(), pw.end());
  if (n < 2) return g;
  if (kind == GraphKind::Skewed) {
    for (int64_t u = 1; u < n && g.num_edges() < m; ++u) {
      if (coin(rng)) coin(rng) ? try_add(u, 0) : try_add(0, u);
    }
  }
  for (int64_t attempts = 0; g.num_edges() < m && attempts < 50 * m + 100; ++attempts) {
    int64_t u, v;
    if (kind == GraphKind::Skewed) {
      u = power(rng);
      v = uni(rng);
      if (coin(rng)) std::swap(u, v);
    } else {
      u = uni(rng);
      v = uni(rng);
    }
    try_add(u, v);
  }
  return g;
}

// One directed message u -> v with the input edge it came from.
struct Entry {
  int64_t target;  // v
  int64_t source;  // u
  int64_t edge;    // row of the edge-feature matrix
  double weight;   // 1 when unweighted
};

// The messages an edge list defines: one per directed edge, two per undirected edge.
inline std::vector<Entry> entries(const EdgeList& g) {
  std::vector<Entry> out;
  for (int64_t i = 0; i < g.num_edges(); ++i) {
    const double w = g.weights.empty() ? 1.0 : g.weights[static_cast<size_t>(i)];
    out.push_back({g.dst[static_cast<size_t>(i)], g.src[static_cast<size_t>(i)], i, w});
    if (g.undirected) out.push_back({g.src[static_cast<size_t>(i)], g.dst[static_cast<size_t>(i)], i, w});
  }
  return out;
}

inline std::vector<int64_t> in_degree(const EdgeList& g) {
  std::vector<int64_t> deg(static_cast<size_t>(g.num_nodes), 0);
  for (const Entry& en : entries(g)) ++deg[static_cast<size_t>(en.target)];
  return deg;
}

// Dense in-adjacency A[v][u] = weight of u -> v (1 when !weighted).
inline DMat dense_adjacency(const EdgeList& g, bool weighted) {
  DMat a(g.num_nodes, g.num_nodes);
  for (const Entry& en : entries(g)) a(en.target, en.source) += weighted ? en.weight : 1.0;
  return a;
}

// A CSR read back as a dense matrix (plain loops over the struct; no csrc code).
inline DMat csr_to_dense(const hulk::Csr& a, bool use_values = true) {
  DMat d(a.num_rows, a.num_cols);
  for (int64_t r = 0; r < a.num_rows; ++r)
    for (int64_t k = a.indptr[static_cast<size_t>(r)]; k < a.indptr[static_cast<size_t>(r) + 1]; ++k)
      d(r, a.indices[static_cast<size_t>(k)]) += (use_values && !a.values.empty()) ? a.values[static_cast<size_t>(k)] : 1.0;
  return d;
}

// ---- dense ops --------------------------------------------------------------------------

// alpha * op(a) @ op(b) + beta * c (c is ignored when beta == 0).
inline DMat gemm(const DMat& a, bool ta, const DMat& b, bool tb, const DMat& c, double alpha, double beta) {
  const DMat A = ta ? transpose(a) : a;
  const DMat B = tb ? transpose(b) : b;
  DMat out(A.rows, B.cols);
  for (int64_t i = 0; i < A.rows; ++i)
    for (int64_t j = 0; j < B.cols; ++j) {
      double s = 0.0;
      for (int64_t k = 0; k < A.cols; ++k) s += A(i, k) * B(k, j);
      out(i, j) = alpha * s + (beta != 0.0 ? beta * c(i, j) : 0.0);
    }
  return out;
}

inline DMat matmul(const DMat& a, const DMat& b) { return gemm(a, false, b, false, DMat(), 1.0, 0.0); }

inline DMat add_bias(DMat out, const DMat& bias) {
  for (int64_t i = 0; i < out.rows; ++i)
    for (int64_t j = 0; j < out.cols; ++j) out(i, j) += bias(0, j);
  return out;
}

inline DMat bias_grad(const DMat& dy, const std::vector<double>* row_scale) {
  DMat db(1, dy.cols);
  for (int64_t i = 0; i < dy.rows; ++i)
    for (int64_t j = 0; j < dy.cols; ++j) db(0, j) += (row_scale ? (*row_scale)[static_cast<size_t>(i)] : 1.0) * dy(i, j);
  return db;
}

inline DMat relu(const DMat& x) {
  DMat y = x;
  for (auto& t : y.v) t = t > 0.0 ? t : 0.0;
  return y;
}

// d relu / dx, expressed through the input x (the op uses the output; same thing).
inline DMat relu_backward(const DMat& x, const DMat& dy) {
  DMat dx(x.rows, x.cols);
  for (int64_t i = 0; i < x.size(); ++i) dx.v[static_cast<size_t>(i)] = x.v[static_cast<size_t>(i)] > 0.0 ? dy.v[static_cast<size_t>(i)] : 0.0;
  return dx;
}

// Inverted dropout with an explicit keep mask (the op draws its mask from a counter-based
// hash; the reference takes it as an input): y = x * keep / (1 - p), and the same for dy.
inline DMat dropout(const DMat& x, const std::vector<bool>& keep, double p) {
  DMat y(x.rows, x.cols);
  for (int64_t i = 0; i < x.size(); ++i)
    y.v[static_cast<size_t>(i)] = keep[static_cast<size_t>(i)] ? x.v[static_cast<size_t>(i)] / (1.0 - p) : 0.0;
  return y;
}
inline DMat dropout_backward(const DMat& dy, const std::vector<bool>& keep, double p) { return dropout(dy, keep, p); }

// ---- sparse ops (over the edge list) ------------------------------------------------------

inline DMat spmm(const EdgeList& g, const DMat& x, bool weighted) {
  DMat out(g.num_nodes, x.cols);
  for (const Entry& en : entries(g)) {
    const double w = weighted ? en.weight : 1.0;
    for (int64_t j = 0; j < x.cols; ++j) out(en.target, j) += w * x(en.source, j);
  }
  return out;
}

inline DMat segment_sum_edges(const EdgeList& g, const DMat& e) {
  DMat out(g.num_nodes, e.cols);
  for (const Entry& en : entries(g))
    for (int64_t j = 0; j < e.cols; ++j) out(en.target, j) += e(en.edge, j);
  return out;
}

// D^-1/2 (A + I) D^-1/2 as a dense matrix, d_v = 1 + sum of the weights of v's in-edges
// (PyG gcn_norm with add_self_loops and fill value 1).
inline DMat gcn_norm_dense(const EdgeList& g, bool use_weights) {
  const int64_t n = g.num_nodes;
  DMat a = dense_adjacency(g, use_weights);
  for (int64_t v = 0; v < n; ++v) a(v, v) += 1.0;
  std::vector<double> deg(static_cast<size_t>(n), 0.0);
  for (int64_t v = 0; v < n; ++v)
    for (int64_t u = 0; u < n; ++u) deg[static_cast<size_t>(v)] += a(v, u);
  for (int64_t v = 0; v < n; ++v)
    for (int64_t u = 0; u < n; ++u) a(v, u) /= std::sqrt(deg[static_cast<size_t>(v)] * deg[static_cast<size_t>(u)]);
  return a;
}

// ---- EdgePool (paper eq. 4), one message per edge -------------------------------------------
//   z_v = sum_{u in N(v)} scale_v * ([h_v || h_u || e_vu] W + b),  scale_v = 1 or 1/deg_v.

inline double pool_scale(int64_t deg, bool mean) { return mean ? (deg > 0 ? 1.0 / static_cast<double>(deg) : 0.0) : 1.0; }

// in = [h_v || h_u || e_vu] for message u -> v (in has 2F + Fe entries).
inline void message_input(const Entry& en, const DMat& h, const DMat& e, std::vector<double>& in) {
  const int64_t f = h.cols, fe = e.cols;
  for (int64_t j = 0; j < f; ++j) in[static_cast<size_t>(j)] = h(en.target, j);
  for (int64_t j = 0; j < f; ++j) in[static_cast<size_t>(f + j)] = h(en.source, j);
  for (int64_t j = 0; j < fe; ++j) in[static_cast<size_t>(2 * f + j)] = e(en.edge, j);
}

inline DMat edge_pool_forward(const EdgeList& g, bool mean, const DMat& h, const DMat& e, const DMat& w, const DMat& b) {
  const int64_t f = h.cols, fe = e.cols, o = w.cols;
  const std::vector<int64_t> deg = in_degree(g);
  DMat z(g.num_nodes, o);
  std::vector<double> in(static_cast<size_t>(2 * f + fe));
  for (const Entry& en : entries(g)) {
    message_input(en, h, e, in);
    const double s = pool_scale(deg[static_cast<size_t>(en.target)], mean);
    for (int64_t c = 0; c < o; ++c) {
      double m = b(0, c);
      for (int64_t j = 0; j < 2 * f + fe; ++j) m += in[static_cast<size_t>(j)] * w(j, c);
      z(en.target, c) += s * m;
    }
  }
  return z;
}

// The stacked input the fast path keeps: [self_coef*h || nbr_coef*(A h) || nbr_coef*S].
inline DMat edge_pool_stacked_input(const EdgeList& g, bool mean, const DMat& h, const DMat& e) {
  const int64_t f = h.cols, fe = e.cols;
  const std::vector<int64_t> deg = in_degree(g);
  DMat p(g.num_nodes, 2 * f + fe);
  for (const Entry& en : entries(g)) {
    const double s = pool_scale(deg[static_cast<size_t>(en.target)], mean);
    for (int64_t j = 0; j < f; ++j) p(en.target, j) += s * h(en.target, j);
    for (int64_t j = 0; j < f; ++j) p(en.target, f + j) += s * h(en.source, j);
    for (int64_t j = 0; j < fe; ++j) p(en.target, 2 * f + j) += s * e(en.edge, j);
  }
  return p;
}

struct EdgePoolGrads {
  DMat dw, db, dh;
};

inline EdgePoolGrads edge_pool_backward(const EdgeList& g, bool mean, const DMat& h, const DMat& e, const DMat& w,
                                        const DMat& dz) {
  const int64_t f = h.cols, fe = e.cols, o = w.cols;
  const std::vector<int64_t> deg = in_degree(g);
  EdgePoolGrads gr{DMat(2 * f + fe, o), DMat(1, o), DMat(g.num_nodes, f)};
  std::vector<double> in(static_cast<size_t>(2 * f + fe));
  for (const Entry& en : entries(g)) {
    message_input(en, h, e, in);
    const double s = pool_scale(deg[static_cast<size_t>(en.target)], mean);
    for (int64_t c = 0; c < o; ++c) {
      const double gm = s * dz(en.target, c);  // d loss / d message
      gr.db(0, c) += gm;
      for (int64_t j = 0; j < 2 * f + fe; ++j) gr.dw(j, c) += in[static_cast<size_t>(j)] * gm;
      for (int64_t j = 0; j < f; ++j) {
        gr.dh(en.target, j) += w(j, c) * gm;
        gr.dh(en.source, j) += w(f + j, c) * gm;
      }
    }
  }
  return gr;
}

// ---- loss ---------------------------------------------------------------------------------

inline DMat softmax(const DMat& logits) {
  DMat p(logits.rows, logits.cols);
  for (int64_t i = 0; i < logits.rows; ++i) {
    double mx = -INFINITY;
    for (int64_t j = 0; j < logits.cols; ++j) mx = std::max(mx, logits(i, j));
    double s = 0.0;
    for (int64_t j = 0; j < logits.cols; ++j) s += std::exp(logits(i, j) - mx);
    for (int64_t j = 0; j < logits.cols; ++j) p(i, j) = std::exp(logits(i, j) - mx) / s;
  }
  return p;
}

struct LossRef {
  double loss = 0.0;
  int64_t correct = 0;
  int64_t count = 0;
  DMat grad;  // d(mean loss) / d logits
};

// Mean of -log softmax(logits_i)[label_i] over rows with mask set (or no mask) and label >= 0.
inline LossRef softmax_cross_entropy(const DMat& logits, const std::vector<int64_t>& labels,
                                     const std::vector<uint8_t>* mask) {
  LossRef r;
  r.grad = DMat(logits.rows, logits.cols);
  const DMat p = softmax(logits);
  auto counted = [&](int64_t i) {
    return (mask == nullptr || (*mask)[static_cast<size_t>(i)] != 0) && labels[static_cast<size_t>(i)] >= 0;
  };
  for (int64_t i = 0; i < logits.rows; ++i) r.count += counted(i) ? 1 : 0;
  if (r.count == 0) return r;
  for (int64_t i = 0; i < logits.rows; ++i) {
    if (!counted(i)) continue;
    const int64_t y = labels[static_cast<size_t>(i)];
    r.loss -= std::log(p(i, y));
    int64_t arg = 0;
    for (int64_t j = 1; j < logits.cols; ++j)
      if (logits(i, j) > logits(i, arg)) arg = j;
    r.correct += arg == y ? 1 : 0;
    for (int64_t j = 0; j < logits.cols; ++j) r.grad(i, j) = (p(i, j) - (j == y ? 1.0 : 0.0)) / static_cast<double>(r.count);
  }
  r.loss /= static_cast<double>(r.count);
  return r;
}

// ---- Adam, exactly as torch.optim.Adam (amsgrad=False, maximize=False) ----------------------
//   g = grad + wd * p;  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
//   p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
struct AdamRef {
  double lr = 0.01, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;
};

inline void adam_step(DMat& p, const DMat& grad, DMat& m, DMat& v, const AdamRef& c, int64_t t) {
  const double bc1 = 1.0 - std::pow(c.beta1, static_cast<double>(t));
  const double bc2 = 1.0 - std::pow(c.beta2, static_cast<double>(t));
  for (int64_t i = 0; i < p.size(); ++i) {
    const size_t k = static_cast<size_t>(i);
    const double g = grad.v[k] + c.weight_decay * p.v[k];
    m.v[k] = c.beta1 * m.v[k] + (1.0 - c.beta1) * g;
    v.v[k] = c.beta2 * v.v[k] + (1.0 - c.beta2) * g * g;
    p.v[k] -= c.lr / bc1 * m.v[k] / (std::sqrt(v.v[k]) / std::sqrt(bc2) + c.eps);
  }
}

// ---- finite differences --------------------------------------------------------------------

// Central differences of loss() with respect to x[0..n): x is perturbed in place by +-step
// and restored. Works on float and double storage; the divisor is the step actually taken
// after rounding to T, so a float32 input does not bias the quotient.
template <class T, class F>
std::vector<double> central_differences(T* x, int64_t n, double step, F&& loss) {
  std::vector<double> g(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const T orig = x[i];
    const T xp = static_cast<T>(static_cast<double>(orig) + step);
    const T xm = static_cast<T>(static_cast<double>(orig) - step);
    x[i] = xp;
    const double lp = loss();
    x[i] = xm;
    const double lm = loss();
    x[i] = orig;
    g[static_cast<size_t>(i)] = (lp - lm) / (static_cast<double>(xp) - static_cast<double>(xm));
  }
  return g;
}

// An analytic gradient against a numeric one. The error is measured relative to the larger
// of the two gradients' max-norms, so the check is scale free, and an analytic gradient of
// zeros where the numeric one is not fails (relative error 1).
template <class T>
::testing::AssertionResult gradients_match(const T* analytic, const std::vector<double>& numeric, double rel_tol) {
  double max_abs = 0.0, scale = 0.0;
  size_t worst = 0;
  for (size_t i = 0; i < numeric.size(); ++i) {
    const double a = static_cast<double>(analytic[i]);
    const double d = std::fabs(a - numeric[i]);
    if (!(d <= max_abs)) {  // also catches NaN
      max_abs = d;
      worst = i;
    }
    scale = std::max({scale, std::fabs(a), std::fabs(numeric[i])});
  }
  const double rel = scale > 0.0 ? max_abs / scale : max_abs;
  if (rel <= rel_tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "gradient mismatch: worst at flat index " << worst << ": analytic "
                                       << static_cast<double>(analytic[worst]) << ", numeric " << numeric[worst]
                                       << "; max |diff| " << max_abs << " over gradient scale " << scale
                                       << " = relative " << rel << " > tolerance " << rel_tol;
}

inline ::testing::AssertionResult gradients_match(const hulk::Tensor& analytic, const std::vector<double>& numeric,
                                                  double rel_tol) {
  if (static_cast<size_t>(analytic.size()) != numeric.size()) {
    return ::testing::AssertionFailure() << "gradient has " << analytic.size() << " elements " << analytic.shape_str()
                                         << ", expected " << numeric.size();
  }
  return gradients_match(analytic.data(), numeric, rel_tol);
}

inline ::testing::AssertionResult gradients_match(const DMat& analytic, const std::vector<double>& numeric,
                                                  double rel_tol) {
  if (static_cast<size_t>(analytic.size()) != numeric.size()) {
    return ::testing::AssertionFailure() << "gradient has " << analytic.size() << " elements, expected "
                                         << numeric.size();
  }
  return gradients_match(analytic.data(), numeric, rel_tol);
}

// Element-wise |got - want| <= atol + rtol * |want| with a report of the worst element.
inline ::testing::AssertionResult all_close(const DMat& got, const DMat& want, double atol, double rtol) {
  if (got.rows != want.rows || got.cols != want.cols) {
    return ::testing::AssertionFailure() << "shape mismatch: got [" << got.rows << ", " << got.cols << "], want ["
                                         << want.rows << ", " << want.cols << "]";
  }
  double worst_excess = 0.0, max_abs = 0.0;
  int64_t wr = -1, wc = -1;
  for (int64_t i = 0; i < want.rows; ++i)
    for (int64_t j = 0; j < want.cols; ++j) {
      const double d = std::fabs(got(i, j) - want(i, j));
      const double excess = std::isfinite(d) ? d - (atol + rtol * std::fabs(want(i, j))) : INFINITY;
      max_abs = std::isfinite(d) ? std::max(max_abs, d) : INFINITY;
      if (excess > 0.0 && excess > worst_excess) {
        worst_excess = excess;
        wr = i;
        wc = j;
      }
    }
  if (wr < 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "worst element (" << wr << ", " << wc << "): got " << got(wr, wc)
                                       << ", want " << want(wr, wc) << " (atol " << atol << ", rtol " << rtol
                                       << "); max |diff| " << max_abs;
}

inline ::testing::AssertionResult all_close(const hulk::Tensor& got, const DMat& want, double atol, double rtol) {
  return all_close(to_d(got), want, atol, rtol);
}

inline ::testing::AssertionResult all_close(const hulk::Tensor& got, const hulk::Tensor& want, double atol,
                                            double rtol) {
  return all_close(to_d(got), to_d(want), atol, rtol);
}

// Bit-for-bit equality of two tensors (same shape, same values).
inline ::testing::AssertionResult identical(const hulk::Tensor& a, const hulk::Tensor& b) {
  if (!a.same_shape(b)) return ::testing::AssertionFailure() << "shapes " << a.shape_str() << " vs " << b.shape_str();
  for (int64_t i = 0; i < a.size(); ++i) {
    if (a.data()[i] != b.data()[i]) {
      return ::testing::AssertionFailure() << "first difference at flat index " << i << ": " << a.data()[i] << " vs "
                                           << b.data()[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// L = sum(z * r) for a fixed random r: a scalar loss whose gradient with respect to z is r,
// used to finite-difference ops with a matrix output.
inline double projection(const hulk::Tensor& z, const DMat& r) {
  double s = 0.0;
  for (int64_t i = 0; i < z.size(); ++i) s += static_cast<double>(z.data()[i]) * r.v[static_cast<size_t>(i)];
  return s;
}

// Runs fn, expects std::invalid_argument, and checks that its message contains every needle.
inline ::testing::AssertionResult throws_invalid_argument_with(const std::function<void()>& fn,
                                                               const std::vector<std::string>& needles) {
  try {
    fn();
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    for (const std::string& n : needles) {
      if (msg.find(n) == std::string::npos) {
        return ::testing::AssertionFailure() << "message \"" << msg << "\" lacks \"" << n << "\"";
      }
    }
    return ::testing::AssertionSuccess() << msg;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw something other than std::invalid_argument: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

}  // namespace ref
