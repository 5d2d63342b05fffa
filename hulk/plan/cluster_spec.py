"""A geo-distributed cluster as the planner sees it, built from graphs, JSON or the paper's files.

A :class:`ClusterSpec` holds what the C++ planner (``csrc/plan/cluster.h``) needs, plus where
every number came from:

* ``machines``: one dict per server with keys ``name``, ``region``, ``lat``, ``lon`` (``None``
  when unknown), ``gpu`` (GPU type name from ``hulk/data/gpus.json``), ``gpus`` (count, may be
  fractional, see rule a), ``capability`` (CUDA compute capability), ``memory_gb`` (total GPU
  memory of the server, GB = 1e9 bytes) and ``tflops`` (sustained training throughput, TFLOP/s).
* ``links``: one dict per undirected link with keys ``a``, ``b`` (machine indices),
  ``latency_ms`` (the paper's "ms to send 64 bytes"), ``bandwidth_gbps`` (gigabits per second)
  and ``bandwidth_derived`` (True when rule c filled it in).
* ``missing_links``: ``"route"`` or ``"forbid"`` (rule d).
* ``notes``: one line per derivation rule applied, naming the machines or links it touched.

Derivation rules (each application is recorded in ``notes``)
-----------------------------------------------------------
a. **GPU type from capability.** The paper's data gives only the CUDA compute capability and the
   total GPU memory of a server. A capability is mapped to a representative GPU of the paper's
   list: 8.0 -> A100 80GB, 8.6 -> RTX 3090, 7.0 -> V100 32GB, 6.1 -> GTX 1080 Ti, and
   7.5 -> T4 (not in the paper's list; the nearest GPU in time). Any other capability is an
   error. The GPU count is then ``memory_gb / (that GPU's memory)``, which may be fractional:
   the paper gives only total memory, so the count is an estimate (it only scales ``tflops``;
   the planner uses ``memory_gb`` as given). A count is also derived this way when a ``gpu``
   is named without ``gpus``.
b. **Throughput.** When ``tflops`` is absent:
   ``tflops = gpus * peak * utilisation``, where ``peak`` is the GPU's peak dense fp16 tensor
   TFLOPS (the fp32 peak for GPUs without fp16 tensor cores, GTX 1080 Ti and TITAN Xp, and for
   the RTX A5000, whose tensor figure has no source in the table) and ``utilisation`` = 0.35 by
   default: an assumption, typical of the model-FLOPs utilisation reported for large-model
   training (parameter ``utilisation``).
c. **Bandwidth from latency.** When ``bandwidth_gbps`` is absent:
   ``bandwidth_gbps = clamp(BW_FIT_A * latency_ms ** -BW_FIT_K, 0.1, 10)``, a power law fitted
   by least squares in log space to the 7 measured (delay, bandwidth) pairs of DT-FM's
   "regional_us" scenario (github.com/DS3Lab/DT-FM, ``/work/shared/data/dtfm_regional_us.json``).
   A latency of 0 gives the upper clamp, 10 Gbps. Only 7 points, spanning 5-67 ms, support
   the fit: beyond that range it is an extrapolation, and the clamp bounds it.
d. **Missing links.** A pair without a link cannot talk directly (the paper: network policy).
   With ``missing_links="route"`` (default) the C++ cost model relays such a pair along the
   path of least total latency (bandwidth = the narrowest link on it); with ``"forbid"`` any
   plan that needs the pair is infeasible.
e. **CPU machines.** ``"gpu": "cpu"`` (any case) declares a machine that computes on its CPU,
   e.g. one process of ``benchmarks/bench_execution.py`` or a CPU-only ``hulk.launch`` run. It has
   no entry in ``hulk/data/gpus.json`` (a CPU has no catalogue peak), so ``tflops`` is required
   (measure it, e.g. with ``hulk profile``), ``capability`` must be absent, and ``gpus`` defaults
   to 1 (one device). A ``hulk-profile/1`` profile with ``"gpu": "cpu"`` (what ``hulk profile
   --device cpu`` writes) applies to these machines.

Validation
----------
A ``ClusterSpec`` validates itself on construction and raises ``ValueError`` naming the field,
the machine or link, and the value: empty cluster, empty or duplicate machine names, missing
region, NaN/inf anywhere, memory/tflops/gpus/bandwidth <= 0, negative latency, latitude or
longitude out of range, unknown GPU type, link indices out of range, self loops, duplicate
pairs, an unknown ``missing_links`` rule.

JSON schema (``from_json`` / ``to_json``), version ``"hulk-cluster/1"``
----------------------------------------------------------------------
::

    {
      "version": "hulk-cluster/1",            # required, exactly this string
      "missing_links": "route",               # optional: "route" (default) or "forbid"
      "utilisation": 0.35,                    # optional: for rule b (default 0.35)
      "notes": ["..."],                       # optional: carried over; new derivations appended
      "machines": [                           # required, non-empty
        {"name": "beijing-0",                 # optional (default: the index as a string); unique
         "region": "Beijing",                 # required, non-empty string
         "lat": 39.9, "lon": 116.4,           # optional (null or absent = unknown)
         "memory_gb": 152,                    # required, > 0
         "gpu": "RTX 3090", "gpus": 6.33,     # gpu (name or alias in gpus.json) and/or capability
         "capability": 8.6,                   #   are required; gpus optional (rule a)
         "tflops": 314.7,                     # optional (rule b)
         "address": "10.0.0.7"}               # optional: host name or IP, used by plan exports
      ],
      "links": [                              # optional (no links = no machine talks to another)
        {"a": 0, "b": 1,                      # machine indices or machine names
         "latency_ms": 12.0,                  # required, >= 0
         "bandwidth_gbps": 1.5,               # optional (rule c), > 0
         "bandwidth_derived": false}          # optional (default: false when bandwidth is given)
      ]
    }

Unknown keys are rejected (a typo such as ``"memory"`` for ``"memory_gb"`` is an error, not a
silently ignored field). ``to_json`` writes every field, so ``from_json(spec.to_json())``
reproduces ``spec``.

Everything but :meth:`ClusterSpec.to_core` is pure Python (standard library, numpy, networkx).
"""

