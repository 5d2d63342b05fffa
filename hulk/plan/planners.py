"""hulk.plan.planners: plan which machines train which job, and measure it with the cost model.

Every planner returns a :class:`Plan` costed by the one C++ cost model documented in
``csrc/plan/cost.h``. Planners:

- ``"a"``, ``"b"``, ``"c"``: the paper's Systems A (data parallel on machines that fit the
  whole model), B (GPipe over all machines in id order) and C (Megatron tensor parallel over
  all machines); jobs run one after another on the whole cluster.
- ``"search"``: a time-bounded optimiser of the cost model (eight starts, among them Hulk's
  plan and Systems A/B/C's machines, then local search with annealing); jobs run concurrently
  on disjoint machine groups (or wait, as in Hulk's plan). It never returns a System's
  sequential plan as its own: when it finds no feasible plan it says so in ``plan.notes``.
- ``"hulk"``: an anytime planner within ``time_limit_s``: candidate sources (Search's starts;
  classifications of machines into jobs by the learned planner's GNN, the greedy rule or the
  region heuristic, each through the paper's Algorithm 1, each job's layout and growth), then
  Search's local-search moves from the best candidate for the rest of the budget, then idle
  machines offered to the job that finishes last (``_plan_hulk_within``).

Every concurrent planner lays out each job with ``best_pipeline`` (``csrc/plan/planners.h``):
machines that cannot hold one layer get no stage, and the layer split, the stage order and the
all-reduce ring minimise the job's whole iteration time.
- ``"table2"``: the paper's own Table 2 assignment (the bundled 47-server cluster, 4 jobs).
"""

from __future__ import annotations

import collections
import math
import time
from typing import Iterable, Sequence

import numpy as np

from .. import _core, datasets
from .._checks import check_int, check_seed, is_int, is_real
from ..gnn import GNN
from ..graph import Graph
from . import bundle, export, learned, models
from . import profile as profiles
from .inputs import as_cluster, as_model_specs
from .rules import DEFAULT_GROW_ROUNDS, check_classes, greedy_classes, grow_bottleneck
from ..errors import InputError, InputTypeError

PLANNERS = ("a", "b", "c", "search", "hulk", "table2")
PAPER_NODE_ATTRS = ["capability", "memory_gb"]  # the paper's machine features (a GNN given as ``model``)
PAPER_EDGE_ATTRS = ["latency_ms"]               # and its link feature
MAX_TIME_LIMIT_S = 7 * 24 * 3600.0  # a search time limit of at most a week
PLANNER_TITLES = {"a": "System A (data parallel)", "b": "System B (GPipe, all machines)",
                  "c": "System C (Megatron TP, all machines)", "search": "Search",
                  "hulk": "Hulk", "table2": "Paper Table 2",
                  "hulk-gnn": "Hulk (GNN trained on Table 2)"}


