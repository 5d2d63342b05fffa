"""The model catalogue: training jobs described by the few numbers the planner's cost model needs.

:class:`ModelSpec` mirrors ``hulk::plan::ModelSpec`` (``csrc/plan/model_spec.h``) field by field,
plus ``source``, ``aliases`` and ``notes``. The catalogue (``hulk/data/models.json``) holds
the paper's six jobs (OPT-175B, T5-11B, GPT-2 1.5B (GPT-2 XL), BERT-large, RoBERTa-large and
XLNet-large) and Llama-2-7B, -13B and -70B, each with its sources; users add their own models
with :func:`from_dict` or :func:`load_models`.

Derived quantities (filled in when absent, here and in the catalogue)
---------------------------------------------------------------------
* ``flops_per_token = 6 * params + 12 * layers * hidden * seq_len``: training FLOPs per token,
  forward + backward. 6P is the dense-layer cost (2 FLOPs per parameter per token forward,
  twice that backward; Kaplan et al. 2020, "Scaling Laws for Neural Language Models",
  arXiv 2001.08361, section 2.1). The second term is the attention-score cost
  (QK^T and attention x V: 2 * 2 * s * h FLOPs per token per layer forward, times 3 for
  forward + backward), as in Narayanan et al. 2021 ("Efficient Large-Scale Language Model
  Training on GPU Clusters Using Megatron-LM", SC'21, arXiv 2104.04473, appendix). No activation
  recomputation is counted.
* ``bytes_per_param = 16``: mixed-precision Adam (fp16 weights and gradients, 2 + 2 bytes;
  fp32 master weights, momentum and variance, 4 + 4 + 4 bytes; Rajbhandari et al. 2020, ZeRO).
* ``activation_bytes_per_token = 34 * hidden`` per layer: activations stored for the backward
  pass by a transformer layer in fp16, without recomputation and without tensor parallelism
  (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
  arXiv 2205.05198, section 4.1: ``s*b*h*(34 + 5*a*s/h)`` bytes per layer). The attention-score
  term ``5*a*s/h`` is omitted: it is the part that fused/flash attention or selective
  recomputation avoids, and keeping it would make long-sequence models dominate memory by an
  implementation detail. Llama-2's catalogue entries give theirs explicitly, counted the same
  way for their SwiGLU MLP and grouped-query attention (:func:`gated_mlp_activation_bytes_per_token`):
  37.5 h (7B), 37.6 h (13B) and 40.5 h (70B).
* ``micro_batches`` per model in ``data/models.json``, chosen (assumed) so that a micro-batch
  is a few sequences for the large models (OPT-175B: 64 micro-batches of 4 sequences; Llama-2: 256 of 4), and
  ``iterations = 1000`` for every model so that makespans compare.
* ``recompute = True``: pipelines use GPipe's re-materialisation (keep each micro-batch's
  stage input, recompute the forward pass in backward: 4/3 of the compute, far less memory),
  as GPipe does by default; without it OPT-175B's activations alone exceed the whole
  47-server cluster at its batch size.

Memory needed to train a whole model on one device (``memory_bytes_whole``)::

    params * bytes_per_param + sequences * seq_len * layers * activation_bytes_per_token

i.e. optimiser state plus the stored activations of ``sequences`` sequences. This is the Python
mirror of ``ModelSpec::memory_bytes_whole`` in ``csrc/plan/model_spec.h``; the two must agree.

JSON (``load_models``), version ``"hulk-models/1"``::

    {"version": "hulk-models/1",
     "models": [{"name": "my-model", "layers": 24, "hidden": 1024, "seq_len": 512,
                 "params": 3.4e8, "global_batch": 256,
                 # optional: flops_per_token, bytes_per_param, activation_bytes_per_token,
                 #           micro_batches, iterations, source, aliases, notes
                }]}

A bare list of model objects is also accepted. Unknown keys are rejected.

Validation (``ModelSpec.validate``) matches ``csrc/plan/model_spec.cpp`` (every count >= 1, every
real finite and > 0, ``activation_bytes_per_token`` included) and adds two checks: the name is
non-empty, and ``micro_batches <= global_batch``.

Everything but :meth:`ModelSpec.to_core` is pure Python.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

from .. import _core
from .._checks import check_int, is_int, is_real
from .._io import naming_the_file, read_json_file
from ..errors import InputError

__all__ = [
    "DEFAULT_ITERATIONS",
    "DEFAULT_MICRO_BATCHES",
    "MODELS_SCHEMA_VERSION",
    "PAPER_JOBS_4",
    "PAPER_JOBS_6",
    "ModelSpec",
    "activation_bytes_per_token_of",
    "catalogue",
    "flops_per_token_of",
    "from_dict",
    "gated_mlp_activation_bytes_per_token",
    "get",
    "load_models",
]

MODELS_SCHEMA_VERSION = "hulk-models/1"
DEFAULT_MICRO_BATCHES = 8
DEFAULT_ITERATIONS = 1000
DEFAULT_BYTES_PER_PARAM = 16.0

PAPER_JOBS_4 = ["OPT-175B", "T5-11B", "GPT-2 1.5B", "BERT-large"]
PAPER_JOBS_6 = PAPER_JOBS_4 + ["RoBERTa-large", "XLNet-large"]

_CORE_FIELDS = ("name", "layers", "hidden", "seq_len", "params", "flops_per_token", "bytes_per_param",
                "activation_bytes_per_token", "global_batch", "micro_batches", "iterations", "recompute")
_KEYS = _CORE_FIELDS + ("source", "aliases", "notes", "efficiency_curve")


def flops_per_token_of(params: float, layers: int, hidden: int, seq_len: int) -> float:
    """6 P + 12 L h s (see the module docstring)."""
    return _core.plan.flops_per_token(float(params), int(layers), int(hidden), int(seq_len))  # csrc/plan/model_spec.h


def activation_bytes_per_token_of(hidden: int) -> float:
    """34 h bytes per token per layer (Korthikanti et al. 2022, attention-score term omitted)."""
    return _core.plan.activation_bytes_per_token(int(hidden))  # csrc/plan/model_spec.h


def gated_mlp_activation_bytes_per_token(hidden: int, ffn_hidden: int, heads: int, kv_heads: int) -> int:
    """Bytes per token per layer that a Llama-style layer (RMSNorm, no dropout, rotary attention
    with ``kv_heads`` key-value heads, a SwiGLU MLP of width ``ffn_hidden``) keeps for its
    backward pass in 16-bit, counted tensor by tensor as Korthikanti et al. 2022 count the 34 h
    of a GPT layer (section 4.1), with the same convention that fused attention keeps no score
    matrix:

    * attention: its input 2h, Q 2h, K and V 2h * kv_heads / heads each, and its output (the
      output projection's input) 2h;
    * MLP: its input 2h (shared by the gate and up projections), the gate's output (SiLU's
      input) 2f, the up projection's output 2f, SiLU's output 2f and their product (the down
      projection's input) 2f;
    * the two RMSNorms' inputs, 2h each.

    In all ``12 h + 4 h kv_heads / heads + 8 f``: 16 h + 8 f with one key-value head per head.
    Raises InputError naming the argument when a size is not a positive integer, or
    ``kv_heads`` does not divide ``heads``, or ``heads`` does not divide ``hidden``."""
    hidden, ffn_hidden, heads, kv_heads = (check_int(v, name, lo=1) for v, name in (
        (hidden, "hidden"), (ffn_hidden, "ffn_hidden"), (heads, "heads"), (kv_heads, "kv_heads")))
    if heads % kv_heads:
        raise InputError(f"kv_heads={kv_heads!r} must divide heads={heads!r}")
    if hidden % heads:
        raise InputError(f"heads={heads!r} must divide hidden={hidden!r} (the width of one head)")
    return 12 * hidden + 4 * hidden * kv_heads // heads + 8 * ffn_hidden


@dataclass
class ModelSpec:
    """A training job's model; see the module docstring for the derived fields.

    ``flops_per_token`` and ``activation_bytes_per_token`` are derived when left ``None``.
    The spec validates itself on construction (``ValueError`` naming the field and value).
    """

    name: str
    layers: int
    hidden: int
    seq_len: int
    params: float
    global_batch: int
    flops_per_token: float | None = None
    bytes_per_param: float = DEFAULT_BYTES_PER_PARAM
    activation_bytes_per_token: float | None = None
    micro_batches: int = DEFAULT_MICRO_BATCHES
    iterations: int = DEFAULT_ITERATIONS
    recompute: bool = True
    source: str = ""
    aliases: list = field(default_factory=list)
    notes: str = ""
    # How the cost model costs compute (hulk.plan.profile, csrc/plan/cost.h): measured profiles of
    # this model (one per GPU type), else the FLOP model, with the efficiency curve when
    # efficiency_curve is true. Not part of the catalogue's JSON.
    profiles: tuple = field(default=(), repr=False, compare=False)
    efficiency_curve: bool = False

    def __post_init__(self):
        for key in ("recompute", "efficiency_curve"):
            if not isinstance(getattr(self, key), bool):
                raise InputError(f"model {self.name!r}: {key} must be true or false, got {getattr(self, key)!r}")
        self.profiles = tuple(self.profiles)
        # Check the inputs of the formulas before using them.
        self._check_shape()
        if self.flops_per_token is None:
            self.flops_per_token = flops_per_token_of(self.params, self.layers, self.hidden, self.seq_len)
        if self.activation_bytes_per_token is None:
            self.activation_bytes_per_token = activation_bytes_per_token_of(self.hidden)
        self.validate()

    def _where(self):
        return f"model {self.name!r}"

    def _check_shape(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise InputError(f"model name must be a non-empty string, got {self.name!r}")
        for key in ("layers", "hidden", "seq_len", "global_batch", "micro_batches", "iterations"):
            v = getattr(self, key)
            if not is_int(v) or v <= 0:
                raise InputError(f"{self._where()}: {key} must be a positive integer, got {v!r}")
        if not is_real(self.params) or not math.isfinite(self.params) or self.params <= 0:
            raise InputError(f"{self._where()}: params must be finite and > 0, got {self.params!r}")

    def validate(self) -> None:
        """Check every field; raise ``ValueError`` naming the model, the field and the value."""
        self._check_shape()
        for key in ("flops_per_token", "bytes_per_param", "activation_bytes_per_token"):
            v = getattr(self, key)
            if not is_real(v) or not math.isfinite(v) or v <= 0:
                raise InputError(f"{self._where()}: {key} must be finite and > 0, got {v!r}")
        if self.micro_batches > self.global_batch:
            raise InputError(f"{self._where()}: micro_batches ({self.micro_batches}) must not exceed "
                             f"global_batch ({self.global_batch} sequences)")
        if not isinstance(self.source, str) or not isinstance(self.notes, str):
            raise InputError(f"{self._where()}: source and notes must be strings")
        if not isinstance(self.aliases, list) or not all(isinstance(a, str) for a in self.aliases):
            raise InputError(f"{self._where()}: aliases must be a list of strings, got {self.aliases!r}")

    # -- quantities mirrored from csrc/plan/model_spec.h ---------------------------------------
    def params_per_layer(self) -> float:
        return self.params / self.layers

    def state_bytes(self, n_layers: int | None = None) -> float:
        """Optimiser state of ``n_layers`` layers (all by default): P_layers * bytes_per_param."""
        n = self.layers if n_layers is None else n_layers
        return self.params_per_layer() * n * self.bytes_per_param

    def activation_bytes(self, sequences: float, n_layers: int | None = None) -> float:
        n = self.layers if n_layers is None else n_layers
        return sequences * self.seq_len * n * self.activation_bytes_per_token

    def memory_bytes_whole(self, sequences: float) -> float:
        """Memory to train the whole model with no parallelism on ``sequences`` sequences:
        state bytes + stored activations (module docstring)."""
        if not is_real(sequences) or not math.isfinite(sequences) or sequences < 0:
            raise InputError(f"{self._where()}: sequences must be finite and >= 0, got {sequences!r}")
        return self.state_bytes() + self.activation_bytes(sequences)

    def boundary_bytes(self, sequences: float) -> float:
        """Activation bytes crossing a stage boundary for ``sequences`` sequences (fp16)."""
        return sequences * self.seq_len * self.hidden * 2.0

    @property
    def micro_batch_sequences(self) -> float:
        return self.global_batch / self.micro_batches

    @property
    def tokens_per_iteration(self) -> int:
        return self.global_batch * self.seq_len

    def core_dict(self) -> dict:
        """Exactly the fields of ``hulk::plan::ModelSpec``, for the bindings."""
        return {k: getattr(self, k) for k in _CORE_FIELDS}

    def to_core(self):
        """The C++ planner's model (``_core.plan.ModelSpec``) of this spec."""
        return _core.plan.ModelSpec(**self.core_dict(), profiles=[p.to_core() for p in self.profiles],
                                    efficiency_curve=self.efficiency_curve)

    def memory_need_bytes(self) -> float:
        """Memory the job needs in all (``ModelSpec::memory_need_bytes`` of the C++ planner:
        weights, gradients, optimiser state and activations)."""
        return float(self.to_core().memory_need_bytes)

    def to_dict(self) -> dict:
        """The catalogue's JSON fields (``efficiency_curve`` only when true; profiles never)."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "profiles"}
        d["aliases"] = list(self.aliases)
        if not self.efficiency_curve:
            del d["efficiency_curve"]
        return d


def _norm(name: str) -> str:
    return "".join(ch for ch in str(name).lower() if ch not in " -_")


def from_dict(d: dict) -> ModelSpec:
    """A ``ModelSpec`` from a dict (keys as in the JSON schema; unknown keys are an error)."""
    if not isinstance(d, dict):
        raise InputError(f"a model must be given as a dict, got {type(d).__name__}")
    extra = set(d) - set(_KEYS)
    if extra:
        raise InputError(f"model {d.get('name')!r}: unknown keys {sorted(extra)}; allowed: {list(_KEYS)}")
    required = ("name", "layers", "hidden", "seq_len", "params", "global_batch")
    missing = [k for k in required if d.get(k) is None]
    if missing:
        raise InputError(f"model {d.get('name')!r}: missing required keys {missing}")
    kw = {k: v for k, v in d.items() if v is not None}
    if "aliases" in kw:
        kw["aliases"] = list(kw["aliases"]) if isinstance(kw["aliases"], (list, tuple)) else kw["aliases"]
    # JSON numbers like 1024.0 for integer fields: accept exact integers, reject 1.5.
    for key in ("layers", "hidden", "seq_len", "global_batch", "micro_batches", "iterations"):
        v = kw.get(key)
        if isinstance(v, float) and v.is_integer():
            kw[key] = int(v)
    return ModelSpec(**kw)


def _models_from_doc(doc, where: str) -> dict:
    if isinstance(doc, dict):
        extra = set(doc) - {"version", "description", "models"}
        if extra:
            raise InputError(f"{where}: unknown top-level keys {sorted(extra)}")
        if doc.get("version") != MODELS_SCHEMA_VERSION:
            raise InputError(f"{where}: version must be {MODELS_SCHEMA_VERSION!r}, got {doc.get('version')!r}")
        items = doc.get("models")
    else:
        items = doc
    if not isinstance(items, list) or not items:
        raise InputError(f"{where}: expected a non-empty list of models")
    out, seen = {}, {}
    for i, d in enumerate(items):
        try:
            m = from_dict(d)
        except ValueError as e:
            raise InputError(f"{where}: model {i}: {e}") from None
        for n in [m.name, *m.aliases]:
            key = _norm(n)
            if key in seen and seen[key] != m.name:
                raise InputError(f"{where}: name {n!r} of model {m.name!r} clashes with model {seen[key]!r}")
            seen[key] = m.name
        if m.name in out:
            raise InputError(f"{where}: duplicate model name {m.name!r}")
        out[m.name] = m
    return out


def load_models(json_path) -> dict:
    """User-defined models from a JSON file (schema in the module docstring): ``{name: ModelSpec}``."""
    doc = read_json_file(json_path, "models file")  # bounded and strict, as every JSON input
    with naming_the_file(json_path):
        return _models_from_doc(doc, "models")


@lru_cache(maxsize=1)
def _catalogue_doc():
    return json.loads((files("hulk") / "data" / "models.json").read_text(encoding="utf-8"))


def catalogue() -> dict:
    """The bundled catalogue, ``{name: ModelSpec}`` (fresh objects on each call)."""
    return _models_from_doc(_catalogue_doc(), "hulk/data/models.json")


def get(name: str, models: dict | None = None) -> ModelSpec:
    """A model by name or alias, ignoring case, spaces, '-' and '_' ("gpt-2 xl", "opt175b").

    ``models`` (e.g. from :func:`load_models`) is searched before the catalogue. Raises
    ``ValueError`` listing the known names when nothing matches.
    """
    pools = ([models] if models else []) + [catalogue()]
    key = _norm(name)
    for pool in pools:
        for m in pool.values():
            if key in {_norm(n) for n in [m.name, *m.aliases]}:
                return m
    known = sorted({n for pool in pools for n in pool})
    raise InputError(f"unknown model {name!r}; known models: {', '.join(known)}")
