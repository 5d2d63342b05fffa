"""The one cluster interface every planner, rule, encoding and report takes.

Two kinds of cluster implement :class:`Cluster`:

* :class:`hulk.plan.ClusterSpec` (``cluster_spec.py``): explicit machines and links, from a
  networkx graph, a ``hulk-cluster/1`` JSON file or the paper's files;
* :class:`hulk.plan.RegionalCluster` (``generate.py``): machines in regions whose network
  follows from the regions (generated, up to 100,000 machines, no N x N storage).

Code outside these two modules asks the cluster, never its type: :meth:`Cluster.machine_table`
for the per-machine arrays (:class:`Machines`), :meth:`Cluster.gnn_links` for the edges a GNN
sees, :meth:`Cluster.to_core` for the C++ planner's cluster, :meth:`Cluster.locations` for the
report's map. Where a kind cannot do something (a generated cluster has no explicit link list
for :meth:`Cluster.to_networkx`, and takes no new machines) its method raises a ``ValueError``
that says why.

Also here: the bundled cities table (``hulk/data/cities.json``), which both kinds use.
"""

from __future__ import annotations

import abc
import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from .. import _core
from ..errors import InputError

__all__ = ["Cluster", "Machines", "check_plausible", "cities", "great_circle_km", "implausible", "plausible_ranges", "plausible_words", "unit_vector"]

_DATA = Path(__file__).resolve().parent.parent / "data"


@lru_cache(maxsize=1)
def _cities_doc() -> dict:
    # Next to the package rather than importlib.resources: the module may be loaded by path
    # from a source tree whose 'hulk' package is the installed one.
    doc = json.loads((_DATA / "cities.json").read_text(encoding="utf-8"))
    if doc.get("version") != "hulk-cities/1":
        raise InputError(f"cities.json: version must be 'hulk-cities/1', got {doc.get('version')!r}")
    return doc


def cities() -> list[dict]:
    """The bundled cities table (``hulk/data/cities.json``): dicts with ``name``, ``lat``,
    ``lon`` (decimal degrees) and ``paper`` (one of the paper's twelve cities). A fresh copy."""
    return [dict(c) for c in _cities_doc()["cities"]]


EARTH_RADIUS_KM = 6371.0


def great_circle_km(lat1, lon1, lat2, lon2):
    """Great-circle distance in km (haversine, Earth radius 6371 km); degrees in, arrays broadcast.

    Returns a float for scalar input, else an array.
    """
    p1, l1, p2, l2 = (np.radians(np.asarray(x, dtype=np.float64)) for x in (lat1, lon1, lat2, lon2))
    h = np.sin((p2 - p1) / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin((l2 - l1) / 2) ** 2
    d = 2 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))
    return float(d) if d.ndim == 0 else d


def unit_vector(lat, lon) -> np.ndarray:
    """Points on the unit sphere ``[N, 3]`` from latitudes and longitudes in degrees ``[N]``."""
    la, lo = np.radians(lat), np.radians(lon)
    return np.stack([np.cos(la) * np.cos(lo), np.cos(la) * np.sin(lo), np.sin(la)], axis=1)


@dataclass
class Machines:
    """The per-machine arrays of a cluster, whatever its kind."""

    names: list            # [N] machine names
    region: np.ndarray     # [N] int64 region index (an explicit cluster: by first appearance of its name)
    region_names: list     # [R] region names, indexed by ``region``
    memory_gb: np.ndarray  # [N] float64 total GPU memory
    tflops: np.ndarray     # [N] float64 sustained throughput
    gpus: np.ndarray       # [N] float64 GPU count (0 when unknown)
    pos: np.ndarray        # [N, 3] unit vector of the machine's position (zeros when unknown)
    access_ms: np.ndarray  # [N] float64 access latency (0 for explicit clusters)

    def __len__(self) -> int:
        return len(self.names)


