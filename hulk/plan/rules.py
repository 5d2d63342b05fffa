"""The planner's rules: who trains what without a GNN, and who gets more machines.

The greedy rule (:func:`greedy_classes`), the baseline the learned planner must beat, gives each
job, largest memory need first, the fastest free machines until their memory covers the job's
need (``ModelSpec.memory_need_bytes``: weights, gradients, optimiser state and activations),
taken from the one region where that is possible with the most throughput (ties: fewer
machines, then the lowest machine id); a job no single region can hold takes the fastest free
machines of the whole cluster. Search's start "the fastest machines in one region"
(csrc/plan/search.cpp) is the same rule. Machines no job takes stay idle.

Growth (:func:`grow_bottleneck`) gives the job that sets the makespan more idle machines of its
regions while that shortens the plan.

:func:`plan_classes` turns a classification (job index per machine, -1 idle) into a plan with
the paper's Algorithm 1 and the pipeline partition, nothing else: the same as
``plan(cluster, jobs, "hulk", classes=..., refine_iterations=0, grow_rounds=0)``::

    plan_classes(cluster, jobs, greedy_classes(cluster, jobs)).makespan_s

Both rules are written once, in C++ (``csrc/plan/rules.h``), and Search uses the same code for
its start and its growth; ``tests/python/reference_rules.py`` keeps a Python twin that the
tests compare with.
"""

from __future__ import annotations

import numpy as np

from .. import _core
from .._checks import check_int, is_int
from .inputs import as_cluster, as_model_specs
from ..errors import InputError

__all__ = ["DEFAULT_GROW_ROUNDS", "GROWTH_STEPS", "check_classes", "greedy_classes", "grow_bottleneck",
           "job_need_bytes", "plan_classes"]

DEFAULT_GROW_ROUNDS = 8
GROWTH_STEPS = (1, 2, 4, 8, 16)


def job_need_bytes(job_specs: list) -> np.ndarray:
    """``ModelSpec.memory_need_bytes`` of each job, ``[J]`` float64."""
    return np.array([j.memory_need_bytes() for j in job_specs], dtype=np.float64)


def check_classes(classes, n: int, n_jobs: int) -> list[int]:
    """``classes`` as a list of ``n`` job indices in [-1, n_jobs); ``ValueError`` otherwise."""
    if isinstance(classes, np.ndarray):
        ok = classes.shape == (n,) and classes.dtype.kind in "iu"
        values = classes  # compared in its own dtype below: no uint64 wraps to -1 before the check
    else:
        items = list(classes)
        # `type(c) is int` first: the planners' own lists hold Python ints (ndarray.tolist()), and
        # is_int's ABC check alone cost 7 ms per call on 20,000 machines (the GNN's proposals
        # check five classifications each).
        plain = all(type(c) is int for c in items)
        ok = len(items) == n and (plain or all(is_int(c) for c in items))
        values = (items if plain else [int(c) for c in items]) if ok else None  # exact, whatever integer type
    lo, hi = ((values.min(), values.max()) if isinstance(values, np.ndarray) else (min(values), max(values))) \
        if ok and n else (0, 0)
    if not ok or lo < -1 or hi >= n_jobs:
        raise InputError(f"classes: expected {n} integer job indices in [-1, {n_jobs})")
    return np.asarray(values, dtype=np.int64).tolist() if isinstance(values, np.ndarray) else values


def plan_classes(cluster, jobs, classes):
    """Algorithm 1 and the pipeline partition of ``classes`` (job index per machine, -1 idle),
    no growth and no refinement. Returns the C++ plan (``makespan_s``, ``to_dict()``)."""
    cluster, job_specs = as_cluster(cluster), as_model_specs(jobs)
    classes = check_classes(classes, len(cluster), len(job_specs))
    return _core.plan.plan_hulk(cluster.to_core(), [j.to_core() for j in job_specs], classes)


def greedy_classes(cluster, jobs) -> list[int]:
    """Job index per machine (-1 idle) by the greedy rule of the module docstring. ``cluster``
    is a Cluster or anything :func:`hulk.plan.as_cluster` takes; ``jobs`` are catalogue names
    or ModelSpecs."""
    cluster, job_specs = as_cluster(cluster), as_model_specs(jobs)
    return list(_core.plan.greedy_classes(cluster.to_core(), [j.to_core() for j in job_specs]))


def grow_bottleneck(cluster, jobs, classes, rounds: int = DEFAULT_GROW_ROUNDS, steps=GROWTH_STEPS) -> tuple:
    """Gives the job that sets the makespan more machines while that shortens the plan.

    Each round plans ``classes`` (job index per machine, -1 idle) with Algorithm 1 and the
    partition, finds the job that finishes last, and tries adding to it the first 1, 2, 4, 8
    and 16 (``steps``) idle machines of the regions it already uses, fastest first (ties: lower
    machine id). The best trial is kept if it shortens the plan; rounds stop when none does, or
    after ``rounds``. Returns ``(core plan, classes, makespan_s before growth)``. Each trial is
    one plan: milliseconds up to a few thousand machines. Why: jobs usually need few of many
    machines, and the rule, the region heuristic and the GNN all give the job that decides the
    makespan about the fewest machines that hold it, while more of them (data-parallel
    replicas) often shorten it; a 2 s Search found this on most generated clusters, and this
    directed step finds most of it."""
    cluster, job_specs = as_cluster(cluster), as_model_specs(jobs)
    core_plan, grown, start_s = _core.plan.grow_bottleneck(
        cluster.to_core(), [j.to_core() for j in job_specs], check_classes(classes, len(cluster), len(job_specs)),
        check_int(rounds, "rounds", 0, 2**31 - 1), [check_int(k, "steps", 0, 2**31 - 1) for k in steps])
    return core_plan, np.asarray(grown, dtype=np.int64), start_s