from __future__ import annotations

import json
import math
import os
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files

import networkx as nx
import numpy as np

from .. import _core
from .._checks import is_int, is_real
from .._io import atomic_write, naming_the_file, parse_json, read_json_file
from .cluster import (Cluster, Machines, check_plausible, city_coordinates, explicit_locations, plausible_ranges,
                      unit_vector)
from ..errors import InputError
from .bundle import check_address

__all__ = [
    "BW_FIT_A",
    "BW_FIT_K",
    "BW_MAX_GBPS",
    "BW_MIN_GBPS",
    "CPU_DEVICE",
    "CAPABILITY_TO_GPU",
    "DEFAULT_UTILISATION",
    "SCHEMA_VERSION",
    "ClusterSpec",
    "bandwidth_from_latency",
    "from_json",
    "from_networkx",
    "from_paper_files",
    "gpu_info",
    "is_cpu_device",
    "gpu_table",
    "hulk47_spec",
]

SCHEMA_VERSION = "hulk-cluster/1"
DEFAULT_UTILISATION = 0.35

# Rule a: capability -> representative GPU (names as in hulk/data/gpus.json).
CAPABILITY_TO_GPU = {
    8.0: "A100 80GB (SXM4)",
    8.6: "GeForce RTX 3090",
    7.0: "V100 SXM2 32GB",
    6.1: "GeForce GTX 1080 Ti",
    7.5: "T4",  # not in the paper's GPU list; the nearest in time
}

# Rule c: bandwidth_gbps = BW_FIT_A * latency_ms ** -BW_FIT_K, clamped to [BW_MIN_GBPS, BW_MAX_GBPS].
# Data: DT-FM (github.com/DS3Lab/DT-FM @ cda948f0, scheduler/heuristic_evolutionary_solver/config.py,
# simulate_3_regional_geo_distributed), the 7 measured (delay ms, bandwidth Gbps) pairs:
#   same region (5, 2.0); Virginia-Oregon (67, 1.15); Virginia-California (59, 1.05);
#   Virginia-Ohio (11, 1.12); Oregon-California (12, 1.25); Oregon-Ohio (49, 1.10);
#   California-Ohio (52, 1.02).
# Fit: ordinary least squares of ln(bw) on [1, ln(delay)]: intercept 0.75232, slope -0.17389,
# so a = exp(0.75232) = 2.12193, k = 0.17389. Residuals ln(bw) - ln(fit), in the order above:
#   +0.221, +0.119, +0.006, -0.222, -0.097, +0.020, -0.045 (RMS 0.133, i.e. about +-14 %).
# The fit is weak (bandwidth barely depends on delay in this data, R^2 about 0.5), but it is the
# only public set of measured pairs we have; tests/python/test_plan_cluster_spec.py recomputes it.
# Examples: 1 ms -> 2.12 Gbps, 10 ms -> 1.42, 100 ms -> 0.95, 741 ms -> 0.67.
BW_FIT_A = 2.12192925340501
BW_FIT_K = 0.1738914412298207
BW_MIN_GBPS = 0.1
BW_MAX_GBPS = 10.0

_MACHINE_KEYS = ("name", "region", "lat", "lon", "gpu", "gpus", "capability", "memory_gb", "tflops")
_OPTIONAL_MACHINE_KEYS = ("address",)  # kept only when given: where the machine is reached (hulk.plan.export)
_LINK_KEYS = ("a", "b", "latency_ms", "bandwidth_gbps", "bandwidth_derived")
_MISSING_RULES = ("route", "forbid")


# --------------------------------------------------------------------------------------------
# GPU table
# --------------------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _gpu_doc():
    raw = (files("hulk") / "data" / "gpus.json").read_text(encoding="utf-8")
    return json.loads(raw)


def _copy(entry: dict) -> dict:
    return json.loads(json.dumps(entry))


@lru_cache(maxsize=1)
def _gpu_entries() -> dict:
    return {g["name"]: g for g in _gpu_doc()["gpus"]}


def gpu_table() -> dict:
    """The GPU table of ``hulk/data/gpus.json`` as ``{name: entry}`` (a fresh copy)."""
    return {name: _copy(g) for name, g in _gpu_entries().items()}


def _norm(name: str) -> str:
    return " ".join(str(name).lower().replace("-", " ").split())


@lru_cache(maxsize=1)
def _gpu_lookup():
    lookup = {}
    for g in _gpu_doc()["gpus"]:
        for n in [g["name"], *g.get("aliases", [])]:
            lookup[_norm(n)] = g["name"]
    return lookup


CPU_DEVICE = "cpu"  # rule e: the ``gpu`` of a machine that computes on its CPU


def is_cpu_device(name) -> bool:
    """True when a machine's ``gpu`` names a CPU machine (rule e): "cpu", any case."""
    return isinstance(name, str) and _norm(name) == CPU_DEVICE


def gpu_name(name: str) -> str:
    """The table's name of a GPU given by its name or an alias (case-insensitive, '-' = ' ').

    Raises ``InputError`` naming the GPU and listing the known names.
    """
    if not isinstance(name, str):
        raise InputError(f"gpu must be a string, got {name!r}")
    canonical = _gpu_lookup().get(_norm(name))
    if canonical is None:
        known = ", ".join(repr(g["name"]) for g in _gpu_doc()["gpus"])
        raise InputError(f"unknown gpu {name!r}; known GPUs: {known} (aliases: see hulk/data/gpus.json)")
    return canonical


def gpu_info(name: str) -> dict:
    """The table entry of a GPU (a fresh copy), by its name or an alias (case-insensitive,
    '-' = ' '). Raises ``InputError`` naming the GPU and listing the known names.
    """
    # One entry is copied, not the table: planning looks up every machine's GPU, and copying
    # the whole table each time took 0.8 s at 5,000 machines, eight times a 0.1 s plan.
    return _copy(_gpu_entries()[gpu_name(name)])


