#include "csrc/graph.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace hulk {
namespace {

constexpr size_t kShowAtMost = 5;  // offenders quoted in one message

uint64_t pair_key(int64_t a, int64_t b, int64_t n) { return static_cast<uint64_t>(a) * n + b; }

}  // namespace

std::string EdgeListReport::summary() const {
  std::ostringstream s;
  if (!self_loops.empty()) s << self_loops.size() << " self loop(s) at input edge(s)";
  for (size_t i = 0; i < self_loops.size() && i < kShowAtMost; ++i) s << " " << self_loops[i];
  if (!self_loops.empty() && !duplicates.empty()) s << "; ";
  if (!duplicates.empty()) s << duplicates.size() << " duplicate pair(s) at input edge(s)";
  for (size_t i = 0; i < duplicates.size() && i < kShowAtMost; ++i) s << " " << duplicates[i];
  return s.str();
}

EdgeListReport validate_edge_list(int64_t num_nodes, const std::vector<int64_t>& src,
                                  const std::vector<int64_t>& dst, const std::vector<float>& weights,
                                  bool undirected) {
  if (num_nodes < 0) throw std::invalid_argument("num_nodes must be >= 0, got " + std::to_string(num_nodes));
  if (src.size() != dst.size()) {
    throw std::invalid_argument("edge list: src has " + std::to_string(src.size()) + " entries but dst has " +
                                std::to_string(dst.size()));
  }
  if (!weights.empty() && weights.size() != src.size()) {
    throw std::invalid_argument("edge weights: expected " + std::to_string(src.size()) + " values, got " +
                                std::to_string(weights.size()));
  }
  EdgeListReport report;
  // (pair key, edge index) of every non-loop edge; sorted, a pair's repeats after its first
  // occurrence are the duplicates. A sort is several times faster than a hash set at 1e6 edges.
  std::vector<std::pair<uint64_t, int64_t>> keyed;
  keyed.reserve(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    for (const auto& [name, id] : {std::pair<const char*, int64_t>{"src", src[i]}, {"dst", dst[i]}}) {
      if (id < 0 || id >= num_nodes) {
        throw std::invalid_argument(std::string("edge ") + std::to_string(i) + ": " + name + " node id " +
                                    std::to_string(id) + " is out of range [0, " + std::to_string(num_nodes) +
                                    ")");
      }
    }
    if (!weights.empty() && !std::isfinite(weights[i])) {
      std::ostringstream s;
      s << "edge " << i << " (" << src[i] << "->" << dst[i] << "): weight " << weights[i] << " is not finite";
      throw std::invalid_argument(s.str());
    }
    if (src[i] == dst[i]) {
      report.self_loops.push_back(static_cast<int64_t>(i));
      continue;
    }
    int64_t a = src[i], b = dst[i];
    if (undirected && a > b) std::swap(a, b);
    keyed.emplace_back(pair_key(a, b, num_nodes), static_cast<int64_t>(i));
  }
  std::sort(keyed.begin(), keyed.end());
  for (size_t k = 1; k < keyed.size(); ++k) {
    if (keyed[k].first == keyed[k - 1].first) report.duplicates.push_back(keyed[k].second);
  }
  std::sort(report.duplicates.begin(), report.duplicates.end());  // in edge order, as before
  return report;
}

