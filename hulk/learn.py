"""The learned planner: a GNN that classifies machines into job slots, taught by the search planner.

The paper trains its GNN on one hand-labelled cluster. Here the GNN learns from a teacher, the
search planner (``hulk.planner.plan(..., "search")``), on many generated clusters
(:mod:`hulk.generate`), so that one model serves clusters and job sets it has not seen.

Problem encoding (:func:`encode`)
---------------------------------
*Jobs.* At most ``max_jobs`` jobs (default ``MAX_JOBS`` = 6), ordered by memory need
(``ModelSpec.memory_need_bytes`` of the C++ planner, largest first, ties in the given order):
that order defines the *slots*. Classes are slot ``0 .. max_jobs - 1`` and ``max_jobs`` = idle.

*Node features* (one row per machine, ``NODE_FEATURES`` names them):

- the machine: ``log2 memory_gb``, ``log2 tflops`` (sustained), ``log2 gpus`` (0 when unknown),
  its position as a unit vector ``(x, y, z)`` from latitude and longitude (zeros when unknown;
  an explicit cluster without coordinates takes its region's city from ``hulk/data/cities.json``
  when the name matches) and its access latency in ms (0 for explicit clusters);
- its standing in the cluster: rank of its throughput and of its memory in [0, 1] (1 = the
  largest), ``log2`` of its throughput over the cluster's largest, and the rank of its
  throughput within its region;
- the cluster: ``log2`` of the machine count, ``log2`` of total memory over the jobs' total need;
- the job set, the same for every machine, per slot: present (0/1), ``log10`` memory need in
  bytes, ``log10`` training FLOPs per iteration, ``log2`` of the most data-parallel replicas the
  job can use (global batch / micro-batches), and three per-machine job features: ``log2`` of
  this machine's memory over the job's need, whether the greedy rule (:mod:`hulk.greedy`: each
  job on the fastest machines of one region that cover its memory) gives this machine to the
  job, and whether the machine is in a region where the rule put the job; and one more job
  feature, ``log2`` of the job's finish time over the makespan when the rule's groups are planned
  (0 for the job that sets the makespan). Absent slots are all zeros.

Why the greedy features: the teacher's choice is global (a few of the fastest machines of one
region), which per-machine classes cannot see from a few hops of message passing; without
them the GNN predicted "idle" nearly everywhere and a plan was 2x Search's. With them the GNN
starts from the rule's groups and learns where the teacher departs from it (most often: more
machines for a job that gains from data parallelism).

*Edges.* A generated (regional) cluster has no explicit links: the GNN sees
``RegionalCluster.sample_links(k_local, k_remote, seed)``, up to ``k_local`` machines of the
same region and ``k_remote`` of other directly connected regions per machine (default 8 + 8), so
the degree does not grow with the cluster. An explicit cluster uses its own links. Edge
features: ``ln(latency_ms + 0.01)`` and ``ln(bandwidth_gbps)``; both directions.

Teacher labels (:func:`label_sample`)
-------------------------------------
The search planner plans the generated cluster with a time limit and an iteration budget; each
machine's label is the slot of the job whose plan uses it, else idle. A sample whose search plan
runs jobs one after another (Systems A/B/C won) is kept with every machine unlabelled (-1) and
counted; it does not train the model.

Data set (:func:`make_dataset`): sample ``i`` of a seed draws its size log-uniformly from
``sizes`` and its jobs as a random subset of the catalogue (1 to ``max_jobs`` jobs), dropping the
largest while the jobs need more than ``MEMORY_HEADROOM`` = 0.6 of the cluster's memory. Labels
are computed in parallel worker processes and cached per sample in ``cache_dir`` (the file name
is a hash of everything the label depends on), so a rerun only loads them.

From groups to a plan (:meth:`LearnedPlanner.classify`)
-------------------------------------------------------
:func:`decode_groups` keeps the greedy rule's groups and adds the machines the GNN predicts for
each job. The GNN proposes, the cost model decides: the rule's groups and the GNN's proposals at
four probability thresholds are planned (Algorithm 1 and partition, milliseconds each) and the
shortest plan's classification is kept. ``hulk.planner.plan(..., "hulk")`` takes the rule's
groups and the GNN's best proposal (:meth:`LearnedPlanner.proposals`), and up to
``HEURISTIC_CANDIDATE_MAX_MACHINES`` machines the region heuristic's groups, grows each (the job
that finishes last gets more machines, :func:`hulk.planner.grow_bottleneck`), keeps the shortest
and refines it.

What the GNN adds, measured (``benchmarks/bench_learned.py``, RESULTS.md): on held-out clusters
the GNN's own groups equal the rule's almost everywhere, and Hulk with the GNN plans as well as
Hulk with the rule alone. The teacher's departures from the rule (which extra machines a job
gets) are spread over many near-equivalent machines, so per-machine classes stay "idle" with
high confidence; a directed growth step recovers most of the teacher's gain without learning.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import math
import numbers
import multiprocessing
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import cluster_spec, generate, models
from ._io import atomic_write, check_input_path, read_json_file
from ._progress import Progress
from .gnn import GNN
from .graph import Graph
from .greedy import assign_fastest_in_one_region

MAX_JOBS = 6
MEMORY_HEADROOM = 0.6
MAX_SAMPLES = 100_000  # a data set larger than this would take days to label
FORMAT_VERSION = "hulk-learned-planner/1"
_DATASET_VERSION = 5  # bump when labels or generation change, so caches are not reused

_JOB_FEATURES = ("present", "log10_need_bytes", "log10_flops_per_iteration", "log2_max_replicas",
                 "log2_machine_memory_over_need", "greedy_takes", "in_greedy_region",
                 "log2_greedy_finish_over_makespan")
_MACHINE_FEATURES = ("log2_memory_gb", "log2_tflops", "log2_gpus", "x", "y", "z", "access_ms",
                     "tflops_rank", "memory_rank", "log2_tflops_over_max", "log2_machines",
                     "log2_memory_over_need", "tflops_rank_in_region")


def _is_int(v) -> bool:  # Python and numpy integers, not bools
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_real(v) -> bool:  # Python and numpy reals (np.float32 included), not bools
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def node_feature_names(max_jobs: int = MAX_JOBS) -> list[str]:
    return list(_MACHINE_FEATURES) + [f"job{s}_{f}" for s in range(max_jobs) for f in _JOB_FEATURES]


EDGE_FEATURES = ("ln_latency_ms", "ln_bandwidth_gbps")


# --------------------------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------------------------

def _job_need_bytes(jobs: list) -> np.ndarray:
    from .planner import _core_model
    return np.array([_core_model(j).memory_need_bytes for j in jobs], dtype=np.float64)


def slot_order(jobs: list) -> list[int]:
    """Job indices by decreasing memory need (stable): slot s holds job ``slot_order(jobs)[s]``."""
    need = _job_need_bytes(jobs)
    return sorted(range(len(jobs)), key=lambda j: -need[j])


def _unit_vector(lat, lon) -> np.ndarray:
    la, lo = np.radians(lat), np.radians(lon)
    return np.stack([np.cos(la) * np.cos(lo), np.cos(la) * np.sin(lo), np.sin(la)], axis=1)


@dataclass
class _Machines:
    memory_gb: np.ndarray
    tflops: np.ndarray
    gpus: np.ndarray
    pos: np.ndarray  # [N, 3]
    access_ms: np.ndarray
    region: np.ndarray  # [N] int64 region index (an explicit cluster: by first appearance of its name)


def _machines_of(cluster) -> _Machines:
    if isinstance(cluster, generate.RegionalCluster):
        pos = _unit_vector(cluster.region_lat[cluster.region], cluster.region_lon[cluster.region])
        return _Machines(cluster.memory_gb.astype(np.float64), cluster.tflops.astype(np.float64),
                         cluster.gpus.astype(np.float64), pos, cluster.access_ms.astype(np.float64),
                         np.asarray(cluster.region, dtype=np.int64))
    ms = cluster.machines
    city = {c["name"]: (c["lat"], c["lon"]) for c in generate.cities()}
    pos = np.zeros((len(ms), 3))
    for i, m in enumerate(ms):
        where = (m["lat"], m["lon"]) if m["lat"] is not None and m["lon"] is not None else city.get(m["region"])
        if where is not None:
            pos[i] = _unit_vector(np.array([where[0]]), np.array([where[1]]))[0]
    names = [m["region"] for m in ms]
    index = {r: i for i, r in enumerate(dict.fromkeys(names))}
    return _Machines(np.array([m["memory_gb"] for m in ms], np.float64), np.array([m["tflops"] for m in ms], np.float64),
                     np.array([m["gpus"] or 0 for m in ms], np.float64), pos, np.zeros(len(ms)),
                     np.array([index[r] for r in names], dtype=np.int64))


def _links_of(cluster, k_local: int, k_remote: int, seed: int):
    if isinstance(cluster, generate.RegionalCluster):
        return cluster.sample_links(k_local=k_local, k_remote=k_remote, seed=seed)
    ls = cluster.links
    return (np.array([l["a"] for l in ls], np.int64), np.array([l["b"] for l in ls], np.int64),
            np.array([l["latency_ms"] for l in ls], np.float64), np.array([l["bandwidth_gbps"] for l in ls], np.float64))


def _rank01(v: np.ndarray) -> np.ndarray:
    """Rank of each value in [0, 1] (1 = the largest): which machines are the cluster's best
    is a global fact that a few message-passing layers cannot see on their own."""
    if v.size < 2:
        return np.ones_like(v, dtype=np.float64)
    return np.argsort(np.argsort(v, kind="stable"), kind="stable") / (v.size - 1)


def _rank01_within(v: np.ndarray, group: np.ndarray) -> np.ndarray:
    """:func:`_rank01` within each group (1 = the group's largest; a group of one machine: 1)."""
    order = np.lexsort((np.arange(v.size), v, group))  # by group, then value, then index
    sizes = np.bincount(group)
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    pos = np.arange(v.size) - first[group[order]]  # position within the group, smallest first
    out = np.empty(v.size, dtype=np.float64)
    out[order] = np.where(sizes[group[order]] > 1, pos / np.maximum(sizes[group[order]] - 1, 1), 1.0)
    return out


def encode(cluster, jobs, *, max_jobs: int = MAX_JOBS, k_local: int = 8, k_remote: int = 8, seed: int = 0) -> Graph:
    """The GNN input for ``cluster`` (a ClusterSpec or RegionalCluster) and ``jobs`` (names or
    ModelSpecs, at most ``max_jobs``). See the module docstring for the features."""
    from .planner import as_cluster_spec, as_model_specs
    job_specs = as_model_specs(jobs)
    if len(job_specs) > max_jobs:
        raise ValueError(f"jobs: this encoding has {max_jobs} job slots, got {len(job_specs)} jobs")
    cluster = as_cluster_spec(cluster)  # a RegionalCluster passes through
    m = _machines_of(cluster)
    n = len(m.memory_gb)
    need = _job_need_bytes(job_specs)
    order = slot_order(job_specs)
    cols = [np.log2(m.memory_gb), np.log2(m.tflops), np.log2(np.maximum(m.gpus, 1.0)) * (m.gpus > 0),
            m.pos[:, 0], m.pos[:, 1], m.pos[:, 2], m.access_ms,
            _rank01(m.tflops), _rank01(m.memory_gb), np.log2(m.tflops / m.tflops.max()),
            np.full(n, math.log2(n)), np.full(n, math.log2(m.memory_gb.sum() * 1e9 / need.sum())),
            _rank01_within(m.tflops, m.region)]
    greedy = assign_fastest_in_one_region(m.memory_gb * 1e9, m.tflops, m.region, need)
    finish = _greedy_finish_over_makespan(cluster, job_specs, greedy)
    for s in range(max_jobs):
        if s < len(order):
            j = job_specs[order[s]]
            flops = j.flops_per_token * j.global_batch * j.seq_len
            takes = greedy == order[s]
            cols += [np.ones(n), np.full(n, math.log10(need[order[s]])), np.full(n, math.log10(flops)),
                     np.full(n, math.log2(j.global_batch / j.micro_batches)), np.log2(m.memory_gb * 1e9 / need[order[s]]),
                     takes.astype(np.float64), np.isin(m.region, np.unique(m.region[takes])).astype(np.float64),
                     np.full(n, finish[order[s]])]
        else:
            cols += [np.zeros(n)] * len(_JOB_FEATURES)
    x = np.stack(cols, axis=1).astype(np.float32)
    a, b, lat, bw = _links_of(cluster, k_local, k_remote, seed)
    e = np.stack([np.log(lat + 0.01), np.log(bw)], axis=1).astype(np.float32)
    return Graph(n, np.stack([a, b], axis=1), node_features=x, edge_features=e)


def _greedy_finish_over_makespan(cluster, job_specs, greedy: np.ndarray) -> np.ndarray:
    """Per job, ``log2`` of its finish time over the makespan when the greedy groups are planned
    (Algorithm 1 and partition, no refinement): 0 for the job that sets the makespan, below 0 for
    jobs with time to spare. The makespan is set by one job, so whether a job is that one decides
    whether more machines for it pay off; the GNN cannot work that out from machine features. An
    infeasible job counts as twice the longest feasible one (+1)."""
    from .planner import plan
    p = plan(cluster, job_specs, "hulk", classes=greedy, refine_iterations=0, grow_rounds=0)
    finish = np.array([j["finish_s"] if j["feasible"] else math.inf for j in p.jobs], dtype=np.float64)
    finite = finish[np.isfinite(finish)]
    if finite.size == 0 or finite.max() <= 0:
        return np.ones(len(job_specs))
    return np.where(np.isfinite(finish), np.log2(np.maximum(finish, 1e-9) / finite.max()), 1.0)


def labels_from_plan(plan, jobs, max_jobs: int = MAX_JOBS) -> np.ndarray:
    """Slot per machine from a concurrent plan (idle = ``max_jobs``); all -1 for a sequential
    plan (no machine-to-job classification exists). A machine used by two jobs (one waits for
    the other) takes the larger job's slot."""
    n = len(plan.cluster)
    y = np.full(n, -1 if plan.sequential else max_jobs, dtype=np.int64)
    if plan.sequential:
        return y
    order = slot_order(plan._jobs)
    for s in reversed(range(len(order))):
        y[np.asarray(plan.jobs[order[s]]["machines"], dtype=np.int64)] = s
    return y


def classes_from_slots(slots: np.ndarray, jobs) -> list[int]:
    """Job index per machine (-1 idle) from predicted slots; a slot without a job counts as idle."""
    order = slot_order(jobs)
    return [order[s] if 0 <= s < len(order) else -1 for s in np.asarray(slots).tolist()]


def decode_groups(proba: np.ndarray, memory_bytes: np.ndarray, jobs, rule: np.ndarray,
                  threshold: float = 0.0) -> list[int]:
    """Machine groups from class probabilities [N, max_jobs + 1] and the greedy rule's groups
    ``rule`` [N] (job index per machine, -1 idle; the groups the features describe).

    Each job keeps the rule's group and adds the machines the rule leaves idle that predict its
    slot by arg-max with probability at least ``threshold``, jobs in slot order (largest memory
    need first). A job the rule could not
    place takes free machines in decreasing probability of its slot until its memory is covered.
    The model only adds: when it replaced the rule's machines (arg-max, or each job's best by
    probability) its plans were 2x the teacher's on the validation clusters, often because one
    job took a slower machine than the rule's or so many that the next job was left with none.
    Algorithm 1 repairs what is still short."""
    order = slot_order(jobs)
    need = _job_need_bytes(jobs)
    predicted = proba.argmax(axis=1)
    classes = np.asarray(rule, dtype=np.int64).copy()
    for s, j in enumerate(order):
        classes[(classes < 0) & (predicted == s) & (proba[:, s] >= threshold)] = j
        have = memory_bytes[classes == j].sum()
        if have < need[j]:
            free = np.flatnonzero(classes < 0)
            ranked = free[np.argsort(-proba[free, s], kind="stable")]
            k = int(np.searchsorted(np.cumsum(memory_bytes[ranked]), need[j] - have)) + 1
            classes[ranked[:k]] = j
    return classes.tolist()


# --------------------------------------------------------------------------------------------
# Data set: generated clusters labelled by the search planner
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SampleSpec:
    index: int
    n: int
    cluster_seed: int
    jobs: tuple

    def cluster(self) -> generate.RegionalCluster:
        return generate.generate_cluster(self.n, seed=self.cluster_seed)


def sample_specs(count: int, seed: int = 0, sizes=(16, 300), max_jobs: int = MAX_JOBS) -> list[SampleSpec]:
    """``count`` problem instances, deterministic in ``seed`` (see the module docstring)."""
    lo, hi = sizes
    if not (_is_int(lo) and _is_int(hi) and 2 <= lo <= hi):
        raise ValueError(f"sizes must be two integers 2 <= lo <= hi, got {sizes!r}")
    out = []
    for i in range(count):
        rng = np.random.default_rng([seed, i])
        n = int(round(math.exp(rng.uniform(math.log(lo), math.log(hi + 0.499)))))
        n = min(max(n, lo), hi)
        cluster_seed = int(rng.integers(0, 2**31 - 1))
        memory = generate.generate_cluster(n, seed=cluster_seed).memory_gb.sum() * 1e9
        chosen = draw_jobs(rng, memory, max_jobs)
        if chosen:
            out.append(SampleSpec(i, n, cluster_seed, tuple(chosen)))
    return out


def draw_jobs(rng, cluster_memory_bytes: float, max_jobs: int = MAX_JOBS) -> list[str]:
    """A random job set from the catalogue: 1 to ``max_jobs`` distinct models, the largest
    dropped while they need more than ``MEMORY_HEADROOM`` of the cluster's memory (may be empty)."""
    names = sorted(models.catalogue())
    specs = models.catalogue()
    need = dict(zip(names, _job_need_bytes([specs[k] for k in names])))
    k = int(rng.integers(1, min(max_jobs, len(names)) + 1))
    chosen = [names[t] for t in rng.choice(len(names), size=k, replace=False)]
    chosen.sort(key=lambda j: -need[j])
    while chosen and sum(need[j] for j in chosen) > MEMORY_HEADROOM * cluster_memory_bytes:
        chosen.pop(0)
    return chosen


@dataclass
class Sample:
    spec: SampleSpec
    labels: np.ndarray        # [N] slot per machine, -1 when the teacher's plan was sequential
    search_makespan_s: float
    search_s: float


def _sample_key(spec: SampleSpec, time_limit_s: float, iterations: int, max_jobs: int) -> str:
    text = json.dumps([_DATASET_VERSION, spec.n, spec.cluster_seed, list(spec.jobs), time_limit_s, iterations, max_jobs,
                       generate.LATENCY_A_MS, generate.LATENCY_B_MS_PER_KM])
    return hashlib.sha1(text.encode()).hexdigest()[:20]


def label_sample(spec: SampleSpec, time_limit_s: float = 2.0, iterations: int = 2000,
                 max_jobs: int = MAX_JOBS) -> Sample:
    """The teacher's labels for one instance (search planner, seed = the sample index)."""
    from .planner import plan
    p = plan(spec.cluster(), list(spec.jobs), "search", time_limit_s=time_limit_s, seed=spec.index,
             max_iterations=iterations)
    return Sample(spec, labels_from_plan(p, list(spec.jobs), max_jobs), p.makespan_s, p.planning_s)


def _label_to_cache(args) -> tuple[int, str]:
    spec, time_limit_s, iterations, max_jobs, path = args
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    s = label_sample(spec, time_limit_s, iterations, max_jobs)
    import io
    buf = io.BytesIO()
    np.savez(buf, labels=s.labels, search_makespan_s=s.search_makespan_s, search_s=s.search_s)
    atomic_write(path, buf.getvalue(), what="label cache file")
    return spec.index, path


def default_cache_dir() -> Path:
    return Path(os.environ.get("HULK_CACHE", Path.home() / ".cache" / "hulk")) / "labels"


def make_dataset(count: int, seed: int = 0, *, sizes=(16, 300), time_limit_s: float = 2.0, iterations: int = 2000,
                 max_jobs: int = MAX_JOBS, cache_dir=None, workers: int | None = None,
                 progress: bool = True) -> list[Sample]:
    """Generates ``count`` instances and labels them with the search planner, in ``workers``
    processes (default: the CPU count), caching each label file in ``cache_dir``."""
    if not _is_int(count) or count < 1:
        raise ValueError(f"count must be a positive integer, got {count!r}")
    if not (_is_real(time_limit_s) and math.isfinite(time_limit_s) and time_limit_s > 0):
        raise ValueError(f"time_limit_s must be a positive number of seconds, got {time_limit_s!r}")
    if not _is_int(iterations) or iterations < 0:
        raise ValueError(f"iterations must be a non-negative integer, got {iterations!r}")
    if count > MAX_SAMPLES:
        raise ValueError(f"count = {count} is more than the {MAX_SAMPLES} samples a data set may have")
    if workers is not None and (not _is_int(workers) or workers < 1):
        raise ValueError(f"workers must be a positive integer (or None for the CPU count), got {workers!r}")
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    specs = sample_specs(count, seed, sizes, max_jobs)
    paths = {s.index: str(cache / f"sample-{_sample_key(s, time_limit_s, iterations, max_jobs)}.npz") for s in specs}
    todo = [s for s in specs if not os.path.exists(paths[s.index])]
    workers = workers or os.cpu_count() or 1
    bar = Progress(len(todo), "labelling", enabled=progress and bool(todo))
    if todo:
        jobs_args = [(s, time_limit_s, iterations, max_jobs, paths[s.index]) for s in todo]
        if workers == 1:
            for a in jobs_args:
                _label_to_cache(a)
                bar.update()
        else:
            ctx = multiprocessing.get_context("spawn")
            with cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
                for _ in pool.map(_label_to_cache, jobs_args):
                    bar.update()
    return [_load_cached_sample(s, paths[s.index], max_jobs) for s in specs]


def _load_cached_sample(spec: SampleSpec, path: str, max_jobs: int) -> Sample:
    """One cached label file, checked against the sample it belongs to; errors name the file."""
    def bad(why: str):
        return ValueError(f"label cache file {path!r}: {why}; delete it to relabel the sample")
    try:
        with np.load(path, allow_pickle=False) as f:
            missing = {"labels", "search_makespan_s", "search_s"} - set(f.files)
            if missing:
                raise bad(f"missing {sorted(missing)}")
            labels, makespan, seconds = f["labels"], f["search_makespan_s"], f["search_s"]
    except (OSError, ValueError, EOFError, KeyError) as exc:
        if isinstance(exc, ValueError) and str(exc).startswith("label cache file"):
            raise
        raise bad(f"unreadable ({exc})") from None
    if labels.dtype.kind not in "iu" or labels.shape != (spec.n,):
        raise bad(f"labels have dtype {labels.dtype} and shape {labels.shape}, expected int64 ({spec.n},)")
    if labels.size and (labels.min() < -1 or labels.max() > max_jobs):
        raise bad(f"labels outside [-1, {max_jobs}]")
    if makespan.shape != () or seconds.shape != () or not (np.isfinite(makespan) and np.isfinite(seconds)):
        raise bad("search_makespan_s and search_s must be finite scalars")
    return Sample(spec, labels.astype(np.int64), float(makespan), float(seconds))


# --------------------------------------------------------------------------------------------
# The learned planner: a GNN plus its encoding
# --------------------------------------------------------------------------------------------

class LearnedPlanner:
    """A trained GNN with the encoding it was trained with. :meth:`classify` gives the job index
    per machine (-1 idle) for ``hulk.planner.plan(..., "hulk", model=...)``."""

    def __init__(self, gnn: GNN, max_jobs: int = MAX_JOBS, k_local: int = 8, k_remote: int = 8, info=None):
        self.gnn, self.max_jobs, self.k_local, self.k_remote = gnn, int(max_jobs), int(k_local), int(k_remote)
        self.info = dict(info or {})

    def encode(self, cluster, jobs) -> Graph:
        return encode(cluster, jobs, max_jobs=self.max_jobs, k_local=self.k_local, k_remote=self.k_remote)

    def predict_slots(self, cluster, jobs) -> np.ndarray:
        return self.gnn.predict(self.encode(cluster, jobs))

    def proposals(self, cluster, jobs) -> list[np.ndarray]:
        """The classifications Hulk chooses from: the greedy rule's groups, then (when it differs)
        the GNN's proposal whose plan is shortest among :func:`decode_groups` at each of
        :data:`THRESHOLDS` (Algorithm 1 and partition, milliseconds each; ties: lower threshold).
        Each is a job index per machine [N] (-1 idle)."""
        from .planner import as_cluster_spec, as_model_specs, plan
        job_specs = as_model_specs(jobs)
        cluster = as_cluster_spec(cluster)
        proba = self.gnn.predict_proba(self.encode(cluster, job_specs))
        memory, rule = _rule_groups(cluster, job_specs)
        tried, best, best_s = [rule.tolist()], None, math.inf
        for t in THRESHOLDS:
            classes = decode_groups(proba, memory, job_specs, rule, t)
            if classes in tried:
                continue
            tried.append(classes)
            m = plan(cluster, job_specs, "hulk", classes=np.asarray(classes), refine_iterations=0,
                     grow_rounds=0).makespan_s
            if m < best_s:
                best, best_s = np.asarray(classes, dtype=np.int64), m
        return [rule] + ([best] if best is not None else [])

    def classify(self, cluster, jobs, keep_better_of_rule: bool = True) -> list[int]:
        """Job index per machine (-1 idle). With ``keep_better_of_rule`` (the default) the GNN
        proposes and the cost model decides: of :meth:`proposals` (the rule's groups and the
        GNN's best proposal) the one whose plan (Algorithm 1 and partition) is shorter; ties:
        the rule's. Without it: the GNN's groups at threshold 0 (every machine it predicts for
        a job, added to the rule's groups by :func:`decode_groups`)."""
        from .planner import as_cluster_spec, as_model_specs, plan
        job_specs = as_model_specs(jobs)
        cluster = as_cluster_spec(cluster)
        if not keep_better_of_rule:
            proba = self.gnn.predict_proba(self.encode(cluster, job_specs))
            memory, rule = _rule_groups(cluster, job_specs)
            return decode_groups(proba, memory, job_specs, rule)
        candidates = self.proposals(cluster, job_specs)
        times = [plan(cluster, job_specs, "hulk", classes=c, refine_iterations=0, grow_rounds=0).makespan_s
                 for c in candidates]
        return candidates[int(np.argmin(times))].tolist()

    def save(self, path) -> None:
        """Writes the weights to ``path`` and the encoding to ``path + '.json'``.

        Both go to temporary files in the same folder first and are renamed into place only
        when both are complete. The encoding records the SHA-256 of the weights it belongs to,
        so a save killed between the two renames leaves a pair that :meth:`load` rejects by
        name instead of pairing new weights with an old encoding silently."""
        path = os.fspath(path)
        if not path:
            raise ValueError("LearnedPlanner.save: the path is empty")
        folder = os.path.dirname(os.path.abspath(path))
        import tempfile
        fd, tmp_weights = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp-", dir=folder)
        os.close(fd)
        try:
            self.gnn.save(tmp_weights)  # itself written through a temporary file
            digest = hashlib.sha256(Path(tmp_weights).read_bytes()).hexdigest()
            meta = dict(version=FORMAT_VERSION, max_jobs=self.max_jobs, k_local=self.k_local, k_remote=self.k_remote,
                        node_features=node_feature_names(self.max_jobs), edge_features=list(EDGE_FEATURES),
                        weights_sha256=digest, info=self.info)
            text = json.dumps(meta, indent=1, allow_nan=False) + "\n"
            os.replace(tmp_weights, path)
        except BaseException:
            if os.path.exists(tmp_weights):
                os.unlink(tmp_weights)
            raise
        atomic_write(path + ".json", text, what="learned-planner encoding")

    @classmethod
    def load(cls, path, device: str = "cpu") -> "LearnedPlanner":
        path = check_input_path(path, "learned planner model")
        meta_path = path + ".json"
        if not os.path.isfile(meta_path):
            raise FileNotFoundError(f"no encoding file {meta_path!r} beside the model (written by LearnedPlanner.save)")
        meta = _check_encoding(read_json_file(meta_path, "learned-planner encoding", max_bytes=1 << 20), meta_path)
        digest = meta.get("weights_sha256")
        if digest is not None and hashlib.sha256(Path(path).read_bytes()).hexdigest() != digest:
            raise ValueError(f"{path}: these weights are not the ones {meta_path} was saved with (weights_sha256 "
                             f"differs; an interrupted or mixed save?); save the planner again")
        gnn = GNN.load(path, device=device)
        if gnn.config["num_classes"] != meta["max_jobs"] + 1:
            raise ValueError(f"{path}: the model has {gnn.config['num_classes']} classes, the encoding expects "
                             f"{meta['max_jobs'] + 1} ({meta['max_jobs']} job slots + idle)")
        return cls(gnn, meta["max_jobs"], meta["k_local"], meta["k_remote"], meta.get("info"))

    def __repr__(self) -> str:
        return f"hulk.LearnedPlanner({self.max_jobs} job slots, {self.gnn!r})"


THRESHOLDS = (0.0, 0.5, 0.7, 0.9)  # the GNN's proposals that LearnedPlanner.classify plans and compares
MAX_JOB_SLOTS = 64        # bounds of an encoding file's max_jobs
MAX_SAMPLED_NEIGHBOURS = 256  # and of k_local, k_remote (links sampled per machine)
_ENCODING_KEYS = {"version": str, "max_jobs": int, "k_local": int, "k_remote": int, "node_features": list,
                  "edge_features": list, "weights_sha256": str, "info": dict}
_OPTIONAL_ENCODING_KEYS = ("weights_sha256", "info")


def _check_encoding(meta, meta_path: str) -> dict:
    """Every key of an encoding file present (but the optional ones), of its type and in range."""
    if not isinstance(meta, dict):
        raise ValueError(f"{meta_path}: expected a JSON object, got {type(meta).__name__}")
    unknown = sorted(set(meta) - set(_ENCODING_KEYS))
    if unknown:
        raise ValueError(f"{meta_path}: unknown keys {unknown}; allowed: {sorted(_ENCODING_KEYS)}")
    for key, kind in _ENCODING_KEYS.items():
        if key not in meta:
            if key in _OPTIONAL_ENCODING_KEYS:
                continue
            raise ValueError(f"{meta_path}: key {key!r} is missing")
        v = meta[key]
        if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
            raise ValueError(f"{meta_path}: {key} must be of type {kind.__name__}, got {v!r}")
    if meta["version"] != FORMAT_VERSION:
        raise ValueError(f"{meta_path}: version must be {FORMAT_VERSION!r}, got {meta['version']!r}")
    for key, lo, hi in (("max_jobs", 1, MAX_JOB_SLOTS), ("k_local", 0, MAX_SAMPLED_NEIGHBOURS),
                        ("k_remote", 0, MAX_SAMPLED_NEIGHBOURS)):
        if not lo <= meta[key] <= hi:
            raise ValueError(f"{meta_path}: {key} = {meta[key]} is out of range [{lo}, {hi}]")
    expected = node_feature_names(meta["max_jobs"])
    if meta["node_features"] != expected or meta["edge_features"] != list(EDGE_FEATURES):
        raise ValueError(f"{meta_path}: the model was trained on other features than this version of hulk "
                         f"computes ({len(meta['node_features'])} node features, expected "
                         f"{len(expected)}); retrain it with `hulk train`")
    return meta


DEFAULT_MODEL = Path(__file__).resolve().parent / "data" / "planner" / "hulk-planner.gnn"


def default_planner() -> LearnedPlanner:
    """The model shipped with the package (made by the command in ``hulk/data/planner/README.md``)."""
    if not DEFAULT_MODEL.is_file():
        raise FileNotFoundError(f"the shipped planner model is missing ({DEFAULT_MODEL}); reinstall hulk or "
                                f"train one with `hulk train`")
    return LearnedPlanner.load(DEFAULT_MODEL)


def train(samples: list, *, hidden=(64, 64, 64), epochs: int = 30, batch_graphs: int = 8, lr: float = 0.005,
          weight_decay: float = 1e-5, val_fraction: float = 0.15, seed: int = 0, device: str = "cpu",
          max_jobs: int = MAX_JOBS, k_local: int = 8, k_remote: int = 8, idle_ratio: float = 8.0,
          boost: int = 4, progress: bool = True, log=print) -> tuple:
    """Trains a LearnedPlanner on labelled samples; returns ``(planner, history)``.

    Samples are split once (``val_fraction`` for validation, by ``seed``); every epoch shuffles
    the training samples and takes one optimiser step per batch of ``batch_graphs`` graphs. Idle
    machines outnumber the others many times on large clusters, so each step's loss sees at
    most ``idle_ratio`` idle machines per machine with a job (a random subset). Training clusters
    where the greedy rule's plan is more than 2% behind the teacher's are seen ``boost`` times per
    epoch: elsewhere the teacher's labels mostly repeat the rule the features already carry.
    After each epoch the validation clusters are planned with the model's groups (Algorithm 1,
    no refinement); the weights of the epoch whose mean makespan over the teacher's is least
    (ties: best node accuracy) are kept, since node accuracy mostly counts idle machines."""
    usable = [s for s in samples if (s.labels >= 0).any()]
    if len(usable) < 2:
        raise ValueError(f"need at least 2 samples with labels, got {len(usable)} of {len(samples)}")
    for name, v in (("epochs", epochs), ("batch_graphs", batch_graphs), ("boost", boost)):
        if not _is_int(v) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if not 0 < val_fraction < 1:
        raise ValueError(f"val_fraction must be in (0, 1), got {val_fraction!r}")
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(usable))
    n_val = max(1, int(round(val_fraction * len(usable))))
    val, tr = [usable[i] for i in perm[:n_val]], [usable[i] for i in perm[n_val:]]
    if boost > 1:  # the samples that teach something the greedy rule does not know, seen more often
        hard = [s for s in tr if _greedy_over_teacher(s) > 1.02]
        log(f"boost: {len(hard)} of {len(tr)} training clusters where the greedy rule's plan is over 2% "
            f"behind the teacher's are seen {boost}x per epoch")
        tr = tr + hard * (boost - 1)
    t0 = time.perf_counter()
    graphs = {id(s): encode(s.spec.cluster(), list(s.spec.jobs), max_jobs=max_jobs, k_local=k_local,
                            k_remote=k_remote, seed=s.spec.index) for s in usable}
    log(f"encoded {len(usable)} clusters ({sum(len(s.labels) for s in usable)} machines) in "
        f"{time.perf_counter() - t0:.1f} s; {len(tr)} for training, {len(val)} for validation")
    greedy_val = float(np.mean([min(_greedy_over_teacher(s), 10.0) for s in val]))
    log(f"the greedy rule's plans on the validation clusters: makespan / teacher's {greedy_val:.4f} (mean)")
    gnn = GNN(num_classes=max_jobs + 1, hidden=hidden, pooling="mean", seed=seed, device=device)
    gnn.fit_scaler(Graph.batch([graphs[id(s)] for s in tr]))
    g_val = Graph.batch([graphs[id(s)] for s in val])
    y_val = np.concatenate([s.labels for s in val])
    history, best, best_acc, best_ratio = [], None, -1.0, math.inf

    def planner_of(model):
        return LearnedPlanner(model, max_jobs, k_local, k_remote)
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(tr))
        # The per-step bar only on a terminal: in a log the epoch line below says it all.
        bar = Progress(math.ceil(len(tr) / batch_graphs), f"epoch {epoch:3d}/{epochs}",
                       enabled=progress and sys.stderr.isatty())
        losses, correct, count = [], 0.0, 0
        for k in range(0, len(tr), batch_graphs):
            batch = [tr[i] for i in order[k:k + batch_graphs]]
            y = np.concatenate([s.labels for s in batch])
            mask = _balanced_mask(y, max_jobs, idle_ratio, rng)
            r = gnn.partial_fit(Graph.batch([graphs[id(s)] for s in batch]), y, mask, lr=lr, weight_decay=weight_decay)
            labelled = int(mask.sum())
            losses.append(r["loss"])
            correct += r["acc"] * labelled
            count += labelled
            bar.update(info=f"loss {np.mean(losses):.4f}")
        v = gnn.evaluate(g_val, y_val)
        ratio = _plan_ratio(planner_of(gnn), val, graphs)
        row = dict(epoch=epoch, train_loss=float(np.mean(losses)), train_acc=correct / max(count, 1),
                   val_loss=v["loss"], val_acc=v["acc"], val_plan_ratio=ratio, seconds=time.perf_counter() - t0)
        history.append(row)
        log(f"epoch {epoch:3d}  train loss {row['train_loss']:.4f} acc {row['train_acc']:.3f}  "
            f"val loss {row['val_loss']:.4f} acc {row['val_acc']:.3f} plan/teacher {ratio:.4f}  {row['seconds']:.0f} s")
        if best is None or (ratio, -v["acc"]) < (best_ratio, -best_acc):
            best_ratio, best_acc, best = ratio, v["acc"], _snapshot(gnn)
    _restore(gnn, best)
    info = dict(samples=len(usable), train=len(tr), val=len(val), epochs=epochs, best_val_acc=best_acc,
                best_val_plan_ratio=best_ratio, greedy_val_plan_ratio=greedy_val, idle_ratio=idle_ratio, boost=boost,
                hidden=list(hidden), lr=lr, batch_graphs=batch_graphs, seed=seed)
    return LearnedPlanner(gnn, max_jobs, k_local, k_remote, info), history


