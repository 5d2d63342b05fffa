// EdgePool (csrc/ops/edge_pool.cpp): pooling coefficients, the fast path (SpMM, segment sum,
// GEMMs) and the per-edge reference (csrc/ops/cpu/edge_messages.cpp) against the float64
// reference, each other and finite differences (tests/cpp/ops_fixtures.h).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "csrc/graph.h"
#include "csrc/ops/ops.h"
#include "csrc/tensor.h"
#include "tests/cpp/ops_fixtures.h"
#include "tests/cpp/reference.h"

namespace {

using namespace ops_fixtures;

// =============================================================================================
// EdgePool
// =============================================================================================

TEST(EdgePool, PoolCoefficients) {
  for (const GraphCase& gc : graph_cases()) {
    SCOPED_TRACE(gc.name);
    const Csr a = csr_of(gc.g);
    const std::vector<int64_t> deg = ref::in_degree(gc.g);
    const hulk::ops::PoolCoefficients s = hulk::ops::pool_coefficients(a, Pooling::Sum);
    const hulk::ops::PoolCoefficients m = hulk::ops::pool_coefficients(a, Pooling::Mean);
    ASSERT_EQ(static_cast<size_t>(s.self_coef.rows()), deg.size());
    ASSERT_EQ(static_cast<size_t>(s.nbr_coef.rows()), deg.size());
    ASSERT_EQ(static_cast<size_t>(m.self_coef.rows()), deg.size());
    ASSERT_EQ(static_cast<size_t>(m.nbr_coef.rows()), deg.size());
    for (size_t v = 0; v < deg.size(); ++v) {
      EXPECT_EQ(s.self_coef.at(v, 0), static_cast<float>(deg[v]));
      EXPECT_EQ(s.nbr_coef.at(v, 0), 1.0f);
      EXPECT_EQ(m.self_coef.at(v, 0), deg[v] > 0 ? 1.0f : 0.0f);
      EXPECT_NEAR(m.nbr_coef.at(v, 0), deg[v] > 0 ? 1.0 / deg[v] : 0.0, 1e-7);
    }
  }
}

// Everything one EdgePool configuration needs, float64 and float32 side by side.
struct PoolSetup {
  EdgeList g;
  Pooling pooling;
  Csr a, a_t;
  hulk::ops::PoolCoefficients coef;
  DMat h, e, w, b;
  Tensor hf, ef, wf, bf, edge_sum;

  PoolSetup(const EdgeList& graph, Pooling pl, int64_t f, int64_t fe, int64_t o, std::mt19937& rng)
      : g(graph), pooling(pl), a(csr_of(graph)), a_t(hulk::transpose(a)), coef(hulk::ops::pool_coefficients(a, pl)) {
    h = ref::random_dmat(g.num_nodes, f, rng);
    e = ref::random_dmat(g.num_edges(), fe, rng);
    w = ref::random_dmat(2 * f + fe, o, rng);
    b = ref::random_dmat(1, o, rng);
    hf = ref::to_f(h);
    ef = ref::to_f(e);
    wf = ref::to_f(w);
    bf = ref::to_f(b);
    hulk::ops::segment_sum_edges(a, ef, edge_sum);
  }
  bool mean() const { return pooling == Pooling::Mean; }
  int64_t f() const { return h.cols; }

