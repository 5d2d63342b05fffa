"""Seeded synthetic geo-distributed clusters, up to 100,000 machines, without N x N storage.

A :class:`RegionalCluster` is hierarchical ("regional"): machines sit in regions (cities), and
every network quantity of a machine pair follows from the pair's regions plus a small
per-machine access latency. For machines ``i != j`` in regions ``r = region[i]``, ``s = region[j]``:

* latency   ``access_ms[i] + access_ms[j] + base_latency_ms[r, s]``
* bandwidth ``base_bandwidth_gbps[r, s]``
* direct connection iff ``region_link[r, s]``; other pairs are relayed (``missing_links="route"``)
  or forbidden (``"forbid"``) by the C++ cost model, as rule d of :mod:`hulk.plan.cluster_spec`.

The ``[R, R]`` arrays are symmetric; their diagonal is the region's LAN (``region_link`` is True
there). Nothing of size N x N is stored; :meth:`RegionalCluster.to_spec` expands a small cluster
into an explicit :class:`hulk.plan.cluster_spec.ClusterSpec`, :meth:`RegionalCluster.sample_links`
draws a sparse link sample for a GNN.

Generation rules (:func:`generate_cluster`)
-------------------------------------------
1. **Cities.** Regions are cities of ``hulk/data/cities.json`` (40 cities; coordinates: city
   centres rounded to 0.01 degree). It holds the twelve cities of the paper's 47-server cluster,
   named as in its ``node_feature.csv``.
2. **Latency from distance.** Between two regions ``d`` km apart (great circle, Earth radius
   6371 km): ``LATENCY_A_MS + LATENCY_B_MS_PER_KM * d`` = 44.17 ms + 0.018775 ms/km * d. Fitted by
   least absolute deviations to the paper's cluster (``hulk.datasets.hulk47``): one point per
   city pair, the median latency of the pair's measured links, 45 pairs, median absolute
   residual 80 ms, correlation 0.43 (see :func:`fit_latency_model`). The data is noisy
   (Nanjing-Rome 740 ms, Tokyo-Berlin 4 ms), so distance explains little of it. Ordinary least
   squares gives 108.5 ms + 0.0140 ms/km, whose large intercept overstates short hops (the
   paper's city pairs under 2,500 km measure 26-91 ms, apart from Nanjing-Tokyo, 173 ms, and
   Quanzhou-Tokyo, 277 ms; least squares gives them 114-144 ms), so the robust fit is used.
   LAN latency: ``LAN_LATENCY_MS`` = 8 ms, the median of the paper's 60 same-city links.
3. **Jitter.** Each region pair's WAN latency and each region's LAN latency is multiplied by its
   own lognormal factor ``exp(N(0, JITTER_SIGMA))``, ``JITTER_SIGMA`` = 0.15 (an assumption:
   about +-15 % between routes of similar length). ``access_ms`` per machine is uniform in
   ``[ACCESS_MS_LOW, ACCESS_MS_HIGH]`` = [0.05, 1.0] ms (an assumption: a host's NIC and switch
   hops).
4. **Bandwidth from latency.** ``base_bandwidth_gbps = cluster_spec.bandwidth_from_latency(
   base_latency_ms)`` (rule c of :mod:`hulk.plan.cluster_spec`), the LAN diagonal included. With
   LAN latencies near 8 ms that gives about 1.5 Gbps inside a region (the 10 Gbps clamp needs
   latencies far below a millisecond), and about 0.7-1.0 Gbps between regions.
5. **Regions.** ``n_regions`` defaults to ``clip(round(sqrt(n)), 3, number of cities)``, never more
   than ``n``. With ``n_regions >= 12`` the paper's twelve cities come first, the rest drawn at
   random from the other cities; with fewer, a random subset of the paper's cities. Regions are
   in the order of the cities table. Machines are spread over regions with Dirichlet(1, ..., 1)
   proportions, each region getting one machine plus a multinomial share of the remaining
   ``n - n_regions``. Machines are numbered region by region, as in the paper's data.
6. **GPUs.** Types from ``hulk/data/gpus.json`` (default: every type, equal weight; ``gpu_mix``
   gives other weights). Each region draws its own mix ``Dirichlet(G * w)`` (``w``: the
   normalised weights over the ``G`` types used, so alpha = 1 each when equal), and each machine
   a type from its region's mix. GPUs per server: 1, 2, 4 or 8 with probabilities
   ``GPUS_PER_SERVER_P`` = 0.1, 0.2, 0.3, 0.4 (an assumption: multi-GPU servers dominate; the
   paper's memory totals imply 3 to 12 GPUs per server). ``memory_gb = gpus * memory of the GPU``,
   ``tflops = gpus * training_peak_tflops * utilisation`` (rule b of :mod:`hulk.plan.cluster_spec`).
7. **Missing links.** ``round(missing_fraction * R (R - 1) / 2)`` (ties to even) of the
   off-diagonal region pairs get ``region_link`` False, drawn at random among the pairs outside
   a random spanning tree (each region, in random order, attaches to a random earlier one), so
   the region graph stays connected; the count is capped at ``R (R - 1) / 2 - (R - 1)`` for
   that reason.
8. **Seeds.** All randomness comes from ``numpy.random.default_rng`` generators seeded by
   children of ``numpy.random.SeedSequence(seed)``, one per rule, so that the same seed gives
   identical arrays and changing, say, ``missing_fraction`` does not redraw the GPUs.

Measured mode (``generate_cluster(..., mode="measured")``)
---------------------------------------------------------
9. **Cloud network.** Rules 1-4 describe the default ``mode="paper"``, fitted to the paper's
   47-server cluster: at most 40 regions, and a bandwidth that is a function of latency. With
   ``mode="measured"`` the regions are cloud sites (any number up to ``MAX_MEASURED_REGIONS``,
   each a bundled city moved by up to 500 km), the RTT between sites follows distance as
   measured between IBM Cloud regions, and throughput is drawn around a fit to 112 measured
   rows of the Skyplane grids (AWS, Azure, GCP; NSDI 2023), tied to RTT as measured (Spearman
   about -0.6 over a drawn cluster; ``rtt_coupling`` < 1 weakens it, 0 removes it).
   ``base_latency_ms`` is half the RTT (the cost model's latency is one way); inside a region:
   0.045 ms and 100 Gbit/s; ``access_ms`` is 0. Every number, with its source and fit:
   :mod:`hulk.plan.cloud_network`. Machines are 8-GPU servers unless ``gpus_per_machine`` says
   otherwise, and no region pair is missing unless ``missing_fraction`` says so. Its random
   streams are seeded from ``SeedSequence([seed, 9])``, apart from the paper mode's.
10. **Regimes (both modes).** ``machines_per_region=(lo, hi)`` (or an int) draws region sizes
   uniformly from ``[lo, hi]`` (the number of regions follows); ``gpus_per_machine`` fixes the
   GPUs per server; ``gpu_mix={"A100": 1}`` makes every GPU one type. Without these
   arguments the paper mode draws exactly what it drew before they existed.

JSON (``to_json`` / ``from_json``): ``{"version": "hulk-regional/1", <every field>: value}``,
arrays as (nested) lists.

Everything but :meth:`RegionalCluster.to_core` is pure Python (standard library and numpy).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, fields

import numpy as np

from .. import _core
from .._checks import check_seed, is_int, is_real, naming_out_of_memory
from .._io import atomic_write, naming_the_file, parse_json, read_json_file
from . import cloud_network, cluster_spec
from .cluster import Cluster, Machines, cities, great_circle_km, implausible, plausible_words, unit_vector
from ..errors import InputError

__all__ = [
    "ACCESS_MS_HIGH",
    "ACCESS_MS_LOW",
    "GPUS_PER_SERVER",
    "GPUS_PER_SERVER_P",
    "JITTER_SIGMA",
    "LAN_LATENCY_MS",
    "LATENCY_A_MS",
    "MAX_MEASURED_REGIONS",
    "MODES",
    "LATENCY_B_MS_PER_KM",
    "SCHEMA_VERSION",
    "RegionalCluster",
    "cities",
    "fit_latency_model",
    "generate_cluster",
    "great_circle_km",
]

SCHEMA_VERSION = "hulk-regional/1"

# Rule 2. Least absolute deviations of latency_ms on [1, great_circle_km] over the 45 city
# pairs of hulk47 that have links, one point per pair (the median of its links), coordinates
# from hulk/data/cities.json: a = 44.171, b = 0.0187754 (median absolute residual 80 ms,
# r = 0.43), rounded below to 5 significant digits.
# LAN: median latency of the 60 same-city links of hulk47 = 8 ms.
# fit_latency_model() recomputes them; tests/python/test_plan_generate.py checks the rounding.
LATENCY_A_MS = 44.171
LATENCY_B_MS_PER_KM = 0.018775
LAN_LATENCY_MS = 8.0

# Rule 3 (assumptions, not fitted).
JITTER_SIGMA = 0.15
ACCESS_MS_LOW, ACCESS_MS_HIGH = 0.05, 1.0

# Rule 6 (assumption, not fitted).
GPUS_PER_SERVER = (1, 2, 4, 8)
GPUS_PER_SERVER_P = (0.1, 0.2, 0.3, 0.4)

_MISSING_RULES = ("route", "forbid")
_N_STREAMS = 5  # regions, latency, machines, gpus, missing links
_MEASURED_STREAM_TAG = 9  # mode="measured" seeds SeedSequence([seed, 9]): its own streams


# --------------------------------------------------------------------------------------------
# Cities, distances, the latency fit
# --------------------------------------------------------------------------------------------

def fit_latency_model() -> dict:
    """Refit rule 2 from the paper's cluster; returns the data and the fit.

    Keys: ``a`` (ms), ``b`` (ms/km), ``lan_ms`` (median same-city latency), ``pairs`` (list of
    ``(city, city, km, median_ms, n_links)``), ``n_lan_links``, ``rms_ms`` and ``r`` (Pearson
    correlation of distance and latency over the pairs).
    """
    from .. import datasets

    G = datasets.hulk47(clean="quiet")
    where = {c["name"]: (c["lat"], c["lon"]) for c in cities()}
    by_pair, lan = {}, []
    for u, v, attrs in G.edges(data=True):
        ru, rv = G.nodes[u]["region"], G.nodes[v]["region"]
        if ru == rv:
            lan.append(attrs["latency_ms"])
        else:
            by_pair.setdefault(tuple(sorted((ru, rv))), []).append(attrs["latency_ms"])
    pairs = []
    for (ra, rb), lats in sorted(by_pair.items()):
        km = great_circle_km(*where[ra], *where[rb])
        pairs.append((ra, rb, km, float(np.median(lats)), len(lats)))
    x = np.array([p[2] for p in pairs])
    y = np.array([p[3] for p in pairs])
    design = np.column_stack([np.ones_like(x), x])
    (a_ols, b_ols), *_ = np.linalg.lstsq(design, y, rcond=None)
    coef = _least_absolute_deviations(design, y)
    resid = y - design @ coef
    return {"a": float(coef[0]), "b": float(coef[1]), "a_ols": float(a_ols), "b_ols": float(b_ols),
            "lan_ms": float(np.median(lan)), "pairs": pairs, "n_lan_links": len(lan),
            "rms_ms": float(np.sqrt(np.mean(resid ** 2))), "mad_ms": float(np.median(np.abs(resid))),
            "r": float(np.corrcoef(x, y)[0, 1])}


def _least_absolute_deviations(design: np.ndarray, y: np.ndarray, iterations: int = 200) -> np.ndarray:
    """Minimises sum |y - design @ coef| by iteratively reweighted least squares."""
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    for _ in range(iterations):
        w = 1.0 / np.maximum(np.abs(y - design @ coef), 1e-6)
        sw = np.sqrt(w)
        new, *_ = np.linalg.lstsq(design * sw[:, None], y * sw, rcond=None)
        if np.allclose(new, coef, rtol=1e-10, atol=1e-12):
            break
        coef = new
    return coef


# --------------------------------------------------------------------------------------------
# Argument checks
# --------------------------------------------------------------------------------------------

def _check_int(name: str, value, lo: int, hi: int | None = None) -> int:
    if not is_int(value) or value < lo or (hi is not None and value > hi):
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise InputError(f"{name} must be an int {rng}, got {value!r}")
    return int(value)


def _check_missing_rule(value) -> str:
    if value not in _MISSING_RULES:
        raise InputError(f"missing_links must be one of {_MISSING_RULES}, got {value!r}")
    return value


# --------------------------------------------------------------------------------------------
# RegionalCluster
# --------------------------------------------------------------------------------------------

# field -> (dtype, "R" / "RR" / "N" shape kind); names and gpu_names are lists of str
_ARRAYS = {
    "region_lat": (np.float64, "R"),
    "region_lon": (np.float64, "R"),
    "base_latency_ms": (np.float64, "RR"),
    "base_bandwidth_gbps": (np.float64, "RR"),
    "region_link": (np.bool_, "RR"),
    "region": (np.int64, "N"),
    "access_ms": (np.float64, "N"),
    "gpu": (np.int64, "N"),
    "gpus": (np.int64, "N"),
    "memory_gb": (np.float64, "N"),
    "tflops": (np.float64, "N"),
}


def _as_array(name: str, value, dtype) -> np.ndarray:
    """Convert to ``dtype`` without silent truncation or bool/number mix-ups."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as e:
        raise InputError(f"{name}: cannot convert to an array ({e})") from None
    if dtype is np.bool_:
        if arr.dtype != np.bool_ and arr.size:
            raise InputError(f"{name} must be booleans, got dtype {arr.dtype}")
        return arr.astype(np.bool_)
    if arr.size and not (np.issubdtype(arr.dtype, np.number) and not np.issubdtype(arr.dtype, np.complexfloating)):
        raise InputError(f"{name} must be numbers, got dtype {arr.dtype}")
    if dtype is np.int64 and arr.size and not np.issubdtype(arr.dtype, np.integer):
        bad = ~np.isfinite(arr) | (arr != np.round(arr)) if np.issubdtype(arr.dtype, np.floating) else None
        if bad is None or bad.any():
            k = int(np.flatnonzero(bad)[0]) if bad is not None else 0
            raise InputError(f"{name} must be integers, got {arr.ravel()[k]!r} at index {k}")
    return arr.astype(dtype)