class Plan:
    """A costed plan. ``plan.jobs`` lists per job: machines, replicas (machine chain and layer
    bounds), strategy, feasibility, compute / communication / iteration seconds, start and
    finish; ``plan.makespan_s`` is the time until all jobs finish."""

    def __init__(self, core_plan, core_cluster, spec, jobs, planner: str):
        self._plan, self._cluster, self.cluster = core_plan, core_cluster, spec
        self.job_specs: list = list(jobs)  # the ModelSpecs planned, in the order of ``jobs``
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

    def without(self, machine: int, shorten: bool = True) -> "Plan":
        """The plan repaired after ``machine`` fails (indices above it shift down by one);
        ``moved`` lists machines whose job changed, ``repair_s`` the repair's wall time.

        The job that lost the machine is laid out again on its other machines, taking idle ones
        (then other jobs' spare ones) only if it no longer fits. With ``shorten`` (the default),
        where that leaves Hulk's or Search's plan longer than before, machines then move to the
        job that finishes last (idle ones or other jobs') while that shortens the makespan (at
        most 1 s); ``shorten=False`` changes only the hit job."""
        n = len(self.cluster)
        if not is_int(machine) or not 0 <= machine < n:
            raise InputError(f"machine must be an index in [0, {n}), got {machine!r}")
        if not isinstance(shorten, bool):
            raise InputError(f"shorten must be True or False, got {shorten!r}")
        core_plan, core_cluster, moved, seconds = _core.plan.repair_without(self._cluster, self._plan, machine, shorten)
        return self._repaired(core_plan, core_cluster, self.cluster.without(machine), moved, seconds)

    def with_machine(self, machine: dict, links: Sequence[dict], shorten: bool = True) -> "Plan":
        """The plan after a new machine joins. ``machine`` has region and memory_gb and either
        tflops, gpu (+ gpus) or capability; ``links`` are dicts with ``to`` (existing index),
        ``latency_ms`` and optionally ``bandwidth_gbps``.

        Of the jobs the machine speeds up, it goes to the one that then leaves the shortest
        makespan (then the one it speeds up most), or stays idle (the plan then stays as it was).
        Where it joins, with ``shorten`` (the default), Hulk's and Search's plans then move
        machines to the job that finishes last while that shortens the makespan (at most 1 s);
        ``shorten=False`` changes only the joining job."""
        if not isinstance(shorten, bool):
            raise InputError(f"shorten must be True or False, got {shorten!r}")
        spec = self.cluster.with_machine(machine, links)
        n, m = len(self.cluster), spec.machine_table()
        a, b, latency, bandwidth = spec.links_of(n)
        gpu, gpus = spec.gpu_types()
        core_plan, core_cluster, moved, seconds = _core.plan.repair_with(
            self._cluster, self._plan, m.names[n], m.region_names[m.region[n]], float(m.memory_gb[n]),
            float(m.tflops[n]), a.tolist(), b.tolist(), latency.tolist(), bandwidth.tolist(), gpu[n], gpus[n], shorten)
        return self._repaired(core_plan, core_cluster, spec, moved, seconds)

    def _repaired(self, core_plan, core_cluster, spec, moved, seconds) -> "Plan":
        out = Plan(core_plan, core_cluster, spec, self.job_specs, self.planner)
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

    def export(self, directory, hosts: dict | None = None, port: int = bundle.DEFAULT_PORT) -> list:
        """Writes one launch bundle per job into ``directory`` (new or empty): ``<job>/job.json``
        (stage map, model shape, a torchrun line per machine) and ``<job>/README.md``, plus
        ``plan.json``, which lists the jobs and why any got no bundle. ``hosts`` maps machine
        names to addresses (else the cluster's ``address`` fields, else a placeholder). See
        :mod:`hulk.plan.export` and :mod:`hulk.plan.bundle`; ``python -m hulk.launch <job>/job.json`` runs a bundle."""
        return export.export_plan(self, directory, hosts=hosts, port=port)

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


# Hulk's default move cap: none, it refines until the time limit (max_iterations > 0 caps it).
DEFAULT_REFINE_ITERATIONS = None
# Up to this size Hulk without refinement (refine_iterations=0) also plans the region
# heuristic's groups: on the 47-machine held-out clusters of bench_learned they won 3 of 5 (Hulk
# 1.056x Search's makespan without them, 1.018x with them); from 200 machines up they planned
# 1.5-3.7x longer, and planning and growing them costs 0.1-0.2 s at 500-1,000 machines. Within a
# budget (refinement on) they are one more source, tried while time is left.
HEURISTIC_CANDIDATE_MAX_MACHINES = 300