# --------------------------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------------------------

def bandwidth_from_latency(latency_ms):
    """Rule c: bandwidth (Gbps) from latency (ms); scalar or array in, same shape out."""
    lat = np.asarray(latency_ms, dtype=np.float64)
    if np.any(~np.isfinite(lat)) or np.any(lat < 0):
        raise InputError(f"latency_ms must be finite and >= 0, got {latency_ms!r}")
    with np.errstate(divide="ignore"):
        bw = np.where(lat > 0, BW_FIT_A * np.power(np.where(lat > 0, lat, 1.0), -BW_FIT_K), np.inf)
    bw = np.clip(bw, BW_MIN_GBPS, BW_MAX_GBPS)
    return float(bw) if bw.ndim == 0 else bw


def _fmt_idx(idx) -> str:
    """'0-4, 7, 9-10' from a sorted list of ints."""
    idx = sorted(idx)
    out, start, prev = [], None, None
    for i in idx:
        if start is None:
            start = prev = i
        elif i == prev + 1:
            prev = i
        else:
            out.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = i
    if start is not None:
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(out)


class _Notes:
    """Collects derivation notes, grouping the machines/links each rule touched."""

    def __init__(self, existing=()):
        self.lines = list(existing)
        self.groups = {}  # text -> (kind, [indices]) in insertion order

    def add(self, text, kind=None, index=None):
        kind_, idx = self.groups.setdefault(text, (kind, []))
        if index is not None:
            idx.append(index)

    def result(self):
        out = list(self.lines)
        for text, (kind, idx) in self.groups.items():
            line = f"{text} ({kind} {_fmt_idx(idx)})" if idx else text
            if line not in out:
                out.append(line)
        return out


def _g(x) -> str:
    return f"{x:g}"


def check_printable(text: str, where: str) -> None:
    """Names are printed in tables and messages: control characters (terminal escape codes,
    newlines) are rejected rather than printed raw."""
    bad = next((c for c in text if unicodedata.category(c) in ("Cc", "Cf")), None)
    if bad is not None:
        raise InputError(f"{where} = {text!r} contains the control character {bad!r}; names must be printable")


def _rule_a(gpu, cap, gpus, mem: float, where: str, i: int, notes: _Notes) -> tuple:
    """Rule a for one machine: ``(GPU table entry, capability, GPU count)`` from its ``gpu`` name
    and/or ``capability`` (and ``gpus``, derived from memory when absent). A CPU machine
    (rule e) gets ``({"name": "cpu"}, None, gpus or 1)``."""
    if is_cpu_device(gpu):
        if cap is not None:
            raise InputError(f"{where}: capability {_g(cap)} is given, but gpu is {gpu!r} (a CPU machine, rule e); "
                             f"a CUDA compute capability applies only to GPUs")
        return {"name": CPU_DEVICE}, None, 1.0 if gpus is None else gpus
    if gpu is not None:
        try:
            info = gpu_info(gpu)
        except ValueError as e:
            raise InputError(f"{where}: {e}") from None
        if cap is not None and abs(float(cap) - info["compute_capability"]) > 1e-9:
            raise InputError(f"{where}: capability {_g(cap)} does not match gpu {info['name']!r} "
                             f"(compute capability {_g(info['compute_capability'])})")
        cap = info["compute_capability"] if cap is None else float(cap)
        if gpus is None:
            gpus = mem / info["memory_gb"]
            notes.add(f"rule a: {info['name']}: gpus = memory_gb / {_g(info['memory_gb'])} GB "
                      f"(may be fractional)", "machines", i)
    elif cap is not None:
        cap = float(cap)
        key = round(cap, 3)
        if key not in CAPABILITY_TO_GPU:
            known = ", ".join(_g(c) for c in sorted(CAPABILITY_TO_GPU))
            raise InputError(f"{where}: capability {cap!r} has no representative GPU "
                             f"(known capabilities: {known}); give 'gpu' explicitly")
        info = gpu_info(CAPABILITY_TO_GPU[key])
        extra = " (not in the paper's GPU list; nearest in time)" if key == 7.5 else ""
        notes.add(f"rule a: capability {_g(cap)} -> {info['name']} (representative){extra}", "machines", i)
        if gpus is None:
            gpus = mem / info["memory_gb"]
            notes.add(f"rule a: {info['name']}: {_g(round(gpus, 4))} GPUs from {_g(mem)} GB "
                      f"(memory_gb / {_g(info['memory_gb'])} GB; may be fractional: the paper gives only "
                      f"total memory)", "machines", i)
    else:
        raise InputError(f"{where}: needs 'gpu' (a GPU type name) or 'capability' (CUDA compute capability)")
    return info, cap, gpus