Csr csr_from_edges(int64_t num_nodes, const std::vector<int64_t>& src, const std::vector<int64_t>& dst,
                   const std::vector<float>& weights, bool undirected) {
  const EdgeListReport report = validate_edge_list(num_nodes, src, dst, weights, undirected);
  if (!report.clean()) {
    throw std::invalid_argument("edge list has " + report.summary() +
                                "; remove them first (the engine never drops or merges edges silently)");
  }
  if (num_nodes > INT32_MAX) throw std::invalid_argument("num_nodes exceeds the int32 index range");
  const int64_t m = static_cast<int64_t>(src.size());
  const int64_t nnz = undirected ? 2 * m : m;
  Csr a;
  a.num_rows = a.num_cols = num_nodes;
  a.indptr.assign(num_nodes + 1, 0);
  // Counting sort by target, then a stable sort of each row by source.
  auto for_each_entry = [&](auto&& fn) {
    for (int64_t i = 0; i < m; ++i) {
      fn(dst[i], src[i], i);
      if (undirected) fn(src[i], dst[i], i);
    }
  };
  for_each_entry([&](int64_t row, int64_t, int64_t) { ++a.indptr[row + 1]; });
  std::partial_sum(a.indptr.begin(), a.indptr.end(), a.indptr.begin());
  a.indices.resize(nnz);
  a.edge_ids.resize(nnz);
  if (!weights.empty()) a.values.resize(nnz);
  std::vector<int64_t> cursor(a.indptr.begin(), a.indptr.end() - 1);
  for_each_entry([&](int64_t row, int64_t col, int64_t edge) {
    const int64_t k = cursor[row]++;
    a.indices[k] = static_cast<int32_t>(col);
    a.edge_ids[k] = edge;
    if (!weights.empty()) a.values[k] = weights[edge];
  });
  std::vector<int64_t> order;
  for (int64_t r = 0; r < num_nodes; ++r) {
    const int64_t lo = a.indptr[r], hi = a.indptr[r + 1];
    if (std::is_sorted(a.indices.begin() + lo, a.indices.begin() + hi)) continue;
    order.resize(hi - lo);
    std::iota(order.begin(), order.end(), lo);
    std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return a.indices[p] < a.indices[q]; });
    std::vector<int32_t> idx(order.size());
    std::vector<int64_t> eid(order.size());
    std::vector<float> val(a.values.empty() ? 0 : order.size());
    for (size_t j = 0; j < order.size(); ++j) {
      idx[j] = a.indices[order[j]];
      eid[j] = a.edge_ids[order[j]];
      if (!val.empty()) val[j] = a.values[order[j]];
    }
    std::copy(idx.begin(), idx.end(), a.indices.begin() + lo);
    std::copy(eid.begin(), eid.end(), a.edge_ids.begin() + lo);
    if (!val.empty()) std::copy(val.begin(), val.end(), a.values.begin() + lo);
  }
  return a;
}

Csr transpose(const Csr& a) {
  Csr t;
  t.num_rows = a.num_cols;
  t.num_cols = a.num_rows;
  t.indptr.assign(t.num_rows + 1, 0);
  for (int32_t c : a.indices) ++t.indptr[c + 1];
  std::partial_sum(t.indptr.begin(), t.indptr.end(), t.indptr.begin());
  t.indices.resize(a.nnz());
  if (a.weighted()) t.values.resize(a.nnz());
  if (!a.edge_ids.empty()) t.edge_ids.resize(a.nnz());
  std::vector<int64_t> cursor(t.indptr.begin(), t.indptr.end() - 1);
  // Walking rows in order keeps every transposed row sorted by column.
  for (int64_t r = 0; r < a.num_rows; ++r) {
    for (int64_t k = a.indptr[r]; k < a.indptr[r + 1]; ++k) {
      const int64_t dst = cursor[a.indices[k]]++;
      t.indices[dst] = static_cast<int32_t>(r);
      if (a.weighted()) t.values[dst] = a.values[k];
      if (!a.edge_ids.empty()) t.edge_ids[dst] = a.edge_ids[k];
    }
  }
  return t;
}

Csr gcn_normalize(const Csr& a, bool use_weights) {
  if (a.num_rows != a.num_cols) throw std::invalid_argument("gcn_normalize: adjacency must be square");
  if (use_weights && !a.weighted()) throw std::invalid_argument("gcn_normalize: use_weights but the graph has no edge weights");
  const int64_t n = a.num_rows;
  std::vector<double> deg(n, 1.0);  // the added self loop
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t k = a.indptr[r]; k < a.indptr[r + 1]; ++k) deg[r] += use_weights ? a.values[k] : 1.0;
  }
  for (int64_t r = 0; r < n; ++r) {
    if (!(deg[r] > 0.0)) {
      throw std::invalid_argument("gcn_normalize: node " + std::to_string(r) + " has degree " +
                                  std::to_string(deg[r]) + " (1 + sum of edge weights) <= 0");
    }
  }
  Csr out;
  out.num_rows = out.num_cols = n;
  out.indptr.resize(n + 1);
  out.indices.reserve(a.nnz() + n);
  out.values.reserve(a.nnz() + n);
  out.indptr[0] = 0;
  for (int64_t r = 0; r < n; ++r) {
    bool self_done = false;
    auto add = [&](int64_t c, double w) {
      out.indices.push_back(static_cast<int32_t>(c));
      out.values.push_back(static_cast<float>(w / std::sqrt(deg[r] * deg[c])));
    };
    for (int64_t k = a.indptr[r]; k < a.indptr[r + 1]; ++k) {
      const int64_t c = a.indices[k];
      if (!self_done && c > r) {
        add(r, 1.0);
        self_done = true;
      }
      add(c, use_weights ? a.values[k] : 1.0);
    }
    if (!self_done) add(r, 1.0);
    out.indptr[r + 1] = static_cast<int64_t>(out.indices.size());
  }
  return out;
}