def plan(cluster, jobs: Iterable = models.PAPER_JOBS_4, planner: str = "hulk", time_limit_s: float = 2.0,
         seed: int = 0, model=None, classes: Sequence[int] | None = None, max_iterations: int = 0,
         refine_iterations: int | None = DEFAULT_REFINE_ITERATIONS, grow_rounds: int = DEFAULT_GROW_ROUNDS,
         profile=None, compute_model: str = "flop", search_thread: bool = False) -> Plan:
    """Plans ``jobs`` on ``cluster`` with one planner.

    Parameters
    ----------
    cluster : ClusterSpec, RegionalCluster, networkx.Graph or path to a JSON cluster file
    jobs : names from :func:`hulk.plan.catalogue` and/or ModelSpec objects
    planner : one of "a", "b", "c", "search", "hulk", "table2"
    time_limit_s : for "search" and "hulk", the planning time in seconds, in (0, a week]. Hulk uses
        all of it, classification included (see ``_plan_hulk_within``); both return when it
        is spent, give or take the step under way (Search's first start always runs, so that
        there is a plan).
    search_thread : for "hulk" (with refinement), also run Search in a second thread for the
        same budget, seed and move cap, and return the shorter of the two plans (by makespan,
        then the jobs' total time; Hulk's on a tie; a note says which). The plan is then never
        longer than that Search's, at the price of a second core for the whole budget: the
        same wall time, about twice the CPU time. On a machine without a spare core the
        threads slow each other. Off by default; every benchmark figure of Hulk is without it
        unless it says otherwise.
    seed, max_iterations : for "search" and "hulk" (``max_iterations`` > 0 also stops the local
        search after that many moves: the same seed then gives the same plan on any machine,
        as long as the time limit does not end it first)
    model : for "hulk", the classifier: None = the learned planner shipped with the package
        (:func:`hulk.plan.default_planner`), a :class:`hulk.plan.LearnedPlanner`, a
        :class:`hulk.GNN` trained on the paper's features (classes = job indices),
        "heuristic" for the region heuristic of ``csrc/plan/planners.h``, or "greedy" for the
        learned planner's candidates without the GNN (the greedy rule of :mod:`hulk.plan.rules`
        and the region heuristic)
    classes : an explicit classification (job index per machine, -1 idle) for "hulk"
    refine_iterations : for "hulk": None (default) refines until the time limit (at most
        ``max_iterations`` moves when that is > 0); k > 0 caps the refinement at k moves (a
        deterministic plan for a seed); 0 = no refinement and no Search starts: Hulk's own
        candidates through Algorithm 1 and growth, the shortest kept (the ablation "no
        refinement")
    grow_rounds : for "hulk", rounds of :func:`hulk.plan.rules.grow_bottleneck` on each
        classification (0 = none: the classification goes through Algorithm 1 and the
        partition as it is)
    profile : measured profiles (:mod:`hulk.plan.profile`, ``hulk-profile/1``): a path, a dict, a
        :class:`hulk.plan.Profile`, or a list of them (one per model and GPU type). Machines of a
        profiled GPU type cost a profiled job's compute from the measurements.
    compute_model : the FLOP model used where no profile applies: "flop" (the cluster's tflops,
        peak x 0.35, for every layer; the default) or "flop-curve" (an efficiency that grows
        with the layer's width and the tokens per micro-batch, ``csrc/plan/cost.h``). The plan's
        notes say, per job, which was used.
    """
    _check_plan_arguments(planner, time_limit_s, seed=seed, max_iterations=max_iterations, grow_rounds=grow_rounds)
    if refine_iterations is not None:
        check_int(refine_iterations, "refine_iterations", 0)
    if not isinstance(search_thread, bool):
        raise InputError(f"search_thread must be True or False, got {search_thread!r}")
    if search_thread and (planner != "hulk" or refine_iterations == 0):
        raise InputError(f"search_thread=True needs planner='hulk' with refinement (refine_iterations None or > 0), "
                         f"got planner={planner!r}, refine_iterations={refine_iterations!r}")
    spec = as_cluster(cluster)
    job_specs, compute_notes = profiles.attach(spec, as_model_specs(jobs), profiles.as_profiles(profile), compute_model)
    core_cluster = spec.to_core()
    core_jobs = [j.to_core() for j in job_specs]
    # Every planner's clock starts here, on the core cluster: Search's time limit is kept in C++
    # from this point, so Hulk's budget (classification included) starts here too. Building the
    # core cluster (0.04 s at 5,000 machines, 0.08 s at 20,000) is common to all planners and
    # counted by none.
    t0 = time.perf_counter()
    if planner != "hulk":
        out = Plan(_plan_other(planner, spec, job_specs, core_cluster, core_jobs, time_limit_s, seed, max_iterations),
                   core_cluster, spec, job_specs, planner)
        if planner == "search" and not out.feasible and "no time left for" in out.notes[0]:  # search_result's note
            raise _budget_too_short(time_limit_s, "starts were left out")
        out.notes += compute_notes
        return out
    if refine_iterations == 0:
        p, hulk_notes = _plan_hulk(spec, job_specs, model, classes, grow_rounds)
        out = Plan(p, core_cluster, spec, job_specs, planner)
        out.notes[0:0] = hulk_notes
    else:
        moves = refine_iterations if refine_iterations is not None else max_iterations
        out = Plan(_plan_hulk_within(spec, job_specs, core_cluster, core_jobs, time_limit_s - (time.perf_counter() - t0),
                                    seed, moves, model, classes, grow_rounds, time_limit_s, search_thread),
                   core_cluster, spec, job_specs, planner)
    out.planning_s = time.perf_counter() - t0  # the classification (encoding, GNN inference) is part of planning
    out.notes += compute_notes
    return out