def _resolve_machine(raw: dict, i: int, utilisation: float, notes: _Notes) -> dict:
    """Apply rules a and b to one machine's raw attributes; return the machine dict."""
    where = f"machine {i}"
    if raw.get("name") not in (None, ""):
        where += f" ({raw['name']!r})"

    region = raw.get("region")
    if not isinstance(region, str) or not region.strip():
        raise InputError(f"{where}: region is required and must be a non-empty string, got {region!r}")
    check_printable(region, f"{where}: region")
    name = raw.get("name")
    if name not in (None, ""):
        if not isinstance(name, str):
            raise InputError(f"{where}: name must be a string, got {type(name).__name__} {name!r}")
        check_printable(name, f"{where}: name")
    mem = raw.get("memory_gb")
    if mem is None:
        raise InputError(f"{where}: memory_gb is required")
    if not is_real(mem) or not math.isfinite(mem) or mem <= 0:
        raise InputError(f"{where}: memory_gb must be finite and > 0, got {mem!r}")
    mem = float(mem)

    cap = raw.get("capability")
    if cap is not None and (not is_real(cap) or not math.isfinite(cap) or cap <= 0):
        raise InputError(f"{where}: capability must be finite and > 0, got {cap!r}")
    gpu = raw.get("gpu")
    gpus = raw.get("gpus")
    if gpus is not None and (not is_real(gpus) or not math.isfinite(gpus) or gpus <= 0):
        raise InputError(f"{where}: gpus must be finite and > 0, got {gpus!r}")

    info, cap, gpus = _rule_a(gpu, cap, gpus, mem, where, i, notes)
    gpus = float(gpus)

    tflops = raw.get("tflops")
    if tflops is None and info["name"] == CPU_DEVICE:
        raise InputError(f"{where}: tflops is required for a CPU machine (gpu {gpu!r}, rule e): a CPU has no "
                         f"peak in hulk/data/gpus.json to derive it from; measure it (hulk profile)")
    if tflops is None:
        tflops = gpus * info["training_peak_tflops"] * utilisation
        basis = ("peak dense fp16 tensor" if info["training_peak_basis"] == "fp16_tensor_tflops_dense"
                 else "peak fp32, no fp16 tensor figure")
        notes.add(f"rule b: tflops = gpus x {_g(info['training_peak_tflops'])} TFLOPS ({info['name']} {basis}) "
                  f"x utilisation {_g(utilisation)}", "machines", i)
    elif not is_real(tflops) or not math.isfinite(tflops) or tflops <= 0:
        raise InputError(f"{where}: tflops must be finite and > 0, got {tflops!r}")

    out = {
        "name": raw["name"] if raw.get("name") not in (None, "") else str(i),
        "region": region,
        "lat": None if raw.get("lat") is None else raw["lat"],
        "lon": None if raw.get("lon") is None else raw["lon"],
        "gpu": info["name"],
        "gpus": gpus,
        "capability": cap,
        "memory_gb": mem,
        "tflops": float(tflops),
    }
    if raw.get("address") is not None:
        out["address"] = check_address(raw["address"], where)
    return out


def _resolve_links(raw_links: list, notes: _Notes, first_index: int = 0) -> list:
    """_resolve_link for many links, with rule c computed once over all derived bandwidths
    (one numpy call instead of one per link: a full mesh has a million links)."""
    rule_c = _rule_c_note()
    links = [_resolve_link(l, first_index + j, notes, derive=False, rule_c=rule_c) for j, l in enumerate(raw_links)]
    todo = [k for k, l in enumerate(links) if l["bandwidth_gbps"] is None]
    if todo:
        bw = bandwidth_from_latency(np.array([links[k]["latency_ms"] for k in todo], dtype=np.float64))
        for k, v in zip(todo, np.atleast_1d(bw).tolist()):
            links[k]["bandwidth_gbps"] = v
    return links


def _rule_c_note() -> str:
    return (f"rule c: bandwidth_gbps = clamp({BW_FIT_A:.5f} x latency_ms^-{BW_FIT_K:.5f}, "
            f"{_g(BW_MIN_GBPS)}, {_g(BW_MAX_GBPS)}) (power law fitted to DT-FM regional_us measured pairs)")


def _resolve_link(raw: dict, j: int, notes: _Notes, derive: bool = True, rule_c: str | None = None) -> dict:
    lat = raw.get("latency_ms")
    if lat is None or not is_real(lat) or not math.isfinite(lat) or lat < 0:
        where = f"link {j} ({raw.get('a')!r}-{raw.get('b')!r})"
        if lat is None:
            raise InputError(f"{where}: latency_ms is required")
        raise InputError(f"{where}: latency_ms must be finite and >= 0, got {lat!r}")
    bw = raw.get("bandwidth_gbps")
    derived = raw.get("bandwidth_derived")
    if bw is None:
        bw = bandwidth_from_latency(float(lat)) if derive else None  # None: filled in by _resolve_links
        derived = True
        notes.add(rule_c or _rule_c_note(), "links", j)
    elif derived is None:
        derived = False
    return {"a": raw.get("a"), "b": raw.get("b"), "latency_ms": float(lat),
            "bandwidth_gbps": float(bw) if is_real(bw) else bw, "bandwidth_derived": derived}


def _missing_note(n: int, links: list, rule: str) -> list:
    pairs = n * (n - 1) // 2
    missing = pairs - len(links)
    out = []
    if missing > 0:
        if rule == "route":
            out.append(f"rule d: {missing} of {pairs} machine pairs have no direct link; missing_links='route': "
                       f"the cost model relays them along the lowest-latency path (bandwidth = narrowest link)")
        else:
            out.append(f"rule d: {missing} of {pairs} machine pairs have no direct link; missing_links='forbid': "
                       f"plans that need such a pair are infeasible")
    if missing == 0:  # every pair linked (links are validated unique pairs): one component
        return out
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from((l["a"], l["b"]) for l in links)
    k = nx.number_connected_components(G)
    if k > 1:
        out.append(f"the link graph has {k} connected components: machines in different components "
                   f"cannot communicate even when routed")
    return out


def _is_pair_note(s: str) -> bool:
    return s.startswith("rule d:") or s.startswith("the link graph has")


# --------------------------------------------------------------------------------------------
# ClusterSpec
# --------------------------------------------------------------------------------------------

