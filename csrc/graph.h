// Graph structure: CSR adjacency built from an edge list, with the derived forms the
// layers need (transpose, GCN normalisation, per-node edge-feature sums), and
// disjoint-union batching.
//
// Convention: a message travels along an edge u -> v. The CSR `in` adjacency has one
// row per target v listing its sources u, so aggregation is a row-wise SpMM. An
// undirected input edge {u, v} becomes the two directed entries u->v and v->u, both
// pointing at the same row of the edge-feature matrix through `edge_ids`.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "csrc/device_csr.h"
#include "csrc/tensor.h"

namespace hulk {

// Holds a Csr's device copy. A copied Csr starts without one: its arrays may be changed
// after the copy, and the device copy must never go stale.
class DeviceCsrSlot {
 public:
  DeviceCsrSlot() = default;
  DeviceCsrSlot(const DeviceCsrSlot&) {}
  DeviceCsrSlot& operator=(const DeviceCsrSlot&) { return *this; }
  // The cached copy, made by `make` on first use (thread-safe).
  template <typename Make>
  const DeviceCsr& get(Make&& make) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!copy_) copy_ = make();
    return *copy_;
  }
  bool has_copy() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return copy_ != nullptr;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::shared_ptr<const DeviceCsr> copy_;
};

struct Csr {
  int64_t num_rows = 0;
  int64_t num_cols = 0;
  std::vector<int64_t> indptr;    // [num_rows + 1]
  std::vector<int32_t> indices;   // [nnz] column = source node
  std::vector<float> values;      // [nnz] entry weights; empty means all ones
  std::vector<int64_t> edge_ids;  // [nnz] row of the edge-feature matrix; empty when none

  int64_t nnz() const { return static_cast<int64_t>(indices.size()); }
  bool weighted() const { return !values.empty(); }
  int64_t degree(int64_t row) const { return indptr[row + 1] - indptr[row]; }

  // The device copy: uploaded on first use, then reused (the arrays above must not change
  // after that). A Graph installs its GCN matrices' copies itself, normalised on the device.
  const DeviceCsr& on_device() const { return device_copy.get([this] { return upload_csr(*this); }); }
  DeviceCsrSlot device_copy;
};

// Problems found in an edge list. Out-of-range ids and non-finite weights are always
// errors; self loops and duplicate pairs are reported so the caller decides.
struct EdgeListReport {
  std::vector<int64_t> self_loops;       // input edge indices with src == dst
  std::vector<int64_t> duplicates;       // input edge indices repeating an earlier pair
  std::string summary() const;           // "2 self loops (edge 3: 4->4, ...); ..."
  bool clean() const { return self_loops.empty() && duplicates.empty(); }
};

// Validates ids and weights (throws std::invalid_argument naming the field, the edge
// index and the value) and returns the self loops and duplicates it found. For an
// undirected list the pairs (u, v) and (v, u) count as duplicates.
EdgeListReport validate_edge_list(int64_t num_nodes, const std::vector<int64_t>& src,
                                  const std::vector<int64_t>& dst, const std::vector<float>& weights,
                                  bool undirected);

// Builds the in-adjacency CSR (rows sorted by source id, stable). Throws on any
// problem validate_edge_list finds, self loops and duplicates included: the engine
// never drops or merges edges behind the caller's back.
Csr csr_from_edges(int64_t num_nodes, const std::vector<int64_t>& src, const std::vector<int64_t>& dst,
                   const std::vector<float>& weights, bool undirected);

// The transpose: row u lists the targets v of u. values and edge_ids follow their entries.
Csr transpose(const Csr& a);

// D^-1/2 (A + I) D^-1/2 with d_v = 1 + sum of the weights in row v (Kipf & Welling, with
// edge weights as in PyG's gcn_norm). The result has a self loop in every row and no
// edge_ids. Requires a square matrix.
Csr gcn_normalize(const Csr& a, bool use_weights);

// Checks sparse node features x [num_nodes, F] held as a CSR (throws std::invalid_argument naming
// `what`, the position and the value): indptr of num_nodes + 1 non-decreasing offsets from 0 to
// nnz, column indices in [0, F), one finite value per entry. Negative values are legal features.
void check_feature_csr(const Csr& x, int64_t num_nodes, const std::string& what);

// A graph with its features. Immutable after construction; derived structures are built
// once in the constructor so every epoch reuses them.
class Graph {
 public:
  // x: [N, F] node features; e: [M, Fe] edge features, one row per input edge (may have
  // Fe = 0); weights: [M] or empty, used by GCNConv when gcn_use_weights.
  Graph(int64_t num_nodes, std::vector<int64_t> src, std::vector<int64_t> dst, Tensor x, Tensor e,
        std::vector<float> weights, bool undirected);
  // The same with sparse node features x_sparse [N, F] (values = the features; issue 20): they
  // stay sparse, with their transpose [F, N] built here once for the first layer's weight gradient.
  Graph(int64_t num_nodes, std::vector<int64_t> src, std::vector<int64_t> dst, Csr x_sparse, Tensor e,
        std::vector<float> weights, bool undirected);

  int64_t num_nodes() const { return num_nodes_; }
  int64_t num_edges() const { return static_cast<int64_t>(src_.size()); }  // input edges
  bool undirected() const { return undirected_; }
  const std::vector<int64_t>& src() const { return src_; }
  const std::vector<int64_t>& dst() const { return dst_; }
  const std::vector<float>& weights() const { return weights_; }
  // Dense node features [N, F]; throws std::logic_error when they are sparse (sparse_features()).
  const Tensor& x() const;
  bool sparse_features() const { return sparse_x_; }
  int64_t num_node_features() const { return sparse_x_ ? x_csr_.num_cols : x_.cols(); }
  const Csr& x_sparse() const { return x_csr_; }      // [N, F] when sparse_features(), else empty
  const Csr& x_sparse_t() const { return x_csr_t_; }  // [F, N], its transpose
  const Tensor& e() const { return e_; }  // [M, Fe]

  const Csr& in() const { return in_; }          // rows = targets
  const Csr& in_t() const { return in_t_; }      // rows = sources
  const Csr& gcn(bool use_weights) const { return use_weights ? gcn_w_ : gcn_; }
  const Csr& gcn_t(bool use_weights) const { return use_weights ? gcn_w_t_ : gcn_t_; }

  // Puts the structure on the CUDA device once: the in-adjacency and its transpose are
  // uploaded, the GCN matrices normalised there, sparse node features and their transpose
  // uploaded. Later calls do nothing.
  void prepare_device() const;

 private:
  // Both public constructors: x or x_sparse as sparse_x says.
  Graph(int64_t num_nodes, std::vector<int64_t> src, std::vector<int64_t> dst, Tensor x, Csr x_sparse, bool sparse_x,
        Tensor e, std::vector<float> weights, bool undirected);
  int64_t num_nodes_;
  std::vector<int64_t> src_, dst_;
  std::vector<float> weights_;
  bool undirected_;
  bool sparse_x_ = false;
  Tensor x_, e_;  // x_ is [N, 0] when the node features are sparse
  Csr x_csr_, x_csr_t_;
  Csr in_, in_t_, gcn_, gcn_t_, gcn_w_, gcn_w_t_;
};

// Disjoint union: node ids of graph k are offset by the node counts before it; features
// are stacked (sparse ones as a CSR). All graphs must agree on F, Fe, directedness, on
// having weights and on sparse or dense node features.
Graph batch_graphs(const std::vector<const Graph*>& graphs);

}  // namespace hulk
