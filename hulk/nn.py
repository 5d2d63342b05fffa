"""Layers of a :class:`hulk.Sequential` model: descriptions of a stack the C++ core builds and runs.

A layer here holds no weights: it states a kind and its settings, checked when it is made. The
core (csrc/nn/stack.h) walks the stack in its forward and backward passes. The input width of
the first layer is the graph's feature count, known at the first fit; each further layer reads
the width of the one before.

Kipf and Welling's two-layer GCN (ICLR 2017, https://arxiv.org/abs/1609.02907, section 5.2:
16 hidden units, dropout 0.5 on the input and the hidden layer, L2 5e-4 on the first layer)::

    hulk.Sequential([nn.Dropout(0.5), nn.GCNConv(16, weight_decay=5e-4), nn.ReLU(), nn.Dropout(0.5),
                     nn.GCNConv(num_classes)])
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from ._checks import is_int, is_real
from .errors import InputError, InputTypeError

# The limits of the model file (csrc/nn/stack.h, kMaxLayerWidth and kMaxStackLayers).
MAX_WIDTH = 1 << 20
MAX_LAYERS = 256


def float32_value(x) -> float:
    """``x`` as the core's float32 keeps it, written shortest (0.1 stays 0.1): a rate or decay
    reads the same after a model is built, saved and loaded."""
    return float(str(np.float32(x)))


class Layer:
    """A layer of the stack; ``kind`` is its name in the core and the model file."""

    kind = ""

    def to_dict(self) -> dict:
        """The form the core takes and ``Sequential.config["layers"]`` shows."""
        return {"kind": self.kind}

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.to_dict() == self.to_dict()

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.to_dict().items())))

    def __repr__(self) -> str:
        args = [f"{k}={v!r}" for k, v in self.to_dict().items() if k != "kind" and v is not None]
        return f"{type(self).__name__}({', '.join(args)})"


class _Weighted(Layer):
    def __init__(self, width: int, weight_decay: float | None = None):
        name = type(self).__name__
        if not is_int(width) or not 1 <= width <= MAX_WIDTH:
            raise InputError(f"{name}: width must be an integer in [1, {MAX_WIDTH}], got {width!r}")
        if weight_decay is not None and (not is_real(weight_decay) or not math.isfinite(weight_decay)
                                         or weight_decay < 0):
            raise InputError(f"{name}: weight_decay must be a finite number >= 0 or None, got {weight_decay!r}")
        self.width = int(width)
        self.weight_decay = None if weight_decay is None else float32_value(weight_decay)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "width": self.width, "weight_decay": self.weight_decay}


class GCNConv(_Weighted):
    """Graph convolution (Kipf & Welling; the Hulk paper's eq. 1): ``D^-1/2 (A+I) D^-1/2 h W + b``
    with ``width`` outputs. ``weight_decay`` (L2 on W and b, as torch.optim.Adam's) replaces the
    fit's ``weight_decay`` for this layer; None keeps the fit's."""

    kind = "gcn"


class Linear(_Weighted):
    """``h W + b`` with ``width`` outputs, per node. ``weight_decay`` as for :class:`GCNConv`."""

    kind = "linear"


class EdgePool(_Weighted):
    """The Hulk paper's EdgePool (eq. 4): pools ``W [h_v || h_u || e_vu] + b`` over each node's
    neighbours (sum or mean: the model's ``pooling``), the only layer that sees edge features.
    First in the stack (after an optional input :class:`Dropout`)."""

    kind = "edge_pool"


class ReLU(Layer):
    """``max(h, 0)``."""

    kind = "relu"


class Dropout(Layer):
    """Inverted dropout while training (each value kept with probability ``1 - rate`` and scaled by
    ``1 / (1 - rate)``), the identity otherwise. First in the stack it drops input features."""

    kind = "dropout"

    def __init__(self, rate: float):
        if not is_real(rate) or not 0.0 <= rate < 1.0:
            raise InputError(f"Dropout: rate must be a number in [0, 1), got {rate!r}")
        self.rate = float32_value(rate)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "rate": self.rate}


KINDS = {cls.kind: cls for cls in (GCNConv, Linear, EdgePool, ReLU, Dropout)}


def from_dict(d: Mapping, where: str = "layer") -> Layer:
    """The layer a :meth:`Layer.to_dict` dict describes (as in a model's ``config["layers"]``)."""
    if not isinstance(d, Mapping):
        raise InputTypeError(f"{where} must be a hulk.nn layer or a dict with a 'kind', got {d!r}")
    kind = d.get("kind")
    if kind not in KINDS:
        raise InputError(f"{where}: unknown layer kind {kind!r}; expected one of {', '.join(KINDS)}")
    args = {k: v for k, v in d.items() if k != "kind"}
    allowed = {"width", "weight_decay"} if issubclass(KINDS[kind], _Weighted) else (
        {"rate"} if kind == "dropout" else set())
    extra = sorted(set(args) - allowed)
    if extra:
        raise InputError(f"{where}: a {kind} layer takes {sorted(allowed) or 'no settings'}, got {extra[0]!r}")
    try:
        return KINDS[kind](**args)
    except TypeError as exc:  # a missing width or rate
        raise InputError(f"{where}: {exc}") from None
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def check_stack(layers) -> list[Layer]:
    """The stack as layer objects, checked as a whole: not empty, at most MAX_LAYERS entries, an
    EdgePool only first (after an optional input Dropout), and a last layer with weights (its
    width is the number of classes). Entries may be layers or their dicts."""
    if isinstance(layers, (str, bytes, Mapping)) or not hasattr(layers, "__iter__"):
        raise InputTypeError(f"layers must be a list of hulk.nn layers, got {layers!r}")
    out = [x if isinstance(x, Layer) else from_dict(x, f"layers[{i}]") for i, x in enumerate(layers)]
    if not out:
        raise InputError("layers is empty: the stack needs at least one GCNConv, Linear or EdgePool")
    if len(out) > MAX_LAYERS:
        raise InputError(f"layers has {len(out)} entries, more than the {MAX_LAYERS} a model may have "
                         f"(the limit of the model file)")
    seen_weights = False
    for i, layer in enumerate(out):
        if isinstance(layer, EdgePool) and seen_weights:
            raise InputError(f"layers[{i}] = {layer!r}: EdgePool must be the first layer (only an input Dropout "
                             f"may come before it)")
        seen_weights = seen_weights or isinstance(layer, _Weighted)
    if not isinstance(out[-1], _Weighted):
        raise InputError(f"layers[{len(out) - 1}] = {out[-1]!r}: the last layer must be a GCNConv, Linear or "
                         f"EdgePool whose width is the number of classes")
    if out[-1].width < 2:
        raise InputError(f"layers[{len(out) - 1}] = {out[-1]!r}: the last layer's width is the number of classes, "
                         f"which must be >= 2")
    return out
