"""hulk.GNN: the paper's node classifier (EdgePool -> GCNConv x L -> Linear)."""

from __future__ import annotations

import math
import os
from typing import Callable, Mapping, Sequence

import numpy as np

from . import _core
from ._checks import (INT64_MAX, as_labels, as_mask, check_int, check_seed, is_int, is_real,
                      naming_out_of_memory)
from ._device import check_device
from .graph import Graph
from .errors import InputError, InputTypeError, NotFittedError

# Bounds of the model's shape: the limits of the model file (csrc/nn/serialize.cpp), so that every
# model that trains can be saved and loaded back, and far above any model that fits in memory (two
# layers of MAX_WIDTH hold 2**40 weights, 16 TiB with their gradients and Adam moments). A value
# past them is a typo; below them an allocation that fails says so with the sizes
# (OutOfMemoryError).
MAX_WIDTH = 1 << 20
MAX_LAYERS = 64
MAX_CLASSES = 1 << 20


class GNN:
    """Node classifier of the Hulk paper, trained full-batch by the C++ core.

    Layers: EdgePool (paper eq. 4, pools ``[h_v || h_u || e_vu]`` over neighbours), then one
    GCNConv (eq. 1) per further entry of ``hidden``, ReLU and dropout between layers, and a
    linear classifier; masked softmax cross-entropy (eq. 5); Adam.

    Parameters
    ----------
    num_classes : int
        Number of classes C (>= 2).
    hidden : sequence of int
        ``hidden[0]`` is the first layer's width; each further entry adds a GCNConv.
    pooling : {"sum", "mean"}
        How EdgePool combines the messages of a node's neighbours.
    edge_pool : bool
        False replaces EdgePool by a GCNConv, which cannot see edge features (ablation).
    dropout : float
        Dropout probability between layers, in [0, 1).
    gcn_edge_weights : bool
        GCNConv layers use the graph's ``edge_weight`` in their normalisation.
    standardize : bool
        Z-score node and edge features with the statistics of the first graph fitted on;
        the statistics are saved with the weights. Sparse node features (a scipy.sparse
        ``node_features``, which needs ``edge_pool=False``) are z-scored exactly as dense ones
        without being densified: the column scaling goes into a copy of the sparse values, the
        centring into the first layer's product (``X W - 1 (mean W)``). For Kipf and Welling's
        row normalisation instead, pass ``hulk.normalize_rows(x)`` and ``standardize=False``.
    seed : int
        Seeds initialisation and dropout; training is deterministic for a seed.
    device : {"cpu", "cuda"}
        Where the weights live and training and inference run. "cuda" needs a GPU (or the
        SIMT build, which runs the CUDA kernels on the CPU for tests). Results come back as
        numpy arrays either way; ``to()`` moves a model.
    """

    def __init__(self, num_classes: int, hidden: Sequence[int] = (64, 64), pooling: str = "sum",
                 edge_pool: bool = True, dropout: float = 0.0, gcn_edge_weights: bool = False,
                 standardize: bool = True, seed: int = 0, device: str = "cpu"):
        if not is_int(num_classes) or num_classes < 2:
            raise InputError(f"num_classes must be an integer >= 2, got {num_classes!r}")
        if num_classes > MAX_CLASSES:
            raise InputError(f"num_classes = {num_classes} is more than the {MAX_CLASSES} classes a model may have "
                             f"(the limit of the model file)")
        hidden = _check_hidden(hidden)
        if pooling not in ("sum", "mean"):
            raise InputError(f"pooling must be 'sum' or 'mean', got {pooling!r}")
        if not is_real(dropout) or not 0.0 <= dropout < 1.0:
            raise InputError(f"dropout must be in [0, 1), got {dropout!r}")
        if not is_int(seed) or seed < 0:
            raise InputError(f"seed must be a non-negative integer, got {seed!r}")
        check_seed(seed)
        self.device = check_device(device)
        self._options = dict(num_classes=int(num_classes), hidden=[int(h) for h in hidden], pooling=pooling,
                             edge_pool=bool(edge_pool), per_edge_reference=False,
                             gcn_edge_weights=bool(gcn_edge_weights), standardize=bool(standardize),
                             dropout=float(dropout), seed=int(seed))
        self._model = None  # built on the first fit, when the feature widths are known
        self.history_: list[dict] = []

    # -- training ----------------------------------------------------------------------------

    def fit(self, graph: Graph | Sequence[Graph], labels, train_mask=None, val_mask=None, epochs: int = 200,
            lr: float = 0.01, weight_decay: float = 5e-4, patience: int = 0, restore_best: bool = True,
            verbose: bool = False, callback: Callable[[dict], bool | None] | None = None) -> list[dict]:
        """Trains full-batch and returns the per-epoch history (also kept in ``history_``).

        Parameters
        ----------
        graph : Graph or list of Graph
            A list is trained on as one disjoint union (its labels and masks concatenated,
            or given per graph as lists).
        labels : array-like (N,) of int, or dict {node_id: class}
            Class ids in [0, num_classes), -1 for unlabelled nodes.
        train_mask, val_mask : array-like (N,) of bool, optional
            Default train mask: every labelled node. Default: no validation.
        patience : int
            With a validation mask: stop after this many epochs without a lower validation
            loss (0 = never) and, with ``restore_best``, keep the best epoch's weights.
        verbose : bool
            Print one line per epoch.
        callback : callable, optional
            Called with each epoch's dict; returning False stops training.

        Each history entry has epoch, train_loss, train_acc, val_loss, val_acc (NaN
        without validation) and seconds.
        """
        with self._naming_out_of_memory("GNN.fit", graph):
            return self._fit(graph, labels, train_mask, val_mask, epochs, lr, weight_decay, patience, restore_best,
                             verbose, callback)

    def _fit(self, graph, labels, train_mask, val_mask, epochs, lr, weight_decay, patience, restore_best, verbose,
             callback) -> list[dict]:
        g, labels, train_mask, val_mask = self._training_inputs(graph, labels, train_mask, val_mask)
        for name, value, check in (("epochs", epochs, lambda v: v >= 1), ("patience", patience, lambda v: v >= 0)):
            if not is_int(value) or not check(value):
                raise InputError(f"{name} must be a {'positive' if name == 'epochs' else 'non-negative'} "
                                 f"integer, got {value!r}")
            check_int(value, name, 1 if name == "epochs" else 0, INT64_MAX)  # the engine counts in int64
        for name, value in (("lr", lr), ("weight_decay", weight_decay)):
            if not is_real(value) or not math.isfinite(value) or value < 0 or (
                    name == "lr" and value == 0):
                raise InputError(f"{name} must be a {'positive' if name == 'lr' else 'non-negative'} number, "
                                 f"got {value!r}")
        self._build(g)
        self._check_graph(g)

        def on_epoch(stats: dict) -> bool:
            if verbose:
                print(format_epoch(stats), flush=True)
            return callback is None or callback(stats) is not False

        if verbose:
            print(format_epoch_header(), flush=True)
        history = self._model.fit(g.core, labels, train_mask, val_mask, int(epochs), float(lr), float(weight_decay),
                                  int(patience), bool(restore_best), on_epoch)
        self.history_.extend(history)
        return history

    # -- mini-batch training -------------------------------------------------------------------

    def _build(self, g: Graph) -> None:
        if self._model is None:
            self._model = _core.engine.Model(in_features=g.num_node_features, edge_features=g.num_edge_features,
                                      **self._options)
            self._model.to(self.device)
        self._check_graph(g)

    def to(self, device: str) -> "GNN":
        """Moves the model (weights and optimiser state) to "cpu" or "cuda"; returns self.

        A model saved on one device loads on the other."""
        self.device = check_device(device)
        if self._model is not None:
            self._model.to(self.device)
        return self

    def fit_scaler(self, graph: Graph) -> None:
        """Sets the z-score statistics of the features from ``graph`` (for mini-batch training,
        a graph representative of the whole training set; builds the model if needed)."""
        if not isinstance(graph, Graph):
            raise InputTypeError(f"graph must be a hulk.Graph, got {type(graph).__name__}")
        with self._naming_out_of_memory("GNN.fit_scaler", graph):
            self._build(graph)
            self._model.fit_scaler(graph.core)

    def partial_fit(self, graph: Graph, labels, mask=None, lr: float = 0.01, weight_decay: float = 5e-4) -> dict:
        """One optimiser step on ``graph`` (usually a :meth:`Graph.batch` of several graphs).
        Returns the batch's ``loss`` and ``acc`` before the step."""
        if not isinstance(graph, Graph):
            raise InputTypeError(f"graph must be a hulk.Graph, got {type(graph).__name__}")
        with self._naming_out_of_memory("GNN.partial_fit", graph):
            self._build(graph)
            n = graph.num_nodes
            labels = as_labels(labels, "labels", n, self._options["num_classes"])
            mask = np.zeros(0, np.uint8) if mask is None else as_mask(mask, "mask", n)
            loss, correct, count = self._model.train_step(graph.core, labels, mask, float(lr), float(weight_decay))
        return {"loss": loss, "acc": correct / count if count else float("nan")}

    def evaluate(self, graph: Graph, labels, mask=None) -> dict:
        """Loss and accuracy of the current weights on the labelled (and masked) nodes."""
        model = self._fitted_model(graph)
        n = graph.num_nodes
        labels = as_labels(labels, "labels", n, self._options["num_classes"])
        mask = np.zeros(0, np.uint8) if mask is None else as_mask(mask, "mask", n)
        with self._naming_out_of_memory("GNN.evaluate", graph):
            loss, correct, count = model.evaluate(graph.core, labels, mask)
        return {"loss": loss, "acc": correct / count if count else float("nan"), "count": count}

    def _training_inputs(self, graph, labels, train_mask, val_mask):
        if isinstance(graph, (list, tuple)):
            graphs = list(graph)
            g = Graph.batch(graphs)
            concat = lambda v: (np.concatenate([np.asarray(p) for p in v])
                                if isinstance(v, (list, tuple)) and len(v) == len(graphs) and
                                all(np.ndim(p) == 1 for p in v) else v)
            labels, train_mask, val_mask = concat(labels), concat(train_mask), concat(val_mask)
        elif isinstance(graph, Graph):
            g = graph
        else:
            raise InputTypeError(f"graph must be a hulk.Graph or a list of them, got {type(graph).__name__}")
        n = g.num_nodes
        if isinstance(labels, Mapping):
            labels = _labels_from_mapping(labels, g)
        labels = as_labels(labels, "labels", n, self._options["num_classes"])
        train = (labels >= 0).astype(np.uint8) if train_mask is None else as_mask(train_mask, "train_mask", n)
        val = np.zeros(0, np.uint8) if val_mask is None else as_mask(val_mask, "val_mask", n)
        if not (train.astype(bool) & (labels >= 0)).any():
            raise InputError("no labelled node (label >= 0) in the training mask")
        return g, labels, train, val

    # -- inference -----------------------------------------------------------------------------

    def predict_proba(self, graph: Graph) -> np.ndarray:
        """Class probabilities [N, C] (float32)."""
        model = self._fitted_model(graph)
        with self._naming_out_of_memory("GNN.predict_proba", graph):
            return model.predict_proba(graph.core)

    def predict(self, graph: Graph) -> np.ndarray:
        """Most probable class per node [N] (int64)."""
        model = self._fitted_model(graph)
        with self._naming_out_of_memory("GNN.predict", graph):
            return model.predict(graph.core)

    def logits(self, graph: Graph) -> np.ndarray:
        """Pre-softmax scores [N, C] (float32)."""
        model = self._fitted_model(graph)
        with self._naming_out_of_memory("GNN.logits", graph):
            return model.logits(graph.core)

    def _fitted_model(self, graph):
        if self._model is None:
            raise NotFittedError("this GNN has not been fitted yet: call fit() or GNN.load() first")
        if not isinstance(graph, Graph):
            raise InputTypeError(f"graph must be a hulk.Graph, got {type(graph).__name__}")
        self._check_graph(graph)
        return self._model

    def _naming_out_of_memory(self, call: str, graph):
        """:func:`hulk._checks.naming_out_of_memory` with this model's and ``graph``'s sizes
        (a list of graphs counts as their union)."""
        graphs = [g for g in (graph if isinstance(graph, (list, tuple)) else [graph]) if isinstance(g, Graph)]
        o = self._options
        hidden, classes = o["hidden"], o["num_classes"]

        def totals():
            return (sum(g.num_nodes for g in graphs), sum(g.num_edges for g in graphs),
                    max((g.num_node_features for g in graphs), default=0),
                    max((g.num_edge_features for g in graphs), default=0))

        def sizes():
            n, m, f, fe = totals()
            return {"nodes": n, "edges": m, "node features": f, "edge features": fe, "hidden": tuple(hidden),
                    "classes": classes}

        def estimate():
            n, m, f, fe = totals()
            return _estimate_bytes(n, m, f, fe, hidden, classes)
        return naming_out_of_memory(call, sizes, estimate)

    def _check_graph(self, g: Graph) -> None:
        cfg = self._model.config
        if g.num_node_features != cfg["in_features"] or g.num_edge_features != cfg["edge_features"]:
            raise InputError(f"graph has {g.num_node_features} node and {g.num_edge_features} edge features; "
                             f"this model was built for {cfg['in_features']} and {cfg['edge_features']}")

    # -- persistence and introspection ---------------------------------------------------------

    def save(self, path: str | os.PathLike) -> None:
        """Writes the weights and configuration (format documented in csrc/nn/serialize.cpp)
        through a temporary file in the same folder and a rename: a failed save leaves the
        previous file intact."""
        if self._model is None:
            raise NotFittedError("nothing to save: this GNN has not been fitted yet")
        if not os.fspath(path):
            raise InputError("GNN.save: the path is empty")
        self._model.save(os.fspath(path))

    @classmethod
    def load(cls, path: str | os.PathLike, device: str = "cpu") -> "GNN":
        """Reads a model written by :meth:`save`."""
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no model file at {path!r}")
        model = _core.engine.Model.load(path)
        cfg = model.config
        obj = cls(num_classes=cfg["num_classes"], hidden=cfg["hidden"], pooling=cfg["pooling"],
                  edge_pool=cfg["edge_pool"], dropout=cfg["dropout"], gcn_edge_weights=cfg["gcn_edge_weights"],
                  standardize=cfg["standardize"], seed=cfg["seed"], device=device)
        model.to(obj.device)
        obj._model = model
        return obj

    def load_weights(self, path: str | os.PathLike) -> None:
        """Replaces this model's weights (and configuration) with those of a file written by
        :meth:`save`, e.g. to go back to a snapshot taken during training."""
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no model file at {path!r}")
        model = _core.engine.Model.load(path)
        model.to(self.device)
        self._model = model

    @property
    def num_parameters(self) -> int:
        """Number of trainable scalars (requires a fitted or loaded model)."""
        if self._model is None:
            raise NotFittedError("the parameter count is known once the model is built: call fit() or load()")
        return self._model.num_parameters

    def parameters(self) -> dict[str, np.ndarray]:
        """Copies of the weights by name."""
        if self._model is None:
            raise NotFittedError("this GNN has not been fitted yet")
        return self._model.parameters()

    @property
    def config(self) -> dict:
        return dict(self._model.config) if self._model is not None else dict(self._options)

    def __repr__(self) -> str:
        o = self._options
        return (f"hulk.GNN(num_classes={o['num_classes']}, hidden={tuple(o['hidden'])}, pooling={o['pooling']!r}, "
                f"edge_pool={o['edge_pool']}, dropout={o['dropout']}, seed={o['seed']})")