def _plan_hulk_within(spec, job_specs, core_cluster, core_jobs, seconds_left: float, seed: int, moves: int,
                     model, classes, grow_rounds: int, time_limit_s: float, search_thread: bool = False):
    """Hulk as an anytime planner (``_core.plan.AnytimePlanner``, csrc/plan/planners.h).

    The candidate sources come first, in this order: Search's first two starts (each job on the
    fewest machines; the greedy rule's groups grown as Search grows them; the second under
    Search's own time rule where the first left no room in the sources' share), the greedy rule's
    groups and the GNN's proposal (the learned planner; after Search's six other starts instead
    where three times its expected time does not fit in the share), the descent on the last job from the
    best of these (until 30% of the budget at most; on clusters of under 1,000 machines only
    where the job that finishes last holds under 10% of them), Search's six other starts
    (System A's last: never Search's best start in the benchmarks' plans), the region
    heuristic's groups (Algorithm 1 on them is shared with Search's
    "Hulk" start), then Search's greedy start with distances in send time instead of latency
    (on measured networks latency says little about bandwidth). Hulk's classifications (or the
    one ``classes`` / ``model`` gives) go through Algorithm 1 and growth and are grown further
    as starts (on clusters of 1,000 machines and more, growth stops once the makespan is final:
    ``csrc/plan/growth.h``). The sources share the first 60% of the budget, each running only while the time
    left in that share exceeds the longest step so far (and, for the GNN's proposal, its expected
    time: ``_StepCost``); but where the job that finishes last in the best start so far
    holds at least 10% of the machines, Search's starts run as in Search
    (while the time left in the whole budget exceeds the longest start). The rest of the budget refines
    the best start (``moves`` > 0 caps the walks): where the job that finishes last holds at
    least 10% of the machines, Search's own walk first (from Search's best start, every move
    uniform, the same seed) for half of the time left; a steepest descent on the machines of
    the job that finishes last (take one, give one back, or swap; 2-4 machines at once when
    none of those helps) for at most half of the time left; then Search's annealing walks (half
    of the moves drawn on the last job), then the idle machines offered to the last job and the
    descent again (the offer again if the descent moved machines; without a move cap, while most
    of the reserve for these steps is left, the walk goes on and they run again on anything
    shorter). Returns the core plan; its notes say which source won, what refinement
    gained and each step's wall time in the order run (a classification's own time included).
    With ``search_thread``, Search runs beside all of this in a second thread (``plan``'s
    parameter of that name). Raises InputError naming ``time_limit_s`` when the plan is
    infeasible and sources were left out for lack of time."""
    sources = _hulk_sources(spec, job_specs, core_cluster, core_jobs, model, classes)
    planner = _core.plan.AnytimePlanner(core_cluster, core_jobs, max(seconds_left, 1e-9), int(seed), int(moves))
    if search_thread:  # Search for the same budget beside Hulk; finish() returns the shorter plan
        planner.start_search_thread()

    def add(source, make):
        gnn = source == _GNN_SOURCE
        if not planner.time_for_another_step(_GNN_COST.expected_s(len(spec)) if gnn else 0.0):
            planner.skip(source)
            return
        t = time.perf_counter()
        c = make()
        seconds = time.perf_counter() - t
        planner.record_step(seconds, "" if c is not None else source)
        if gnn:
            _GNN_COST.record(len(spec), seconds)
        if c is not None:
            planner.add_classification(source, list(c), int(grow_rounds))

    planner.add_search_starts(0, 2)  # Search's first two (the fewest machines; the greedy rule, grown)
    deferred = []
    for source, make in sources:
        if source == _GNN_SOURCE and not planner.time_for_another_step(_GNN_DEFER_FACTOR * _GNN_COST.expected_s(len(spec))):
            deferred.append((source, make))  # after Search's other starts: see _GNN_DEFER_FACTOR
        elif source != _HEURISTIC_SOURCE:
            add(source, make)
    planner.descend_best(_EARLY_DESCENT_SHARE)  # a good plan before the slower sources
    # The rest of Search's starts, then the region heuristic's groups: Search's "Hulk" start is
    # Algorithm 1 on the same groups, computed once for both (tenths of a second when a job's
    # group holds thousands of machines), and after the cheaper starts the skip rule knows more.
    planner.add_search_starts(2, planner.search_starts)
    for source, make in deferred:
        add(source, make)
    for source, make in sources:
        if source == _HEURISTIC_SOURCE:
            add(source, make)
    if planner.time_for_another_step():  # Search's greedy start by send time, not latency
        planner.add_send_time_start()
    else:
        planner.skip("the closest machines by send time")
    p = planner.finish()
    if not p.to_dict()["feasible"] and planner.skipped_any():
        raise _budget_too_short(time_limit_s, "candidate sources were left out")
    return p