void check_feature_csr(const Csr& x, int64_t num_nodes, const std::string& what) {
  auto fail = [&](const std::string& message) { throw std::invalid_argument(what + ": " + message); };
  if (x.num_rows != num_nodes)
    fail("expected " + std::to_string(num_nodes) + " rows (one per node), got " + std::to_string(x.num_rows));
  if (x.num_cols < 0 || x.num_cols > INT32_MAX)
    fail(std::to_string(x.num_cols) + " columns is outside the int32 column index range [0, 2^31 - 1]");
  if (x.indptr.size() != static_cast<size_t>(num_nodes + 1))
    fail("indptr has " + std::to_string(x.indptr.size()) + " entries, expected " + std::to_string(num_nodes + 1));
  if (x.indptr.front() != 0) fail("indptr[0] = " + std::to_string(x.indptr.front()) + ", expected 0");
  for (int64_t r = 0; r < num_nodes; ++r) {
    if (x.indptr[r + 1] < x.indptr[r])
      fail("indptr[" + std::to_string(r + 1) + "] = " + std::to_string(x.indptr[r + 1]) + " is less than indptr[" +
           std::to_string(r) + "] = " + std::to_string(x.indptr[r]));
  }
  if (x.indptr.back() != x.nnz())
    fail("indptr[" + std::to_string(num_nodes) + "] = " + std::to_string(x.indptr.back()) + " but there are " +
         std::to_string(x.nnz()) + " column indices");
  if (x.values.size() != x.indices.size())
    fail(std::to_string(x.values.size()) + " values for " + std::to_string(x.indices.size()) + " entries");
  if (!x.edge_ids.empty()) fail("feature entries carry no edge ids");
  for (int64_t r = 0; r < num_nodes; ++r) {
    for (int64_t k = x.indptr[r]; k < x.indptr[r + 1]; ++k) {
      if (x.indices[k] < 0 || x.indices[k] >= x.num_cols)
        fail("row " + std::to_string(r) + ": column index " + std::to_string(x.indices[k]) + " is out of range [0, " +
             std::to_string(x.num_cols) + ")");
      if (!std::isfinite(x.values[k])) {
        std::ostringstream s;
        s << "value " << x.values[k] << " at row " << r << ", column " << x.indices[k] << " is not finite";
        fail(s.str());
      }
    }
  }
}

Graph::Graph(int64_t num_nodes, std::vector<int64_t> src, std::vector<int64_t> dst, Tensor x, Tensor e,
             std::vector<float> weights, bool undirected)
    : Graph(num_nodes, std::move(src), std::move(dst), std::move(x), Csr(), false, std::move(e), std::move(weights),
            undirected) {}

Graph::Graph(int64_t num_nodes, std::vector<int64_t> src, std::vector<int64_t> dst, Csr x_sparse, Tensor e,
             std::vector<float> weights, bool undirected)
    : Graph(num_nodes, std::move(src), std::move(dst), Tensor(), std::move(x_sparse), true, std::move(e),
            std::move(weights), undirected) {}

Graph::Graph(int64_t num_nodes, std::vector<int64_t> src, std::vector<int64_t> dst, Tensor x, Csr x_sparse,
             bool sparse_x, Tensor e, std::vector<float> weights, bool undirected)
    : num_nodes_(num_nodes),
      src_(std::move(src)),
      dst_(std::move(dst)),
      weights_(std::move(weights)),
      undirected_(undirected),
      sparse_x_(sparse_x),
      x_(std::move(x)),
      e_(std::move(e)),
      x_csr_(std::move(x_sparse)) {
  if (num_nodes_ <= 0) throw std::invalid_argument("graph: num_nodes must be > 0, got " + std::to_string(num_nodes_));
  if (sparse_x_) {
    check_feature_csr(x_csr_, num_nodes_, "node features x");
    x_.reset(num_nodes_, 0);
    x_csr_t_ = transpose(x_csr_);
  } else {
    check_shape(x_, num_nodes_, -1, "node features x");
  }
  check_shape(e_, num_edges(), -1, "edge features e");
  for (const Tensor* t : {&x_, &e_}) {
    for (int64_t i = 0; i < t->size(); ++i) {
      if (!std::isfinite(t->data()[i])) {
        const char* what = t == &x_ ? "node features x" : "edge features e";
        throw std::invalid_argument(std::string(what) + ": value at row " + std::to_string(i / t->cols()) +
                                    ", column " + std::to_string(i % t->cols()) + " is not finite");
      }
    }
  }
  in_ = csr_from_edges(num_nodes_, src_, dst_, weights_, undirected_);
  in_t_ = transpose(in_);
  gcn_ = gcn_normalize(in_, false);
  gcn_t_ = transpose(gcn_);
  if (!weights_.empty()) {
    gcn_w_ = gcn_normalize(in_, true);
    gcn_w_t_ = transpose(gcn_w_);
  } else {
    gcn_w_ = gcn_;
    gcn_w_t_ = gcn_t_;
  }
}