def _check_hidden(hidden) -> list[int]:
    """The layer widths: one positive int, or a non-empty sequence of them, within the bounds."""
    hidden = [hidden] if isinstance(hidden, (int, np.integer)) else list(hidden)
    if not hidden or any(not is_int(h) or h < 1 for h in hidden):
        raise InputError(f"hidden must be a non-empty sequence of positive integers, got {hidden!r}")
    if len(hidden) > MAX_LAYERS:
        raise InputError(f"hidden lists {len(hidden)} layers, more than the {MAX_LAYERS} a model may have "
                         f"(the limit of the model file)")
    for k, h in enumerate(hidden):
        if h > MAX_WIDTH:
            raise InputError(f"hidden[{k}] = {h} is wider than the {MAX_WIDTH} a layer may be (the limit of the "
                             f"model file; two layers that wide would need 4 TiB for their weights alone)")
    return [int(h) for h in hidden]


def _estimate_bytes(n: int, m: int, f: int, fe: int, hidden, classes: int) -> int:
    """A rough lower bound of what training needs: the float32 weights with their gradients and
    two Adam moments (EdgePool first, then GCNConv layers and the classifier), plus per node
    three float32 activations (value, pre-activation, gradient) of every layer and the input,
    and the edge features."""
    widths = [int(h) for h in hidden]
    params = (2 * f + fe + 1) * widths[0] + sum((a + 1) * b for a, b in zip(widths, widths[1:]))
    params += (widths[-1] + 1) * classes
    return 16 * params + 12 * n * (f + sum(widths) + classes) + 4 * m * (fe + 2)