def _budget_too_short(time_limit_s, what: str) -> InputError:
    """The error for a plan infeasible because the budget ended the planning early (never a plan
    whose job says "no machines assigned" for lack of time); the CLI names --time-limit instead."""
    return InputError(f"time_limit_s={time_limit_s!r} is too short to find a plan: no feasible plan was found before "
                      f"the time ran out and {what}; give more time")


_HEURISTIC_SOURCE = "the region heuristic's groups"
# The GNN's proposal runs after Search's six other starts, not before them, where this many
# times its expected time does not fit in the sources' share: its step (the proposal, then
# Algorithm 1 and growth on it, about three times the proposal alone) would leave no room for
# them. On 1,000 paper-fitted machines with the Llama-2 jobs at 0.1 s (#384) the proposal
# step took 41 ms of the 60 ms share and Search's start "per region" was left out: Hulk 1.25x
# Search(t), 1.00x with the rule. Measured on fresh clusters k = 390-394 (1,000 machines, both
# job sets and Llama-2, seeds 0-1): paper-fitted at 0.1 s Hulk(t)/Search(t) 1.0085 -> 0.9992
# (plans over 1.02x 2 -> 0 of 30); measured at 0.1 s 0.803 -> 0.817, where the GNN's proposal
# helps within the share; 0.3 s unchanged.
_GNN_DEFER_FACTOR = 3
# The early descent on the best start ends by this share of the budget (Hulk's own sources
# share the first 60%; csrc/plan/search.cpp kSourceShare).
_EARLY_DESCENT_SHARE = 0.3


def _hulk_sources(spec, job_specs, core_cluster, core_jobs, model, classes) -> list:
    """(name, callable giving a classification or None) for each of Hulk's candidate sources;
    ``model`` and ``classes`` are checked here, before any work."""
    if classes is not None:
        given = check_classes(classes, len(spec), len(job_specs))
        return [("the given classification", lambda: given)]
    heuristic = (_HEURISTIC_SOURCE, lambda: _core.plan.heuristic_classes(core_cluster, core_jobs))
    if isinstance(model, str) and model == "heuristic":
        return [heuristic]
    if isinstance(model, str) and model != "greedy" or not (
            model is None or isinstance(model, (str, GNN, learned.LearnedPlanner))):
        _hulk_classes(spec, job_specs, model, None)  # raises the error naming model, before any work
    if isinstance(model, GNN):
        return [("the GNN's classification", lambda: _hulk_classes(spec, job_specs, model, None))]
    rule = ("the greedy rule's groups", lambda: greedy_classes(spec, job_specs))
    if model == "greedy":
        return [rule, heuristic]

    def gnn():
        proposals = (learned.default_planner() if model is None else model).proposals(spec, job_specs)
        return proposals[1] if len(proposals) > 1 else None  # the first is the rule's groups

    return [rule, (_GNN_SOURCE, gnn), heuristic]