@dataclass
class ClusterSpec(Cluster):
    """Machines, links, missing-link rule and derivation notes of a cluster. See the module docstring."""

    machines: list = field(default_factory=list)
    links: list = field(default_factory=list)
    missing_links: str = "route"
    notes: list = field(default_factory=list)

    def __post_init__(self):
        self.validate()

    # -- validation --------------------------------------------------------------------------
    def validate(self) -> None:
        """Check every field; raise ``ValueError`` naming the field, machine/link and value."""
        if self.missing_links not in _MISSING_RULES:
            raise InputError(f"missing_links must be one of {_MISSING_RULES}, got {self.missing_links!r}")
        if not isinstance(self.machines, list) or not self.machines:
            raise InputError("empty cluster: machines must be a non-empty list")
        if not isinstance(self.notes, list) or not all(isinstance(s, str) for s in self.notes):
            raise InputError("notes must be a list of strings")
        self._validate_machines()
        self._validate_links()

    def _validate_machines(self) -> None:
        names = {}
        for i, m in enumerate(self.machines):
            if not isinstance(m, dict):
                raise InputError(f"machine {i}: expected a dict, got {type(m).__name__}")
            extra = set(m) - set(_MACHINE_KEYS) - set(_OPTIONAL_MACHINE_KEYS)
            missing = [k for k in _MACHINE_KEYS if k not in m]
            if extra or missing:
                raise InputError(f"machine {i}: keys must be {list(_MACHINE_KEYS)}; "
                                 f"unknown {sorted(extra)}, missing {missing}")
            name = m["name"]
            where = f"machine {i} ({name!r})"
            if not isinstance(name, str) or not name:
                raise InputError(f"machine {i}: name must be a non-empty string, got {name!r}")
            if name in names:
                raise InputError(f"{where}: duplicate machine name (also machine {names[name]})")
            names[name] = i
            if not isinstance(m["region"], str) or not m["region"].strip():
                raise InputError(f"{where}: region must be a non-empty string, got {m['region']!r}")
            for key, lo, hi in (("lat", -90, 90), ("lon", -180, 180)):
                v = m[key]
                if v is not None and (not is_real(v) or not math.isfinite(v) or not lo <= v <= hi):
                    raise InputError(f"{where}: {key} must be None or a number in [{lo}, {hi}], got {v!r}")
            for key in ("memory_gb", "tflops", "gpus", "capability"):
                v = m[key]
                if key in ("gpus", "capability") and v is None:
                    continue
                if not is_real(v) or not math.isfinite(v) or v <= 0:
                    raise InputError(f"{where}: {key} must be finite and > 0, got {v!r}")
                if key != "capability":
                    check_plausible(key, v, where)
            if "address" in m:
                check_address(m["address"], where)
            if m["gpu"] is not None and not is_cpu_device(m["gpu"]):
                try:
                    gpu_name(m["gpu"])
                except ValueError as e:
                    raise InputError(f"{where}: {e}") from None

    def _validate_links(self) -> None:
        n = len(self.machines)
        seen = {}
        link_keys = set(_LINK_KEYS)
        isfinite = math.isfinite
        ranges = plausible_ranges()
        (lat_lo, lat_hi), (bw_lo, bw_hi) = [(ranges[k]["lo"], ranges[k]["hi"]) for k in ("latency_ms", "bandwidth_gbps")]
        for j, l in enumerate(self.links):
            if type(l) is not dict and not isinstance(l, dict):
                raise InputError(f"link {j}: expected a dict, got {type(l).__name__}")
            if l.keys() != link_keys:
                extra = set(l) - link_keys
                missing = [k for k in _LINK_KEYS if k not in l]
                raise InputError(f"link {j}: keys must be {list(_LINK_KEYS)}; unknown {sorted(extra)}, missing {missing}")
            a, b = l["a"], l["b"]
            if not (type(a) is int and type(b) is int and 0 <= a < n and 0 <= b < n):  # fast path first
                where = f"link {j} ({a!r}-{b!r})"
                for end in (a, b):
                    if not is_int(end) or not 0 <= end < n:
                        raise InputError(f"{where}: unknown machine index {end!r} (the cluster has machines "
                                         f"0..{n - 1})")
            if a == b:
                raise InputError(f"link {j} ({a!r}-{b!r}): self loop on machine {a}")
            pair = (a, b) if a < b else (b, a)
            if pair in seen:
                raise InputError(f"link {j} ({a!r}-{b!r}): duplicate link between machines {pair[0]} and {pair[1]} "
                                 f"(also link {seen[pair]})")
            seen[pair] = j
            lat, bw = l["latency_ms"], l["bandwidth_gbps"]
            if not is_real(lat) or not isfinite(lat) or lat < 0:
                raise InputError(f"link {j} ({a!r}-{b!r}): latency_ms must be finite and >= 0, got {lat!r}")
            if not is_real(bw) or not isfinite(bw) or bw <= 0:
                raise InputError(f"link {j} ({a!r}-{b!r}): bandwidth_gbps must be finite and > 0, got {bw!r}")
            if not ((lat_lo <= lat <= lat_hi or lat == 0) and bw_lo <= bw <= bw_hi):  # fast path first
                check_plausible("latency_ms", lat, f"link {j} ({a!r}-{b!r})")
                check_plausible("bandwidth_gbps", bw, f"link {j} ({a!r}-{b!r})")
            if type(l["bandwidth_derived"]) is not bool:
                raise InputError(f"link {j} ({a!r}-{b!r}): bandwidth_derived must be a bool, "
                                 f"got {l['bandwidth_derived']!r}")

    # -- views -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.machines)

    @property
    def total_memory_gb(self) -> float:
        return float(sum(m["memory_gb"] for m in self.machines))

    @property
    def total_tflops(self) -> float:
        return float(sum(m["tflops"] for m in self.machines))

    def without(self, i: int) -> "ClusterSpec":
        """A copy without machine ``i`` and its links; machine indices above ``i`` shift down by one
        (as ``hulk::plan::Cluster::without``). A note records the removal; the rule d notes are
        recomputed, earlier notes keep the indices of the cluster they were made for."""
        n = len(self.machines)
        if not is_int(i) or not 0 <= i < n:
            raise InputError(f"without: machine must be an index in [0, {n}), got {i!r}")
        if n == 1:
            raise InputError("without: removing the only machine would leave an empty cluster")
        i = int(i)
        machines = [dict(m) for k, m in enumerate(self.machines) if k != i]
        links, dropped = [], 0
        for l in self.links:
            if i in (l["a"], l["b"]):
                dropped += 1
                continue
            links.append({**l, "a": l["a"] - (l["a"] > i), "b": l["b"] - (l["b"] > i)})
        notes = [s for s in self.notes if not _is_pair_note(s)]
        notes.append(f"without: removed machine {i} ({self.machines[i]['name']!r}) and its {dropped} links; "
                     f"indices above {i} shifted down by one (earlier notes use the old indices)")
        notes += _missing_note(len(machines), links, self.missing_links)
        return ClusterSpec(machines=machines, links=links, missing_links=self.missing_links, notes=notes)

    def with_machine(self, machine: dict, links=(), *, utilisation: float = DEFAULT_UTILISATION) -> "ClusterSpec":
        """A copy with one more machine (index ``len(self)``) and its links.

        ``machine`` has the node attributes of :func:`from_networkx` (region, memory_gb, gpu/gpus or
        capability, optional tflops, lat, lon, name; default name: its index). Each link is a dict
        with ``to`` (an existing machine's index or name), ``latency_ms`` and optionally
        ``bandwidth_gbps``. Rules a-c fill in what is absent and are recorded in ``notes``.
        """
        if not isinstance(machine, dict):
            raise InputError(f"with_machine: machine must be a dict, got {type(machine).__name__}")
        utilisation = _check_utilisation(utilisation)
        n = len(self.machines)
        extra = set(machine) - set(_MACHINE_KEYS)
        if extra:
            raise InputError(f"with_machine: unknown machine keys {sorted(extra)}; allowed: {list(_MACHINE_KEYS)}")
        raw = {k: machine.get(k) for k in _MACHINE_KEYS}
        if raw["name"] is None:
            raw["name"] = str(n)
        col = _Notes()
        new = _resolve_machine(raw, n, utilisation, col)
        by_name = {m["name"]: k for k, m in enumerate(self.machines)}
        new_links = []
        for j, l in enumerate(links):
            if not isinstance(l, dict):
                raise InputError(f"with_machine: link {j} must be a dict, got {l!r}")
            extra = set(l) - {"to", "latency_ms", "bandwidth_gbps", "bandwidth_derived"}
            if extra or "to" not in l:
                raise InputError(f"with_machine: link {j}: keys are 'to', 'latency_ms', optional 'bandwidth_gbps'; "
                                 f"got {sorted(l)}")
            to = by_name.get(l["to"], l["to"]) if isinstance(l["to"], str) else l["to"]
            if isinstance(to, str):
                raise InputError(f"with_machine: link {j}: 'to' = {to!r} is not a machine name")
            new_links.append(_resolve_link({"a": to, "b": n, "latency_ms": l.get("latency_ms"),
                                            "bandwidth_gbps": l.get("bandwidth_gbps"),
                                            "bandwidth_derived": l.get("bandwidth_derived")},
                                           len(self.links) + j, col))
        machines = [dict(m) for m in self.machines] + [new]
        all_links = [dict(l) for l in self.links] + new_links
        notes = [s for s in self.notes if not _is_pair_note(s)]
        notes.append(f"with_machine: added machine {n} ({new['name']!r}) with {len(new_links)} links")
        notes += [s for s in col.result() if s not in notes]
        notes += _missing_note(len(machines), all_links, self.missing_links)
        return ClusterSpec(machines=machines, links=all_links, missing_links=self.missing_links, notes=notes)

    def machine_table(self) -> Machines:
        """The machines as arrays; regions are numbered by first appearance of their names, a
        machine's position is its own lat/lon, else its region's city (cities.json), else zeros."""
        ms = self.machines
        city = city_coordinates()
        pos = np.zeros((len(ms), 3))
        for i, m in enumerate(ms):
            where = (m["lat"], m["lon"]) if m["lat"] is not None and m["lon"] is not None else city.get(m["region"])
            if where is not None:
                pos[i] = unit_vector(np.array([where[0]]), np.array([where[1]]))[0]
        names = [m["region"] for m in ms]
        index = {r: i for i, r in enumerate(dict.fromkeys(names))}
        return Machines(names=[m["name"] for m in ms], region=np.array([index[r] for r in names], dtype=np.int64),
                        region_names=list(index), memory_gb=np.array([m["memory_gb"] for m in ms], np.float64),
                        tflops=np.array([m["tflops"] for m in ms], np.float64),
                        gpus=np.array([m["gpus"] or 0 for m in ms], np.float64), pos=pos, access_ms=np.zeros(len(ms)))

    def _link_arrays(self, links) -> tuple:
        return (np.array([l["a"] for l in links], np.int64), np.array([l["b"] for l in links], np.int64),
                np.array([l["latency_ms"] for l in links], np.float64),
                np.array([l["bandwidth_gbps"] for l in links], np.float64))

    def gnn_links(self, k_local: int = 8, k_remote: int = 8, seed: int = 0) -> tuple:
        """Every link of the cluster (an explicit cluster's GNN sees its own links)."""
        return self._link_arrays(self.links)

    def links_of(self, i: int) -> tuple:
        """The links of machine ``i``, in the order of ``links``."""
        return self._link_arrays([l for l in self.links if i in (l["a"], l["b"])])

    def gpu_types(self) -> tuple:
        return ([m["gpu"] or "" for m in self.machines],
                [float(m["gpus"]) if m["gpus"] else 1.0 for m in self.machines])

    def _make_core(self):
        m, links = self.machines, self.links
        gpu, gpus = self.gpu_types()
        return _core.plan.PlanCluster([x["name"] for x in m], [x["region"] for x in m],
                                      [float(x["memory_gb"]) for x in m], [float(x["tflops"]) for x in m],
                                      [int(l["a"]) for l in links], [int(l["b"]) for l in links],
                                      [float(l["latency_ms"]) for l in links], [float(l["bandwidth_gbps"]) for l in links],
                                      self.missing_links, gpu=gpu, gpus=gpus)

    def locations(self) -> tuple:
        """Region names, latitude and longitude per machine: its own ``lat``/``lon``, else its
        region's city from ``hulk/data/cities.json`` when the name matches, else NaN."""
        return explicit_locations(self.machines)

    def derivation_notes(self) -> list[str]:
        return list(self.notes)

    def to_networkx(self) -> nx.Graph:
        """Undirected graph: nodes 0..N-1 with every machine key as an attribute (``lat``/``lon``
        only when known), edges with ``latency_ms``, ``bandwidth_gbps``, ``bandwidth_derived``;
        graph attributes ``missing_links`` and ``notes``. ``from_networkx`` of it gives back an
        equal spec."""
        G = nx.Graph(missing_links=self.missing_links, notes=list(self.notes))
        for i, m in enumerate(self.machines):
            G.add_node(i, **{k: v for k, v in m.items() if v is not None})
        for l in self.links:
            G.add_edge(l["a"], l["b"], latency_ms=l["latency_ms"], bandwidth_gbps=l["bandwidth_gbps"],
                       bandwidth_derived=l["bandwidth_derived"])
        return G

    def to_dict(self) -> dict:
        return {
            "version": SCHEMA_VERSION,
            "missing_links": self.missing_links,
            "notes": list(self.notes),
            "machines": [dict(m) for m in self.machines],
            "links": [dict(l) for l in self.links],
        }

    def to_json(self, path=None) -> str:
        """The spec as JSON text (schema in the module docstring); also written to ``path`` if given."""
        text = json.dumps(self.to_dict(), indent=1, allow_nan=False) + "\n"
        if path is not None:
            atomic_write(path, text, what="cluster JSON")
        return text

    def summary(self) -> str:
        """A few human-readable lines: sizes, regions, GPUs, memory, throughput, links, rules."""
        n = len(self.machines)
        regions = {}
        for m in self.machines:
            regions[m["region"]] = regions.get(m["region"], 0) + 1
        gpus = {}
        for m in self.machines:
            gpus[m["gpu"]] = gpus.get(m["gpu"], 0.0) + (m["gpus"] or 0.0)
        lat = [l["latency_ms"] for l in self.links]
        derived = sum(l["bandwidth_derived"] for l in self.links)
        lines = [
            f"ClusterSpec: {n} machines in {len(regions)} regions, {len(self.links)} links "
            f"({derived} with derived bandwidth), missing_links={self.missing_links!r}",
            "regions: " + ", ".join(f"{r} {c}" for r, c in regions.items()),
            "GPUs: " + ", ".join(f"{g} x{c:.4g}" for g, c in gpus.items()),
            f"memory: {self.total_memory_gb:g} GB total; throughput: {self.total_tflops:.1f} TFLOP/s sustained",
        ]
        if lat:
            bw = [l["bandwidth_gbps"] for l in self.links]
            lines.append(f"latency {min(lat):g}-{max(lat):g} ms; bandwidth {min(bw):.3g}-{max(bw):.3g} Gbps")
        lines.append(f"{n * (n - 1) // 2 - len(self.links)} of {n * (n - 1) // 2} pairs without a direct link")
        lines += [f"note: {s}" for s in self.notes]
        return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Loaders
