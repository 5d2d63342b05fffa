"""hulk.Sequential: a node classifier built from a stack of layers (:mod:`hulk.nn`), trained
full-batch by the C++ core. :class:`hulk.GNN` is the Hulk paper's stack of it."""

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
from .nn import EdgePool, check_stack

class Sequential:
    """Node classifier whose layers the user states, trained full-batch by the C++ core.

    The model runs ``layers`` in order on the node features (standardised, see
    ``standardize``), then masked softmax cross-entropy (the Hulk paper's eq. 5) and Adam. The
    last layer has weights and its width is the number of classes. Kipf and Welling's GCN::

        from hulk import nn
        hulk.Sequential([nn.Dropout(0.5), nn.GCNConv(16, weight_decay=5e-4), nn.ReLU(), nn.Dropout(0.5),
                         nn.GCNConv(7)])

    Parameters
    ----------
    layers : list of hulk.nn layers (or their ``to_dict()`` dicts)
        GCNConv, Linear, EdgePool (first only), ReLU, Dropout (first: on the input features).
        A layer's ``weight_decay`` replaces the fit's for its weights.
    pooling : {"sum", "mean"}
        How an EdgePool layer combines the messages of a node's neighbours.
    gcn_edge_weights : bool
        GCNConv layers use the graph's ``edge_weight`` in their normalisation.
    standardize : bool
        Z-score node and edge features with the statistics of the first graph fitted on;
        the statistics are saved with the weights. Sparse node features (a scipy.sparse
        ``node_features``; the first layer must be a GCNConv or Linear) are z-scored exactly as
        dense ones without being densified: the column scaling goes into a copy of the sparse
        values, the centring into the first layer's product (``X W - 1 (mean W)``). For Kipf
        and Welling's row normalisation instead, pass ``hulk.normalize_rows(x)`` and
        ``standardize=False``; a Dropout on sparse input features needs that (centred features
        with dropped entries would be dense).
    seed : int
        Seeds initialisation and dropout; training is deterministic for a seed.
    device : {"cpu", "cuda"}
        Where the weights live and training and inference run. "cuda" needs a GPU (or the
        SIMT build, which runs the CUDA kernels on the CPU for tests). Results come back as
        numpy arrays either way; ``to()`` moves a model.
    """

    def __init__(self, layers, pooling: str = "sum", gcn_edge_weights: bool = False, standardize: bool = True,
                 seed: int = 0, device: str = "cpu"):
        self._set_options(check_stack(layers), pooling, gcn_edge_weights, standardize, seed, device)

    def _set_options(self, layers, pooling, gcn_edge_weights, standardize, seed, device) -> None:
        if pooling not in ("sum", "mean"):
            raise InputError(f"pooling must be 'sum' or 'mean', got {pooling!r}")
        if not is_int(seed) or seed < 0:
            raise InputError(f"seed must be a non-negative integer, got {seed!r}")
        check_seed(seed)
        self.device = check_device(device)
        self.layers = list(layers)
        self.num_classes = self.layers[-1].width
        # The core model's arguments but the feature widths.
        self._options = dict(num_classes=self.num_classes, layers=[layer.to_dict() for layer in self.layers],
                             pooling=pooling, per_edge_reference=False, gcn_edge_weights=bool(gcn_edge_weights),
                             standardize=bool(standardize), seed=int(seed))
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
        with self._naming_out_of_memory("fit", graph):
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

    def to(self, device: str) -> "Sequential":
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
        with self._naming_out_of_memory("fit_scaler", graph):
            self._build(graph)
            self._model.fit_scaler(graph.core)

    def partial_fit(self, graph: Graph, labels, mask=None, lr: float = 0.01, weight_decay: float = 5e-4) -> dict:
        """One optimiser step on ``graph`` (usually a :meth:`Graph.batch` of several graphs).
        Returns the batch's ``loss`` and ``acc`` before the step."""
        if not isinstance(graph, Graph):
            raise InputTypeError(f"graph must be a hulk.Graph, got {type(graph).__name__}")
        with self._naming_out_of_memory("partial_fit", graph):
            self._build(graph)
            n = graph.num_nodes
            labels = as_labels(labels, "labels", n, self.num_classes)
            mask = np.zeros(0, np.uint8) if mask is None else as_mask(mask, "mask", n)
            loss, correct, count = self._model.train_step(graph.core, labels, mask, float(lr), float(weight_decay))
        return {"loss": loss, "acc": correct / count if count else float("nan")}

    def evaluate(self, graph: Graph, labels, mask=None) -> dict:
        """Loss and accuracy of the current weights on the labelled (and masked) nodes."""
        model = self._fitted_model(graph)
        n = graph.num_nodes
        labels = as_labels(labels, "labels", n, self.num_classes)
        mask = np.zeros(0, np.uint8) if mask is None else as_mask(mask, "mask", n)
        with self._naming_out_of_memory("evaluate", graph):
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
        labels = as_labels(labels, "labels", n, self.num_classes)
        train = (labels >= 0).astype(np.uint8) if train_mask is None else as_mask(train_mask, "train_mask", n)
        val = np.zeros(0, np.uint8) if val_mask is None else as_mask(val_mask, "val_mask", n)
        if not (train.astype(bool) & (labels >= 0)).any():
            raise InputError("no labelled node (label >= 0) in the training mask")
        return g, labels, train, val

    # -- inference -----------------------------------------------------------------------------

    def predict_proba(self, graph: Graph) -> np.ndarray:
        """Class probabilities [N, C] (float32)."""
        model = self._fitted_model(graph)
        with self._naming_out_of_memory("predict_proba", graph):
            return model.predict_proba(graph.core)

    def predict(self, graph: Graph) -> np.ndarray:
        """Most probable class per node [N] (int64)."""
        model = self._fitted_model(graph)
        with self._naming_out_of_memory("predict", graph):
            return model.predict(graph.core)

    def logits(self, graph: Graph) -> np.ndarray:
        """Pre-softmax scores [N, C] (float32)."""
        model = self._fitted_model(graph)
        with self._naming_out_of_memory("logits", graph):
            return model.logits(graph.core)

    def _fitted_model(self, graph):
        if self._model is None:
            raise NotFittedError(f"this {self._name} has not been fitted yet: call fit() or {self._name}.load() first")
        if not isinstance(graph, Graph):
            raise InputTypeError(f"graph must be a hulk.Graph, got {type(graph).__name__}")
        self._check_graph(graph)
        return self._model

    @property
    def _name(self) -> str:
        return type(self).__name__

    def _shape_sizes(self) -> dict:
        """The model's shape in out-of-memory messages."""
        return {"layer widths": tuple(layer.width for layer in self.layers if hasattr(layer, "width"))}

    def _naming_out_of_memory(self, call: str, graph):
        """:func:`hulk._checks.naming_out_of_memory` with this model's and ``graph``'s sizes
        (a list of graphs counts as their union); ``call`` is the method's name."""
        graphs = [g for g in (graph if isinstance(graph, (list, tuple)) else [graph]) if isinstance(g, Graph)]

        def totals():
            return (sum(g.num_nodes for g in graphs), sum(g.num_edges for g in graphs),
                    max((g.num_node_features for g in graphs), default=0),
                    max((g.num_edge_features for g in graphs), default=0))

        def sizes():
            n, m, f, fe = totals()
            return {"nodes": n, "edges": m, "node features": f, "edge features": fe, **self._shape_sizes(),
                    "classes": self.num_classes}

        def estimate():
            n, m, f, fe = totals()
            return _estimate_bytes(n, m, f, fe, self.layers)
        return naming_out_of_memory(f"{self._name}.{call}", sizes, estimate)

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
            raise NotFittedError(f"nothing to save: this {self._name} has not been fitted yet")
        if not os.fspath(path):
            raise InputError(f"{self._name}.save: the path is empty")
        self._model.save(os.fspath(path))

    @classmethod
    def load(cls, path: str | os.PathLike, device: str = "cpu") -> "Sequential":
        """Reads a model written by :meth:`save` (any version of the format)."""
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no model file at {path!r}")
        model = _core.engine.Model.load(path)
        obj = cls._from_core_config(model.config, device)
        model.to(obj.device)
        obj._model = model
        return obj

    @classmethod
    def _from_core_config(cls, cfg: dict, device: str) -> "Sequential":
        """An unbuilt model of the core configuration ``cfg``."""
        return Sequential(layers=cfg["layers"], pooling=cfg["pooling"], gcn_edge_weights=cfg["gcn_edge_weights"],
                          standardize=cfg["standardize"], seed=cfg["seed"], device=device)

    def load_weights(self, path: str | os.PathLike) -> None:
        """Replaces this model's weights (and core configuration) with those of a file written by
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
            raise NotFittedError(f"this {self._name} has not been fitted yet")
        return self._model.parameters()

    @property
    def config(self) -> dict:
        """The core configuration: feature widths (once built), ``layers`` as dicts, pooling, ...;
        ``hulk.Sequential(**{k: config[k] for k in ("layers", "pooling", ...)})`` rebuilds it."""
        return dict(self._model.config) if self._model is not None else dict(self._options)

    def __repr__(self) -> str:
        o = self._options
        return (f"hulk.Sequential({self.layers!r}, pooling={o['pooling']!r}, "
                f"gcn_edge_weights={o['gcn_edge_weights']}, standardize={o['standardize']}, seed={o['seed']})")


def _estimate_bytes(n: int, m: int, f: int, fe: int, layers) -> int:
    """A rough lower bound of what training needs: the float32 weights with their gradients and
    two Adam moments, plus per node three float32 values (value, gradient, scratch) of the input
    and of every layer's output, and the edge features."""
    params, width, outputs = 0, f, 0
    for layer in layers:
        if isinstance(layer, EdgePool):
            params += (2 * width + fe + 1) * layer.width
        elif hasattr(layer, "width"):
            params += (width + 1) * layer.width
        width = getattr(layer, "width", width)
        outputs += width
    return 16 * params + 12 * n * (f + outputs) + 4 * m * (fe + 2)


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
