"""hulk.Graph: construction from numpy arrays and networkx, validation, batching, SpMM."""

import math

import networkx as nx
import numpy as np
import pytest

import hulk
from helpers import run_limited


# ---------------------------------------------------------------------------------------------
# helpers


def random_edges(rng, n, m, directed):
    """m distinct non-loop pairs on n nodes ((u, v) and (v, u) count as one when undirected)."""
    seen, out = set(), []
    while len(out) < m:
        u, v = (int(a) for a in rng.integers(0, n, 2))
        if u == v:
            continue
        key = (u, v) if directed else (min(u, v), max(u, v))
        if key in seen:
            continue
        seen.add(key)
        out.append((u, v))
    return np.array(out, dtype=np.int64)


def dense_adjacency(n, edges, directed):
    """A[v, u] = 1 for each edge u -> v (and v -> u too when undirected), float64."""
    a = np.zeros((n, n))
    for u, v in edges:
        a[v, u] = 1.0
        if not directed:
            a[u, v] = 1.0
    return a


def gcn_reference(a):
    """D^-1/2 (A + I) D^-1/2 with D the row sums of A + I, float64."""
    a_hat = a + np.eye(len(a))
    d = a_hat.sum(axis=1)
    return a_hat / np.sqrt(np.outer(d, d))


def small_cluster():
    G = nx.Graph()
    # Insertion order deliberately not sorted: node_ids must follow G.nodes order.
    for name, cap, mem in [("zeta", 8.6, 80), ("alpha", 7.0, 16), ("mid", 6.1, 12), ("beta", 7.5, 24)]:
        G.add_node(name, capability=cap, memory_gb=mem)
    G.add_edge("zeta", "alpha", latency_ms=12.5, bw=1.0)
    G.add_edge("alpha", "mid", latency_ms=3.0, bw=2.0)
    G.add_edge("beta", "zeta", latency_ms=40.0, bw=0.5)
    G.add_edge("mid", "beta", latency_ms=7.25, bw=4.0)
    return G


# ---------------------------------------------------------------------------------------------
# from arrays


def test_from_arrays_basic_views():
    x = np.arange(12, dtype=np.float64).reshape(4, 3)
    e = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]])
    edges = np.array([[0, 1], [1, 2], [3, 0]])
    g = hulk.Graph(4, edges, node_features=x, edge_features=e, edge_weight=[0.5, 1.5, 2.5])
    assert g.num_nodes == 4 and g.num_edges == 3
    assert g.num_node_features == 3 and g.num_edge_features == 2
    assert not g.directed
    assert g.node_ids == [0, 1, 2, 3]
    np.testing.assert_array_equal(g.edges, edges)
    assert g.x.dtype == np.float32 and g.e.dtype == np.float32
    np.testing.assert_array_equal(g.x, x.astype(np.float32))
    np.testing.assert_array_equal(g.e, e.astype(np.float32))
    np.testing.assert_array_equal(g._g.weights, np.array([0.5, 1.5, 2.5], np.float32))
    assert "4 nodes" in repr(g) and "3 undirected edges" in repr(g)


def test_from_arrays_defaults_and_directed():
    g = hulk.Graph(3, np.array([[0, 1], [1, 0], [2, 1]], dtype=np.int32), directed=True, node_ids=["a", "b", "c"])
    assert g.directed
    assert g.num_node_features == 0 and g.num_edge_features == 0
    assert g.x.shape == (3, 0) and g.e.shape == (3, 0)
    assert g.node_ids == ["a", "b", "c"]
    assert "directed" in repr(g)


def test_numpy_integer_num_nodes_and_1d_features():
    g = hulk.Graph(np.int64(3), [[0, 1], [1, 2]], node_features=[1.0, 2.0, 3.0], edge_features=[5.0, 6.0])
    assert g.x.shape == (3, 1) and g.e.shape == (2, 1)
    np.testing.assert_array_equal(g.e[:, 0], [5.0, 6.0])


