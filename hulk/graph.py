"""hulk.Graph: an attributed graph for the GNN, from networkx or from numpy arrays."""

from __future__ import annotations

from typing import Hashable, Iterable, Sequence

import networkx as nx
import numpy as np

from . import _core
from ._checks import (FLOAT32_MAX, as_csr, as_matrix, as_vector, check_hashable, is_int, is_sparse_matrix,
                      naming_out_of_memory)
from .errors import InputError, InputTypeError


MAX_NODES = 1 << 24  # 16.8 M nodes: the CSR structures alone then take about 0.5 GB
MAX_EDGES = 1 << 30


class Graph:
    """A graph with node features ``x`` [N, F] and edge features ``e`` [M, Fe].

    Parameters
    ----------
    num_nodes : int
        Number of nodes N (> 0). Nodes are 0..N-1.
    edges : array-like of shape (M, 2)
        Integer (source, target) pairs. For an undirected graph each pair is one edge and
        messages flow both ways; list each pair once.
    node_features : array-like (N, F) or scipy.sparse matrix (N, F), optional
        Default: no node features (F = 0). A scipy.sparse CSR matrix (or CSC / COO, converted to
        CSR, never to dense) stays sparse in the engine: wide bag-of-words features cost memory
        and time by their non-zeros. Values may be negative; NaN and infinity are errors.
        Sparse features need a GCNConv first layer (``GNN(edge_pool=False)``).
    edge_features : array-like (M, Fe), optional
        One row per edge, in the order of ``edges``. Default: none (Fe = 0).
    edge_weight : array-like (M,), optional
        Weights GCNConv can use (``GNN(gcn_edge_weights=True)``).
    directed : bool
        False (default): each edge carries messages both ways.
    node_ids : sequence, optional
        Original node identifiers (kept for mapping predictions back); default 0..N-1.

    Self loops, duplicate edges, ids out of range and non-finite values raise ValueError:
    nothing is dropped or merged silently.
    """

    def __init__(self, num_nodes: int, edges, node_features=None, edge_features=None, edge_weight=None,
                 directed: bool = False, node_ids: Sequence[Hashable] | None = None,
                 node_attrs: Sequence[str] = (), edge_attrs: Sequence[str] = ()):
        with naming_out_of_memory("Graph", lambda: _input_sizes(num_nodes, edges, node_features, edge_features),
                                  lambda: _input_bytes(num_nodes, edges, node_features, edge_features)):
            self._init(num_nodes, edges, node_features, edge_features, edge_weight, directed, node_ids, node_attrs,
                       edge_attrs)

    def _init(self, num_nodes, edges, node_features, edge_features, edge_weight, directed, node_ids, node_attrs,
              edge_attrs) -> None:
        if not is_int(num_nodes) or num_nodes <= 0:
            raise InputError(f"num_nodes must be a positive integer, got {num_nodes!r}")
        if num_nodes > MAX_NODES:
            raise InputError(f"num_nodes = {num_nodes} is more than the {MAX_NODES} nodes a graph may have "
                             f"(each node costs memory in several CSR structures)")
        num_nodes = int(num_nodes)
        edge_arr = np.asarray(edges)
        if edge_arr.shape in ((0,), (0, 2)):  # [] arrives as float64; an empty list has no dtype to check
            edge_arr = np.zeros((0, 2), np.int64)
        if edge_arr.ndim != 2 or edge_arr.shape[1] != 2:
            raise InputError(f"edges: expected shape (M, 2), got {edge_arr.shape}")
        if edge_arr.dtype.kind not in "iu":
            raise InputError(f"edges: expected integer node ids, got dtype {edge_arr.dtype}")
        if edge_arr.dtype.kind == "u" and edge_arr.size and edge_arr.max() >= num_nodes:
            # before the cast to int64, which would wrap ids past 2**63 - 1 to negative ones
            i, j = (int(k) for k in np.argwhere(edge_arr >= num_nodes)[0])
            raise InputError(f"edges[{i}]: {('source', 'target')[j]} node id {edge_arr[i, j]} is out of range "
                             f"[0, {num_nodes})")
        edge_arr = edge_arr.astype(np.int64)
        m = edge_arr.shape[0]
        if m > MAX_EDGES:
            raise InputError(f"edges: {m} edges is more than the {MAX_EDGES} a graph may have")
        if is_sparse_matrix(node_features):
            x = as_csr(node_features, "node_features", num_nodes)
        else:
            x = np.zeros((num_nodes, 0), np.float32) if node_features is None else as_matrix(
                node_features, "node_features", num_nodes)
        e = np.zeros((m, 0), np.float32) if edge_features is None else as_matrix(edge_features, "edge_features", m)
        w = np.zeros(0, np.float32) if edge_weight is None else as_vector(edge_weight, "edge_weight", m)
        src = np.ascontiguousarray(edge_arr[:, 0])
        dst = np.ascontiguousarray(edge_arr[:, 1])
        self.node_ids = list(range(num_nodes)) if node_ids is None else list(node_ids)
        if len(self.node_ids) != num_nodes:
            raise InputError(f"node_ids: expected {num_nodes} ids, got {len(self.node_ids)}")
        if node_ids is not None and len(_id_set(self.node_ids, "node_ids")) != num_nodes:
            seen = set()
            dup = next(v for v in self.node_ids if v in seen or seen.add(v))
            raise InputError(f"node_ids: {dup!r} appears more than once; ids must be unique")
        self._check_edges(num_nodes, src, dst, w, not directed)
        if isinstance(x, tuple):  # sparse: (indptr, indices, values, F)
            self._g = _core.engine.Graph(num_nodes, src, dst, *x, e, w, not directed)
        else:
            self._g = _core.engine.Graph(num_nodes, src, dst, x, e, w, not directed)
        self.node_attrs = list(node_attrs)
        self.edge_attrs = list(edge_attrs)

    def _check_edges(self, n: int, src: np.ndarray, dst: np.ndarray, w: np.ndarray, undirected: bool) -> None:
        for name, ids in (("source", src), ("target", dst)):
            bad = (ids < 0) | (ids >= n)
            if bad.any():
                i = int(np.argmax(bad))
                raise InputError(f"edges[{i}]: {name} node id {ids[i]} is out of range [0, {n})")
        loops, dups = _core.engine.validate_edge_list(n, src, dst, w, undirected)
        problems = []
        if len(loops):
            shown = ", ".join(f"{self.node_ids[src[i]]!r}" for i in loops[:5])
            problems.append(f"{len(loops)} self loop(s) on node(s) {shown}")
        if len(dups):
            shown = ", ".join(f"({self.node_ids[src[i]]!r}, {self.node_ids[dst[i]]!r})" for i in dups[:5])
            kind = "undirected " if undirected else ""
            problems.append(f"{len(dups)} duplicate {kind}edge(s) {shown}")
        if problems:
            raise InputError("edges: " + "; ".join(problems) +
                             ". Remove them first: the engine never drops or merges edges silently.")

    # -- constructors ----------------------------------------------------------------------

    @classmethod
    def from_networkx(cls, G: nx.Graph, node_attrs: Iterable[str] = (), edge_attrs: Iterable[str] = (),
                      edge_weight: str | None = None) -> "Graph":
        """Builds a Graph from a networkx Graph or DiGraph.

        Nodes are numbered in ``G.nodes`` order (``graph.node_ids`` keeps the originals).
        Every listed attribute must be present and numeric on every node / edge; a missing
        or non-numeric one raises ValueError naming the node or edge and the attribute.
        """
        if not isinstance(G, nx.Graph):
            raise InputTypeError(f"G must be a networkx Graph or DiGraph, got {type(G).__name__}")
        if G.is_multigraph():
            raise InputError("G is a multigraph; collapse parallel edges first (hulk needs one edge per pair)")
        if G.number_of_nodes() == 0:
            raise InputError("G has no nodes")
        node_attrs, edge_attrs = list(node_attrs), list(edge_attrs)
        n, m = G.number_of_nodes(), G.number_of_edges()
        with naming_out_of_memory("Graph.from_networkx", {"nodes": n, "edges": m, "node features": len(node_attrs),
                                                          "edge features": len(edge_attrs)},
                                  8 * (n * len(node_attrs) + m * (len(edge_attrs) + 3)) + 48 * (n + m)):
            return cls._from_networkx(G, node_attrs, edge_attrs, edge_weight)

    @classmethod
    def _from_networkx(cls, G, node_attrs: list, edge_attrs: list, edge_weight) -> "Graph":
        node_ids = list(G.nodes)
        index = {v: i for i, v in enumerate(node_ids)}
        x = np.zeros((len(node_ids), len(node_attrs)))
        for i, v in enumerate(node_ids):
            data = G.nodes[v]
            for j, attr in enumerate(node_attrs):
                x[i, j] = _numeric(data, attr, f"node {v!r}")
        edge_list = list(G.edges(data=True))
        edges = np.array([(index[u], index[v]) for u, v, _ in edge_list], dtype=np.int64).reshape(-1, 2)
        e = np.zeros((len(edge_list), len(edge_attrs)))
        w = None if edge_weight is None else np.zeros(len(edge_list))
        for k, (u, v, data) in enumerate(edge_list):
            for j, attr in enumerate(edge_attrs):
                e[k, j] = _numeric(data, attr, f"edge ({u!r}, {v!r})")
            if w is not None:
                w[k] = _numeric(data, edge_weight, f"edge ({u!r}, {v!r})")
        return cls(len(node_ids), edges, x, e, w, directed=G.is_directed(), node_ids=node_ids,
                   node_attrs=node_attrs, edge_attrs=edge_attrs)

    @classmethod
    def _wrap(cls, core_graph, node_ids, node_attrs, edge_attrs) -> "Graph":
        g = cls.__new__(cls)
        g._g, g.node_ids, g.node_attrs, g.edge_attrs = core_graph, list(node_ids), list(node_attrs), list(edge_attrs)
        return g

    @staticmethod
    def batch(graphs: Sequence["Graph"]) -> "Graph":
        """Disjoint union of graphs (node ids become (k, original id) for graph k)."""
        graphs = list(graphs)
        if not graphs:
            raise InputError("batch: no graphs given")
        for k, g in enumerate(graphs):
            if not isinstance(g, Graph):
                raise InputTypeError(f"batch: item {k} is a {type(g).__name__}, not a hulk.Graph")
        n, m = sum(g.num_nodes for g in graphs), sum(g.num_edges for g in graphs)
        f, fe = graphs[0].num_node_features, graphs[0].num_edge_features
        with naming_out_of_memory("Graph.batch", {"graphs": len(graphs), "nodes": n, "edges": m, "node features": f,
                                                  "edge features": fe},
                                  4 * (n * f + m * fe) + 48 * (n + m)):
            node_ids = [(k, v) for k, g in enumerate(graphs) for v in g.node_ids]
            return Graph._wrap(_core.engine.Graph.batch([g._g for g in graphs]), node_ids, graphs[0].node_attrs,
                               graphs[0].edge_attrs)

    # -- views -----------------------------------------------------------------------------

    core = property(lambda self: self._g, doc="The C++ graph (``hulk._core.engine.Graph``) the model and the "
                                              "benchmarks' bindings take.")
    num_nodes = property(lambda self: self._g.num_nodes, doc="Number of nodes N.")
    num_edges = property(lambda self: self._g.num_edges, doc="Number of input edges M.")
    num_node_features = property(lambda self: self._g.num_node_features, doc="F.")
    num_edge_features = property(lambda self: self._g.num_edge_features, doc="Fe.")
    directed = property(lambda self: not self._g.undirected)
    sparse_features = property(lambda self: self._g.sparse_features,
                               doc="True when the node features are held sparse (a scipy.sparse input).")

    @property
    def x(self):
        """Node features [N, F]: a float32 numpy copy, or a scipy.sparse CSR copy when they are sparse."""
        if not self.sparse_features:
            return self._g.x
        import scipy.sparse  # a sparse-feature graph was built from scipy, so it is there

        indptr, indices, values = self._g.x_csr()
        return scipy.sparse.csr_matrix((values, indices, indptr), shape=(self.num_nodes, self.num_node_features))

    e = property(lambda self: self._g.e, doc="Edge features [M, Fe] (float32 copy).")
    edges = property(lambda self: np.stack([self._g.src, self._g.dst], axis=1), doc="Edges [M, 2].")

    def spmm(self, features, normalized: bool = False) -> np.ndarray:
        """Neighbour sum ``A @ features`` [N, F] (row v sums the rows of v's in-neighbours),
        or ``D^-1/2 (A + I) D^-1/2 @ features`` when ``normalized`` (GCN, unweighted).

        The aggregation the GNN layers run, exposed for checks and benchmarks.
        """
        x = as_matrix(features, "features", self.num_nodes)
        with naming_out_of_memory("Graph.spmm", lambda: {"nodes": self.num_nodes, "edges": self.num_edges,
                                                         "features": x.shape[1]},
                                  lambda: 4 * x.size * 2 + 8 * self.num_edges):
            return self._g.spmm(x, bool(normalized))

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        sparse = "sparse " if self.sparse_features else ""
        return (f"hulk.Graph({self.num_nodes} nodes, {self.num_edges} {kind} edges, "
                f"{self.num_node_features} {sparse}node features, {self.num_edge_features} edge features)")