def _first_bad(name: str, bad: np.ndarray, arr: np.ndarray, what: str):
    if bad.any():
        k = tuple(int(v) for v in np.argwhere(bad)[0])
        at = k[0] if len(k) == 1 else list(k)
        raise InputError(f"{name} must be {what}, got {arr[k].item()!r} at {at}")


@dataclass(eq=False)
class RegionalCluster(Cluster):
    """Machines in regions with a region-level network; see the module docstring."""

    accepts_new_machines = False

    region_names: list
    region_lat: np.ndarray
    region_lon: np.ndarray
    base_latency_ms: np.ndarray
    base_bandwidth_gbps: np.ndarray
    region_link: np.ndarray
    region: np.ndarray
    access_ms: np.ndarray
    gpu_names: list
    gpu: np.ndarray
    gpus: np.ndarray
    memory_gb: np.ndarray
    tflops: np.ndarray
    missing_links: str = "route"
    seed: int | None = None

    def __post_init__(self):
        for name, (dtype, _) in _ARRAYS.items():
            setattr(self, name, _as_array(name, getattr(self, name), dtype))
        self.region_names = list(self.region_names)
        self.gpu_names = list(self.gpu_names)
        self.validate()

    # -- validation --------------------------------------------------------------------------
    def validate(self) -> None:
        """Check shapes, dtypes, finiteness, symmetry and ranges; ``ValueError`` names the field."""
        _check_missing_rule(self.missing_links)
        if self.seed is not None:
            check_seed(self.seed)
        R, G = self._check_names("region_names"), self._check_names("gpu_names")
        for g in self.gpu_names:
            if (canonical := cluster_spec.gpu_name(g)) != g:
                raise InputError(f"gpu_names: {g!r} must be a canonical name of hulk/data/gpus.json "
                                 f"({canonical!r})")
        N = len(self.region)
        if N < 1:
            raise InputError("region: the cluster must have at least one machine")
        shapes = {"R": (R,), "RR": (R, R), "N": (N,)}
        for name, (dtype, kind) in _ARRAYS.items():
            arr = getattr(self, name)
            if not isinstance(arr, np.ndarray) or arr.dtype != dtype:
                raise InputError(f"{name} must be a numpy array of {np.dtype(dtype)}, got {type(arr).__name__}")
            if arr.shape != shapes[kind]:
                raise InputError(f"{name} must have shape {shapes[kind]}, got {arr.shape}")
            if dtype is np.float64:
                _first_bad(name, ~np.isfinite(arr), arr, "finite")
        _first_bad("region_lat", np.abs(self.region_lat) > 90, self.region_lat, "in [-90, 90]")
        _first_bad("region_lon", np.abs(self.region_lon) > 180, self.region_lon, "in [-180, 180]")
        for name in ("base_latency_ms", "base_bandwidth_gbps", "region_link"):
            arr = getattr(self, name)
            _first_bad(name, arr != arr.T, arr, "symmetric (differs from its transpose)")
        _first_bad("base_latency_ms", self.base_latency_ms < 0, self.base_latency_ms, ">= 0")
        _first_bad("base_bandwidth_gbps", self.base_bandwidth_gbps <= 0, self.base_bandwidth_gbps, "> 0")
        for name, field in (("base_latency_ms", "latency_ms"), ("base_bandwidth_gbps", "bandwidth_gbps")):
            arr = getattr(self, name)  # only where the regions are linked: elsewhere the value is not used
            _first_bad(name, implausible(field, arr) & self.region_link, arr, "in the plausible range " + plausible_words(field))
        _first_bad("region_link", ~np.diag(self.region_link), np.diag(self.region_link), "True on the diagonal")
        _first_bad("region", (self.region < 0) | (self.region >= R), self.region, f"a region index in [0, {R})")
        _first_bad("access_ms", self.access_ms < 0, self.access_ms, ">= 0")
        _first_bad("access_ms", implausible("latency_ms", self.access_ms), self.access_ms,
                   "in the plausible range " + plausible_words("latency_ms"))
        _first_bad("gpu", (self.gpu < 0) | (self.gpu >= G), self.gpu, f"a gpu_names index in [0, {G})")
        for name in ("gpus", "memory_gb", "tflops"):
            arr = getattr(self, name)
            _first_bad(name, arr <= 0, arr, "> 0")
            _first_bad(name, implausible(name, arr), arr, "in the plausible range " + plausible_words(name))

    def _check_names(self, field_name: str) -> int:
        names = getattr(self, field_name)
        if not names:
            raise InputError(f"{field_name} must be a non-empty list of strings")
        seen = set()
        for k, s in enumerate(names):
            if not isinstance(s, str) or not s.strip():
                raise InputError(f"{field_name}[{k}] must be a non-empty string, got {s!r}")
            cluster_spec.check_printable(s, f"{field_name}[{k}]")
            if s in seen:
                raise InputError(f"{field_name}[{k}]: duplicate name {s!r}")
            seen.add(s)
        return len(names)

    def __eq__(self, other) -> bool:
        if not isinstance(other, RegionalCluster):
            return NotImplemented
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            same = np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b
            if not same:
                return False
        return True

    # -- views -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.region.shape[0])

    @property
    def n_regions(self) -> int:
        return len(self.region_names)

    def region_sizes(self) -> np.ndarray:
        """Machines per region, ``[R]`` int64."""
        return np.bincount(self.region, minlength=self.n_regions).astype(np.int64)

    def _grouping(self):
        """(members: machine indices grouped by region in index order, starts: each region's first
        position in members, rank: each machine's position within its region)."""
        members = np.argsort(self.region, kind="stable")
        starts = np.concatenate([[0], np.cumsum(self.region_sizes())[:-1]])
        rank = np.empty(len(self), dtype=np.int64)
        rank[members] = np.arange(len(self)) - starts[self.region[members]]
        return members, starts, rank

    def machine_names(self) -> list[str]:
        """``"<region name>-<k>"``, k numbering the machines of each region from 0 in index order."""
        def make():
            rank = self._grouping()[2]
            names = self.region_names
            return tuple(f"{names[r]}-{k}" for r, k in zip(self.region.tolist(), rank.tolist()))
        return list(self._cached("_cache_machine_names", make))  # 3 ms at 5,000 machines, asked twice per GNN proposal

    def _pair_regions(self, i, j):
        i, j = np.asarray(i), np.asarray(j)
        for name, x in (("i", i), ("j", j)):
            if x.size and not np.issubdtype(x.dtype, np.integer):
                raise InputError(f"{name} must be integer machine indices, got dtype {x.dtype}")
            _first_bad(name, (x < 0) | (x >= len(self)), x, f"a machine index in [0, {len(self)})")
        i, j = np.broadcast_arrays(i.astype(np.int64), j.astype(np.int64))
        _first_bad("i", i == j, i, "different from j (a machine has no link to itself)")
        return i, j, self.region[i], self.region[j]

    def pair_latency_ms(self, i, j) -> np.ndarray:
        """Direct-connection latency of machine pairs ``(i, j)`` (index arrays, ``i != j``),
        whether or not their regions are linked (no routing)."""
        i, j, ri, rj = self._pair_regions(i, j)
        return self.access_ms[i] + self.access_ms[j] + self.base_latency_ms[ri, rj]

    def pair_bandwidth_gbps(self, i, j) -> np.ndarray:
        """Direct-connection bandwidth of machine pairs ``(i, j)`` (index arrays, ``i != j``)."""
        _, _, ri, rj = self._pair_regions(i, j)
        return self.base_bandwidth_gbps[ri, rj]

    # -- sparse sample -----------------------------------------------------------------------
    def sample_links(self, k_local: int = 8, k_remote: int = 8, seed: int = 0):
        """A sparse undirected link sample, e.g. for a GNN.

        Each machine draws up to ``k_local`` distinct other machines of its region and up to
        ``k_remote`` distinct machines of other regions linked to its region (``region_link``),
        uniformly without replacement (all of them when there are fewer). Returns ``(a, b,
        latency_ms, bandwidth_gbps)``: the union of the draws with ``a < b``, sorted by
        ``(a, b)``, without duplicates or self loops, and the direct values of each pair.
        """
        k_local = _check_int("k_local", k_local, 0)
        k_remote = _check_int("k_remote", k_remote, 0)
        rng = np.random.default_rng(check_seed(seed))
        n, R = len(self), self.n_regions
        sizes = self.region_sizes()
        members, starts, rank = self._grouping()

        # local: positions among the region's other machines, skipping the machine itself
        pos = _sample_without_replacement(rng, sizes[self.region] - 1, k_local)
        pos = pos + (pos >= rank[:, None])
        local = np.where(pos >= 0, members[starts[self.region][:, None] + np.maximum(pos, 0)], -1)

        # remote: positions in the concatenation of the linked other regions' machines
        if self.region_link.all():  # every pair linked (measured clusters): no R x R table
            cum, population = None, n - sizes[self.region]
        else:
            allowed = self.region_link & ~np.eye(R, dtype=bool)
            cum = np.cumsum(np.where(allowed, sizes[None, :], 0), axis=1)   # [R, R]
            population = cum[self.region, -1]
        pos = _sample_without_replacement(rng, population, k_remote)
        remote = self._remote_machines(pos, members, starts, sizes, cum)

        src = np.repeat(np.arange(n, dtype=np.int64), k_local + k_remote)
        dst = np.concatenate([local, remote], axis=1).ravel()
        keep = dst >= 0
        a, b = np.minimum(src[keep], dst[keep]), np.maximum(src[keep], dst[keep])
        key = np.sort(a * n + b)       # sort + neighbour test: several times faster than np.unique here
        first = np.ones(key.size, dtype=bool)
        first[1:] = key[1:] != key[:-1]
        key = key[first]
        a, b = key // n, key % n
        return a, b, self.pair_latency_ms(a, b), self.pair_bandwidth_gbps(a, b)

    def _remote_machines(self, pos, members, starts, sizes, cum=None) -> np.ndarray:
        """The machines at positions ``pos`` [n, k] (-1 pads) of each machine's concatenation of
        the machines of the regions linked to its own (its own excluded), in region order.
        ``sizes``: machines per region. ``cum``: per region row, the cumulative sizes of the
        regions linked to it ([R, R]); None when every region pair is linked, where the
        concatenation is ``members`` without the own region's block (no R x R table: 2.8
        million entries at 1,668 regions)."""
        n, R = len(self), self.n_regions
        p = np.maximum(pos, 0)
        row = self.region[:, None]
        if cum is None:
            at = p + np.where(p >= starts[row], sizes[row], 0)
        else:
            flat = (cum + np.arange(R)[:, None] * (n + 1)).ravel()            # rows made globally sorted
            dest = np.searchsorted(flat, p + row * (n + 1), side="right") - row * R
            dest = np.minimum(dest, R - 1)
            at = starts[dest] + p - (cum[row, dest] - sizes[dest])
        return np.where(pos >= 0, members[np.minimum(at, n - 1)], -1)

    # -- conversions -------------------------------------------------------------------------
    def machine_table(self) -> Machines:
        """The machines as arrays; a machine's position is its region's."""
        return Machines(names=self.machine_names(), region=np.asarray(self.region, dtype=np.int64),
                        region_names=list(self.region_names), memory_gb=self.memory_gb.astype(np.float64),
                        tflops=self.tflops.astype(np.float64), gpus=self.gpus.astype(np.float64),
                        pos=unit_vector(self.region_lat[self.region], self.region_lon[self.region]),
                        access_ms=self.access_ms.astype(np.float64))

    def gnn_links(self, k_local: int = 8, k_remote: int = 8, seed: int = 0) -> tuple:
        """:meth:`sample_links`: the degree does not grow with the cluster."""
        return self.sample_links(k_local=k_local, k_remote=k_remote, seed=seed)

    def links_of(self, i: int) -> tuple:
        """The direct links of machine ``i``: to every other machine of a linked region."""
        i = _check_int("i", i, 0, len(self) - 1)
        others = np.flatnonzero(self.region_link[self.region[i], self.region] & (np.arange(len(self)) != i))
        a, b = np.minimum(others, i), np.maximum(others, i)
        return a, b, self.pair_latency_ms(a, b), self.pair_bandwidth_gbps(a, b)

    def _make_core(self):
        names = self.machine_names()
        return _core.plan.PlanCluster.from_network(
            names, [self.region_names[r] for r in self.region.tolist()], self.memory_gb.tolist(), self.tflops.tolist(),
            len(self.region_names), self.region.tolist(), self.access_ms.tolist(),
            np.ascontiguousarray(self.base_latency_ms, dtype=np.float64).ravel(),
            np.ascontiguousarray(self.base_bandwidth_gbps, dtype=np.float64).ravel(),
            np.ascontiguousarray(self.region_link, dtype=np.uint8).ravel(),
            self.missing_links, *self.gpu_types())

    def gpu_types(self) -> tuple:
        return [self.gpu_names[g] for g in self.gpu.tolist()], [float(k) if k > 0 else 1.0 for k in self.gpus.tolist()]

    def locations(self) -> tuple:
        """Region names, latitude and longitude per machine: its region's coordinates."""
        names = [self.region_names[r] for r in self.region.tolist()]
        return names, self.region_lat[self.region].astype(float), self.region_lon[self.region].astype(float)

    def with_machine(self, machine: dict, links=()) -> "RegionalCluster":
        """Not supported: a generated cluster's network follows from its regions, so it does not
        take machines with their own links; use an explicit cluster (:meth:`to_spec`)."""
        raise InputError("a generated cluster (hulk-regional/1) does not take new machines; use an explicit "
                         "cluster (a hulk-cluster/1 spec, e.g. RegionalCluster.to_spec())")

    def to_networkx(self):
        """Not supported: a generated cluster has no explicit links (its pairs follow from its
        regions); ``to_spec().to_networkx()`` expands a small one."""
        raise InputError("a generated cluster has no explicit links (its machine pairs follow from its regions); "
                         "expand a small one with to_spec(), or use a LearnedPlanner for generated clusters")

    def without(self, i: int) -> "RegionalCluster":
        """A copy without machine ``i`` (indices above it shift down by one)."""
        n = len(self)
        if not is_int(i) or not 0 <= i < n:
            raise InputError(f"machine must be an index in [0, {n}), got {i!r}")
        keep = np.arange(n) != i
        kw = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in ("region", "access_ms", "gpu", "gpus", "memory_gb", "tflops"):
            kw[name] = kw[name][keep]
        return RegionalCluster(**kw)

    def to_spec(self, max_machines: int = 2000) -> cluster_spec.ClusterSpec:
        """An explicit :class:`hulk.plan.cluster_spec.ClusterSpec` with one link per directly connected
        pair (regions with ``region_link`` True). Its size grows as N^2, so clusters of more than
        ``max_machines`` machines are refused."""
        max_machines = _check_int("max_machines", max_machines, 1)
        n = len(self)
        if n > max_machines:
            raise InputError(f"to_spec: {n} machines exceed max_machines={max_machines}: an explicit spec "
                             f"holds one link dict per connected pair, up to {n * (n - 1) // 2:,} here; "
                             f"use the regional arrays or sample_links() instead, or raise max_machines")
        names = self.machine_names()
        r = self.region.tolist()
        machines = [{"name": names[i], "region": self.region_names[r[i]],
                     "lat": float(self.region_lat[r[i]]), "lon": float(self.region_lon[r[i]]),
                     "gpu": self.gpu_names[g], "gpus": float(k), "capability": None,
                     "memory_gb": float(m), "tflops": float(t)}
                    for i, (g, k, m, t) in enumerate(zip(self.gpu.tolist(), self.gpus.tolist(),
                                                         self.memory_gb.tolist(), self.tflops.tolist()))]
        a, b = np.triu_indices(n, k=1)
        linked = self.region_link[self.region[a], self.region[b]]
        a, b = a[linked], b[linked]
        lat, bw = self.pair_latency_ms(a, b).tolist(), self.pair_bandwidth_gbps(a, b).tolist()
        links = [{"a": x, "b": y, "latency_ms": l, "bandwidth_gbps": w, "bandwidth_derived": False}
                 for x, y, l, w in zip(a.tolist(), b.tolist(), lat, bw)]
        pairs = n * (n - 1) // 2
        derived = np.array_equal(self.base_bandwidth_gbps, np.asarray(cluster_spec.bandwidth_from_latency(
            self.base_latency_ms), dtype=np.float64).reshape(self.base_latency_ms.shape))
        notes = [f"generated by hulk.generate.generate_cluster (seed={self.seed}, n={n}, "
                 f"{self.n_regions} regions); bandwidth "
                 + ("from base latency by rule c" if derived else "given per region pair (not derived)")]
        if len(links) < pairs:
            notes.append(f"rule d: {pairs - len(links)} of {pairs} machine pairs have no direct link "
                         f"(their regions are not linked); missing_links={self.missing_links!r}")
        return cluster_spec.ClusterSpec(machines=machines, links=links, missing_links=self.missing_links,
                                        notes=notes)

    def to_dict(self) -> dict:
        d = {"version": SCHEMA_VERSION}
        for f in fields(self):
            v = getattr(self, f.name)
            d[f.name] = v.tolist() if isinstance(v, np.ndarray) else (list(v) if isinstance(v, list) else v)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "RegionalCluster":
        if not isinstance(d, dict):
            raise InputError(f"regional cluster: expected a dict, got {type(d).__name__}")
        if d.get("version") != SCHEMA_VERSION:
            raise InputError(f"regional cluster: version must be {SCHEMA_VERSION!r}, got {d.get('version')!r}")
        names = [f.name for f in fields(cls)]
        extra = sorted(set(d) - set(names) - {"version"})
        if extra:
            raise InputError(f"regional cluster: unknown keys {extra}; allowed: {names}")
        return cls(**{k: v for k, v in d.items() if k != "version"})

    def to_json(self, path=None) -> str:
        """The cluster as JSON text; also written to ``path`` if given."""
        text = json.dumps(self.to_dict(), allow_nan=False, separators=(",", ":")) + "\n"
        if path is not None:
            atomic_write(path, text, what="regional cluster JSON")
        return text

    @classmethod
    def from_json(cls, path_or_text) -> "RegionalCluster":
        """Read a cluster from a JSON file path or JSON text."""
        if (isinstance(path_or_text, str) and path_or_text.lstrip().startswith("{")
                and not os.path.exists(path_or_text)):  # a file name may begin with "{" too
            return cls.from_dict(parse_json(path_or_text, "regional cluster JSON text"))
        if not isinstance(path_or_text, (str, os.PathLike)):
            raise InputError(f"from_json expects a path or JSON text, got {type(path_or_text).__name__}")
        doc = read_json_file(path_or_text, "regional cluster file")
        with naming_the_file(path_or_text):
            return cls.from_dict(doc)

    def summary(self) -> str:
        """A few lines: size, regions, GPU mix, totals, missing region pairs."""
        n, R = len(self), self.n_regions
        sizes = self.region_sizes()
        per_type = np.bincount(self.gpu, weights=self.gpus, minlength=len(self.gpu_names))
        off = R * (R - 1) // 2
        missing = int((~self.region_link[np.triu_indices(R, k=1)]).sum())
        wan = self.base_latency_ms[~np.eye(R, dtype=bool)]
        lines = [
            f"RegionalCluster: {n} machines in {R} regions (seed={self.seed}), missing_links={self.missing_links!r}",
            "regions: " + ", ".join(f"{s} {c}" for s, c in zip(self.region_names, sizes.tolist())),
            "GPUs: " + ", ".join(f"{g} x{int(c)}" for g, c in zip(self.gpu_names, per_type) if c > 0),
            f"memory: {self.memory_gb.sum():g} GB total; throughput: {self.tflops.sum():.1f} TFLOP/s sustained",
            f"{missing} of {off} region pairs without a direct link",
        ]
        if wan.size:
            lines.append(f"WAN base latency {wan.min():.1f}-{wan.max():.1f} ms; "
                         f"LAN {np.diag(self.base_latency_ms).min():.1f}-{np.diag(self.base_latency_ms).max():.1f} ms")
        return "\n".join(lines)