def _labels_from_mapping(mapping: Mapping, g: Graph) -> np.ndarray:
    index = {v: i for i, v in enumerate(g.node_ids)}
    labels = np.full(g.num_nodes, -1, dtype=np.int64)
    for node, cls in mapping.items():
        if node not in index:
            raise InputError(f"labels: node {node!r} is not in the graph")
        if not is_int(cls):
            raise InputError(f"labels[{node!r}] = {cls!r}: class ids must be integers (-1 for unlabelled)")
        if not -1 <= cls <= INT64_MAX:  # as_labels then checks the class range
            raise InputError(f"labels[{node!r}] = {cls}: labels must be class ids >= 0, or -1 for unlabelled")
        labels[index[node]] = cls
    return labels


def format_epoch_header() -> str:
    return f"{'epoch':>5}  {'train_loss':>10}  {'train_acc':>9}  {'val_loss':>8}  {'val_acc':>7}  {'ms':>7}"


def format_epoch(s: dict) -> str:
    val = "" if math.isnan(s["val_loss"]) else f"{s['val_loss']:8.4f}  {s['val_acc']:7.3f}"
    val = val or f"{'-':>8}  {'-':>7}"
    return f"{s['epoch']:5d}  {s['train_loss']:10.4f}  {s['train_acc']:9.3f}  {val}  {1000 * s['seconds']:7.2f}"