  Tensor fast_forward(Tensor* p_out = nullptr) const {
    Tensor z = Tensor::filled(1, 1, 9.0f), p;
    hulk::ops::edge_pool_forward(a, coef, hf, edge_sum, wf, bf, z, p);
    if (p_out) *p_out = p;
    return z;
  }
  Tensor per_edge_forward() const {
    Tensor z = Tensor::filled(1, 1, 9.0f);
    hulk::ops::edge_pool_forward_per_edge(a, pooling, hf, ef, wf, bf, z);
    return z;
  }
  // Gradients of both paths. dw, db, dh start as NaN of the right shape to prove they are overwritten.
  struct Grads {
    Tensor dw, db, dh;
  };
  static Grads poisoned(int64_t n, int64_t f, int64_t rows_w, int64_t o) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    return {Tensor::filled(rows_w, o, nan), Tensor::filled(1, o, nan), Tensor::filled(n, f, nan)};
  }
  Grads fast_backward(const Tensor& dz, bool with_dh) const {
    Tensor p;
    fast_forward(&p);
    Grads gr = poisoned(g.num_nodes, f(), w.rows, w.cols);
    hulk::ops::edge_pool_backward(a_t, coef, p, wf, dz, f(), gr.dw, gr.db, with_dh ? &gr.dh : nullptr);
    return gr;
  }
  Grads per_edge_backward(const Tensor& dz, bool with_dh) const {
    Grads gr = poisoned(g.num_nodes, f(), w.rows, w.cols);
    hulk::ops::edge_pool_backward_per_edge(a, pooling, hf, ef, wf, dz, gr.dw, gr.db, with_dh ? &gr.dh : nullptr);
    return gr;
  }
};

TEST(EdgePool, ForwardBothPathsMatchReference) {
  std::mt19937 rng(301);
  for (const GraphCase& gc : graph_cases()) {
    for (Pooling pl : {Pooling::Sum, Pooling::Mean}) {
      for (int64_t fe : {0, 3}) {
        SCOPED_TRACE(gc.name + ", " + pooling_name(pl) + ", Fe " + std::to_string(fe));
        const PoolSetup s(gc.g, pl, 5, fe, 4, rng);
        const DMat want = ref::edge_pool_forward(s.g, s.mean(), s.h, s.e, s.w, s.b);
        Tensor p;
        const Tensor fast = s.fast_forward(&p);
        const Tensor slow = s.per_edge_forward();
        EXPECT_TRUE(ref::all_close(fast, want, kAtol, kRtol)) << "fast path";
        EXPECT_TRUE(ref::all_close(slow, want, kAtol, kRtol)) << "per-edge path";
        EXPECT_TRUE(ref::all_close(fast, slow, kPathAtol, kPathRtol)) << "fast vs per-edge";
        EXPECT_TRUE(ref::all_close(p, ref::edge_pool_stacked_input(s.g, s.mean(), s.h, s.e), kAtol, kRtol))
            << "stacked input p";
        // A node without neighbours outputs 0 under both poolings.
        const std::vector<int64_t> deg = ref::in_degree(s.g);
        for (int64_t v = 0; v < s.g.num_nodes; ++v) {
          if (deg[v] != 0) continue;
          for (int64_t j = 0; j < fast.cols(); ++j) {
            EXPECT_EQ(fast.at(v, j), 0.0f) << "isolated node " << v;
            EXPECT_EQ(slow.at(v, j), 0.0f) << "isolated node " << v;
          }
        }
      }
    }
  }
}

TEST(EdgePool, BackwardBothPathsMatchReference) {
  std::mt19937 rng(302);
  for (const GraphCase& gc : graph_cases()) {
    for (Pooling pl : {Pooling::Sum, Pooling::Mean}) {
      for (int64_t fe : {0, 3}) {
        for (bool with_dh : {false, true}) {
          SCOPED_TRACE(gc.name + ", " + pooling_name(pl) + ", Fe " + std::to_string(fe) + (with_dh ? ", dh" : ", no dh"));
          const PoolSetup s(gc.g, pl, 4, fe, 3, rng);
          const DMat dz = ref::random_dmat(s.g.num_nodes, 3, rng);
          const ref::EdgePoolGrads want = ref::edge_pool_backward(s.g, s.mean(), s.h, s.e, s.w, dz);
          const PoolSetup::Grads fast = s.fast_backward(ref::to_f(dz), with_dh);
          const PoolSetup::Grads slow = s.per_edge_backward(ref::to_f(dz), with_dh);
          EXPECT_TRUE(ref::all_close(fast.dw, want.dw, kAtol, kRtol)) << "fast dw";
          EXPECT_TRUE(ref::all_close(fast.db, want.db, kAtol, kRtol)) << "fast db";
          EXPECT_TRUE(ref::all_close(slow.dw, want.dw, kAtol, kRtol)) << "per-edge dw";
          EXPECT_TRUE(ref::all_close(slow.db, want.db, kAtol, kRtol)) << "per-edge db";
          EXPECT_TRUE(ref::all_close(fast.dw, slow.dw, kPathAtol, kPathRtol)) << "dw fast vs per-edge";
          EXPECT_TRUE(ref::all_close(fast.db, slow.db, kPathAtol, kPathRtol)) << "db fast vs per-edge";
          if (with_dh) {
            EXPECT_TRUE(ref::all_close(fast.dh, want.dh, kAtol, kRtol)) << "fast dh";
            EXPECT_TRUE(ref::all_close(slow.dh, want.dh, kAtol, kRtol)) << "per-edge dh";
            EXPECT_TRUE(ref::all_close(fast.dh, slow.dh, kPathAtol, kPathRtol)) << "dh fast vs per-edge";
          }
        }
      }
    }
  }
}