# --------------------------------------------------------------------------------------------

def _check_utilisation(u):
    if not is_real(u) or not math.isfinite(u) or not 0 < u <= 1:
        raise InputError(f"utilisation must be in (0, 1], got {u!r}")
    return float(u)


def _build(raw_machines, raw_links, missing_links, utilisation, notes=()):
    """Apply the rules to raw machine/link dicts (links with integer indices) and validate."""
    utilisation = _check_utilisation(utilisation)
    if missing_links not in _MISSING_RULES:
        raise InputError(f"missing_links must be one of {_MISSING_RULES}, got {missing_links!r}")
    if not raw_machines:
        raise InputError("empty cluster: no machines")
    col = _Notes(notes)
    machines = [_resolve_machine(m, i, utilisation, col) for i, m in enumerate(raw_machines)]
    links = _resolve_links(raw_links, col)
    spec = ClusterSpec(machines=machines, links=links, missing_links=missing_links, notes=[])
    out = col.result()
    for s in _missing_note(len(machines), links, missing_links):
        if s not in out:
            out.append(s)
    spec.notes = out
    return spec


def from_networkx(G: nx.Graph, *, missing_links: str | None = None, utilisation: float = DEFAULT_UTILISATION,
                  notes=()) -> ClusterSpec:
    """Build a spec from an undirected networkx graph.

    Node attributes: ``region`` and ``memory_gb`` (required); ``gpu`` (type name or alias from
    ``hulk/data/gpus.json``) with optional ``gpus``, or ``capability``; optional ``tflops``,
    ``lat``, ``lon``, ``name`` (default: ``str(node)``). Edge attributes: ``latency_ms``
    (required), optional ``bandwidth_gbps`` and ``bandwidth_derived``. Other attributes are
    ignored. Machines are numbered in the graph's node order. ``missing_links`` defaults to
    ``G.graph["missing_links"]`` when present, else ``"route"``; ``G.graph["notes"]`` is carried
    over. Rules a-d of the module docstring fill in what is absent.
    """
    if not isinstance(G, nx.Graph):
        raise InputError(f"expected a networkx.Graph, got {type(G).__name__}")
    if G.is_directed() or G.is_multigraph():
        raise InputError("expected an undirected simple networkx.Graph (links are undirected; "
                         "convert with nx.Graph(G) after checking that both directions agree)")
    if G.number_of_nodes() == 0:
        raise InputError("empty cluster: the graph has no nodes")
    nodes = list(G.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    raw_machines = []
    for v in nodes:
        attrs = G.nodes[v]
        raw = {k: attrs.get(k) for k in _MACHINE_KEYS}
        if raw["name"] is None:
            raw["name"] = str(v)
        raw_machines.append(raw)
    raw_links = []
    for j, (u, v, attrs) in enumerate(G.edges(data=True)):
        if u == v:
            raise InputError(f"link {j} ({u!r}-{v!r}): self loop on node {u!r}")
        raw_links.append({"a": index[u], "b": index[v], "latency_ms": attrs.get("latency_ms"),
                          "bandwidth_gbps": attrs.get("bandwidth_gbps"),
                          "bandwidth_derived": attrs.get("bandwidth_derived")})
    if missing_links is None:
        missing_links = G.graph.get("missing_links", "route")
    notes = list(notes) or list(G.graph.get("notes", []))
    return _build(raw_machines, raw_links, missing_links, utilisation, notes)


def from_json(path_or_dict, *, utilisation: float | None = None) -> ClusterSpec:
    """Build a spec from a JSON file path, JSON text, or an already parsed dict (schema above)."""
    if isinstance(path_or_dict, dict):
        doc = path_or_dict
    elif isinstance(path_or_dict, (str, bytes, os.PathLike)):
        s = os.fsdecode(path_or_dict) if not isinstance(path_or_dict, str) else path_or_dict
        # JSON text only when it is not the name of a file: a path may begin with "{" too.
        if isinstance(path_or_dict, str) and s.lstrip().startswith("{") and not os.path.exists(s):
            doc = parse_json(s, "cluster JSON text")
        else:
            doc = read_json_file(s, "cluster file")
            with naming_the_file(s):
                return _from_doc(doc, utilisation)
    else:
        raise InputError(f"from_json expects a path, JSON text or a dict, got {type(path_or_dict).__name__}")
    return _from_doc(doc, utilisation)


def _from_doc(doc, utilisation) -> ClusterSpec:
    """A spec from a parsed hulk-cluster/1 document."""
    if not isinstance(doc, dict):
        raise InputError("cluster JSON: the top level must be an object")
    allowed = {"version", "missing_links", "utilisation", "notes", "machines", "links"}
    if set(doc) - allowed:
        raise InputError(f"cluster JSON: unknown top-level keys {sorted(set(doc) - allowed)}; allowed: {sorted(allowed)}")
    if doc.get("version") != SCHEMA_VERSION:
        raise InputError(f"cluster JSON: version must be {SCHEMA_VERSION!r}, got {doc.get('version')!r}")
    machines = doc.get("machines")
    if not isinstance(machines, list) or not machines:
        raise InputError("empty cluster: cluster JSON 'machines' must be a non-empty list")
    links = doc.get("links", [])
    if not isinstance(links, list):
        raise InputError("cluster JSON: 'links' must be a list")
    raw_machines = []
    for i, m in enumerate(machines):
        if not isinstance(m, dict):
            raise InputError(f"machine {i}: expected an object, got {m!r}")
        allowed = _MACHINE_KEYS + _OPTIONAL_MACHINE_KEYS
        extra = set(m) - set(allowed)
        if extra:
            raise InputError(f"machine {i}: unknown keys {sorted(extra)}; allowed: {list(allowed)}")
        raw = {k: m.get(k) for k in allowed}
        if raw["name"] is None:
            raw["name"] = str(i)
        elif not isinstance(raw["name"], str):  # before it is looked up by name (a list is unhashable)
            raise InputError(f"machine {i}: name must be a string, got {type(raw['name']).__name__} {raw['name']!r}")
        raw_machines.append(raw)
    by_name = {}
    for i, m in enumerate(raw_machines):
        by_name.setdefault(m["name"], i)
    raw_links = []
    for j, l in enumerate(links):
        if not isinstance(l, dict):
            raise InputError(f"link {j}: expected an object, got {l!r}")
        extra = set(l) - set(_LINK_KEYS)
        if extra:
            raise InputError(f"link {j}: unknown keys {sorted(extra)}; allowed: {list(_LINK_KEYS)}")
        raw = {k: l.get(k) for k in _LINK_KEYS}
        for end in ("a", "b"):
            if isinstance(raw[end], str):
                if raw[end] not in by_name:
                    raise InputError(f"link {j}: {end} = {raw[end]!r} is not a machine name")
                raw[end] = by_name[raw[end]]
        raw_links.append(raw)
    if utilisation is None:
        utilisation = doc.get("utilisation", DEFAULT_UTILISATION)
    notes = doc.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(s, str) for s in notes):
        raise InputError("cluster JSON: 'notes' must be a list of strings")
    return _build(raw_machines, raw_links, doc.get("missing_links", "route"), utilisation, notes)