class _StepCost:
    """The expected time of a step whose cost grows with the cluster (the GNN's proposal: the
    cluster's encoding, then the forward pass), so that the skip rule can leave it out before
    it runs rather than measure it: the longest step before it says little, being of another
    kind. It grows faster than the machine count (the proposals alone on a 2-core VM,
    2026-11-27: 4.5-5.9e-6 s per machine at 1,000-5,000 machines, 6.6-10.6e-6 at 20,000), so one
    figure per machine learnt at 5,000 machines let the proposal run at 20,000 measured machines
    (#314 paper4), where it took 0.27-0.28 s of a 0.3 s budget and left the refinement nothing
    (9.76 h where the plan had 6.30 h). And clusters of one size
    differ (at 20,000 measured machines 0.12-0.22 s, by their regions and links): a mean of
    0.14 s let a 0.19-0.22 s proposal into a 0.3 s budget. Hence per cluster size: the longest
    of this process's last ``WINDOW`` runs at that size, or for a size not seen, the nearest
    size seen scaled by ``(N / n) ** EXPONENT`` upwards and in proportion downwards (all err
    long rather than short); only runs on clusters of at least ``MIN_MACHINES`` count (on
    smaller ones the fixed costs dominate). Before any run, ``first_guess`` seconds per machine
    (0.3 s at 20,000 machines)."""

    MIN_MACHINES = 1_000
    EXPONENT = 1.5
    WINDOW = 8      # runs remembered per size
    MAX_SIZES = 64  # sizes remembered (the least recently run is dropped)

    def __init__(self, first_guess: float):
        self.first_guess = first_guess
        self.by_size: dict = {}  # machines -> the last WINDOW runs' seconds

    def expected_s(self, machines: int) -> float:
        if not self.by_size:
            return self.first_guess * machines
        n = min(self.by_size, key=lambda m: (abs(math.log(machines / m)), -m))
        return max(self.by_size[n]) * (machines / n) ** (self.EXPONENT if machines > n else 1.0)

    def record(self, machines: int, seconds: float) -> None:
        if machines < self.MIN_MACHINES:
            return
        runs = self.by_size.pop(machines, None) or collections.deque(maxlen=self.WINDOW)
        runs.append(seconds)
        self.by_size[machines] = runs
        if len(self.by_size) > self.MAX_SIZES:
            del self.by_size[next(iter(self.by_size))]


_GNN_SOURCE = "the GNN's proposal"
_GNN_COST = _StepCost(1.5e-5)


def _check_plan_arguments(planner, time_limit_s, **counts) -> None:
    if planner not in PLANNERS:
        raise InputError(f"planner must be one of {PLANNERS}, got {planner!r}")
    if not is_real(time_limit_s) or not (math.isfinite(time_limit_s) and 0 < time_limit_s <= MAX_TIME_LIMIT_S):
        raise InputError(f"time_limit_s must be a number of seconds in (0, {MAX_TIME_LIMIT_S:g}], got {time_limit_s!r}")
    for name, v in counts.items():  # the seed is a uint64 as everywhere (check_seed); the counts int64
        check_seed(v, name) if name == "seed" else check_int(v, name, 0)


def _plan_other(planner, spec, job_specs, core_cluster, core_jobs, time_limit_s, seed, max_iterations):
    """The core plan of Systems A/B/C, Search or Table 2."""
    if planner == "a":
        return _core.plan.plan_system_a(core_cluster, core_jobs)
    if planner == "b":
        return _core.plan.plan_system_b(core_cluster, core_jobs)
    if planner == "c":
        return _core.plan.plan_system_c(core_cluster, core_jobs)
    if planner == "search":
        return _core.plan.plan_search(core_cluster, core_jobs, float(time_limit_s), int(seed), int(max_iterations))
    return _core.plan.plan_assignment(core_cluster, core_jobs, _table2_assignment(spec, job_specs), "table2")


def _plan_hulk(spec, job_specs, model, classes, grow_rounds) -> tuple:
    """Hulk before refinement: one classification, or the learned planner's candidates (the
    rule's groups and the GNN's best proposal), each planned (and grown); the shortest plan is
    kept. Returns ``(core plan, notes)``."""
    candidates = _hulk_candidates(spec, job_specs, model, classes)
    grown = [grow_bottleneck(spec, job_specs, c, grow_rounds) if grow_rounds > 0
             else (_core.plan.plan_hulk(spec.to_core(), [j.to_core() for j in job_specs], list(c)), np.asarray(c), None)
             for c in candidates]
    k = min(range(len(grown)), key=lambda i: grown[i][0].makespan_s)  # ties: the first (the rule's)
    p, notes = grown[k][0], []
    if len(grown) > 1:
        names = _candidate_names(len(grown), len(spec))
        others = ", ".join(f"{names[i]} {grown[i][0].makespan_s / 3600:.2f} h" for i in range(len(grown)) if i != k)
        notes.append(f"hulk: {names[k]} planned shortest ({grown[k][0].makespan_s / 3600:.2f} h; {others})")
    added = int((grown[k][1] >= 0).sum() - (np.asarray(candidates[k]) >= 0).sum())
    if grown[k][2] is not None and added > 0:
        notes.append(f"growth: {added} idle machine(s) given to the job that finished last, "
                     f"{grown[k][2] / 3600:.2f} h -> {p.makespan_s / 3600:.2f} h")
    return p, notes


