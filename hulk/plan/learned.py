"""The learned planner: a GNN that classifies machines into job slots, taught by the search planner.

The teacher's data set and training are in :mod:`hulk.plan.training`.

The paper trains its GNN on one hand-labelled cluster. Here the GNN learns from a teacher, the
search planner (``hulk.plan.plan(..., "search")``), on many generated clusters
(:mod:`hulk.plan.generate`), so that one model serves clusters and job sets it has not seen.

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
  this machine's memory over the job's need, whether the greedy rule (:func:`hulk.plan.rules.greedy_classes`: each
  job on the fastest machines of one region that cover its memory) gives this machine to the
  job, and whether the machine is in a region where the rule put the job; and one more job
  feature, ``log2`` of the job's finish time over the makespan when the rule's groups are planned
  (0 for the job that sets the makespan). Absent slots are all zeros.

Why the greedy features: the teacher's choice is global (a few of the fastest machines of one
region), which per-machine classes cannot see from a few hops of message passing; without
them the GNN predicted "idle" nearly everywhere and a plan was 2x Search's. With them the GNN
starts from the rule's groups and learns where the teacher departs from it (most often: more
machines for a job that gains from data parallelism).

*Edges.* The GNN sees ``Cluster.gnn_links(k_local, k_remote, seed)``. A generated (regional)
cluster has no explicit links: it samples (``RegionalCluster.sample_links``) up to ``k_local``
machines of the same region and ``k_remote`` of other directly connected regions per machine
(default 8 + 8), so the degree does not grow with the cluster. An explicit cluster uses its own links. Edge
features: ``ln(latency_ms + 0.01)`` and ``ln(bandwidth_gbps)``; both directions.

From groups to a plan (:meth:`LearnedPlanner.classify`)
-------------------------------------------------------
:func:`decode_groups` keeps the greedy rule's groups and adds the machines the GNN predicts for
each job. The GNN proposes, the cost model decides: the rule's groups and the GNN's proposals at
four probability thresholds are planned (Algorithm 1 and partition, milliseconds each) and the
shortest plan's classification is kept. ``hulk.plan.plan(..., "hulk")`` takes the rule's
groups and the GNN's best proposal (:meth:`LearnedPlanner.proposals`), and up to
``HEURISTIC_CANDIDATE_MAX_MACHINES`` machines the region heuristic's groups, grows each (the job
that finishes last gets more machines, :func:`hulk.plan.rules.grow_bottleneck`), keeps the shortest
and refines it.

What the GNN adds, measured (``benchmarks/bench_learned.py``, RESULTS.md): on held-out clusters
the GNN's own groups equal the rule's almost everywhere, and Hulk with the GNN plans as well as
Hulk with the rule alone. The teacher's departures from the rule (which extra machines a job
gets) are spread over many near-equivalent machines, so per-machine classes stay "idle" with
high confidence; a directed growth step recovers most of the teacher's gain without learning.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from .._device import get_num_threads, set_num_threads
from .._io import check_input_path, read_json_file, write_temp
from ..gnn import GNN
from ..graph import Graph
from .inputs import as_cluster, as_model_specs
from .rules import greedy_classes, job_need_bytes, plan_classes
from .._checks import check_int, check_seed
from ..errors import FileFormatError, InputError, InputTypeError

MAX_JOBS = 6
FORMAT_VERSION = "hulk-learned-planner/1"

_JOB_FEATURES = ("present", "log10_need_bytes", "log10_flops_per_iteration", "log2_max_replicas",
                 "log2_machine_memory_over_need", "greedy_takes", "in_greedy_region",
                 "log2_greedy_finish_over_makespan")
_MACHINE_FEATURES = ("log2_memory_gb", "log2_tflops", "log2_gpus", "x", "y", "z", "access_ms",
                     "tflops_rank", "memory_rank", "log2_tflops_over_max", "log2_machines",
                     "log2_memory_over_need", "tflops_rank_in_region")


def node_feature_names(max_jobs: int = MAX_JOBS) -> list[str]:
    return list(_MACHINE_FEATURES) + [f"job{s}_{f}" for s in range(max_jobs) for f in _JOB_FEATURES]


EDGE_FEATURES = ("ln_latency_ms", "ln_bandwidth_gbps")


# --------------------------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------------------------

def slot_order(jobs: list) -> list[int]:
    """Job indices by decreasing memory need (stable): slot s holds job ``slot_order(jobs)[s]``."""
    need = job_need_bytes(jobs)
    return sorted(range(len(jobs)), key=lambda j: -need[j])


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
    """The GNN input for ``cluster`` (a Cluster, or what :func:`hulk.plan.as_cluster` takes) and ``jobs`` (names or
    ModelSpecs, at most ``max_jobs``). See the module docstring for the features."""
    seed = check_seed(seed)
    max_jobs, k_local, k_remote = _check_encoding_sizes(max_jobs, k_local, k_remote)
    job_specs = as_model_specs(jobs)
    if len(job_specs) > max_jobs:
        raise InputError(f"jobs: this encoding has {max_jobs} job slots, got {len(job_specs)} jobs")
    cluster = as_cluster(cluster)
    m = cluster.machine_table()
    n = len(m.memory_gb)
    need = job_need_bytes(job_specs)
    order = slot_order(job_specs)
    cols = [np.log2(m.memory_gb), np.log2(m.tflops), np.log2(np.maximum(m.gpus, 1.0)) * (m.gpus > 0),
            m.pos[:, 0], m.pos[:, 1], m.pos[:, 2], m.access_ms,
            _rank01(m.tflops), _rank01(m.memory_gb), np.log2(m.tflops / m.tflops.max()),
            np.full(n, math.log2(n)), np.full(n, math.log2(m.memory_gb.sum() * 1e9 / need.sum())),
            _rank01_within(m.tflops, m.region)]
    greedy = np.asarray(greedy_classes(cluster, job_specs), dtype=np.int64)
    finish = _greedy_finish_over_makespan(cluster, job_specs, greedy)
    n_regions = int(m.region.max()) + 1
    for s in range(max_jobs):
        if s < len(order):
            j = job_specs[order[s]]
            flops = j.flops_per_token * j.global_batch * j.seq_len
            takes = greedy == order[s]
            # The rule's regions by a lookup table rather than np.isin/np.unique: the first
            # np.unique call of a process imports numpy.ma (~25 ms, a quarter of a 0.1 s budget).
            rule_regions = np.zeros(n_regions, dtype=bool)
            rule_regions[m.region[takes]] = True
            cols += [np.ones(n), np.full(n, math.log10(need[order[s]])), np.full(n, math.log10(flops)),
                     np.full(n, math.log2(j.global_batch / j.micro_batches)), np.log2(m.memory_gb * 1e9 / need[order[s]]),
                     takes.astype(np.float64), rule_regions[m.region].astype(np.float64),
                     np.full(n, finish[order[s]])]
        else:
            cols += [np.zeros(n)] * len(_JOB_FEATURES)
    x = np.stack(cols, axis=1).astype(np.float32)
    a, b, lat, bw = cluster.gnn_links(k_local, k_remote, seed)
    e = np.stack([np.log(lat + 0.01), np.log(bw)], axis=1).astype(np.float32)
    return Graph(n, np.stack([a, b], axis=1), node_features=x, edge_features=e)


def _greedy_finish_over_makespan(cluster, job_specs, greedy: np.ndarray) -> np.ndarray:
    """Per job, ``log2`` of its finish time over the makespan when the greedy groups are planned
    (Algorithm 1 and partition, no refinement): 0 for the job that sets the makespan, below 0 for
    jobs with time to spare. The makespan is set by one job, so whether a job is that one decides
    whether more machines for it pay off; the GNN cannot work that out from machine features. An
    infeasible job counts as twice the longest feasible one (+1)."""
    jobs = plan_classes(cluster, job_specs, greedy).to_dict()["jobs"]
    finish = np.array([j["finish_s"] if j["feasible"] else math.inf for j in jobs], dtype=np.float64)
    finite = finish[np.isfinite(finish)]
    if finite.size == 0 or finite.max() <= 0:
        return np.ones(len(job_specs))
    return np.where(np.isfinite(finish), np.log2(np.maximum(finish, 1e-9) / finite.max()), 1.0)


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
    need = job_need_bytes(jobs)
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



def rule_groups(cluster, jobs) -> tuple:
    """``(memory_bytes [N], the greedy rule's job index per machine [N])``: the groups the
    features describe and :func:`decode_groups` adds to."""
    cluster = as_cluster(cluster)
    memory = cluster.machine_table().memory_gb * 1e9
    return memory, np.asarray(greedy_classes(cluster, jobs), dtype=np.int64)


# --------------------------------------------------------------------------------------------
# The learned planner: a GNN plus its encoding
# --------------------------------------------------------------------------------------------

def _on_one_thread(predict, graph: Graph) -> np.ndarray:
    """``predict(graph)`` on one thread, the caller's thread count restored after. Why: a
    cluster's graph has at most tens of thousands of nodes, where a second thread saves nothing
    (18 ms either way at 20,000 machines, 2-core VM), while starting OpenMP's pool cost 85-98 ms,
    and a parallel region stalled up to 80 ms more, whenever another process held the other
    core: on a 0.1 s planning budget that is the whole budget."""
    before = get_num_threads()
    set_num_threads(1)
    try:
        return predict(graph)
    finally:
        set_num_threads(before)


class LearnedPlanner:
    """A trained GNN with the encoding it was trained with. :meth:`classify` gives the job index
    per machine (-1 idle) for ``hulk.plan.plan(..., "hulk", model=...)``."""

    def __init__(self, gnn: GNN, max_jobs: int = MAX_JOBS, k_local: int = 8, k_remote: int = 8, info=None):
        if not isinstance(gnn, GNN):
            raise InputTypeError(f"gnn must be a hulk.GNN, got {type(gnn).__name__}")
        self.gnn = gnn
        self.max_jobs, self.k_local, self.k_remote = _check_encoding_sizes(max_jobs, k_local, k_remote)
        self.info = dict(info or {})

    def encode(self, cluster, jobs) -> Graph:
        return encode(cluster, jobs, max_jobs=self.max_jobs, k_local=self.k_local, k_remote=self.k_remote)

    def predict_slots(self, cluster, jobs) -> np.ndarray:
        return _on_one_thread(self.gnn.predict, self.encode(cluster, jobs))

    def _predict_proba(self, graph: Graph) -> np.ndarray:
        """The GNN's probabilities [N, slots] (on one thread, see _on_one_thread)."""
        return _on_one_thread(self.gnn.predict_proba, graph)

    def proposals(self, cluster, jobs) -> list[np.ndarray]:
        """The classifications Hulk chooses from: the greedy rule's groups, then (when it differs)
        the GNN's proposal whose plan is shortest among :func:`decode_groups` at each of
        :data:`THRESHOLDS` (Algorithm 1 and partition, milliseconds each; ties: lower threshold).
        Each is a job index per machine [N] (-1 idle)."""
        job_specs = as_model_specs(jobs)
        cluster = as_cluster(cluster)
        proba = self._predict_proba(self.encode(cluster, job_specs))
        memory, rule = rule_groups(cluster, job_specs)
        tried, best, best_s = [rule.tolist()], None, math.inf
        for t in THRESHOLDS:
            classes = decode_groups(proba, memory, job_specs, rule, t)
            if classes in tried:
                continue
            tried.append(classes)
            m = plan_classes(cluster, job_specs, classes).makespan_s
            if m < best_s:
                best, best_s = np.asarray(classes, dtype=np.int64), m
        return [rule] + ([best] if best is not None else [])

    def classify(self, cluster, jobs, keep_better_of_rule: bool = True) -> list[int]:
        """Job index per machine (-1 idle). With ``keep_better_of_rule`` (the default) the GNN
        proposes and the cost model decides: of :meth:`proposals` (the rule's groups and the
        GNN's best proposal) the one whose plan (Algorithm 1 and partition) is shorter; ties:
        the rule's. Without it: the GNN's groups at threshold 0 (every machine it predicts for
        a job, added to the rule's groups by :func:`decode_groups`)."""
        job_specs = as_model_specs(jobs)
        cluster = as_cluster(cluster)
        if not keep_better_of_rule:
            proba = self._predict_proba(self.encode(cluster, job_specs))
            memory, rule = rule_groups(cluster, job_specs)
            return decode_groups(proba, memory, job_specs, rule)
        candidates = self.proposals(cluster, job_specs)
        times = [plan_classes(cluster, job_specs, c).makespan_s for c in candidates]
        return candidates[int(np.argmin(times))].tolist()

    def save(self, path) -> None:
        """Writes the weights to ``path`` and the encoding to ``path + '.json'``.

        Both go to temporary files in the same folder first and replace the old pair only when
        both are complete; if the encoding's replacement then fails, the old weights are put
        back from a backup, so a failed save leaves the old pair (or nothing) as it was. The
        encoding records the SHA-256 of the weights it belongs to, so a save killed between the
        two renames leaves a pair that :meth:`load` rejects by name instead of pairing new
        weights with an old encoding silently."""
        path = os.fspath(path)
        if not path:
            raise InputError("LearnedPlanner.save: the path is empty")
        meta_path = path + ".json"
        folder = os.path.dirname(os.path.abspath(path))
        tmp_weights = tmp_meta = backup = None
        replaced = False
        try:
            try:
                fd, tmp_weights = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp-", dir=folder)
                os.close(fd)
            except OSError as exc:
                raise OSError(exc.errno, f"LearnedPlanner.save: cannot create a temporary file in {folder!r} "
                                         f"({exc.strerror or exc}); nothing was changed") from None
            self.gnn.save(tmp_weights)  # itself written through a temporary file
            digest = hashlib.sha256(Path(tmp_weights).read_bytes()).hexdigest()
            meta = dict(version=FORMAT_VERSION, max_jobs=self.max_jobs, k_local=self.k_local, k_remote=self.k_remote,
                        node_features=node_feature_names(self.max_jobs), edge_features=list(EDGE_FEATURES),
                        weights_sha256=digest, info=self.info)
            text = json.dumps(meta, indent=1, allow_nan=False) + "\n"
            tmp_meta = write_temp(meta_path, text, what="learned-planner encoding")
            # Both complete. Keep the old weights until the encoding is in place too.
            if os.path.lexists(path):
                backup = tmp_weights + ".old"
                try:
                    os.link(path, backup)
                except OSError:  # no hard links here (or path is not a regular file): a copy
                    shutil.copy2(path, backup)
            try:
                os.replace(tmp_weights, path)
            except OSError as exc:
                raise OSError(exc.errno, f"LearnedPlanner.save: cannot replace {path!r} ({exc.strerror or exc}); "
                                         f"the previous weights and encoding are unchanged") from exc
            replaced = True
            try:
                os.replace(tmp_meta, meta_path)
            except OSError as exc:
                raise OSError(exc.errno, f"LearnedPlanner.save: cannot replace {meta_path!r} "
                                         f"({exc.strerror or exc}); the previous weights and encoding are "
                                         f"unchanged") from exc
            replaced = False  # both in place: nothing to undo
        except BaseException:
            if replaced:  # new weights, old encoding: put the old weights back
                try:
                    if backup is not None:
                        os.replace(backup, path)
                        backup = None
                    else:
                        os.unlink(path)
                except OSError as undo:
                    kept = f"; the previous weights are in {backup!r}" if backup else ""
                    backup = None  # left where the message says
                    raise OSError(undo.errno, f"LearnedPlanner.save: saving {path!r} failed and the previous "
                                              f"weights could not be put back ({undo.strerror or undo}){kept}")
            raise
        finally:
            for tmp in (tmp_weights, tmp_meta, backup):
                if tmp is not None and os.path.lexists(tmp):
                    try:
                        os.unlink(tmp)
                    except OSError:
                        pass

    @classmethod
    def load(cls, path, device: str = "cpu") -> "LearnedPlanner":
        path = check_input_path(path, "learned planner model")
        meta_path = path + ".json"
        if not os.path.isfile(meta_path):
            raise FileNotFoundError(f"no encoding file {meta_path!r} beside the model (written by LearnedPlanner.save)")
        meta = _check_encoding(read_json_file(meta_path, "learned-planner encoding", max_bytes=1 << 20), meta_path)
        digest = meta.get("weights_sha256")
        if digest is not None and hashlib.sha256(Path(path).read_bytes()).hexdigest() != digest:
            raise _file_error(path, "weights_sha256", f"these weights are not the ones {meta_path} was saved with "
                                  f"(weights_sha256 differs; an interrupted or mixed save?); save the planner again")
        gnn = GNN.load(path, device=device)
        if gnn.config["num_classes"] != meta["max_jobs"] + 1:
            raise _file_error(path, "num_classes", f"the model has {gnn.config['num_classes']} classes, the encoding "
                                  f"expects {meta['max_jobs'] + 1} ({meta['max_jobs']} job slots + idle)")
        return cls(gnn, meta["max_jobs"], meta["k_local"], meta["k_remote"], meta.get("info"))

    def __repr__(self) -> str:
        return f"hulk.LearnedPlanner({self.max_jobs} job slots, {self.gnn!r})"


THRESHOLDS = (0.0, 0.5, 0.7, 0.9)  # the GNN's proposals that LearnedPlanner.classify plans and compares
MAX_JOB_SLOTS = 64        # bounds of an encoding file's max_jobs
MAX_SAMPLED_NEIGHBOURS = 256  # and of k_local, k_remote (links sampled per machine)
_ENCODING_KEYS = {"version": str, "max_jobs": int, "k_local": int, "k_remote": int, "node_features": list,
                  "edge_features": list, "weights_sha256": str, "info": dict}
_OPTIONAL_ENCODING_KEYS = ("weights_sha256", "info")


def _check_encoding_sizes(max_jobs, k_local, k_remote) -> tuple:
    """The encoding's sizes within the bounds an encoding file may hold (so that a planner that
    can be built can be saved and loaded back; an unbounded max_jobs would build columns without end)."""
    return (check_int(max_jobs, "max_jobs", 1, MAX_JOB_SLOTS),
            check_int(k_local, "k_local", 0, MAX_SAMPLED_NEIGHBOURS),
            check_int(k_remote, "k_remote", 0, MAX_SAMPLED_NEIGHBOURS))


def _file_error(path, field: str, message: str) -> FileFormatError:
    """A FileFormatError whose ``field`` attribute names the key, with the message as before
    ("<file>: <message>", the message naming the key itself)."""
    err = FileFormatError(path, None, message)
    err.field = field
    return err


def _check_encoding(meta, meta_path: str) -> dict:
    """Every key of an encoding file present (but the optional ones), of its type and in range."""
    if not isinstance(meta, dict):
        raise FileFormatError(meta_path, None, f"expected a JSON object, got {type(meta).__name__}")
    unknown = sorted(set(meta) - set(_ENCODING_KEYS))
    if unknown:
        raise FileFormatError(meta_path, None, f"unknown keys {unknown}; allowed: {sorted(_ENCODING_KEYS)}")
    for key, kind in _ENCODING_KEYS.items():
        if key not in meta:
            if key in _OPTIONAL_ENCODING_KEYS:
                continue
            raise _file_error(meta_path, key, f"key {key!r} is missing")
        v = meta[key]
        if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
            raise _file_error(meta_path, key, f"{key} must be of type {kind.__name__}, got {v!r}")
    if meta["version"] != FORMAT_VERSION:
        raise _file_error(meta_path, "version", f"version must be {FORMAT_VERSION!r}, got {meta['version']!r}")
    for key, lo, hi in (("max_jobs", 1, MAX_JOB_SLOTS), ("k_local", 0, MAX_SAMPLED_NEIGHBOURS),
                        ("k_remote", 0, MAX_SAMPLED_NEIGHBOURS)):
        if not lo <= meta[key] <= hi:
            raise _file_error(meta_path, key, f"{key} = {meta[key]} is out of range [{lo}, {hi}]")
    expected = node_feature_names(meta["max_jobs"])
    if meta["node_features"] != expected or meta["edge_features"] != list(EDGE_FEATURES):
        raise _file_error(meta_path, "node_features", f"the model was trained on other features than this version of "
                              f"hulk computes ({len(meta['node_features'])} node features, expected "
                              f"{len(expected)}); retrain it with `hulk train`")
    return meta


DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "data" / "planner" / "hulk-planner.gnn"


def default_planner() -> LearnedPlanner:
    """The model shipped with the package (made by the command in ``hulk/data/planner/README.md``)."""
    if not DEFAULT_MODEL.is_file():
        raise FileNotFoundError(f"the shipped planner model is missing ({DEFAULT_MODEL}); reinstall hulk or "
                                f"train one with `hulk train`")
    return LearnedPlanner.load(DEFAULT_MODEL)