def _spec_from_paper_graph(G: nx.Graph, utilisation, missing_links, source: str) -> ClusterSpec:
    H = nx.Graph()
    for v, a in G.nodes(data=True):
        H.add_node(v, name=f"{a['region']}-{v}", region=a["region"], capability=a["capability"],
                   memory_gb=a["memory_gb"])
    H.add_edges_from(G.edges(data=True))
    notes = [f"source: {source}"]
    notes += [f"cleaning: {s}" for s in G.graph.get("cleaning", [])]
    return from_networkx(H, missing_links=missing_links, utilisation=utilisation, notes=notes)


def from_paper_files(node_feature_csv, edge_txt, *, clean: str = "warn", utilisation: float = DEFAULT_UTILISATION,
                     missing_links: str = "route") -> ClusterSpec:
    """Build a spec from files in the Hulk paper's format (``node_feature.csv``: header
    ``node,City,Capability,Memory``, ids 0..N-1 in order; ``edge.txt``: ``src dst latency_ms``
    per line, undirected).

    The raw files are cleaned by the rules of :func:`hulk.datasets.hulk47` (strip region names,
    drop self loops, keep the first of duplicate pairs), controlled by ``clean`` exactly as
    there ("warn": apply and warn with ``DataCleaningWarning``; "quiet": apply; "error": raise).
    Every fix applied is listed in ``notes``. Machines are named ``"<region>-<id>"``.
    """
    from ..datasets import read_paper_files
    G = read_paper_files(node_feature_csv, edge_txt, clean, stacklevel=3)
    return _spec_from_paper_graph(G, utilisation, missing_links,
                                  f"paper-format files {node_feature_csv}, {edge_txt}")


def hulk47_spec(*, clean: str = "quiet", utilisation: float = DEFAULT_UTILISATION,
                missing_links: str = "route") -> ClusterSpec:
    """The Hulk paper's 47-server cluster (``hulk.datasets.hulk47``) as a spec: 47 machines,
    613 links, every bandwidth derived by rule c, every GPU type by rule a. The data cleaning
    of ``hulk47`` (default ``clean="quiet"``: the fixes are listed in ``notes`` rather than
    warned about) is recorded in ``notes``."""
    from ..datasets import hulk47

    G = hulk47(clean=clean)
    return _spec_from_paper_graph(G, utilisation, missing_links, G.graph.get("source", "hulk47"))