def normalize_rows(features):
    """Each row of ``features`` divided by the sum of its absolute values (rows of zeros stay zero):
    Kipf and Welling's preprocessing of bag-of-words features (their rows sum to 1 after it).

    Takes a numpy array or a scipy.sparse matrix and returns the same kind (sparse stays sparse:
    CSR). Use it before building the Graph, with ``GNN(standardize=False)`` when it should replace
    the z-scoring (https://github.com/tkipf/gcn, ``utils.preprocess_features``).
    """
    if is_sparse_matrix(features):
        x = features.tocsr().astype(np.float64)
        sums = np.asarray(abs(x).sum(axis=1)).ravel()
        scale = np.divide(1.0, sums, out=np.zeros_like(sums), where=sums > 0)
        return x.multiply(scale[:, None]).tocsr()
    x = np.asarray(features, dtype=np.float64)
    if x.ndim != 2:
        raise InputError(f"features: expected a 2-D array, got shape {x.shape}")
    sums = np.abs(x).sum(axis=1, keepdims=True)
    return np.divide(x, sums, out=np.zeros_like(x), where=sums > 0)


def _numeric(data: dict, attr: str, where: str) -> float:
    if attr not in data:
        raise InputError(f"{where} has no attribute {attr!r}")
    value = data[attr]
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: attribute {attr!r} = {value!r} is not numeric") from None
    if not np.isfinite(out):
        raise InputError(f"{where}: attribute {attr!r} = {value!r} is not finite")
    if abs(out) > FLOAT32_MAX:
        raise InputError(f"{where}: attribute {attr!r} = {value!r} is outside the float32 range the engine computes "
                         f"in (-3.4e38 to 3.4e38)")
    return out