def _greedy_over_teacher(sample: Sample) -> float:
    """The greedy rule's makespan (Algorithm 1, partition, no refinement) over the teacher's."""
    from .planner import plan
    c, jobs = sample.spec.cluster(), list(sample.spec.jobs)
    return plan(c, jobs, "hulk", classes=_rule_groups(c, jobs)[1], refine_iterations=0,
                grow_rounds=0).makespan_s / sample.search_makespan_s


def _rule_inputs(cluster, jobs) -> tuple:
    """What the greedy rule reads: machines' memory in bytes, throughput and region, jobs' need."""
    from .planner import as_model_specs
    m = _machines_of(cluster)
    return m.memory_gb * 1e9, m.tflops, m.region, _job_need_bytes(as_model_specs(jobs))


def _rule_groups(cluster, jobs) -> tuple:
    """``(memory_bytes [N], the greedy rule's job index per machine [N])``."""
    memory, tflops, region, need = _rule_inputs(cluster, jobs)
    return memory, assign_fastest_in_one_region(memory, tflops, region, need)


def _plan_ratio(planner: "LearnedPlanner", samples: list, graphs: dict) -> float:
    """Mean over ``samples`` of the makespan of the planner's groups (decoded, Algorithm 1,
    partition, no refinement) over the teacher's: the quantity the model is for, where node
    accuracy mostly counts idle machines right. An infeasible plan counts as 10x the teacher's."""
    from .planner import as_model_specs, plan
    ratios = []
    for s in samples:
        c, job_specs = s.spec.cluster(), as_model_specs(list(s.spec.jobs))
        proba = planner.gnn.predict_proba(graphs[id(s)])
        memory, rule = _rule_groups(c, job_specs)
        classes = decode_groups(proba, memory, job_specs, rule)
        m = plan(c, job_specs, "hulk", classes=classes, refine_iterations=0, grow_rounds=0).makespan_s
        ratios.append(min(m / s.search_makespan_s, 10.0) if math.isfinite(m) else 10.0)
    return float(np.mean(ratios))


def _balanced_mask(y: np.ndarray, idle: int, idle_ratio: float, rng) -> np.ndarray:
    busy = (y >= 0) & (y != idle)
    n_idle = int((y == idle).sum())
    keep = 1.0 if n_idle == 0 else min(1.0, idle_ratio * max(int(busy.sum()), 1) / n_idle)
    return (busy | ((y == idle) & (rng.random(y.size) < keep))).astype(np.uint8)


def _snapshot(gnn: GNN) -> bytes:
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "m.gnn")
        gnn.save(p)
        return Path(p).read_bytes()


def _restore(gnn: GNN, blob: bytes) -> None:
    import tempfile
    from . import _core
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "m.gnn")
        Path(p).write_bytes(blob)
        gnn._model = _core.engine.Model.load(p)