def test_edgeless_graph_from_an_empty_list():
    # A graph with isolated nodes only is valid (the C++ core and from_networkx accept it);
    # an empty Python list of edges must not be rejected as "float" ids.
    g = hulk.Graph(3, [], node_features=np.ones((3, 1)))
    assert g.num_edges == 0
    g2 = hulk.Graph(3, np.zeros((0, 2), dtype=np.int64))
    assert g2.num_edges == 0


# ---------------------------------------------------------------------------------------------
# from networkx


def test_from_networkx_undirected_with_string_ids():
    G = small_cluster()
    g = hulk.Graph.from_networkx(G, node_attrs=["capability", "memory_gb"], edge_attrs=["latency_ms", "bw"],
                                 edge_weight="bw")
    assert g.node_ids == ["zeta", "alpha", "mid", "beta"]
    assert not g.directed
    assert g.num_nodes == 4 and g.num_edges == 4
    assert g.node_attrs == ["capability", "memory_gb"] and g.edge_attrs == ["latency_ms", "bw"]
    # Node attributes land in the row of their node.
    idx = {v: i for i, v in enumerate(g.node_ids)}
    np.testing.assert_allclose(g.x[idx["zeta"]], [8.6, 80.0], rtol=1e-6)
    np.testing.assert_allclose(g.x[idx["mid"]], [6.1, 12.0], rtol=1e-6)
    np.testing.assert_allclose(g.x[idx["beta"]], [7.5, 24.0], rtol=1e-6)
    # Edge attributes land in the row of their edge, whatever order the edges come in.
    seen = set()
    for k, (s, t) in enumerate(g.edges):
        u, v = g.node_ids[s], g.node_ids[t]
        data = G.edges[u, v]
        np.testing.assert_allclose(g.e[k], [data["latency_ms"], data["bw"]], rtol=1e-6)
        assert g._g.weights[k] == pytest.approx(data["bw"])
        seen.add(frozenset((u, v)))
    assert seen == {frozenset(e) for e in G.edges}
    # By hand: the 'alpha'-'mid' link is 3 ms, the 'beta'-'zeta' link 40 ms.
    rows = {frozenset((g.node_ids[s], g.node_ids[t])): k for k, (s, t) in enumerate(g.edges)}
    assert g.e[rows[frozenset(("alpha", "mid"))], 0] == pytest.approx(3.0)
    assert g.e[rows[frozenset(("beta", "zeta"))], 0] == pytest.approx(40.0)


def test_from_networkx_digraph_keeps_both_directions():
    D = nx.DiGraph()
    D.add_node(10, f=1.0)
    D.add_node(5, f=2.0)
    D.add_node(7, f=3.0)
    D.add_edge(10, 5, lat=1.0)
    D.add_edge(5, 10, lat=2.0)  # reverse direction: a different edge in a directed graph
    D.add_edge(7, 5, lat=3.0)
    g = hulk.Graph.from_networkx(D, node_attrs=["f"], edge_attrs=["lat"])
    assert g.directed
    assert g.node_ids == [10, 5, 7]
    np.testing.assert_array_equal(g.x[:, 0], [1.0, 2.0, 3.0])
    got = {(g.node_ids[s], g.node_ids[t]): float(g.e[k, 0]) for k, (s, t) in enumerate(g.edges)}
    assert got == {(10, 5): 1.0, (5, 10): 2.0, (7, 5): 3.0}


def test_from_networkx_no_attributes_and_isolated_nodes():
    G = nx.Graph()
    G.add_nodes_from(["x", "y", "z"])
    G.add_edge("x", "y")
    g = hulk.Graph.from_networkx(G)
    assert g.num_nodes == 3 and g.num_edges == 1
    assert g.x.shape == (3, 0) and g.e.shape == (1, 0)


def test_from_networkx_hulk47(hulk47_graph):
    G, g, _, _ = hulk47_graph
    assert g.num_nodes == 47 and g.num_edges == G.number_of_edges()
    assert g.node_ids == list(G.nodes)
    i = g.node_ids.index(20)
    assert g.x[i, 0] == pytest.approx(G.nodes[20]["capability"])
    assert g.x[i, 1] == pytest.approx(G.nodes[20]["memory_gb"])
    k = next(k for k, (s, t) in enumerate(g.edges) if {g.node_ids[s], g.node_ids[t]} == {20, 22})
    assert g.e[k, 0] == pytest.approx(0.8)