TEST(EdgePool, RepeatedCallsAreBitForBitIdentical) {
  // Deterministic on the CPU: the same inputs give the same bits, call after call.
  std::mt19937 rng(307);
  const PoolSetup s(ref::random_graph(GraphKind::Skewed, 300, 900, true, false, 307), Pooling::Mean, 8, 3, 5, rng);
  const Tensor dz = ref::random_tensor(300, 5, rng);
  EXPECT_TRUE(ref::identical(s.fast_forward(), s.fast_forward()));
  EXPECT_TRUE(ref::identical(s.per_edge_forward(), s.per_edge_forward()));
  for (bool fast : {true, false}) {
    const PoolSetup::Grads a = fast ? s.fast_backward(dz, true) : s.per_edge_backward(dz, true);
    const PoolSetup::Grads b = fast ? s.fast_backward(dz, true) : s.per_edge_backward(dz, true);
    EXPECT_TRUE(ref::identical(a.dw, b.dw));
    EXPECT_TRUE(ref::identical(a.db, b.db));
    EXPECT_TRUE(ref::identical(a.dh, b.dh));
  }
}

TEST(EdgePool, MeanOfConstantMessagesIsTheMessage) {
  // Hand check of eq. 4: with W = 0 every message is b, so sum pooling gives deg * b and
  // mean pooling gives b (0 for isolated nodes).
  const EdgeList g = ref::random_graph(GraphKind::Isolated, 12, 15, false, false, 303);
  std::mt19937 rng(303);
  for (Pooling pl : {Pooling::Sum, Pooling::Mean}) {
    PoolSetup s(g, pl, 2, 1, 3, rng);
    s.wf.fill(0.0f);
    const Tensor fast = s.fast_forward(), slow = s.per_edge_forward();
    const std::vector<int64_t> deg = ref::in_degree(g);
    DMat want(g.num_nodes, 3);
    for (int64_t v = 0; v < g.num_nodes; ++v)
      for (int64_t j = 0; j < 3; ++j)
        want(v, j) = (pl == Pooling::Sum ? static_cast<double>(deg[v]) : (deg[v] > 0 ? 1.0 : 0.0)) * s.b(0, j);
    EXPECT_TRUE(ref::all_close(fast, want, kAtol, kRtol)) << pooling_name(pl);
    EXPECT_TRUE(ref::all_close(slow, want, kAtol, kRtol)) << pooling_name(pl);
  }
}

