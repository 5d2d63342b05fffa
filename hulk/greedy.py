"""A simple rule for who trains what, the baseline the learned planner must beat.

:func:`greedy_classes` gives each job, largest memory need first, the fastest free machines
until their memory covers the job's need (``ModelSpec.memory_need_bytes``, weights, gradients,
optimiser state and activations), taken from the one region where that is possible with the
most throughput (ties: fewer machines, then the lowest machine id); a job no single region can
hold takes the fastest free machines of the whole cluster. Search's start "the fastest
machines in one region" (csrc/plan/search.cpp) is the same rule. Machines no job takes stay idle. Use it as Hulk's classification::

    planner.plan(cluster, jobs, "hulk", classes=greedy_classes(cluster, jobs), refine_iterations=0, grow_rounds=0)

so the same Algorithm 1 and pipeline partition turn it into a plan (``benchmarks/bench_learned.py``
compares it with the GNN).
"""

from __future__ import annotations

import numpy as np


def greedy_classes(cluster, jobs) -> list[int]:
    """Job index per machine (-1 idle) by the rule in the module docstring. ``cluster`` is a
    ClusterSpec, a RegionalCluster or anything :func:`hulk.planner.as_cluster_spec` takes;
    ``jobs`` are catalogue names or ModelSpecs."""
    from .learn import _rule_inputs
    from .planner import as_cluster_spec

    return assign_fastest_in_one_region(*_rule_inputs(as_cluster_spec(cluster), jobs)).tolist()


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

