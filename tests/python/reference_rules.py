"""Test-only reference of the planner's two rules, in plain numpy: the greedy rule and growth.

These are the Python implementations the package had before the rules moved to C++
(``_core.plan.greedy_classes`` and ``_core.plan.grow_bottleneck``). They are not part of the
package: tests compare ``hulk.plan.rules`` against them (``test_plan_rules.py``), so that the
C++ rules, once bound, are held to the same results. Keep them as they are; change them only
when the documented semantics of a rule change (and the C++ with them).
"""

from __future__ import annotations

import numpy as np

from hulk import _core
from hulk.plan import as_cluster, as_model_specs


def rule_inputs(cluster, jobs) -> tuple:
    """What the greedy rule reads: machines' memory in bytes [N], throughput [N] and region
    index [N], and the jobs' memory need [J]."""
    m = as_cluster(cluster).machine_table()
    need = np.array([j.memory_need_bytes() for j in as_model_specs(jobs)], dtype=np.float64)
    return m.memory_gb * 1e9, m.tflops, m.region, need


def greedy_classes(cluster, jobs) -> list[int]:
    """Job index per machine (-1 idle) by the greedy rule (``hulk.plan.rules``' docstring)."""
    return assign_fastest_in_one_region(*rule_inputs(cluster, jobs)).tolist()


def assign_fastest_in_one_region(memory_bytes: np.ndarray, tflops: np.ndarray, region: np.ndarray,
                                 need_bytes: np.ndarray) -> np.ndarray:
    """The rule on arrays: machines' memory [N], throughput [N] and region index [N], jobs'
    memory need [J]; returns the job index per machine [N] (-1 idle)."""
    fastest_first = np.argsort(-tflops, kind="stable")
    classes = np.full(len(memory_bytes), -1, dtype=np.int64)
    for j in np.argsort(-need_bytes, kind="stable"):
        free = fastest_first[classes[fastest_first] < 0]
        best, best_key = None, None
        for r in np.unique(region[free]):
            chosen = _cover(free[region[free] == r], memory_bytes, need_bytes[j])
            # most throughput; ties: fewer machines, then the lowest machine id (as Search's start)
            key = None if chosen is None else (tflops[chosen].sum(), -chosen.size, -chosen.min())
            if key is not None and (best_key is None or key > best_key):
                best, best_key = chosen, key
        if best is None:  # no region holds it alone: the fastest machines anywhere
            best = _cover(free, memory_bytes, need_bytes[j])
        if best is not None:
            classes[best] = j
    return classes


def _cover(candidates: np.ndarray, memory: np.ndarray, need: float):
    """The shortest prefix of ``candidates`` (fastest first) whose memory reaches ``need``, or
    None when all of them together fall short."""
    total = np.cumsum(memory[candidates])
    if total.size == 0 or total[-1] < need:
        return None
    return candidates[: int(np.searchsorted(total, need)) + 1]


def grow_bottleneck(cluster, jobs, classes, rounds: int = 8, steps=(1, 2, 4, 8, 16)) -> tuple:
    """Growth (``hulk.plan.rules.grow_bottleneck``): ``(core plan, classes [N], makespan_s
    before growth)``."""
    cluster = as_cluster(cluster)
    core_cluster, core_jobs = cluster.to_core(), [j.to_core() for j in as_model_specs(jobs)]
    m = cluster.machine_table()
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