def _sample_without_replacement(rng, population, k: int) -> np.ndarray:
    """Per row, ``min(k, population[row])`` distinct uniform draws from ``range(population[row])``
    (Floyd's algorithm, vectorised over rows); ``[len(population), k]`` int64, -1 pads."""
    population = np.asarray(population, dtype=np.int64)
    take = np.minimum(population, k)
    out = np.full((population.size, k), -1, dtype=np.int64)
    for s in range(k):
        top = population - take + s                  # draw from [0, top]
        active = s < take
        t = rng.integers(0, np.maximum(top, 0) + 1)
        seen = (out[:, :s] == t[:, None]).any(axis=1)
        out[:, s] = np.where(active, np.where(seen, top, t), -1)
    return out


# --------------------------------------------------------------------------------------------
# Generator
# --------------------------------------------------------------------------------------------

def _resolve_gpu_mix(gpu_mix) -> tuple[list, np.ndarray]:
    """(canonical GPU names, normalised weights) of the GPU types to draw from."""
    if gpu_mix is None:
        names = list(cluster_spec.gpu_table())
        return names, np.full(len(names), 1.0 / len(names))
    if not isinstance(gpu_mix, dict) or not gpu_mix:
        raise InputError(f"gpu_mix must be a non-empty dict of GPU name -> weight, got {gpu_mix!r}")
    weights = {}
    for name, w in gpu_mix.items():
        try:
            canonical = cluster_spec.gpu_name(name)
        except ValueError as e:
            raise InputError(f"gpu_mix: {e}") from None
        if not is_real(w) or not math.isfinite(w) or w < 0:
            raise InputError(f"gpu_mix[{name!r}] must be a finite weight >= 0, got {w!r}")
        if canonical in weights:
            raise InputError(f"gpu_mix: {name!r} names {canonical!r} a second time")
        weights[canonical] = float(w)
    order = [g for g in cluster_spec.gpu_table() if weights.get(g, 0.0) > 0]
    if not order:
        raise InputError(f"gpu_mix needs at least one weight > 0, got {gpu_mix!r}")
    w = np.array([weights[g] for g in order])
    return order, w / w.sum()


