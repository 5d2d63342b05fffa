// Graph structure: CSR construction from edge lists, validation errors, transpose,
// GCN normalisation against the dense float64 reference, the Graph class and batching.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "csrc/graph.h"
#include "tests/cpp/reference.h"
#include "csrc/tensor.h"

namespace {

using ref::throws_invalid_argument_with;

using hulk::Csr;
using hulk::Graph;
using hulk::Tensor;
using ref::DMat;
using ref::EdgeList;
using ref::GraphKind;

// gcn_normalize computes degrees in double and rounds each entry to float once.
constexpr double kGcnAtol = 1e-6;
constexpr double kGcnRtol = 1e-6;


Csr csr_of(const EdgeList& g) { return hulk::csr_from_edges(g.num_nodes, g.src, g.dst, g.weights, g.undirected); }

// CSR invariants every builder must keep: indptr well formed, rows sorted by column.
::testing::AssertionResult well_formed(const Csr& a) {
  if (static_cast<int64_t>(a.indptr.size()) != a.num_rows + 1) return ::testing::AssertionFailure() << "indptr size";
  if (a.indptr.front() != 0 || a.indptr.back() != a.nnz()) return ::testing::AssertionFailure() << "indptr ends";
  if (!a.values.empty() && static_cast<int64_t>(a.values.size()) != a.nnz())
    return ::testing::AssertionFailure() << "values size";
  if (!a.edge_ids.empty() && static_cast<int64_t>(a.edge_ids.size()) != a.nnz())
    return ::testing::AssertionFailure() << "edge_ids size";
  for (int64_t r = 0; r < a.num_rows; ++r) {
    if (a.indptr[r + 1] < a.indptr[r]) return ::testing::AssertionFailure() << "indptr decreases at row " << r;
    for (int64_t k = a.indptr[r]; k < a.indptr[r + 1]; ++k) {
      if (a.indices[k] < 0 || a.indices[k] >= a.num_cols)
        return ::testing::AssertionFailure() << "column out of range in row " << r;
      if (k > a.indptr[r] && a.indices[k] <= a.indices[k - 1])
        return ::testing::AssertionFailure() << "row " << r << " is not strictly sorted";
    }
  }
  return ::testing::AssertionSuccess();
}

// (row, col, edge id, weight) of every entry, sorted, for multiset comparison.
using Quad = std::tuple<int64_t, int64_t, int64_t, float>;
std::vector<Quad> quads_of(const Csr& a) {
  std::vector<Quad> q;
  for (int64_t r = 0; r < a.num_rows; ++r)
    for (int64_t k = a.indptr[r]; k < a.indptr[r + 1]; ++k)
      q.emplace_back(r, a.indices[k], a.edge_ids.empty() ? -1 : a.edge_ids[k], a.values.empty() ? 1.0f : a.values[k]);
  std::sort(q.begin(), q.end());
  return q;
}
std::vector<Quad> quads_of(const EdgeList& g) {
  std::vector<Quad> q;
  for (const ref::Entry& en : ref::entries(g))
    q.emplace_back(en.target, en.source, en.edge, static_cast<float>(en.weight));
  std::sort(q.begin(), q.end());
  return q;
}

// A varied set of random graphs: kinds x directedness x weights.
std::vector<EdgeList> graph_zoo() {
  std::vector<EdgeList> zoo;
  uint32_t seed = 100;
  for (GraphKind kind : {GraphKind::Uniform, GraphKind::Skewed, GraphKind::Isolated})
    for (bool undirected : {false, true})
      for (bool weighted : {false, true}) zoo.push_back(ref::random_graph(kind, 37, 90, undirected, weighted, seed++));
  EdgeList empty;  // nodes but no edges at all
  empty.num_nodes = 6;
  zoo.push_back(empty);
  return zoo;
}

std::string name_of(const EdgeList& g) {
  return "graph with " + std::to_string(g.num_nodes) + " nodes, " + std::to_string(g.num_edges()) + " edges, " +
         (g.undirected ? "undirected" : "directed") + (g.weights.empty() ? "" : ", weighted");
}

// ---- csr_from_edges -------------------------------------------------------------------------

TEST(CsrFromEdges, DirectedHandExample) {
  // Input edges (src -> dst): e0 3->1, e1 0->1, e2 2->1, e3 1->0.
  const Csr a = hulk::csr_from_edges(4, {3, 0, 2, 1}, {1, 1, 1, 0}, {0.5f, 1.5f, 2.5f, 3.5f}, false);
  EXPECT_EQ(a.num_rows, 4);
  EXPECT_EQ(a.num_cols, 4);
  EXPECT_EQ(a.indptr, (std::vector<int64_t>{0, 1, 4, 4, 4}));
  EXPECT_EQ(a.indices, (std::vector<int32_t>{1, 0, 2, 3}));  // row 1 sorted by source
  EXPECT_EQ(a.edge_ids, (std::vector<int64_t>{3, 1, 2, 0}));
  EXPECT_EQ(a.values, (std::vector<float>{3.5f, 1.5f, 2.5f, 0.5f}));
  EXPECT_EQ(a.degree(1), 3);
  EXPECT_EQ(a.degree(2), 0);
}

TEST(CsrFromEdges, UndirectedDoublesEveryEdge) {
  // e0 {0, 1}, e1 {2, 1} (given as 2 -> 1), no weights.
  const Csr a = hulk::csr_from_edges(3, {0, 2}, {1, 1}, {}, true);
  EXPECT_EQ(a.nnz(), 4);
  EXPECT_EQ(a.indptr, (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(a.indices, (std::vector<int32_t>{1, 0, 2, 1}));
  EXPECT_EQ(a.edge_ids, (std::vector<int64_t>{0, 0, 1, 1}));  // both directions point at the input row
  EXPECT_TRUE(a.values.empty());
  EXPECT_FALSE(a.weighted());
}

TEST(CsrFromEdges, RandomGraphsMatchTheEdgeList) {
  for (const EdgeList& g : graph_zoo()) {
    SCOPED_TRACE(name_of(g));
    const Csr a = csr_of(g);
    EXPECT_TRUE(well_formed(a));
    EXPECT_EQ(a.num_rows, g.num_nodes);
    EXPECT_EQ(a.num_cols, g.num_nodes);
    EXPECT_EQ(a.nnz(), (g.undirected ? 2 : 1) * g.num_edges());
    EXPECT_EQ(a.weighted(), !g.weights.empty());
    EXPECT_EQ(static_cast<int64_t>(a.edge_ids.size()), a.nnz());
    EXPECT_EQ(quads_of(a), quads_of(g));  // same entries, edge ids and weights carried
    const std::vector<int64_t> deg = ref::in_degree(g);
    for (int64_t v = 0; v < g.num_nodes; ++v) EXPECT_EQ(a.degree(v), deg[v]) << "node " << v;
  }
}

TEST(CsrFromEdges, SkewedGraphHasAHubAndIsolatedGraphHasEmptyRows) {
  // Guards the generators the op tests rely on.
  const Csr skew = csr_of(ref::random_graph(GraphKind::Skewed, 60, 150, true, false, 7));
  int64_t max_deg = 0;
  for (int64_t v = 0; v < skew.num_rows; ++v) max_deg = std::max(max_deg, skew.degree(v));
  EXPECT_GE(max_deg, 20);
  const Csr iso = csr_of(ref::random_graph(GraphKind::Isolated, 40, 60, false, false, 8));
  int64_t empty_rows = 0;
  for (int64_t v = 0; v < iso.num_rows; ++v) empty_rows += iso.degree(v) == 0;
  EXPECT_GE(empty_rows, 10);
}

TEST(CsrFromEdges, ZeroNodesZeroEdges) {
  const Csr a = hulk::csr_from_edges(0, {}, {}, {}, true);
  EXPECT_EQ(a.num_rows, 0);
  EXPECT_EQ(a.nnz(), 0);
  EXPECT_EQ(a.indptr, (std::vector<int64_t>{0}));
}

// ---- validation -----------------------------------------------------------------------------

TEST(EdgeListValidation, OutOfRangeIdNamesTheEdgeAndTheValue) {
  const std::vector<int64_t> src{0, 1, 17}, dst{1, 2, 0};
  EXPECT_TRUE(throws_invalid_argument_with([&] { hulk::validate_edge_list(5, src, dst, {}, false); }, {"edge 2", "17"}));
  EXPECT_TRUE(throws_invalid_argument_with([&] { hulk::csr_from_edges(5, src, dst, {}, true); }, {"edge 2", "17"}));
  const std::vector<int64_t> src2{0, 1, 2}, dst2{1, -3, 0};
  EXPECT_TRUE(throws_invalid_argument_with([&] { hulk::csr_from_edges(5, src2, dst2, {}, false); }, {"edge 1", "-3"}));
  // id == num_nodes is one past the end.
  EXPECT_TRUE(throws_invalid_argument_with([&] { hulk::csr_from_edges(3, {0}, {3}, {}, false); }, {"edge 0", "3"}));
}

TEST(EdgeListValidation, NonFiniteWeightNamesTheEdge) {
  const std::vector<int64_t> src{0, 1, 2}, dst{1, 2, 3};
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    const std::vector<float> w{1.0f, bad, 2.0f};
    EXPECT_TRUE(throws_invalid_argument_with([&] { hulk::validate_edge_list(4, src, dst, w, false); }, {"edge 1"}));
    EXPECT_TRUE(throws_invalid_argument_with([&] { hulk::csr_from_edges(4, src, dst, w, true); }, {"edge 1"}));
  }
}

TEST(EdgeListValidation, SizeMismatchesThrow) {
  EXPECT_THROW(hulk::validate_edge_list(4, {0, 1}, {1}, {}, false), std::invalid_argument);
  EXPECT_THROW(hulk::validate_edge_list(4, {0, 1}, {1, 2}, {1.0f}, false), std::invalid_argument);
  EXPECT_THROW(hulk::csr_from_edges(4, {0, 1}, {1, 2}, {1.0f, 2.0f, 3.0f}, false), std::invalid_argument);
  EXPECT_THROW(hulk::validate_edge_list(-1, {}, {}, {}, false), std::invalid_argument);
}

TEST(EdgeListValidation, SelfLoopsAreReportedAndRejected) {
  const std::vector<int64_t> src{0, 2, 1, 3}, dst{1, 2, 3, 3};
  for (bool undirected : {false, true}) {
    const hulk::EdgeListReport r = hulk::validate_edge_list(4, src, dst, {}, undirected);
    EXPECT_EQ(r.self_loops, (std::vector<int64_t>{1, 3}));
    EXPECT_TRUE(r.duplicates.empty());
    EXPECT_FALSE(r.clean());
    EXPECT_NE(r.summary().find("self loop"), std::string::npos) << r.summary();
    EXPECT_TRUE(throws_invalid_argument_with([&] { hulk::csr_from_edges(4, src, dst, {}, undirected); },
                                             {"self loop"}));
  }
}

TEST(EdgeListValidation, DuplicatesDependOnDirectedness) {
  // e0 0->1, e1 1->0 (the reverse), e2 0->1 (an exact repeat), e3 2->3.
  const std::vector<int64_t> src{0, 1, 0, 2}, dst{1, 0, 1, 3};
  const hulk::EdgeListReport directed = hulk::validate_edge_list(4, src, dst, {}, false);
  EXPECT_EQ(directed.duplicates, (std::vector<int64_t>{2}));  // the reverse is a different directed edge
  EXPECT_TRUE(directed.self_loops.empty());
  const hulk::EdgeListReport undirected = hulk::validate_edge_list(4, src, dst, {}, true);
  EXPECT_EQ(undirected.duplicates, (std::vector<int64_t>{1, 2}));
  EXPECT_NE(undirected.summary().find("duplicate"), std::string::npos) << undirected.summary();
  EXPECT_TRUE(throws_invalid_argument_with([&] { hulk::csr_from_edges(4, src, dst, {}, false); }, {"duplicate"}));
  EXPECT_TRUE(throws_invalid_argument_with([&] { hulk::csr_from_edges(4, src, dst, {}, true); }, {"duplicate"}));
  // Only the reverse pair: fine directed, a duplicate undirected.
  EXPECT_TRUE(hulk::validate_edge_list(2, {0, 1}, {1, 0}, {}, false).clean());
  EXPECT_NO_THROW(hulk::csr_from_edges(2, {0, 1}, {1, 0}, {}, false));
  EXPECT_EQ(hulk::validate_edge_list(2, {0, 1}, {1, 0}, {}, true).duplicates, (std::vector<int64_t>{1}));
  EXPECT_THROW(hulk::csr_from_edges(2, {0, 1}, {1, 0}, {}, true), std::invalid_argument);
}

TEST(EdgeListValidation, CleanListsReportNothing) {
  for (const EdgeList& g : graph_zoo()) {
    const hulk::EdgeListReport r = hulk::validate_edge_list(g.num_nodes, g.src, g.dst, g.weights, g.undirected);
    EXPECT_TRUE(r.clean()) << name_of(g) << ": " << r.summary();
  }
}

// ---- transpose ------------------------------------------------------------------------------

TEST(Transpose, MatchesDenseTransposeAndCarriesEdgeIds) {
  for (const EdgeList& g : graph_zoo()) {
    SCOPED_TRACE(name_of(g));
    const Csr a = csr_of(g);
    const Csr t = hulk::transpose(a);
    EXPECT_TRUE(well_formed(t));
    EXPECT_EQ(t.num_rows, a.num_cols);
    EXPECT_EQ(t.num_cols, a.num_rows);
    EXPECT_TRUE(ref::all_close(ref::csr_to_dense(t), ref::transpose(ref::dense_adjacency(g, !g.weights.empty())), 0, 0));
    // Entry (u, v, id, w) of the transpose is entry (v, u, id, w) of a.
    std::vector<Quad> swapped;
    for (const Quad& q : quads_of(t)) swapped.emplace_back(std::get<1>(q), std::get<0>(q), std::get<2>(q), std::get<3>(q));
    std::sort(swapped.begin(), swapped.end());
    EXPECT_EQ(swapped, quads_of(a));
  }
}

TEST(Transpose, TwiceIsTheIdentity) {
  for (const EdgeList& g : graph_zoo()) {
    SCOPED_TRACE(name_of(g));
    const Csr a = csr_of(g);
    const Csr tt = hulk::transpose(hulk::transpose(a));
    EXPECT_EQ(tt.num_rows, a.num_rows);
    EXPECT_EQ(tt.num_cols, a.num_cols);
    EXPECT_EQ(tt.indptr, a.indptr);
    EXPECT_EQ(tt.indices, a.indices);
    EXPECT_EQ(tt.values, a.values);
    EXPECT_EQ(tt.edge_ids, a.edge_ids);
  }
}

TEST(Transpose, RectangularMatrix) {
  // 2 x 3: row 0 = {1: 2.0}, row 1 = {0: 3.0, 2: 4.0}
  Csr a;
  a.num_rows = 2;
  a.num_cols = 3;
  a.indptr = {0, 1, 3};
  a.indices = {1, 0, 2};
  a.values = {2.0f, 3.0f, 4.0f};
  const Csr t = hulk::transpose(a);
  EXPECT_EQ(t.num_rows, 3);
  EXPECT_EQ(t.num_cols, 2);
  EXPECT_EQ(t.indptr, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(t.indices, (std::vector<int32_t>{1, 0, 1}));
  EXPECT_EQ(t.values, (std::vector<float>{3.0f, 2.0f, 4.0f}));
  EXPECT_TRUE(t.edge_ids.empty());
}

// ---- gcn_normalize --------------------------------------------------------------------------

TEST(GcnNormalize, MatchesDenseReference) {
  for (const EdgeList& g : graph_zoo()) {
    for (bool use_weights : {false, true}) {
      if (use_weights && g.weights.empty()) continue;
      SCOPED_TRACE(name_of(g) + (use_weights ? ", use_weights" : ""));
      const Csr n = hulk::gcn_normalize(csr_of(g), use_weights);
      EXPECT_TRUE(well_formed(n));
      EXPECT_TRUE(n.edge_ids.empty());
      EXPECT_TRUE(n.weighted());
      EXPECT_EQ(n.nnz(), csr_of(g).nnz() + g.num_nodes);  // one self loop added per row
      for (int64_t v = 0; v < n.num_rows; ++v) {
        int64_t loops = 0;
        for (int64_t k = n.indptr[v]; k < n.indptr[v + 1]; ++k) loops += n.indices[k] == v;
        EXPECT_EQ(loops, 1) << "row " << v;
      }
      EXPECT_TRUE(ref::all_close(ref::csr_to_dense(n), ref::gcn_norm_dense(g, use_weights), kGcnAtol, kGcnRtol));
    }
  }
}

TEST(GcnNormalize, HandComputedPath) {
  // Undirected path 0 - 1 - 2, weights 1 and 3. Unweighted degrees (with self loop) 2, 3, 2.
  const Csr a = hulk::csr_from_edges(3, {0, 1}, {1, 2}, {1.0f, 3.0f}, true);
  const DMat plain = ref::csr_to_dense(hulk::gcn_normalize(a, false));
  EXPECT_NEAR(plain(0, 0), 1.0 / 2.0, 1e-7);
  EXPECT_NEAR(plain(0, 1), 1.0 / std::sqrt(6.0), 1e-7);
  EXPECT_NEAR(plain(1, 1), 1.0 / 3.0, 1e-7);
  EXPECT_NEAR(plain(2, 1), 1.0 / std::sqrt(6.0), 1e-7);
  EXPECT_EQ(plain(0, 2), 0.0);
  // Weighted degrees 1 + 1 = 2, 1 + 1 + 3 = 5, 1 + 3 = 4.
  const DMat w = ref::csr_to_dense(hulk::gcn_normalize(a, true));
  EXPECT_NEAR(w(0, 0), 1.0 / 2.0, 1e-7);
  EXPECT_NEAR(w(1, 0), 1.0 / std::sqrt(10.0), 1e-7);
  EXPECT_NEAR(w(1, 2), 3.0 / std::sqrt(20.0), 1e-7);
  EXPECT_NEAR(w(2, 2), 1.0 / 4.0, 1e-7);
}

TEST(GcnNormalize, DirectedDegreeCountsInEdges) {
  // 0 -> 1 and 2 -> 1: node 1 has in-degree 2 (d = 3); nodes 0 and 2 have none (d = 1).
  const Csr a = hulk::csr_from_edges(3, {0, 2}, {1, 1}, {}, false);
  const DMat n = ref::csr_to_dense(hulk::gcn_normalize(a, false));
  EXPECT_NEAR(n(1, 0), 1.0 / std::sqrt(3.0), 1e-7);
  EXPECT_NEAR(n(1, 1), 1.0 / 3.0, 1e-7);
  EXPECT_NEAR(n(0, 0), 1.0, 1e-7);
  EXPECT_EQ(n(0, 1), 0.0);
}

TEST(GcnNormalize, RejectsBadInput) {
  const Csr unweighted = hulk::csr_from_edges(3, {0}, {1}, {}, true);
  EXPECT_THROW(hulk::gcn_normalize(unweighted, true), std::invalid_argument);
  Csr rect;
  rect.num_rows = 2;
  rect.num_cols = 3;
  rect.indptr = {0, 0, 0};
  EXPECT_THROW(hulk::gcn_normalize(rect, false), std::invalid_argument);
  // Negative weights can make 1 + sum of weights <= 0: D^-1/2 does not exist.
  const Csr negative = hulk::csr_from_edges(3, {0, 1}, {1, 2}, {-2.0f, 0.5f}, true);
  EXPECT_TRUE(throws_invalid_argument_with([&] { hulk::gcn_normalize(negative, true); }, {"node 0"}));
  EXPECT_NO_THROW(hulk::gcn_normalize(negative, false));
}

// ---- Graph ----------------------------------------------------------------------------------

Graph make_graph(const EdgeList& g, int64_t f, int64_t fe, uint32_t seed) {
  std::mt19937 rng(seed);
  return Graph(g.num_nodes, g.src, g.dst, ref::random_tensor(g.num_nodes, f, rng), ref::random_tensor(g.num_edges(), fe, rng),
               g.weights, g.undirected);
}

TEST(GraphClass, BuildsAllDerivedStructures) {
  for (const EdgeList& g : graph_zoo()) {
    SCOPED_TRACE(name_of(g));
    const Graph graph = make_graph(g, 3, 2, 5);
    EXPECT_EQ(graph.num_nodes(), g.num_nodes);
    EXPECT_EQ(graph.num_edges(), g.num_edges());
    EXPECT_EQ(graph.undirected(), g.undirected);
    EXPECT_EQ(quads_of(graph.in()), quads_of(g));
    EXPECT_TRUE(ref::all_close(ref::csr_to_dense(graph.in_t()),
                               ref::transpose(ref::dense_adjacency(g, !g.weights.empty())), 0, 0));
    for (bool use_weights : {false, true}) {
      // Without weights gcn(true) falls back to the unweighted normalisation.
      const DMat want = ref::gcn_norm_dense(g, use_weights && !g.weights.empty());
      EXPECT_TRUE(ref::all_close(ref::csr_to_dense(graph.gcn(use_weights)), want, kGcnAtol, kGcnRtol));
      EXPECT_TRUE(ref::all_close(ref::csr_to_dense(graph.gcn_t(use_weights)), ref::transpose(want), kGcnAtol, kGcnRtol));
    }
  }
}

TEST(GraphClass, ShapeMismatchesThrow) {
  const std::vector<int64_t> src{0, 1}, dst{1, 2};
  EXPECT_TRUE(throws_invalid_argument_with([&] { Graph(3, src, dst, Tensor(2, 4), Tensor(2, 1), {}, true); },
                                           {"node features"}));
  EXPECT_TRUE(throws_invalid_argument_with([&] { Graph(3, src, dst, Tensor(3, 4), Tensor(3, 1), {}, true); },
                                           {"edge features"}));
  EXPECT_THROW(Graph(3, src, dst, Tensor(3, 4), Tensor(2, 1), {1.0f}, true), std::invalid_argument);
  EXPECT_NO_THROW(Graph(3, src, dst, Tensor(3, 4), Tensor(2, 0), {}, true));  // Fe = 0 is allowed
}

TEST(GraphClass, NonFiniteFeatureNamesRowAndColumn) {
  const std::vector<int64_t> src{0, 1, 2}, dst{1, 2, 3};
  Tensor x = Tensor::filled(4, 3, 0.5f), e = Tensor::filled(3, 2, 0.5f);
  x.at(2, 1) = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(throws_invalid_argument_with([&] { Graph(4, src, dst, x, e, {}, false); }, {"row 2", "column 1"}));
  x.at(2, 1) = 0.5f;
  e.at(1, 0) = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(throws_invalid_argument_with([&] { Graph(4, src, dst, x, e, {}, false); }, {"row 1", "column 0"}));
}

TEST(GraphClass, BadEdgesAndEmptyGraphThrow) {
  EXPECT_THROW(Graph(0, {}, {}, Tensor(0, 2), Tensor(0, 0), {}, true), std::invalid_argument);
  EXPECT_TRUE(throws_invalid_argument_with([] { Graph(3, {0, 1}, {1, 1}, Tensor(3, 1), Tensor(2, 0), {}, true); },
                                           {"self loop"}));
  EXPECT_TRUE(throws_invalid_argument_with([] { Graph(3, {0, 1}, {1, 0}, Tensor(3, 1), Tensor(2, 0), {}, true); },
                                           {"duplicate"}));
  EXPECT_TRUE(throws_invalid_argument_with([] { Graph(3, {0, 9}, {1, 0}, Tensor(3, 1), Tensor(2, 0), {}, true); },
                                           {"edge 1", "9"}));
}

// ---- batch_graphs ---------------------------------------------------------------------------

TEST(BatchGraphs, DisjointUnionWithOffsets) {
  for (bool undirected : {false, true}) {
    for (bool weighted : {false, true}) {
      SCOPED_TRACE(std::string(undirected ? "undirected" : "directed") + (weighted ? ", weighted" : ""));
      const EdgeList g0 = ref::random_graph(GraphKind::Uniform, 7, 12, undirected, weighted, 21);
      const EdgeList g1 = ref::random_graph(GraphKind::Isolated, 5, 4, undirected, weighted, 22);
      const EdgeList g2 = ref::random_graph(GraphKind::Skewed, 9, 15, undirected, weighted, 23);
      const Graph a = make_graph(g0, 3, 2, 31), b = make_graph(g1, 3, 2, 32), c = make_graph(g2, 3, 2, 33);
      const Graph u = hulk::batch_graphs({&a, &b, &c});
      ASSERT_EQ(u.num_nodes(), 7 + 5 + 9);
      ASSERT_EQ(u.num_edges(), g0.num_edges() + g1.num_edges() + g2.num_edges());
      EXPECT_EQ(u.undirected(), undirected);
      // The expected union, built by hand.
      EdgeList want;
      want.num_nodes = u.num_nodes();
      want.undirected = undirected;
      int64_t node_off = 0, edge_off = 0;
      for (const Graph* part : {&a, &b, &c}) {
        for (int64_t i = 0; i < part->num_edges(); ++i) {
          want.src.push_back(part->src()[i] + node_off);
          want.dst.push_back(part->dst()[i] + node_off);
          EXPECT_EQ(u.src()[edge_off + i], part->src()[i] + node_off);
          EXPECT_EQ(u.dst()[edge_off + i], part->dst()[i] + node_off);
          for (int64_t j = 0; j < part->e().cols(); ++j) EXPECT_EQ(u.e().at(edge_off + i, j), part->e().at(i, j));
        }
        want.weights.insert(want.weights.end(), part->weights().begin(), part->weights().end());
        for (int64_t v = 0; v < part->num_nodes(); ++v)
          for (int64_t j = 0; j < part->x().cols(); ++j) EXPECT_EQ(u.x().at(node_off + v, j), part->x().at(v, j));
        node_off += part->num_nodes();
        edge_off += part->num_edges();
      }
      EXPECT_EQ(u.weights(), want.weights);
      EXPECT_EQ(quads_of(u.in()), quads_of(want));
      // Block-diagonal: the union's normalisation is each part's normalisation.
      EXPECT_TRUE(ref::all_close(ref::csr_to_dense(u.gcn(weighted)), ref::gcn_norm_dense(want, weighted), kGcnAtol,
                                 kGcnRtol));
    }
  }
}

TEST(BatchGraphs, SingleGraphIsACopy) {
  const EdgeList g = ref::random_graph(GraphKind::Uniform, 8, 14, true, true, 40);
  const Graph a = make_graph(g, 2, 1, 41);
  const Graph u = hulk::batch_graphs({&a});
  EXPECT_EQ(u.src(), a.src());
  EXPECT_EQ(u.dst(), a.dst());
  EXPECT_EQ(u.weights(), a.weights());
  EXPECT_TRUE(ref::identical(u.x(), a.x()));
  EXPECT_TRUE(ref::identical(u.e(), a.e()));
}

TEST(BatchGraphs, MismatchesThrow) {
  const EdgeList g = ref::random_graph(GraphKind::Uniform, 6, 8, true, false, 50);
  const EdgeList gd = ref::random_graph(GraphKind::Uniform, 6, 8, false, false, 51);
  const EdgeList gw = ref::random_graph(GraphKind::Uniform, 6, 8, true, true, 52);
  const Graph base = make_graph(g, 3, 2, 1);
  const Graph other_f = make_graph(g, 4, 2, 2);
  const Graph other_fe = make_graph(g, 3, 1, 3);
  const Graph directed = make_graph(gd, 3, 2, 4);
  const Graph weighted = make_graph(gw, 3, 2, 5);
  EXPECT_THROW(hulk::batch_graphs({}), std::invalid_argument);
  EXPECT_TRUE(throws_invalid_argument_with([&] { hulk::batch_graphs({&base, &other_f}); }, {"graph 1"}));
  EXPECT_TRUE(throws_invalid_argument_with([&] { hulk::batch_graphs({&base, &base, &other_fe}); }, {"graph 2"}));
  EXPECT_THROW(hulk::batch_graphs({&base, &directed}), std::invalid_argument);
  EXPECT_THROW(hulk::batch_graphs({&weighted, &base}), std::invalid_argument);
  EXPECT_NO_THROW(hulk::batch_graphs({&base, &base}));
}

}  // namespace