TEST(EdgePool, ReferenceBackwardMatchesFiniteDifferences) {
  std::mt19937 rng(304);
  for (const GraphCase& gc : small_graph_cases()) {
    for (Pooling pl : {Pooling::Sum, Pooling::Mean}) {
      for (int64_t fe : {0, 2}) {
        SCOPED_TRACE(gc.name + ", " + pooling_name(pl) + ", Fe " + std::to_string(fe));
        const bool mean = pl == Pooling::Mean;
        DMat h = ref::random_dmat(gc.g.num_nodes, 3, rng), e = ref::random_dmat(gc.g.num_edges(), fe, rng);
        DMat w = ref::random_dmat(6 + fe, 2, rng), b = ref::random_dmat(1, 2, rng);
        const DMat r = ref::random_dmat(gc.g.num_nodes, 2, rng);
        auto loss = [&] { return ref::dot(ref::edge_pool_forward(gc.g, mean, h, e, w, b), r); };
        const ref::EdgePoolGrads an = ref::edge_pool_backward(gc.g, mean, h, e, w, r);
        EXPECT_TRUE(ref::gradients_match(an.dh, ref::central_differences(h.data(), h.size(), kFdStep64, loss), kFdTol64)) << "dh";
        EXPECT_TRUE(ref::gradients_match(an.dw, ref::central_differences(w.data(), w.size(), kFdStep64, loss), kFdTol64)) << "dw";
        EXPECT_TRUE(ref::gradients_match(an.db, ref::central_differences(b.data(), b.size(), kFdStep64, loss), kFdTol64)) << "db";
      }
    }
  }
}

TEST(EdgePool, OpBackwardMatchesFiniteDifferencesOfOpForward) {
  std::mt19937 rng(305);
  for (const GraphCase& gc : small_graph_cases()) {
    for (Pooling pl : {Pooling::Sum, Pooling::Mean}) {
      for (int64_t fe : {0, 2}) {
        for (bool fast_path : {true, false}) {
          SCOPED_TRACE(gc.name + ", " + pooling_name(pl) + ", Fe " + std::to_string(fe) +
                       (fast_path ? ", fast path" : ", per-edge path"));
          PoolSetup s(gc.g, pl, 3, fe, 2, rng);
          const DMat r = ref::random_dmat(gc.g.num_nodes, 2, rng);
          auto loss = [&] { return ref::projection(fast_path ? s.fast_forward() : s.per_edge_forward(), r); };
          const PoolSetup::Grads an = fast_path ? s.fast_backward(ref::to_f(r), true) : s.per_edge_backward(ref::to_f(r), true);
          const std::vector<double> nw = ref::central_differences(s.wf.data(), s.wf.size(), kFdStep32, loss);
          const std::vector<double> nb = ref::central_differences(s.bf.data(), s.bf.size(), kFdStep32, loss);
          const std::vector<double> nh = ref::central_differences(s.hf.data(), s.hf.size(), kFdStep32, loss);
          EXPECT_TRUE(ref::gradients_match(an.dw, nw, kFdTol32)) << "dw";
          EXPECT_TRUE(ref::gradients_match(an.db, nb, kFdTol32)) << "db";
          EXPECT_TRUE(ref::gradients_match(an.dh, nh, kFdTol32)) << "dh";
        }
      }
    }
  }
}

TEST(EdgePool, ShapeErrors) {
  std::mt19937 rng(306);
  const EdgeList g = ref::random_graph(GraphKind::Uniform, 8, 12, true, false, 306);
  const PoolSetup s(g, Pooling::Sum, 3, 2, 4, rng);
  Tensor z, p;
  // w must have 2F + Fe rows.
  EXPECT_THROW(hulk::ops::edge_pool_forward(s.a, s.coef, s.hf, s.edge_sum, Tensor(7, 4), s.bf, z, p), std::invalid_argument);
  EXPECT_THROW(hulk::ops::edge_pool_forward_per_edge(s.a, Pooling::Sum, s.hf, s.ef, Tensor(9, 4), s.bf, z),
               std::invalid_argument);
  // h must have one row per node; b must be [1, O].
  EXPECT_THROW(hulk::ops::edge_pool_forward(s.a, s.coef, Tensor(7, 3), s.edge_sum, s.wf, s.bf, z, p), std::invalid_argument);
  EXPECT_THROW(hulk::ops::edge_pool_forward(s.a, s.coef, s.hf, s.edge_sum, s.wf, Tensor(1, 3), z, p), std::invalid_argument);
}

}  // namespace