def _pick_regions(rng, n_regions: int) -> list[int]:
    """Rule 5: indices into the cities table."""
    table = cities()
    paper = [k for k, c in enumerate(table) if c["paper"]]
    other = [k for k, c in enumerate(table) if not c["paper"]]
    if n_regions < len(paper):
        return sorted(rng.choice(paper, size=n_regions, replace=False).tolist())
    extra = rng.choice(other, size=n_regions - len(paper), replace=False).tolist()
    return paper + sorted(extra)


def _region_network(rng, lat, lon):
    """Rules 2-4: jittered symmetric base latency and the bandwidth derived from it."""
    R = lat.size
    km = great_circle_km(lat[:, None], lon[:, None], lat[None, :], lon[None, :])
    latency = LATENCY_A_MS + LATENCY_B_MS_PER_KM * km
    np.fill_diagonal(latency, LAN_LATENCY_MS)
    iu = np.triu_indices(R)                          # one factor per pair, diagonal included
    factor = np.empty((R, R))
    factor[iu] = np.exp(rng.normal(0.0, JITTER_SIGMA, size=iu[0].size))
    factor.T[iu] = factor[iu]
    latency = latency * factor
    return latency, np.asarray(cluster_spec.bandwidth_from_latency(latency), dtype=np.float64).reshape(R, R)


