"""hulk.plan: plan which machines train which job, and measure it with the cost model.

Every planner returns a :class:`Plan` costed by the one C++ cost model documented in
``csrc/plan/cost.h``. Planners:

- ``"a"``, ``"b"``, ``"c"``: the paper's Systems A (data parallel on machines that fit the
  whole model), B (GPipe over all machines in id order) and C (Megatron tensor parallel over
  all machines); jobs run one after another on the whole cluster.
- ``"search"``: a time-bounded optimiser of the cost model (eight starts, among them Hulk's
  plan and Systems A/B/C's machines, then local search with annealing); jobs run concurrently
  on disjoint machine groups (or wait, as in Hulk's plan). It never returns a System's
  sequential plan as its own: when it finds no feasible plan it says so in ``plan.notes``.
- ``"hulk"``: a classification of machines into jobs (a trained :class:`hulk.GNN` when given,
  else the stated region heuristic), then the paper's Algorithm 1, then each job's layout.

Every concurrent planner lays out each job with ``best_pipeline`` (``csrc/plan/planners.h``):
machines that cannot hold one layer get no stage, and the layer split, the stage order and the
all-reduce ring minimise the job's whole iteration time.
- ``"table2"``: the paper's own Table 2 assignment (the bundled 47-server cluster, 4 jobs).
"""

from __future__ import annotations

import math
import numbers
import time
from typing import Iterable, Sequence

import networkx as nx
import numpy as np

from . import _core, cluster_spec, generate, models

PLANNERS = ("a", "b", "c", "search", "hulk", "table2")
MAX_TIME_LIMIT_S = 7 * 24 * 3600.0  # a search time limit of at most a week
PLANNER_TITLES = {"a": "System A (data parallel)", "b": "System B (GPipe, all machines)",
                  "c": "System C (Megatron TP, all machines)", "search": "Search",
                  "hulk": "Hulk (Algorithm 1)", "table2": "Paper Table 2",
                  "hulk-gnn": "Hulk (GNN trained on Table 2)"}


def _core_cluster(spec):
    if isinstance(spec, generate.RegionalCluster):
        names = spec.machine_names()
        return _core.plan.PlanCluster.from_network(
            names, [spec.region_names[r] for r in spec.region.tolist()], spec.memory_gb.tolist(), spec.tflops.tolist(),
            len(spec.region_names), spec.region.tolist(), spec.access_ms.tolist(), spec.base_latency_ms.ravel().tolist(),
            spec.base_bandwidth_gbps.ravel().tolist(), spec.region_link.ravel().astype(np.uint8).tolist(),
            spec.missing_links)
    m, links = spec.machines, spec.links
    return _core.plan.PlanCluster([x["name"] for x in m], [x["region"] for x in m], [float(x["memory_gb"]) for x in m],
                             [float(x["tflops"]) for x in m], [int(l["a"]) for l in links],
                             [int(l["b"]) for l in links], [float(l["latency_ms"]) for l in links],
                             [float(l["bandwidth_gbps"]) for l in links], spec.missing_links)


def _core_model(spec: "models.ModelSpec"):
    return _core.plan.ModelSpec(**spec.core_dict())


def as_cluster_spec(cluster):
    """A ClusterSpec (or RegionalCluster) from either, a networkx graph, or a path to a JSON
    cluster file (schema hulk-cluster/1 or hulk-regional/1)."""
    if isinstance(cluster, (cluster_spec.ClusterSpec, generate.RegionalCluster)):
        return cluster
    if isinstance(cluster, (str, bytes)) or hasattr(cluster, "__fspath__"):
        doc = _peek_json(cluster)
        if isinstance(doc, dict) and doc.get("version") == generate.SCHEMA_VERSION:
            return generate.RegionalCluster.from_dict(doc)
        return cluster_spec.from_json(cluster)  # its own messages for missing or malformed files
    if isinstance(cluster, nx.Graph):
        return cluster_spec.from_networkx(cluster)
    if isinstance(cluster, (str, bytes)) or hasattr(cluster, "__fspath__"):
        return cluster_spec.from_json(cluster)
    raise TypeError(f"cluster must be a ClusterSpec, a networkx graph or a JSON path, got {type(cluster).__name__}")


def _peek_json(path):
    from ._io import read_json_file
    try:  # bounded and strict: /dev/zero or a FIFO is refused, not read without end
        return read_json_file(path, "cluster file")
    except (OSError, ValueError):
        return None  # from_json below reports the problem


