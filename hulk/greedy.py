"""A simple rule for who trains what, the baseline the learned planner must beat.

:func:`greedy_classes` gives each job, largest memory need first, the fastest free machines
until their memory covers the job's need (``ModelSpec.memory_need_bytes``, weights, gradients,
optimiser state and activations), taken from the one region where that is possible with the
most throughput (ties: fewer machines, then the lowest machine id); a job no single region can
hold takes the fastest free machines of the whole cluster. Search's start "the fastest
machines in one region" (csrc/plan/search.cpp) is the same rule. Machines no job takes stay idle. Use it as Hulk's classification::

    planner.plan(cluster, jobs, "hulk", classes=greedy_classes(cluster, jobs), refine_iterations=0)

so the same Algorithm 1 and pipeline partition turn it into a plan (``benchmarks/bench_learned.py``
compares it with the GNN).
"""

from __future__ import annotations

import numpy as np

from . import generate


def _regions(cluster) -> np.ndarray:
    if isinstance(cluster, generate.RegionalCluster):
        return np.asarray(cluster.region)
    names = [m["region"] for m in cluster.machines]
    index = {r: i for i, r in enumerate(dict.fromkeys(names))}
    return np.array([index[r] for r in names], dtype=np.int64)


def greedy_classes(cluster, jobs) -> list[int]:
    """Job index per machine (-1 idle) by the rule in the module docstring. ``cluster`` is a
    ClusterSpec, a RegionalCluster or anything :func:`hulk.planner.as_cluster_spec` takes;
    ``jobs`` are catalogue names or ModelSpecs."""
    from .learn import _job_need_bytes, _machines_of
    from .planner import as_cluster_spec, as_model_specs

    job_specs = as_model_specs(jobs)
    cluster = as_cluster_spec(cluster)
    m = _machines_of(cluster)
    memory = m.memory_gb * 1e9
    region = _regions(cluster)
    need = _job_need_bytes(job_specs)
    fastest_first = np.argsort(-m.tflops, kind="stable")
    classes = np.full(len(memory), -1, dtype=np.int64)
    for j in np.argsort(-need, kind="stable"):
        free = fastest_first[classes[fastest_first] < 0]
        best, best_key = None, None
        for r in np.unique(region[free]):
            chosen = _cover(free[region[free] == r], memory, need[j])
            # most throughput; ties: fewer machines, then the lowest machine id (as Search's start)
            key = None if chosen is None else (m.tflops[chosen].sum(), -chosen.size, -chosen.min())
            if key is not None and (best_key is None or key > best_key):
                best, best_key = chosen, key
        if best is None:  # no region holds it alone: the fastest machines anywhere
            best = _cover(free, memory, need[j])
        if best is not None:
            classes[best] = j
    return classes.tolist()


def _cover(candidates: np.ndarray, memory: np.ndarray, need: float):
    """The shortest prefix of ``candidates`` (fastest first) whose memory reaches ``need``, or
    None when all of them together fall short."""
    total = np.cumsum(memory[candidates])
    if total.size == 0 or total[-1] < need:
        return None
    return candidates[: int(np.searchsorted(total, need)) + 1]
