"""hulk.GNN: the paper's node classifier (EdgePool -> GCNConv x L -> Linear), a shortcut that
builds its :class:`hulk.Sequential` stack."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ._checks import is_int, is_real
from .errors import InputError
from .nn import MAX_WIDTH, Dropout, EdgePool, GCNConv, Layer, Linear, ReLU, float32_value, from_dict
from .sequential import Sequential

# Bounds of the model's shape: the limits of the model file (csrc/nn/serialize.cpp), so that every
# model that trains can be saved and loaded back, and far above any model that fits in memory (two
# layers of MAX_WIDTH hold 2**40 weights, 16 TiB with their gradients and Adam moments). A value
# past them is a typo; below them an allocation that fails says so with the sizes
# (OutOfMemoryError).
MAX_LAYERS = 64
MAX_CLASSES = MAX_WIDTH


class GNN(Sequential):
    """Node classifier of the Hulk paper, trained full-batch by the C++ core.

    Layers: EdgePool (paper eq. 4, pools ``[h_v || h_u || e_vu]`` over neighbours), then one
    GCNConv (eq. 1) per further entry of ``hidden``, ReLU and dropout between layers, and a
    linear classifier; masked softmax cross-entropy (eq. 5); Adam. The stack is
    :func:`gnn_layers`'s; :class:`hulk.Sequential` takes any other.

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
    gcn_edge_weights, standardize, seed, device
        As for :class:`hulk.Sequential`.
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
        if not is_real(dropout) or not 0.0 <= dropout < 1.0:
            raise InputError(f"dropout must be in [0, 1), got {dropout!r}")
        dropout = float32_value(dropout)  # a saved and loaded model's config is the same
        self._set_options(gnn_layers(num_classes, hidden, bool(edge_pool), dropout), pooling,
                          gcn_edge_weights, standardize, seed, device)
        self._shortcut = dict(hidden=hidden, edge_pool=bool(edge_pool), dropout=float(dropout))

    def _shape_sizes(self) -> dict:
        return {"hidden": tuple(self._shortcut["hidden"])}

    @classmethod
    def _from_core_config(cls, cfg: dict, device: str) -> Sequential:
        """A GNN when the file's stack is one :func:`gnn_layers` builds, else a Sequential."""
        shortcut = gnn_options([from_dict(d, f"layers[{i}]") for i, d in enumerate(cfg["layers"])])
        if shortcut is None:
            return Sequential._from_core_config(cfg, device)
        return cls(num_classes=cfg["num_classes"], pooling=cfg["pooling"], gcn_edge_weights=cfg["gcn_edge_weights"],
                   standardize=cfg["standardize"], seed=cfg["seed"], device=device, **shortcut)

    @property
    def config(self) -> dict:
        """The core configuration and the shortcut's hidden, edge_pool and dropout."""
        return {**super().config, **self._shortcut}

    def __repr__(self) -> str:
        o, s = self._options, self._shortcut
        return (f"hulk.GNN(num_classes={o['num_classes']}, hidden={tuple(s['hidden'])}, pooling={o['pooling']!r}, "
                f"edge_pool={s['edge_pool']}, dropout={s['dropout']}, seed={o['seed']})")


def gnn_layers(num_classes: int, hidden: Sequence[int], edge_pool: bool, dropout: float) -> list[Layer]:
    """The paper's stack (the core's gnn_stack, csrc/nn/stack.cpp): EdgePool(hidden[0]) or
    GCNConv(hidden[0]), GCNConv(h) for the further widths, each followed by ReLU and, with
    dropout > 0, Dropout(dropout); then Linear(num_classes)."""
    out: list[Layer] = []
    for i, width in enumerate(hidden):
        out += [EdgePool(width) if i == 0 and edge_pool else GCNConv(width), ReLU()]
        if dropout > 0:
            out.append(Dropout(dropout))
    return out + [Linear(num_classes)]


def gnn_options(layers: Sequence[Layer]) -> dict | None:
    """hidden, edge_pool and dropout of a stack :func:`gnn_layers` builds; None for any other."""
    if not layers or not isinstance(layers[-1], Linear) or not isinstance(layers[0], (EdgePool, GCNConv)):
        return None
    hidden = [layer.width for layer in layers if isinstance(layer, (EdgePool, GCNConv))]
    rates = [layer.rate for layer in layers if isinstance(layer, Dropout)]
    edge_pool = isinstance(layers[0], EdgePool)
    if gnn_layers(layers[-1].width, hidden, edge_pool, rates[0] if rates else 0.0) != list(layers):
        return None
    return dict(hidden=hidden, edge_pool=edge_pool, dropout=rates[0] if rates else 0.0)


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
