"""Measured per-layer profiles: the cost model's compute term from real timings (``hulk-profile/1``).

A profile holds, for one model on one GPU type, measured per-layer forward and backward times and
activation bytes at one or more micro-batch sizes (sequences per GPU), and optionally at several
tensor-parallel degrees, plus the optimiser step's time per parameter. ``hulk profile`` writes
them (:mod:`hulk.plan.profiling`); :func:`hulk.plan.plan` and ``hulk plan --profile FILE`` use
them. A plan may take several profiles: one per (model, GPU type) of the jobs and the cluster.

JSON, version ``"hulk-profile/1"``
----------------------------------
::

    {
      "version": "hulk-profile/1",          # required, exactly this string
      "model": "gpt2-xl",                   # required: the job (catalogue or ModelSpec name) measured
      "gpu": "GeForce RTX 3090",            # required: the GPU type, as the cluster's machines name it
                                            #   (a name or alias of hulk/data/gpus.json, or "cpu":
                                            #   CPU machines, rule e of hulk.plan.cluster_spec)
      "device": "NVIDIA GeForce RTX 3090",  # required: what the profiler ran on (torch's device name)
      "layers": 48,                         # required: the model's layer count; every list has this length
      "hidden": 1600, "seq_len": 1024,      # optional: checked against the model when present
      "dtype": "float32",                   # optional, informational
      "optimizer_s_per_param": 2.0e-11,     # required, >= 0: Adam step seconds per parameter, one GPU
      "measurement": {                      # required: how the times were taken
        "warmup": 3,                        #   untimed iterations first, >= 0
        "repeats": 10,                      #   timed iterations per figure, >= 1
        "statistic": "median",              #   how repeats became one figure: "median", "mean" or "min"
        "tool": "hulk profile 0.1.0, torch 2.5.1"   # optional, free text
      },
      "entries": [                          # required, non-empty
        {"micro_batch": 1,                  # sequences per GPU, > 0
         "tensor_parallel": 1,              # optional (default 1): degree the layers were split over
         "forward_s": [0.0031, ...],        # per layer, seconds for one micro-batch, finite, >= 0
         "backward_s": [0.0062, ...],       # per layer, seconds
         "activation_bytes": [1.1e8, ...]}  # per layer, bytes kept for the backward pass
      ]
    }

Unknown keys are rejected. Every error is a :class:`hulk.errors.FileFormatError` naming the file and
the field (``entries[1].forward_s[3]``), e.g. a wrong version tag, a list whose length is not
``layers``, a negative or NaN time, two entries at the same (micro_batch, tensor_parallel).

How the cost model uses a profile (``csrc/plan/profile.h``, ``csrc/plan/cost.h``)
-------------------------------------------------------------------------------
* A machine whose GPU type matches the profile's ``gpu`` takes its stage's compute from the
  profile: a server of ``g`` GPUs runs a micro-batch of ``b`` sequences as ``g`` GPUs each running
  ``b / g``; layers ``[l, l')`` cost ``sum forward + backward`` (plus the forward again with
  recomputation) at that size. Other machines keep the FLOP model.
* Micro-batch sizes between measured ones: linear interpolation between the two nearest; outside
  the measured range: proportional to ``b`` from the nearest measured size (the efficiency of the
  nearest measurement is kept). Measure the sizes the plan will use for the best figures.
* Tensor parallel over ``n`` machines: the entries measured at degree ``n``, else the degree-1
  times divided by ``n``.
* Optimiser step of ``p`` parameters on ``g`` GPUs: ``optimizer_s_per_param * p / g``.
* Memory: the model's ``activation_bytes_per_token`` becomes the profile's (the largest over the
  job's profiles, per token per layer), so stages are sized by measured activations.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field

from .. import _core
from .._checks import is_int, is_real
from .._io import atomic_write, read_json_file
from ..errors import FileFormatError, InputError, InputTypeError

__all__ = ["COMPUTE_MODELS", "PROFILE_SCHEMA_VERSION", "STATISTICS", "Profile", "ProfileEntry", "as_profiles", "attach",
           "from_doc", "load_profile"]

PROFILE_SCHEMA_VERSION = "hulk-profile/1"
STATISTICS = ("median", "mean", "min")

_TOP_KEYS = {"version", "model", "gpu", "device", "layers", "hidden", "seq_len", "dtype", "optimizer_s_per_param",
             "measurement", "entries"}
_REQUIRED = ("version", "model", "gpu", "device", "layers", "optimizer_s_per_param", "measurement", "entries")
_ENTRY_KEYS = {"micro_batch", "tensor_parallel", "forward_s", "backward_s", "activation_bytes"}
_MEASUREMENT_KEYS = {"warmup", "repeats", "statistic", "tool"}


@dataclass
class ProfileEntry:
    """One measurement: per-layer times and bytes at ``micro_batch`` sequences per GPU."""

    micro_batch: float
    forward_s: list
    backward_s: list
    activation_bytes: list
    tensor_parallel: int = 1


@dataclass
class Profile:
    """A loaded ``hulk-profile/1`` document (see the module docstring); ``source`` is the file."""

    model: str
    gpu: str
    device: str
    layers: int
    optimizer_s_per_param: float
    measurement: dict
    entries: list
    hidden: int | None = None
    seq_len: int | None = None
    dtype: str | None = None
    source: str = "<dict>"
    _core_profile: object = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        d = {"version": PROFILE_SCHEMA_VERSION, "model": self.model, "gpu": self.gpu, "device": self.device,
             "layers": self.layers}
        for key in ("hidden", "seq_len", "dtype"):
            if getattr(self, key) is not None:
                d[key] = getattr(self, key)
        d.update(optimizer_s_per_param=self.optimizer_s_per_param, measurement=dict(self.measurement),
                 entries=[{"micro_batch": e.micro_batch, "tensor_parallel": e.tensor_parallel,
                           "forward_s": list(e.forward_s), "backward_s": list(e.backward_s),
                           "activation_bytes": list(e.activation_bytes)} for e in self.entries])
        return d

    def save(self, path) -> None:
        """Writes the profile as ``hulk-profile/1`` JSON (atomically)."""
        atomic_write(path, json.dumps(self.to_dict(), indent=1) + "\n", what="profile")

    def to_core(self):
        """The C++ profile (``_core.plan.Profile``), built once."""
        if self._core_profile is None:
            entries = [(float(e.micro_batch), int(e.tensor_parallel), [float(v) for v in e.forward_s],
                        [float(v) for v in e.backward_s], [float(v) for v in e.activation_bytes])
                       for e in self.entries]
            try:
                self._core_profile = _core.plan.Profile(self.source, self.model, self.gpu, int(self.layers),
                                                        float(self.optimizer_s_per_param), entries)
            except InputError as exc:
                raise FileFormatError(self.source, None, str(exc)) from None
        return self._core_profile

    def compute_s(self, first: int, last: int, micro_batch: float, tensor_parallel: int = 1,
                  recompute: bool = False) -> float:
        """Forward + backward seconds of layers [first, last) at ``micro_batch`` sequences per GPU
        (the interpolation rules of the module docstring)."""
        return float(self.to_core().compute_s(int(first), int(last), float(micro_batch), int(tensor_parallel),
                                              bool(recompute)))

    def activation_bytes_per_token(self, seq_len: int) -> float:
        """The largest measured activation bytes per token per layer over the degree-1 entries
        at ``seq_len`` tokens per sequence (what the cost model's memory term uses)."""
        per = [sum(e.activation_bytes) / (self.layers * e.micro_batch * seq_len)
               for e in self.entries if e.tensor_parallel == 1]
        return max(per, default=0.0)


def _fail(src, fld, msg):
    raise FileFormatError(src, fld, msg)


def _real(src, fld, v, *, positive=False):
    if not is_real(v) or isinstance(v, bool) or not math.isfinite(v) or v < 0 or (positive and v == 0):
        _fail(src, fld, f"must be a finite number {'> 0' if positive else '>= 0'}, got {v!r}")
    return float(v)


def _count(src, fld, v, lo):
    if not is_int(v) or isinstance(v, bool) or v < lo:
        _fail(src, fld, f"must be an integer >= {lo}, got {v!r}")
    return int(v)


def _text(src, fld, v):
    if not isinstance(v, str) or not v.strip():
        _fail(src, fld, f"must be a non-empty string, got {v!r}")
    return v


def _entry(src, k, raw, layers) -> ProfileEntry:
    where = f"entries[{k}]"
    if not isinstance(raw, dict):
        _fail(src, where, f"must be an object, got {type(raw).__name__}")
    unknown = sorted(set(raw) - _ENTRY_KEYS)
    if unknown:
        _fail(src, f"{where}.{unknown[0]}", f"unknown key (allowed: {sorted(_ENTRY_KEYS)})")
    for key in ("micro_batch", "forward_s", "backward_s", "activation_bytes"):
        if key not in raw:
            _fail(src, f"{where}.{key}", "missing")
    lists = {}
    for key in ("forward_s", "backward_s", "activation_bytes"):
        v = raw[key]
        if not isinstance(v, list):
            _fail(src, f"{where}.{key}", f"must be a list of numbers, got {type(v).__name__}")
        if len(v) != layers:
            _fail(src, f"{where}.{key}", f"has {len(v)} values, expected one per layer ({layers})")
        lists[key] = [_real(src, f"{where}.{key}[{i}]", x) for i, x in enumerate(v)]
    return ProfileEntry(micro_batch=_real(src, f"{where}.micro_batch", raw["micro_batch"], positive=True),
                        tensor_parallel=_count(src, f"{where}.tensor_parallel", raw.get("tensor_parallel", 1), 1),
                        **lists)


def _measurement(src, raw) -> dict:
    if not isinstance(raw, dict):
        _fail(src, "measurement", f"must be an object, got {type(raw).__name__}")
    unknown = sorted(set(raw) - _MEASUREMENT_KEYS)
    if unknown:
        _fail(src, f"measurement.{unknown[0]}", f"unknown key (allowed: {sorted(_MEASUREMENT_KEYS)})")
    for key in ("warmup", "repeats", "statistic"):
        if key not in raw:
            _fail(src, f"measurement.{key}", "missing")
    out = {"warmup": _count(src, "measurement.warmup", raw["warmup"], 0),
           "repeats": _count(src, "measurement.repeats", raw["repeats"], 1)}
    if raw["statistic"] not in STATISTICS:
        _fail(src, "measurement.statistic", f"must be one of {STATISTICS}, got {raw['statistic']!r}")
    out["statistic"] = raw["statistic"]
    if "tool" in raw:
        out["tool"] = _text(src, "measurement.tool", raw["tool"])
    return out


def from_doc(doc, source: str = "<dict>") -> Profile:
    """A :class:`Profile` from a parsed ``hulk-profile/1`` document; errors name ``source``."""
    src = source
    if not isinstance(doc, dict):
        _fail(src, None, f"a profile must be a JSON object, got {type(doc).__name__}")
    if doc.get("version") != PROFILE_SCHEMA_VERSION:
        _fail(src, "version", f"must be {PROFILE_SCHEMA_VERSION!r}, got {doc.get('version')!r}")
    unknown = sorted(set(doc) - _TOP_KEYS)
    if unknown:
        _fail(src, unknown[0], f"unknown key (allowed: {sorted(_TOP_KEYS)})")
    for key in _REQUIRED:
        if key not in doc:
            _fail(src, key, "missing")
    layers = _count(src, "layers", doc["layers"], 1)
    entries = doc["entries"]
    if not isinstance(entries, list) or not entries:
        _fail(src, "entries", f"must be a non-empty list, got {entries!r}")
    parsed = [_entry(src, k, e, layers) for k, e in enumerate(entries)]
    seen = {}
    for k, e in enumerate(parsed):
        key = (e.micro_batch, e.tensor_parallel)
        if key in seen:
            _fail(src, f"entries[{k}].micro_batch", f"micro_batch {e.micro_batch:g} at tensor_parallel "
                  f"{e.tensor_parallel} is measured twice (entries[{seen[key]}] too)")
        seen[key] = k
    prof = Profile(model=_text(src, "model", doc["model"]), gpu=_text(src, "gpu", doc["gpu"]),
                   device=_text(src, "device", doc["device"]), layers=layers,
                   optimizer_s_per_param=_real(src, "optimizer_s_per_param", doc["optimizer_s_per_param"]),
                   measurement=_measurement(src, doc["measurement"]), entries=parsed,
                   hidden=_count(src, "hidden", doc["hidden"], 1) if "hidden" in doc else None,
                   seq_len=_count(src, "seq_len", doc["seq_len"], 1) if "seq_len" in doc else None,
                   dtype=_text(src, "dtype", doc["dtype"]) if "dtype" in doc else None,
                   source=src)
    prof.to_core()  # the C++ checks too, so both sides agree on what a valid profile is
    return prof


def load_profile(profile) -> Profile:
    """A :class:`Profile` from a path, a parsed dict or a Profile (returned as it is)."""
    if isinstance(profile, Profile):
        return profile
    if isinstance(profile, dict):
        return from_doc(profile, "<dict>")
    if isinstance(profile, (str, os.PathLike)):
        path = os.fsdecode(profile)
        return from_doc(read_json_file(path, "profile"), path)
    raise InputTypeError(f"profile must be a path, a dict or a hulk.plan.Profile, got {type(profile).__name__}")


def as_profiles(profile) -> list:
    """``profile`` (None, one path / dict / Profile, or a list of them) as a list of Profiles."""
    if profile is None:
        return []
    if isinstance(profile, (list, tuple)):
        return [load_profile(p) for p in profile]
    return [load_profile(profile)]


# --------------------------------------------------------------------------------------------
# Giving profiles to a plan's jobs
# --------------------------------------------------------------------------------------------

COMPUTE_MODELS = ("flop", "flop-curve")


def _gpu_name(name: str) -> str:
    """The canonical name of a GPU type of hulk/data/gpus.json, else the name as given."""
    from .cluster_spec import CPU_DEVICE, gpu_name, is_cpu_device  # (imports networkx; only needed here)
    if is_cpu_device(name):
        return CPU_DEVICE  # a CPU machine (cluster_spec rule e)
    try:
        return gpu_name(name)
    except InputError:
        return name


def attach(cluster, job_specs, profiles, compute_model: str = "flop") -> tuple:
    """``(jobs, notes)``: the jobs with their profiles attached (and the FLOP model's curve when
    ``compute_model == "flop-curve"``), and one note per job saying how its compute is costed.

    Every profile must name one of the jobs (``model``: its name or an alias), have its layers (and its hidden size and
    sequence length when it states them), and a GPU type that some machine of the cluster has;
    two profiles for the same model and GPU type are an error. Each raises FileFormatError
    naming the profile's file and the field."""
    import dataclasses

    if compute_model not in COMPUTE_MODELS:
        raise InputError(f"compute_model must be one of {COMPUTE_MODELS}, got {compute_model!r}")
    gpu, _ = cluster.gpu_types()
    canonical = {g: _gpu_name(g) for g in set(gpu) if g}  # once per GPU type, not per machine
    gpu = [canonical[g] if g else "" for g in gpu]
    types = sorted(set(g for g in gpu if g))
    by_job = {j.name: [] for j in job_specs}
    for p in profiles:
        job = next((j for j in job_specs if p.model == j.name or p.model in j.aliases), None)
        if job is None:
            _fail(p.source, "model", f"is {p.model!r}, which is not one of the jobs {list(by_job)}")
        if p.layers != job.layers:
            _fail(p.source, "layers", f"is {p.layers}, but model {job.name!r} has {job.layers} layers")
        for key in ("hidden", "seq_len"):
            if getattr(p, key) is not None and getattr(p, key) != getattr(job, key):
                _fail(p.source, key, f"is {getattr(p, key)}, but model {job.name!r} has {key} {getattr(job, key)}")
        g = _gpu_name(p.gpu)
        if g not in types:
            _fail(p.source, "gpu", f"is {p.gpu!r}, which no machine of the cluster has (its GPU types: {types})")
        twin = next((q for q in by_job[job.name] if _gpu_name(q.gpu) == g), None)
        if twin is not None:
            _fail(p.source, "gpu", f"model {job.name!r} on {g!r} is also profiled by {twin.source}")
        by_job[job.name].append(p)
    curve = compute_model == "flop-curve"
    flop = ("FLOP model, efficiency curve (csrc/plan/cost.h)" if curve
            else "FLOP model, the cluster's tflops (peak x 0.35)")
    jobs, notes = [], []
    for j in job_specs:
        own = by_job[j.name]
        if not own:
            jobs.append(dataclasses.replace(j, efficiency_curve=curve) if curve != j.efficiency_curve else j)
            notes.append(f"compute of {j.name}: {flop}")
            continue
        # The core profile carries the canonical GPU name the machines have.
        core = [dataclasses.replace(p, model=j.name, gpu=_gpu_name(p.gpu), _core_profile=None) for p in own]
        act = max(p.activation_bytes_per_token(j.seq_len) for p in own)
        changes = dict(profiles=tuple(core), efficiency_curve=curve)
        if act > 0:
            changes["activation_bytes_per_token"] = act
        jobs.append(dataclasses.replace(j, **changes))
        parts = [f"profile {p.source} on {sum(x == q.gpu for x in gpu)} {q.gpu} machine(s)" for p, q in zip(own, core)]
        rest = sum(1 for x in gpu if x not in {q.gpu for q in core})
        if rest:
            parts.append(f"{flop} on the other {rest} machine(s)")
        notes.append(f"compute of {j.name}: " + "; ".join(parts))
    return jobs, notes