class Cluster(abc.ABC):
    """What every planner takes. Subclasses: ClusterSpec and RegionalCluster."""

    #: False where :meth:`with_machine` always raises (a generated cluster).
    accepts_new_machines: bool = True

    @abc.abstractmethod
    def __len__(self) -> int:
        """Number of machines."""

    @abc.abstractmethod
    def machine_table(self) -> Machines:
        """The per-machine arrays (:class:`Machines`)."""

    @abc.abstractmethod
    def gnn_links(self, k_local: int = 8, k_remote: int = 8, seed: int = 0) -> tuple:
        """The undirected edges a GNN sees, ``(a, b, latency_ms, bandwidth_gbps)`` arrays: an
        explicit cluster's own links (the arguments are not used), a generated cluster's
        sample of up to ``k_local`` same-region and ``k_remote`` other-region neighbours."""

    @abc.abstractmethod
    def links_of(self, i: int) -> tuple:
        """The direct links of machine ``i``, ``(a, b, latency_ms, bandwidth_gbps)`` arrays."""

    @abc.abstractmethod
    def gpu_types(self) -> tuple:
        """``(gpu, gpus)``: per machine its GPU type name ("" when unknown) and GPU count (1 when
        unknown): what picks a measured profile and splits a micro-batch among a server's GPUs."""

    @abc.abstractmethod
    def _make_core(self):
        """A new ``_core.plan.PlanCluster`` of this cluster."""

    def to_core(self):
        """The C++ planner's cluster (``_core.plan.PlanCluster``), built once per cluster object
        (a cluster is not changed after it is made: every change returns a new one)."""
        core = self.__dict__.get("_core_cluster")
        if core is None:
            core = self._make_core()
            self.__dict__["_core_cluster"] = core
        return core

    def _cached(self, key: str, make):
        """``make()``, computed once per cluster object (clusters do not change); ``key`` starts
        with ``_cache_``, so pickling and deep copies leave it out."""
        value = self.__dict__.get(key)
        if value is None:
            value = self.__dict__[key] = make()
        return value

    def __getstate__(self) -> dict:
        # Pickling and deep copies leave the C++ cluster and the caches out (rebuilt on demand).
        return {k: v for k, v in self.__dict__.items() if k != "_core_cluster" and not k.startswith("_cache_")}

    @abc.abstractmethod
    def without(self, i: int) -> "Cluster":
        """A copy without machine ``i`` (indices above it shift down by one)."""

    @abc.abstractmethod
    def with_machine(self, machine: dict, links=()) -> "Cluster":
        """A copy with one more machine (index ``len(self)``) and its links."""

    @abc.abstractmethod
    def to_networkx(self):
        """The cluster as an undirected networkx graph of its machines and links."""

    @abc.abstractmethod
    def locations(self) -> tuple:
        """Per machine: region names [N], latitude [N] and longitude [N] (NaN when unknown)."""

    @abc.abstractmethod
    def summary(self) -> str:
        """A few human-readable lines."""

    def derivation_notes(self) -> list[str]:
        """How the cluster's attributes were derived (one line per rule applied); none by default."""
        return []


@lru_cache(maxsize=1)
def _ranges() -> dict:
    return {r["field"]: r for r in _core.plan.plausible_ranges()}


def plausible_ranges() -> dict:
    """``{field: {"lo", "hi", "zero_ok", "unit", "why"}}`` for ``memory_gb``, ``tflops``, ``gpus``,
    ``latency_ms`` and ``bandwidth_gbps``: the bounds outside which a value is a unit mistake or a
    typo rather than a machine or link that exists. Written once, with their sources, in
    ``csrc/plan/plausible.h``; the C++ cluster enforces them too."""
    return {k: dict(v) for k, v in _ranges().items()}


def implausible(field: str, values) -> np.ndarray:
    """Mask of the ``values`` (finite numbers) outside ``field``'s plausible range."""
    r = _ranges()[field]
    v = np.asarray(values, dtype=np.float64)
    ok = (v >= r["lo"]) & (v <= r["hi"])
    if r["zero_ok"]:
        ok |= v == 0
    return ~ok


def check_plausible(field: str, value, where: str, name: str | None = None) -> None:
    """Raises :class:`InputError` naming ``where``, the field (``name`` when it is stored under
    another name, e.g. ``access_ms`` for a latency) and the value when ``value`` lies outside
    ``field``'s plausible range."""
    if implausible(field, [value])[0]:
        raise InputError(f"{where}: {name or field} = {value!r} is outside the plausible range "
                         f"{plausible_words(field)}; check the value and its unit")


def plausible_words(field: str) -> str:
    """``field``'s plausible range in words, e.g. ``[0.001, 1e+06] TFLOPS (1 GFLOPS to ...)``."""
    r = _ranges()[field]
    zero = "0 or " if r["zero_ok"] else ""
    return f"{zero}[{r['lo']:g}, {r['hi']:g}] {r['unit']} ({r['why']})"


def city_coordinates() -> dict:
    """``{city name: (lat, lon)}`` of the bundled cities table."""
    return {c["name"]: (c["lat"], c["lon"]) for c in cities()}


def explicit_locations(machines: list) -> tuple:
    """:meth:`Cluster.locations` of machine dicts with ``region``, ``lat``, ``lon``: a machine's
    own coordinates, else its region's city from ``hulk/data/cities.json`` when the name matches."""
    city = city_coordinates()
    names, lat, lon = [], [], []
    for m in machines:
        where = (m["lat"], m["lon"]) if m["lat"] is not None and m["lon"] is not None else city.get(m["region"])
        names.append(m["region"])
        lat.append(where[0] if where else math.nan)
        lon.append(where[1] if where else math.nan)
    return names, np.array(lat, float), np.array(lon, float)