def as_model_specs(jobs: Iterable) -> list:
    """ModelSpecs from catalogue names and/or ModelSpec objects."""
    out = []
    for j in jobs:
        out.append(models.get(j) if isinstance(j, str) else j)
        if not isinstance(out[-1], models.ModelSpec):
            raise TypeError(f"jobs: expected model names or hulk.models.ModelSpec, got {type(j).__name__}")
    if not out:
        raise ValueError("jobs: give at least one job")
    names = [j.name for j in out]
    if len(set(names)) != len(names):
        raise ValueError(f"jobs: each job must appear once, got {names}")
    return out


class Plan:
    """A costed plan. ``plan.jobs`` lists per job: machines, replicas (machine chain and layer
    bounds), strategy, feasibility, compute / communication / iteration seconds, start and
    finish; ``plan.makespan_s`` is the time until all jobs finish."""

    def __init__(self, core_plan, core_cluster, spec, jobs, planner: str):
        self._plan, self._cluster, self.cluster, self._jobs = core_plan, core_cluster, spec, jobs
        self.planner = planner
        d = core_plan.to_dict()
        self.jobs: list[dict] = d["jobs"]
        self.makespan_s: float = d["makespan_s"]
        self.planning_s: float = d["planning_s"]
        self.sequential: bool = d["sequential"]
        self.feasible: bool = d["feasible"]
        self.notes: list[str] = d["notes"]
        self.moved: list[int] = []
        self.repair_s: float | None = None

    @property
    def title(self) -> str:
        return PLANNER_TITLES.get(self.planner, self.planner)

    def assignment(self) -> list[int]:
        """Job index per machine (-1 = idle); for sequential plans every used machine of the
        first feasible job."""
        out = [-1] * len(self.cluster)
        for k, job in enumerate(self.jobs):
            for m in job["machines"]:
                if out[m] < 0:
                    out[m] = k
        return out

    def without(self, machine: int) -> "Plan":
        """The plan repaired after ``machine`` fails (indices above it shift down by one);
        ``moved`` lists machines whose job changed, ``repair_s`` the repair's wall time."""
        n = len(self.cluster)
        if isinstance(machine, bool) or not isinstance(machine, numbers.Integral) or not 0 <= machine < n:
            raise ValueError(f"machine must be an index in [0, {n}), got {machine!r}")
        core_plan, core_cluster, moved, seconds = _core.plan.repair_without(self._cluster, self._plan, machine)
        return self._repaired(core_plan, core_cluster, self.cluster.without(machine), moved, seconds)

    def with_machine(self, machine: dict, links: Sequence[dict]) -> "Plan":
        """The plan after a new machine joins. ``machine`` has region and memory_gb and either
        tflops, gpu (+ gpus) or capability; ``links`` are dicts with ``to`` (existing index),
        ``latency_ms`` and optionally ``bandwidth_gbps``."""
        spec = self.cluster.with_machine(machine, links)
        new, new_links = spec.machines[-1], spec.links[len(self.cluster.links):]
        core_plan, core_cluster, moved, seconds = _core.plan.repair_with(
            self._cluster, self._plan, new["name"], new["region"], float(new["memory_gb"]), float(new["tflops"]),
            [l["a"] for l in new_links], [l["b"] for l in new_links], [float(l["latency_ms"]) for l in new_links],
            [float(l["bandwidth_gbps"]) for l in new_links])
        return self._repaired(core_plan, core_cluster, spec, moved, seconds)

    def _repaired(self, core_plan, core_cluster, spec, moved, seconds) -> "Plan":
        out = Plan(core_plan, core_cluster, spec, self._jobs, self.planner)
        out.moved, out.repair_s = list(moved), float(seconds)
        return out

    def to_dict(self) -> dict:
        """A JSON-ready view: infinite or NaN times (infeasible jobs, unreachable pairs) become None."""
        d = dict(planner=self.planner, title=self.title, feasible=self.feasible, sequential=self.sequential,
                 makespan_s=self.makespan_s, planning_s=self.planning_s, notes=self.notes, jobs=self.jobs)
        d = _json_ready(d)
        if self.repair_s is not None:
            d.update(moved=self.moved, repair_s=self.repair_s)
        return d

    def __repr__(self) -> str:
        state = f"makespan {self.makespan_s / 3600:.2f} h" if self.feasible else "infeasible"
        return f"hulk.Plan({self.title}: {len(self.jobs)} jobs, {state})"