def _region_links(rng, R: int, missing_fraction: float) -> np.ndarray:
    """Rule 7: drop region pairs outside a random spanning tree."""
    link = np.ones((R, R), dtype=bool)
    if R < 2:
        return link
    order = rng.permutation(R)
    parent = order[(rng.random(R - 1) * np.arange(1, R)).astype(np.int64)]  # a random earlier region
    tree = np.zeros((R, R), dtype=bool)
    tree[order[1:], parent] = tree[parent, order[1:]] = True
    a, b = np.triu_indices(R, k=1)
    free = np.flatnonzero(~tree[a, b])
    m = min(int(round(missing_fraction * a.size)), free.size)
    drop = rng.choice(free, size=m, replace=False)
    link[a[drop], b[drop]] = link[b[drop], a[drop]] = False
    return link


def _draw_categorical(rng, cdf_rows: np.ndarray) -> np.ndarray:
    """One category per row from cumulative probabilities (rows of ``cdf_rows``)."""
    u = rng.random(cdf_rows.shape[0])
    return np.minimum((u[:, None] >= cdf_rows).sum(axis=1), cdf_rows.shape[1] - 1).astype(np.int64)


MODES = ("paper", "measured")
MAX_MEASURED_REGIONS = 4096  # three [R, R] arrays: about 300 MB at the cap
MAX_GPUS_PER_MACHINE = 72    # the largest NVLink domain sold (csrc/plan/plausible.h)