def test_missing_node_attribute_names_node_and_attribute():
    G = small_cluster()
    del G.nodes["mid"]["memory_gb"]
    with pytest.raises(ValueError) as exc:
        hulk.Graph.from_networkx(G, node_attrs=["capability", "memory_gb"])
    assert "'mid'" in str(exc.value) and "memory_gb" in str(exc.value)


def test_missing_edge_attribute_names_edge_and_attribute():
    G = small_cluster()
    del G.edges["alpha", "mid"]["latency_ms"]
    with pytest.raises(ValueError) as exc:
        hulk.Graph.from_networkx(G, edge_attrs=["latency_ms"])
    msg = str(exc.value)
    assert "latency_ms" in msg and "'alpha'" in msg and "'mid'" in msg


@pytest.mark.parametrize("value, needle", [("fast", "not numeric"), (None, "not numeric"), ([1, 2], "not numeric"),
                                           (float("nan"), "not finite"), (math.inf, "not finite")])
def test_bad_node_attribute_value(value, needle):
    G = small_cluster()
    G.nodes["beta"]["capability"] = value
    with pytest.raises(ValueError) as exc:
        hulk.Graph.from_networkx(G, node_attrs=["capability"])
    assert needle in str(exc.value) and "'beta'" in str(exc.value) and "capability" in str(exc.value)


@pytest.mark.parametrize("value", ["slow", float("nan")])
def test_bad_edge_attribute_and_weight_value(value):
    G = small_cluster()
    G.edges["mid", "beta"]["latency_ms"] = value
    with pytest.raises(ValueError, match="latency_ms"):
        hulk.Graph.from_networkx(G, edge_attrs=["latency_ms"])
    with pytest.raises(ValueError, match="latency_ms"):
        hulk.Graph.from_networkx(G, edge_weight="latency_ms")


@pytest.mark.parametrize("cls", [nx.MultiGraph, nx.MultiDiGraph])
def test_multigraph_rejected(cls):
    G = cls()
    G.add_edge(0, 1)
    G.add_edge(0, 1)
    with pytest.raises(ValueError, match="multigraph"):
        hulk.Graph.from_networkx(G)


def test_empty_networkx_graph_rejected():
    with pytest.raises(ValueError, match="no nodes"):
        hulk.Graph.from_networkx(nx.Graph())


@pytest.mark.parametrize("obj", [{0: [1]}, [(0, 1)], np.eye(3), None])
def test_not_a_graph_type_error(obj):
    with pytest.raises(TypeError, match="networkx"):
        hulk.Graph.from_networkx(obj)


# ---------------------------------------------------------------------------------------------
# array constructor validation: every message names the offending field


@pytest.mark.parametrize("edges", [np.array([[0, 1, 2]]), np.array([0, 1]), np.zeros((2, 2, 2), int)])
def test_edges_bad_shape(edges):
    with pytest.raises(ValueError, match="edges"):
        hulk.Graph(3, edges)


@pytest.mark.parametrize("edges", [np.array([[0.0, 1.0]]), [[0, 1.5]], np.array([[True, False]]), [["a", "b"]]])
def test_edges_not_integer(edges):
    with pytest.raises(ValueError, match="edges.*integer"):
        hulk.Graph(3, edges)


@pytest.mark.parametrize("edges", [[[0, 3]], [[-1, 0]], [[0, 1], [5, 2]]])
def test_edge_id_out_of_range(edges):
    with pytest.raises(ValueError, match="edges.*out of range"):
        hulk.Graph(3, edges)


def test_self_loop_rejected():
    with pytest.raises(ValueError) as exc:
        hulk.Graph(3, [[0, 1], [2, 2]])
    assert "self loop" in str(exc.value) and "edges" in str(exc.value)