def _json_ready(x):
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _json_ready(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_ready(v) for v in x]
    return x


DEFAULT_REFINE_ITERATIONS = 300
DEFAULT_GROW_ROUNDS = 8
# Up to this size the learned planner's candidates include the region heuristic's groups: on
# the 47-machine held-out clusters of bench_learned they won 3 of 5 (Hulk 1.056x Search's
# makespan without them, 1.018x with them); from 200 machines up they plan 1.5-3.7x longer,
# and planning and growing them costs 0.1-0.2 s at 500-1,000 machines.
HEURISTIC_CANDIDATE_MAX_MACHINES = 300
GROWTH_STEPS = (1, 2, 4, 8, 16)


def refine_time_limit(time_limit_s: float) -> float:
    """Hulk's refinement stops after its moves or after max(1 s, time_limit_s / 100), whichever
    comes first: the move budget usually ends it (so the plan is the same on any machine), the
    clock only bounds it on very large clusters."""
    return max(1.0, float(time_limit_s) / 100)


def plan(cluster, jobs: Iterable = models.PAPER_JOBS_4, planner: str = "hulk", time_limit_s: float = 2.0,
         seed: int = 0, model=None, classes: Sequence[int] | None = None, max_iterations: int = 0,
         refine_iterations: int = DEFAULT_REFINE_ITERATIONS, grow_rounds: int = DEFAULT_GROW_ROUNDS) -> Plan:
    """Plans ``jobs`` on ``cluster`` with one planner.

    Parameters
    ----------
    cluster : ClusterSpec, RegionalCluster, networkx.Graph or path to a JSON cluster file
    jobs : names from :func:`hulk.models.catalogue` and/or ModelSpec objects
    planner : one of "a", "b", "c", "search", "hulk", "table2"
    time_limit_s, seed, max_iterations : for "search" (``max_iterations`` > 0 also stops the
        search after that many moves: the same seed then gives the same plan on any machine)
    model : for "hulk", the classifier: None = the learned planner shipped with the package
        (:func:`hulk.learn.default_planner`), a :class:`hulk.learn.LearnedPlanner`, a
        :class:`hulk.GNN` trained on the paper's features (classes = job indices),
        "heuristic" for the region heuristic of ``csrc/plan/planners.h``, or "greedy" for the
        learned planner's candidates without the GNN (the greedy rule of :mod:`hulk.greedy`,
        and the region heuristic up to ``HEURISTIC_CANDIDATE_MAX_MACHINES`` machines)
    classes : an explicit classification (job index per machine, -1 idle) for "hulk"
    refine_iterations : for "hulk", the budget of the short local refinement after
        Algorithm 1 (search moves from Hulk's own assignment; 0 = none), seeded by ``seed``
        and stopped after ``refine_time_limit(time_limit_s)`` at the latest
    grow_rounds : for "hulk", rounds of :func:`grow_bottleneck` between the classification and
        the refinement (0 = none: the classification goes through Algorithm 1 and the
        partition as it is)
    """
    t0 = time.perf_counter()
    if planner not in PLANNERS:
        raise ValueError(f"planner must be one of {PLANNERS}, got {planner!r}")
    if isinstance(time_limit_s, bool) or not isinstance(time_limit_s, numbers.Real) or \
            not (math.isfinite(time_limit_s) and 0 < time_limit_s <= MAX_TIME_LIMIT_S):
        raise ValueError(f"time_limit_s must be a number of seconds in (0, {MAX_TIME_LIMIT_S:g}], got {time_limit_s!r}")
    for name, v in (("seed", seed), ("max_iterations", max_iterations), ("refine_iterations", refine_iterations),
                    ("grow_rounds", grow_rounds)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v <= 2**63 - 1:
            raise ValueError(f"{name} must be an integer in [0, 2**63 - 1], got {v!r}")
    spec = as_cluster_spec(cluster)
    job_specs = as_model_specs(jobs)
    core_cluster = _core_cluster(spec)
    core_jobs = [_core_model(j) for j in job_specs]
    hulk_notes: list[str] = []
    if planner == "a":
        p = _core.plan.plan_system_a(core_cluster, core_jobs)
    elif planner == "b":
        p = _core.plan.plan_system_b(core_cluster, core_jobs)
    elif planner == "c":
        p = _core.plan.plan_system_c(core_cluster, core_jobs)
    elif planner == "search":
        p = _core.plan.plan_search(core_cluster, core_jobs, float(time_limit_s), int(seed), int(max_iterations))
    elif planner == "table2":
        p = _core.plan.plan_assignment(core_cluster, core_jobs, _table2_assignment(spec, job_specs), "table2")
    else:
        # One classification, or the learned planner's candidates (the rule's groups and the
        # GNN's best proposal): each is planned (and grown) and the shortest plan is kept.
        candidates = _hulk_candidates(spec, job_specs, core_cluster, core_jobs, model, classes)
        grown = [grow_bottleneck(spec, core_cluster, core_jobs, c, grow_rounds) if grow_rounds > 0
                 else (_core.plan.plan_hulk(core_cluster, core_jobs, list(c)), np.asarray(c), None) for c in candidates]
        k = min(range(len(grown)), key=lambda i: grown[i][0].makespan_s)  # ties: the first (the rule's)
        p = grown[k][0]
        if len(grown) > 1:
            names = _candidate_names(len(grown), len(spec))
            others = ", ".join(f"{names[i]} {grown[i][0].makespan_s / 3600:.2f} h" for i in range(len(grown)) if i != k)
            hulk_notes.append(f"hulk: {names[k]} planned shortest ({grown[k][0].makespan_s / 3600:.2f} h; {others})")
        added = int((grown[k][1] >= 0).sum() - (np.asarray(candidates[k]) >= 0).sum())
        if grown[k][2] is not None and added > 0:
            hulk_notes.append(f"growth: {added} idle machine(s) given to the job that finished last, "
                              f"{grown[k][2] / 3600:.2f} h -> {p.makespan_s / 3600:.2f} h")
        if refine_iterations > 0:
            p = _core.plan.refine_plan(core_cluster, core_jobs, p, refine_time_limit(time_limit_s), int(seed),
                                  int(refine_iterations))
    out = Plan(p, core_cluster, spec, job_specs, planner)
    if planner == "hulk":  # the classification (encoding, GNN inference) is part of planning
        out.planning_s = time.perf_counter() - t0
        out.notes[0:0] = hulk_notes
    return out


def grow_bottleneck(spec, core_cluster, core_jobs, classes, rounds: int = DEFAULT_GROW_ROUNDS,
                    steps=GROWTH_STEPS) -> tuple:
    """Gives the job that sets the makespan more machines while that shortens the plan.

    Each round plans ``classes`` (job index per machine, -1 idle) with Algorithm 1 and the
    partition, finds the job that finishes last, and tries adding to it the first 1, 2, 4, 8
    and 16 (``steps``) idle machines of the regions it already uses, fastest first (ties: lower
    machine id). The best trial is kept if it shortens the plan; rounds stop when none does, or
    after ``rounds``. Returns ``(core plan, classes, makespan_s before growth)``. Each trial is one plan: milliseconds up to
    a few thousand machines. Why: jobs usually need few of many machines, and the rule, the
    region heuristic and the GNN all give the job that decides the makespan about the fewest
    machines that hold it, while more of them (data-parallel replicas) often shorten it; a 2 s
    Search found this on most generated clusters, and this directed step finds most of it."""
    from .learn import _machines_of
    m = _machines_of(spec)
    best = np.asarray(classes, dtype=np.int64).copy()
    p = _core.plan.plan_hulk(core_cluster, core_jobs, best.tolist())
    start_s = p.makespan_s
    for _ in range(rounds):
        finish = np.array([j["finish_s"] if j["feasible"] else np.inf for j in p.to_dict()["jobs"]])
        b = int(np.argmax(finish))
        mine = best == b
        free = np.flatnonzero(best < 0)
        free = free[np.isin(m.region[free], m.region[mine])]
        if not mine.any() or free.size == 0:
            break
        candidates = free[np.argsort(-m.tflops[free], kind="stable")]
        found = None
        for k in steps:
            if k > candidates.size:
                break
            trial = best.copy()
            trial[candidates[:k]] = b
            q = _core.plan.plan_hulk(core_cluster, core_jobs, trial.tolist())
            if q.makespan_s < (found[1].makespan_s if found else p.makespan_s * (1 - 1e-9)):
                found = (trial, q)
        if found is None:
            break
        best, p = found
    return p, best, start_s


def _table2_assignment(spec, job_specs) -> list[int]:
    from .datasets import HULK47_CLASSES, hulk47_table2_labels
    if len(spec.machines) != 47:
        raise ValueError("planner 'table2' is the paper's assignment of its 47-server cluster; "
                         f"this cluster has {len(spec.machines)} machines")
    labels, classes = hulk47_table2_labels()
    names = [j.name for j in job_specs]
    missing = [c for c in HULK47_CLASSES if c not in names]
    if missing:
        raise ValueError(f"planner 'table2' assigns the paper's jobs {HULK47_CLASSES}; missing from jobs: {missing}")
    return [names.index(classes[y]) if y >= 0 else -1 for y in labels]


def _candidate_names(count: int, machines: int) -> list[str]:
    """Names of the learned planner's candidates in the order _hulk_candidates returns them."""
    names = ["the greedy rule's groups"]
    if count - (machines <= HEURISTIC_CANDIDATE_MAX_MACHINES) == 2:
        names.append("the GNN's proposal")
    if machines <= HEURISTIC_CANDIDATE_MAX_MACHINES:
        names.append("the region heuristic's groups")
    return names


def _hulk_candidates(spec, job_specs, core_cluster, core_jobs, model, classes) -> list:
    """The classifications Hulk plans: the learned planner's proposals, else the one classification."""
    if classes is None and (model is None or model == "greedy" or not isinstance(model, str)):
        from . import learn
        if model is None:
            model = learn.default_planner()
        if model == "greedy" or isinstance(model, learn.LearnedPlanner):
            if model == "greedy":  # the same candidates without the GNN's proposal
                out = [learn._rule_groups(spec, job_specs)[1]]
            else:
                out = model.proposals(spec, job_specs)
            if len(spec) <= HEURISTIC_CANDIDATE_MAX_MACHINES:
                out.append(np.asarray(_core.plan.heuristic_classes(core_cluster, core_jobs), dtype=np.int64))
            return out
    return [_hulk_classes(spec, job_specs, core_cluster, core_jobs, model, classes)]


def _hulk_classes(spec, job_specs, core_cluster, core_jobs, model, classes) -> list[int]:
    n = len(spec)
    if classes is not None:
        arr = classes if isinstance(classes, np.ndarray) else np.array(list(classes), dtype=object)
        ok = arr.shape == (n,) and (arr.dtype.kind in "iu" or all(  # element checks only for lists
            isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in arr.tolist()))
        values = arr.astype(np.int64) if ok else None
        if not ok or (n and (values.min() < -1 or values.max() >= len(core_jobs))):
            raise ValueError(f"classes: expected {n} integer job indices in [-1, {len(core_jobs)})")
        return values.tolist()
    if isinstance(model, str):
        if model != "heuristic":
            raise ValueError(f"model must be None, 'heuristic', 'greedy', a LearnedPlanner or a GNN, got {model!r}")
        return list(_core.plan.heuristic_classes(core_cluster, core_jobs))
    from .gnn import GNN  # None, "greedy" and learned planners are _hulk_candidates' own
    if not isinstance(model, GNN):
        raise TypeError(f"model must be None, 'heuristic', 'greedy', a hulk.learn.LearnedPlanner or a hulk.GNN, "
                        f"got {type(model).__name__}")
    from .graph import Graph
    if isinstance(spec, generate.RegionalCluster):
        raise ValueError("a GNN trained on the paper's features needs an explicit cluster (its links); "
                         "use a LearnedPlanner for generated clusters")
    G = spec.to_networkx()
    g = Graph.from_networkx(G, node_attrs=["capability", "memory_gb"], edge_attrs=["latency_ms"])
    pred = [int(c) for c in model.predict(g)]
    return [c if c < len(core_jobs) else -1 for c in pred]


def compare(cluster, jobs: Iterable = models.PAPER_JOBS_4, planners: Sequence[str] = ("a", "b", "c", "search", "hulk"),
            time_limit_s: float = 2.0, seed: int = 0, model=None, max_iterations: int = 0) -> list[Plan]:
    """One plan per planner, same cluster, same jobs, same cost model."""
    return [plan(cluster, jobs, p, time_limit_s=time_limit_s, seed=seed, model=model, max_iterations=max_iterations)
            for p in planners]