def generate_cluster(n: int, seed: int = 0, *, n_regions: int | None = None, missing_fraction: float | None = None,
                     missing_links: str = "route", gpu_mix: dict | None = None,
                     utilisation: float = cluster_spec.DEFAULT_UTILISATION, mode: str = "paper",
                     machines_per_region=None, gpus_per_machine: int | None = None,
                     rtt_coupling: float | None = None) -> RegionalCluster:
    """A seeded synthetic cluster of ``n`` machines.

    ``mode="paper"`` (default): rules 1-8 of the module docstring, fitted to the paper's cluster
    (at most 40 regions, bandwidth a function of latency). ``mode="measured"``: rule 9, a cloud
    network drawn from public measurements (:mod:`hulk.plan.cloud_network`).

    ``gpu_mix`` maps GPU names (or aliases) of ``hulk/data/gpus.json`` to weights >= 0 (default:
    every type, equal weight; one name gives uniform GPUs); ``utilisation`` in (0, 1] scales the
    peak TFLOPS. ``missing_fraction`` defaults to 0.1 (paper) or 0 (measured).
    ``machines_per_region`` (an int k or a pair ``(lo, hi)``, not with ``n_regions``) draws each
    region's size uniformly from ``[lo, hi]`` (the last region takes the remainder) instead of
    rule 5's Dirichlet shares. ``gpus_per_machine`` (1-72) gives every machine that many GPUs;
    default: rule 6's draw (paper) or 8 (measured). ``rtt_coupling`` in [0, 1] (measured only,
    default 1, the measured tie) scales how much throughput follows RTT.
    """
    n = _check_int("n", n, 2)
    seed = check_seed(seed)
    if mode not in MODES:
        raise InputError(f"mode must be one of {MODES}, got {mode!r}")
    measured = mode == "measured"
    if n_regions is not None and machines_per_region is not None:
        raise InputError(f"give n_regions or machines_per_region, not both (got {n_regions!r} and {machines_per_region!r})")
    max_regions = min(n, MAX_MEASURED_REGIONS if measured else len(cities()))
    sizes_range = _check_sizes_range(machines_per_region)
    if n_regions is None and sizes_range is None:
        n_regions = min(int(np.clip(round(math.sqrt(n)), 3, max_regions)), n)
    if n_regions is not None:
        n_regions = _check_int("n_regions", n_regions, 1, max_regions)
    if missing_fraction is None:
        missing_fraction = 0.0 if measured else 0.1
    if not is_real(missing_fraction) or not 0 <= missing_fraction < 1:
        raise InputError(f"missing_fraction must be a number in [0, 1), got {missing_fraction!r}")
    missing_links = _check_missing_rule(missing_links)
    if not is_real(utilisation) or not math.isfinite(utilisation) or not 0 < utilisation <= 1:
        raise InputError(f"utilisation must be in (0, 1], got {utilisation!r}")
    if gpus_per_machine is None and measured:
        gpus_per_machine = 8
    if gpus_per_machine is not None:
        gpus_per_machine = _check_int("gpus_per_machine", gpus_per_machine, 1, MAX_GPUS_PER_MACHINE)
    if rtt_coupling is not None and not measured:
        raise InputError(f"rtt_coupling applies to mode='measured' only, got rtt_coupling={rtt_coupling!r} with mode={mode!r}")
    if rtt_coupling is None:
        rtt_coupling = 1.0
    if not is_real(rtt_coupling) or not 0 <= rtt_coupling <= 1:
        raise InputError(f"rtt_coupling must be a number in [0, 1], got {rtt_coupling!r}")
    gpu_names, gpu_w = _resolve_gpu_mix(gpu_mix)
    layout = _Layout(n_regions, sizes_range, max_regions, gpus_per_machine)
    # about 20 float64/int64 per machine at the peak (the per-region GPU mix drawn per machine included)
    regions_for_memory = n_regions if n_regions is not None else -(-n // sizes_range[0])
    estimate = 8 * n * (len(gpu_names) + 20) + (17 * min(regions_for_memory, max_regions) ** 2 if measured else 0)
    with naming_out_of_memory("generate_cluster", {"machines": n, "regions": regions_for_memory,
                                                   "GPU types": len(gpu_names)}, estimate):
        if measured:
            return _generate_measured(n, seed, layout, float(missing_fraction), missing_links, gpu_names, gpu_w,
                                      float(utilisation), float(rtt_coupling))
        return _generate(n, seed, layout, float(missing_fraction), missing_links, gpu_names, gpu_w,
                         float(utilisation))


@dataclass
class _Layout:
    """How machines sit in regions: a fixed region count or a size range, and GPUs per machine."""

    n_regions: int | None
    sizes_range: tuple | None
    max_regions: int
    gpus_per_machine: int | None


def _check_sizes_range(value):
    """``machines_per_region`` as ``(lo, hi)`` with 1 <= lo <= hi, or None."""
    if value is None:
        return None
    if is_int(value):
        k = _check_int("machines_per_region", value, 1)
        return (k, k)
    if not isinstance(value, (tuple, list)) or len(value) != 2 or not all(is_int(v) for v in value):
        raise InputError(f"machines_per_region must be an int >= 1 or a pair (lo, hi) of ints, got {value!r}")
    lo, hi = int(value[0]), int(value[1])
    if not 1 <= lo <= hi:
        raise InputError(f"machines_per_region must satisfy 1 <= lo <= hi, got {value!r}")
    return (lo, hi)


def _region_sizes(rng, n: int, layout: _Layout) -> np.ndarray:
    """Machines per region (rule 5, or uniform sizes in ``layout.sizes_range``), summing to ``n``."""
    if layout.sizes_range is None:
        share = rng.dirichlet(np.ones(layout.n_regions))
        return 1 + rng.multinomial(n - layout.n_regions, share)
    lo, hi = layout.sizes_range
    sizes = rng.integers(lo, hi + 1, size=-(-n // lo))
    count = int(np.searchsorted(np.cumsum(sizes), n)) + 1   # the first prefix reaching n
    sizes = sizes[:count]
    sizes[-1] -= int(sizes.sum()) - n                        # the last region takes the remainder
    if count > layout.max_regions:
        raise InputError(f"machines_per_region={layout.sizes_range} puts {n} machines in {count} regions, more than "
                         f"the {layout.max_regions} this mode allows; raise the sizes or lower n")
    return sizes.astype(np.int64)


def _draw_gpus(rng, region: np.ndarray, n_regions: int, gpu_names: list, gpu_w: np.ndarray,
               gpus_per_machine: int | None, utilisation: float):
    """Rule 6: (gpu type index [N], GPUs [N], memory_gb [N], tflops [N])."""
    G = len(gpu_names)
    mix = rng.dirichlet(G * gpu_w, size=n_regions) if G > 1 else np.ones((n_regions, 1))
    gpu = _draw_categorical(rng, np.cumsum(mix, axis=1)[region])
    if gpus_per_machine is None:
        gpus = rng.choice(np.array(GPUS_PER_SERVER, dtype=np.int64), size=region.size, p=GPUS_PER_SERVER_P)
    else:
        gpus = np.full(region.size, gpus_per_machine, dtype=np.int64)
    info = [cluster_spec.gpu_info(g) for g in gpu_names]
    mem = np.array([g["memory_gb"] for g in info], dtype=np.float64)
    peak = np.array([g["training_peak_tflops"] for g in info], dtype=np.float64)
    return gpu, gpus, gpus * mem[gpu], gpus * peak[gpu] * utilisation


def _generate(n, seed, layout, missing_fraction, missing_links, gpu_names, gpu_w, utilisation) -> RegionalCluster:
    rng_regions, rng_latency, rng_machines, rng_gpus, rng_links = (
        np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(_N_STREAMS))

    if layout.sizes_range is None:
        picked = _pick_regions(rng_regions, layout.n_regions)
    else:  # the sizes decide how many regions; drawn first, from the machines' stream
        sizes = _region_sizes(rng_machines, n, layout)
        picked = _pick_regions(rng_regions, sizes.size)
    n_regions = len(picked)
    table = cities()
    lat = np.array([table[k]["lat"] for k in picked], dtype=np.float64)
    lon = np.array([table[k]["lon"] for k in picked], dtype=np.float64)
    base_latency, base_bandwidth = _region_network(rng_latency, lat, lon)

    if layout.sizes_range is None:
        sizes = _region_sizes(rng_machines, n, layout)
    region = np.repeat(np.arange(n_regions, dtype=np.int64), sizes)
    access = rng_machines.uniform(ACCESS_MS_LOW, ACCESS_MS_HIGH, size=n)
    gpu, gpus, memory, tflops = _draw_gpus(rng_gpus, region, n_regions, gpu_names, gpu_w, layout.gpus_per_machine,
                                           utilisation)
    return RegionalCluster(
        region_names=[table[k]["name"] for k in picked], region_lat=lat, region_lon=lon,
        base_latency_ms=base_latency, base_bandwidth_gbps=base_bandwidth,
        region_link=_region_links(rng_links, n_regions, missing_fraction),
        region=region, access_ms=access, gpu_names=gpu_names, gpu=gpu, gpus=gpus,
        memory_gb=memory, tflops=tflops, missing_links=missing_links, seed=seed)


def _generate_measured(n, seed, layout, missing_fraction, missing_links, gpu_names, gpu_w, utilisation,
                       rtt_coupling) -> RegionalCluster:
    """Rule 9: sites, RTT and throughput of :mod:`hulk.plan.cloud_network`; machines and GPUs as
    rules 5-7 (with ``layout``); no per-machine access latency (the same-zone round trip is the
    region's diagonal)."""
    rng_regions, rng_network, rng_machines, rng_gpus, rng_links = (
        np.random.default_rng(s) for s in np.random.SeedSequence([seed, _MEASURED_STREAM_TAG]).spawn(_N_STREAMS))
    sizes = _region_sizes(rng_machines, n, layout)
    n_regions = sizes.size
    names, lat, lon = cloud_network.draw_sites(rng_regions, n_regions)
    rtt = cloud_network.rtt_ms(rng_network, lat, lon)
    bandwidth = cloud_network.throughput_gbps(rng_network, rtt, rtt_coupling)
    region = np.repeat(np.arange(n_regions, dtype=np.int64), sizes)
    gpu, gpus, memory, tflops = _draw_gpus(rng_gpus, region, n_regions, gpu_names, gpu_w, layout.gpus_per_machine,
                                           utilisation)
    return RegionalCluster(
        region_names=names, region_lat=lat, region_lon=lon, base_latency_ms=rtt / 2, base_bandwidth_gbps=bandwidth,
        region_link=_region_links(rng_links, n_regions, missing_fraction),
        region=region, access_ms=np.zeros(n), gpu_names=gpu_names, gpu=gpu, gpus=gpus,
        memory_gb=memory, tflops=tflops, missing_links=missing_links, seed=seed)