def test_duplicate_edge_rejected():
    with pytest.raises(ValueError, match="edges.*duplicate"):
        hulk.Graph(3, [[0, 1], [1, 2], [0, 1]])
    with pytest.raises(ValueError, match="edges.*duplicate"):
        hulk.Graph(3, [[0, 1], [1, 2], [0, 1]], directed=True)


def test_reverse_pair_is_duplicate_only_when_undirected():
    with pytest.raises(ValueError, match="duplicate"):
        hulk.Graph(3, [[0, 1], [1, 0]])
    g = hulk.Graph(3, [[0, 1], [1, 0]], directed=True)
    assert g.num_edges == 2


def test_error_messages_use_original_node_ids():
    with pytest.raises(ValueError, match="'b'"):
        hulk.Graph(3, [[1, 1]], node_ids=["a", "b", "c"])


@pytest.mark.parametrize("field, kwargs", [
    ("node_features", dict(node_features=[[1.0], [np.nan], [0.0]])),
    ("node_features", dict(node_features=[[1.0], [np.inf], [0.0]])),
    ("edge_features", dict(edge_features=[[1.0, 2.0], [3.0, np.nan]])),
    ("edge_weight", dict(edge_weight=[1.0, np.nan])),
    ("edge_weight", dict(edge_weight=[-np.inf, 1.0])),
])
def test_non_finite_values_rejected(field, kwargs):
    with pytest.raises(ValueError) as exc:
        hulk.Graph(3, [[0, 1], [1, 2]], **kwargs)
    assert field in str(exc.value) and "not finite" in str(exc.value)


@pytest.mark.parametrize("field, kwargs", [
    ("node_features", dict(node_features=np.ones((2, 2)))),
    ("node_features", dict(node_features=np.ones((4, 1)))),
    ("edge_features", dict(edge_features=np.ones((3, 1)))),
    ("edge_features", dict(edge_features=np.ones((1, 2)))),
    ("edge_weight", dict(edge_weight=[1.0])),
    ("edge_weight", dict(edge_weight=np.ones((2, 1)))),
    ("node_ids", dict(node_ids=["a", "b"])),
])
def test_wrong_row_counts(field, kwargs):
    with pytest.raises(ValueError, match=field):
        hulk.Graph(3, [[0, 1], [1, 2]], **kwargs)


@pytest.mark.parametrize("num_nodes", [0, -1, True, False, 2.0, "3", None])
def test_bad_num_nodes(num_nodes):
    with pytest.raises(ValueError, match="num_nodes"):
        hulk.Graph(num_nodes, [[0, 1]])


def test_duplicate_node_ids_rejected():
    # node_ids map predictions and label dicts back to nodes; two nodes with the same id make
    # that mapping ambiguous (a label dict would silently label only one of them).
    with pytest.raises(ValueError, match="node_ids"):
        hulk.Graph(3, [[0, 1], [1, 2]], node_ids=["a", "b", "a"])


def test_inputs_are_copied():
    x = np.ones((3, 2))
    edges = np.array([[0, 1], [1, 2]])
    g = hulk.Graph(3, edges, node_features=x)
    x[:] = 7.0
    edges[0] = [2, 0]
    np.testing.assert_array_equal(g.x, np.ones((3, 2), np.float32))
    np.testing.assert_array_equal(g.edges, [[0, 1], [1, 2]])


# ---------------------------------------------------------------------------------------------
# batch