def _id_set(ids: list, name: str) -> set:
    """``set(ids)``; an unhashable id raises InputTypeError naming ``name[k]`` and its type."""
    try:
        return set(ids)
    except TypeError:
        for k, v in enumerate(ids):
            check_hashable(v, f"{name}[{k}]")
        raise


def _rows(value) -> int | str:
    shape = getattr(value, "shape", None)
    if shape is not None and len(shape):
        return int(shape[0])
    try:
        return len(value)
    except TypeError:
        return "?"


def _cols(value) -> int:
    shape = getattr(value, "shape", None)
    if shape is not None:
        return int(shape[1]) if len(shape) > 1 else 1
    try:
        return len(value[0]) if len(value) else 0
    except (TypeError, IndexError, KeyError):
        return 1


def _input_sizes(num_nodes, edges, node_features, edge_features) -> dict:
    """The sizes a Graph is asked to hold, for an out-of-memory message."""
    return {"nodes": num_nodes, "edges": _rows(edges),
            "node features": 0 if node_features is None else _cols(node_features),
            "edge features": 0 if edge_features is None else _cols(edge_features)}


def _input_bytes(num_nodes, edges, node_features, edge_features) -> int:
    """About what building the Graph takes: float64 and float32 copies of the features (sparse
    ones: two CSRs of 16 bytes per non-zero), the int64 edge list and about six int64/float32
    entries per edge and node in the CSR structures."""
    s = _input_sizes(num_nodes, edges, node_features, edge_features)
    n, m = int(s["nodes"]), int(s["edges"])
    x_bytes = 32 * int(node_features.nnz) if is_sparse_matrix(node_features) else 12 * n * s["node features"]
    return x_bytes + 12 * m * s["edge features"] + 16 * m + 48 * (n + m)