def table2_gnn(seed: int = 0) -> GNN:
    """The paper's setup: the classifier trained on Table 2's labels of the bundled cluster, on
    the paper's features (``PAPER_NODE_ATTRS``, ``PAPER_EDGE_ATTRS``); classes = job indices of
    ``hulk.datasets.HULK47_CLASSES``. Use it as ``plan(..., "hulk", model=table2_gnn())``."""
    G = datasets.hulk47(clean="quiet")
    labels, classes = datasets.hulk47_table2_labels()
    g = Graph.from_networkx(G, node_attrs=PAPER_NODE_ATTRS, edge_attrs=PAPER_EDGE_ATTRS)
    model = GNN(num_classes=len(classes), hidden=[64, 64], seed=seed)
    model.fit(g, labels, epochs=200)
    return model


def _table2_assignment(spec, job_specs) -> list[int]:
    if len(spec) != 47:
        raise InputError("planner 'table2' is the paper's assignment of its 47-server cluster; "
                         f"this cluster has {len(spec)} machines")
    labels, classes = datasets.hulk47_table2_labels()
    names = [j.name for j in job_specs]
    missing = [c for c in datasets.HULK47_CLASSES if c not in names]
    if missing:
        raise InputError(f"planner 'table2' assigns the paper's jobs {datasets.HULK47_CLASSES}; "
                         f"missing from jobs: {missing}")
    return [names.index(classes[y]) if y >= 0 else -1 for y in labels]


def _candidate_names(count: int, machines: int) -> list[str]:
    """Names of the learned planner's candidates in the order _hulk_candidates returns them."""
    names = ["the greedy rule's groups"]
    if count - (machines <= HEURISTIC_CANDIDATE_MAX_MACHINES) == 2:
        names.append("the GNN's proposal")
    if machines <= HEURISTIC_CANDIDATE_MAX_MACHINES:
        names.append("the region heuristic's groups")
    return names


def _hulk_candidates(spec, job_specs, model, classes) -> list:
    """The classifications Hulk plans: the learned planner's proposals, else the one classification."""
    if classes is None and (model is None or model == "greedy" or not isinstance(model, str)):
        if model is None:
            model = learned.default_planner()
        if model == "greedy" or isinstance(model, learned.LearnedPlanner):
            if model == "greedy":  # the same candidates without the GNN's proposal
                out = [np.asarray(greedy_classes(spec, job_specs), dtype=np.int64)]
            else:
                out = model.proposals(spec, job_specs)
            if len(spec) <= HEURISTIC_CANDIDATE_MAX_MACHINES:
                core_jobs = [j.to_core() for j in job_specs]
                out.append(np.asarray(_core.plan.heuristic_classes(spec.to_core(), core_jobs), dtype=np.int64))
            return out
    return [_hulk_classes(spec, job_specs, model, classes)]


def _hulk_classes(spec, job_specs, model, classes) -> list[int]:
    if classes is not None:
        return check_classes(classes, len(spec), len(job_specs))
    if isinstance(model, str):
        if model != "heuristic":
            raise InputError(f"model must be None, 'heuristic', 'greedy', a LearnedPlanner or a GNN, got {model!r}")
        return list(_core.plan.heuristic_classes(spec.to_core(), [j.to_core() for j in job_specs]))
    if not isinstance(model, GNN):  # None, "greedy" and learned planners are _hulk_candidates' own
        raise InputTypeError(f"model must be None, 'heuristic', 'greedy', a hulk.plan.LearnedPlanner or a hulk.GNN, "
                        f"got {type(model).__name__}")
    G = spec.to_networkx()  # a generated cluster says why it has no explicit links
    g = Graph.from_networkx(G, node_attrs=PAPER_NODE_ATTRS, edge_attrs=PAPER_EDGE_ATTRS)
    pred = [int(c) for c in model.predict(g)]
    return [c if c < len(job_specs) else -1 for c in pred]


def compare(cluster, jobs: Iterable = models.PAPER_JOBS_4, planners: Sequence[str] = ("a", "b", "c", "search", "hulk"),
            time_limit_s: float = 2.0, seed: int = 0, model=None, max_iterations: int = 0, profile=None,
            compute_model: str = "flop") -> list[Plan]:
    """One plan per planner, same cluster, same jobs, same cost model."""
    loaded = profiles.as_profiles(profile)  # read once
    return [plan(cluster, jobs, p, time_limit_s=time_limit_s, seed=seed, model=model, max_iterations=max_iterations,
                 profile=loaded, compute_model=compute_model)
            for p in planners]