def test_batch_disjoint_union():
    g1 = hulk.Graph(3, [[0, 1], [1, 2]], node_features=[[1.0], [2.0], [3.0]], edge_features=[[10.0], [20.0]],
                    node_ids=["a", "b", "c"])
    g2 = hulk.Graph(2, [[1, 0]], node_features=[[4.0], [5.0]], edge_features=[[30.0]])
    g3 = hulk.Graph(1, np.zeros((0, 2), np.int64), node_features=[[6.0]], edge_features=np.zeros((0, 1)))
    b = hulk.Graph.batch([g1, g2, g3])
    assert b.num_nodes == 3 + 2 + 1 and b.num_edges == 2 + 1 + 0
    assert b.node_ids == [(0, "a"), (0, "b"), (0, "c"), (1, 0), (1, 1), (2, 0)]
    np.testing.assert_array_equal(b.x[:, 0], [1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(b.e[:, 0], [10, 20, 30])
    np.testing.assert_array_equal(b.edges, [[0, 1], [1, 2], [4, 3]])
    # Aggregation does not cross graph boundaries.
    feats = np.arange(6, dtype=np.float64)[:, None]
    np.testing.assert_allclose(b.spmm(feats)[:, 0], [1, 0 + 2, 1, 4, 3, 0])


def test_batch_errors():
    g1 = hulk.Graph(2, [[0, 1]], node_features=np.ones((2, 2)))
    g2 = hulk.Graph(2, [[0, 1]], node_features=np.ones((2, 3)))
    with pytest.raises(ValueError, match="node feature"):
        hulk.Graph.batch([g1, g2])
    g3 = hulk.Graph(2, [[0, 1]], node_features=np.ones((2, 2)), edge_features=[[1.0]])
    with pytest.raises(ValueError, match="edge feature"):
        hulk.Graph.batch([g1, g3])
    g4 = hulk.Graph(2, [[0, 1]], node_features=np.ones((2, 2)), directed=True)
    with pytest.raises(ValueError, match="directed"):
        hulk.Graph.batch([g1, g4])
    with pytest.raises(ValueError):
        hulk.Graph.batch([])
    with pytest.raises(TypeError):
        hulk.Graph.batch([g1, "not a graph"])


# ---------------------------------------------------------------------------------------------
# spmm against dense float64 references


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_spmm_matches_dense_reference(directed, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 60))
    m = int(rng.integers(n, 4 * n))
    edges = random_edges(rng, n, m, directed)
    x = rng.standard_normal((n, 5))
    g = hulk.Graph(n, edges, directed=directed)
    a = dense_adjacency(n, edges, directed)
    out = g.spmm(x)
    assert out.shape == (n, 5) and out.dtype == np.float32
    np.testing.assert_allclose(out, a @ x.astype(np.float32).astype(np.float64), rtol=1e-5, atol=1e-5)
    out_n = g.spmm(x, normalized=True)
    np.testing.assert_allclose(out_n, gcn_reference(a) @ x.astype(np.float32).astype(np.float64),
                               rtol=1e-5, atol=1e-5)


def test_spmm_small_case_by_hand():
    # Path 0 - 1 - 2: degrees with self loop 2, 3, 2.
    g = hulk.Graph(3, [[0, 1], [1, 2]])
    x = np.array([[1.0], [10.0], [100.0]])
    np.testing.assert_allclose(g.spmm(x)[:, 0], [10.0, 101.0, 10.0])
    expected = [1 / 2 + 10 / math.sqrt(6), 1 / math.sqrt(6) + 10 / 3 + 100 / math.sqrt(6), 10 / math.sqrt(6) + 50]
    np.testing.assert_allclose(g.spmm(x, normalized=True)[:, 0], expected, rtol=1e-6)
    # Directed 0 -> 1: only node 1 receives.
    d = hulk.Graph(3, [[0, 1]], directed=True)
    np.testing.assert_allclose(d.spmm(x)[:, 0], [0.0, 1.0, 0.0])


@pytest.mark.parametrize("normalized", [False, True])
def test_spmm_ignores_edge_weights(normalized):
    # Graph.spmm is documented as the unweighted A @ x ("edge weights ignored" in the binding)
    # and the unweighted GCN matrix; the graph's edge_weight must not leak into either.
    rng = np.random.default_rng(5)
    n = 25
    edges = random_edges(rng, n, 60, directed=False)
    w = rng.uniform(0.5, 3.0, len(edges))
    x = rng.standard_normal((n, 3))
    a = dense_adjacency(n, edges, directed=False)
    g = hulk.Graph(n, edges, edge_weight=w)
    expected = gcn_reference(a) @ x if normalized else a @ x
    np.testing.assert_allclose(g.spmm(x, normalized=normalized), expected, rtol=1e-5, atol=1e-5)


def test_spmm_bad_features():
    g = hulk.Graph(3, [[0, 1]])
    with pytest.raises(ValueError, match="features"):
        g.spmm(np.ones((4, 2)))
    with pytest.raises(ValueError, match="features"):
        g.spmm([[1.0], [np.nan], [0.0]])


def test_graph_with_2_28_nodes_is_refused_within_bounded_memory(tmp_path):
    out = run_limited("hulk.Graph(2**28, [])", tmp_path)
    assert "num_nodes = 268435456 is more than" in out


# -- unclear inputs: overflow, unhashable ids, out of memory --------------------------------------

@pytest.mark.parametrize("field, kwargs, where", [
    ("node_features", dict(node_features=[[1.0], [1e39], [0.0]]), "index (1, 0)"),
    ("edge_features", dict(edge_features=[[1.0, 2.0], [3.0, -4e38]]), "index (1, 1)"),
    ("edge_weight", dict(edge_weight=[1.0, 1e39]), "index 1"),
])
def test_values_past_float32_are_named_not_reported_as_infinite(field, kwargs, where):
    # 1e39 is finite in float64 but overflows the float32 the engine computes in: the message says
    # so (before: "node features x: value at row 0, column 0 is not finite", from the C++ core).
    with pytest.raises(hulk.InputError) as exc:
        hulk.Graph(3, [[0, 1], [1, 2]], **kwargs)
    msg = str(exc.value)
    assert msg.startswith(field + ":") and where in msg and "float32 range" in msg and "not finite" not in msg


def test_float32_limit_itself_is_accepted():
    big = float(np.finfo(np.float32).max)
    g = hulk.Graph(2, [[0, 1]], node_features=[[big], [-big]])
    assert np.isfinite(g.x).all()


def test_spmm_features_past_float32_rejected():
    # before: accepted, and the result was silently inf
    g = hulk.Graph(3, [[0, 1], [1, 2]])
    with pytest.raises(hulk.InputError, match=r"features: value 1e\+39 at index \(2, 0\) is outside the float32"):
        g.spmm([[0.0], [1.0], [1e39]])


def test_from_networkx_attribute_past_float32_names_the_node():
    G = small_cluster()
    G.nodes["beta"]["capability"] = 1e39
    with pytest.raises(hulk.InputError, match=r"node 'beta': attribute 'capability' = 1e\+39 is outside the float32"):
        hulk.Graph.from_networkx(G, node_attrs=["capability"])


@pytest.mark.parametrize("ids, where, kind", [([0, [1], 2], "node_ids[1]", "list"),
                                              ([{"a": 1}, 1, 2], "node_ids[0]", "dict")])
def test_unhashable_node_id(ids, where, kind):
    # before: a bare TypeError "unhashable type: 'list'" naming neither the argument nor the id
    with pytest.raises(hulk.InputTypeError) as exc:
        hulk.Graph(3, [[0, 1]], node_ids=ids)
    assert isinstance(exc.value, TypeError)
    assert where in str(exc.value) and f"type {kind}" in str(exc.value)


class _FailingCore:
    """Stands in for hulk._core in hulk.graph: the C++ Graph (or spmm) runs out of memory."""

    class engine:
        validate_edge_list = staticmethod(hulk._core.engine.validate_edge_list)

        @staticmethod
        def Graph(*args):
            raise hulk.OutOfMemoryError("out of memory: the C++ core could not allocate what this call needs")


def test_graph_out_of_memory_names_the_sizes(monkeypatch):
    import hulk.graph
    monkeypatch.setattr(hulk.graph, "_core", _FailingCore)
    with pytest.raises(hulk.OutOfMemoryError) as exc:
        hulk.Graph(4, [[0, 1], [1, 2], [2, 3]], node_features=np.ones((4, 5)), edge_features=np.ones((3, 2)))
    msg = str(exc.value)
    assert msg.startswith("Graph: out of memory (nodes 4, edges 3, node features 5, edge features 2; needs about")
    assert isinstance(exc.value.__cause__, MemoryError)  # the original is chained


def test_graph_numpy_memory_error_becomes_named(monkeypatch):
    import hulk.graph

    def fail(*args, **kwargs):
        raise MemoryError("Unable to allocate 8.00 GiB for an array")
    monkeypatch.setattr(hulk.graph, "as_matrix", fail)
    with pytest.raises(hulk.OutOfMemoryError, match=r"^Graph: out of memory \(nodes 3, edges 1, node features 2"):
        hulk.Graph(3, [[0, 1]], node_features=np.ones((3, 2)))


def test_spmm_out_of_memory_names_the_sizes():
    class Core:
        num_nodes, num_edges = 3, 2

        def spmm(self, x, normalized):
            raise MemoryError()
    g = hulk.Graph(3, [[0, 1], [1, 2]])
    g._g = Core()
    with pytest.raises(hulk.OutOfMemoryError, match=r"^Graph.spmm: out of memory \(nodes 3, edges 2, features 4; "):
        g.spmm(np.ones((3, 4)))


def test_graph_out_of_memory_in_a_limited_child(tmp_path):
    # a real allocation failure in a child capped at 1.5 GB: 2 x 300 M float32 features given as a
    # broadcast view (no memory), which the Graph copies (2.2 GiB)
    out = run_limited("hulk.Graph(2, [[0, 1]], node_features=__import__('numpy').broadcast_to("
                      "__import__('numpy').float32(1), (2, 300_000_000)))\n"
                      "except MemoryError as exc:\n    print('ERROR', type(exc).__name__, exc)\n"
                      "    sys.exit(0)", tmp_path)
    assert out.startswith("ERROR OutOfMemoryError Graph: out of memory (nodes 2, edges 1, node features 300000000"), out


def test_uint64_edge_id_past_int64_is_reported_as_given():
    # before: "edges[0]: target node id -1 is out of range" (the id wrapped in the cast to int64)
    with pytest.raises(hulk.InputError, match=r"^edges\[1\]: source node id 18446744073709551615 is out of range \[0, 3\)"):
        hulk.Graph(3, np.array([[0, 1], [2**64 - 1, 2]], np.uint64))
    assert hulk.Graph(3, np.array([[0, 1], [1, 2]], np.uint64)).num_edges == 2


def test_from_networkx_and_batch_out_of_memory_name_the_sizes(monkeypatch):
    import hulk.graph

    def fail(*args, **kwargs):
        raise MemoryError()
    G = small_cluster()
    g = hulk.Graph.from_networkx(G, node_attrs=["capability"])
    monkeypatch.setattr(hulk.graph, "_numeric", fail)
    with pytest.raises(hulk.OutOfMemoryError, match=rf"^Graph.from_networkx: out of memory \(nodes {G.number_of_nodes()}, "
                                                     rf"edges {G.number_of_edges()}, node features 1, edge features 0;"):
        hulk.Graph.from_networkx(G, node_attrs=["capability"])
    monkeypatch.setattr(hulk.graph, "_core", _FailingBatchCore)
    with pytest.raises(hulk.OutOfMemoryError, match=rf"^Graph.batch: out of memory \(graphs 2, nodes {2 * g.num_nodes}, "):
        hulk.Graph.batch([g, g])


class _FailingBatchCore:
    class engine:
        class Graph:
            @staticmethod
            def batch(graphs):
                raise hulk.OutOfMemoryError("out of memory: the C++ core could not allocate what this call needs")


def test_scipy_sparse_edge_features_are_a_clear_error_not_a_numpy_symptom():
    # node features may be sparse (tests/python/test_sparse_features.py); edge features not
    sp = pytest.importorskip("scipy.sparse")
    with pytest.raises(TypeError, match=r"edge_features: got a scipy.sparse csr_matrix of shape \(1, 2\).*toarray"):
        hulk.Graph(3, [[0, 1]], edge_features=sp.csr_matrix(np.ones((1, 2))))