const Tensor& Graph::x() const {
  if (sparse_x_) throw std::logic_error("graph: the node features are sparse (x_sparse()), there is no dense x");
  return x_;
}

void Graph::prepare_device() const {
  device::require_cuda();
  in_.on_device();
  in_t_.on_device();
  if (sparse_x_) {
    x_csr_.on_device();
    x_csr_t_.on_device();
  }
  for (bool w : {false, true}) {
    if (w && weights_.empty()) break;  // gcn_w_ is a copy of gcn_
    gcn(w).device_copy.get([&] { return gcn_normalize_on_device(in_, in_, w); });
    gcn_t(w).device_copy.get([&] { return gcn_normalize_on_device(in_t_, in_, w); });
  }
}

Graph batch_graphs(const std::vector<const Graph*>& graphs) {
  if (graphs.empty()) throw std::invalid_argument("batch_graphs: no graphs given");
  const Graph& first = *graphs.front();
  int64_t n = 0, m = 0;
  for (size_t k = 0; k < graphs.size(); ++k) {
    const Graph& g = *graphs[k];
    auto mismatch = [&](const std::string& what) {
      throw std::invalid_argument("batch_graphs: graph " + std::to_string(k) + " differs from graph 0 in " + what);
    };
    if (g.num_node_features() != first.num_node_features()) mismatch("node feature count");
    if (g.sparse_features() != first.sparse_features()) mismatch("having sparse node features");
    if (g.e().cols() != first.e().cols()) mismatch("edge feature count");
    if (g.undirected() != first.undirected()) mismatch("directedness");
    if (g.weights().empty() != first.weights().empty()) mismatch("having edge weights");
    n += g.num_nodes();
    m += g.num_edges();
  }
  std::vector<int64_t> src, dst;
  std::vector<float> weights;
  src.reserve(m);
  dst.reserve(m);
  const bool sparse = first.sparse_features();
  Tensor x(sparse ? 0 : n, first.num_node_features()), e(m, first.e().cols());
  Csr xs;  // sparse features: the rows of each graph's CSR in turn
  xs.num_rows = n;
  xs.num_cols = first.num_node_features();
  xs.indptr.assign(1, 0);
  int64_t node_off = 0, edge_off = 0;
  for (const Graph* g : graphs) {
    for (int64_t i = 0; i < g->num_edges(); ++i) {
      src.push_back(g->src()[i] + node_off);
      dst.push_back(g->dst()[i] + node_off);
    }
    weights.insert(weights.end(), g->weights().begin(), g->weights().end());
    if (sparse) {
      const Csr& a = g->x_sparse();
      for (int64_t r = 0; r < a.num_rows; ++r) xs.indptr.push_back(xs.indptr.back() + a.degree(r));
      xs.indices.insert(xs.indices.end(), a.indices.begin(), a.indices.end());
      xs.values.insert(xs.values.end(), a.values.begin(), a.values.end());
    } else {
      std::copy(g->x().data(), g->x().data() + g->x().size(), x.row(node_off));
    }
    std::copy(g->e().data(), g->e().data() + g->e().size(), e.data() + edge_off * e.cols());
    node_off += g->num_nodes();
    edge_off += g->num_edges();
  }
  if (sparse) {
    return Graph(n, std::move(src), std::move(dst), std::move(xs), std::move(e), std::move(weights),
                 first.undirected());
  }
  return Graph(n, std::move(src), std::move(dst), std::move(x), std::move(e), std::move(weights), first.undirected());
}

}  // namespace hulk
