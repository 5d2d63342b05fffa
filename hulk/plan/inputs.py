"""What the planners accept, turned into what they use: a :class:`~hulk.plan.cluster.Cluster`
and a list of :class:`~hulk.plan.models.ModelSpec`."""

from __future__ import annotations

from typing import Iterable

import networkx as nx

from .._io import read_json_file
from . import cluster_spec, generate, models
from .cluster import Cluster
from ..errors import InputError, InputTypeError

__all__ = ["as_cluster", "as_cluster_spec", "as_model_specs"]


def as_cluster(cluster) -> Cluster:
    """A :class:`Cluster` (ClusterSpec or RegionalCluster) from either, a networkx graph, or a
    path to a JSON cluster file (schema hulk-cluster/1 or hulk-regional/1)."""
    if isinstance(cluster, Cluster):
        return cluster
    if isinstance(cluster, (str, bytes)) or hasattr(cluster, "__fspath__"):
        doc = _peek_json(cluster)
        if isinstance(doc, dict) and doc.get("version") == generate.SCHEMA_VERSION:
            return generate.RegionalCluster.from_dict(doc)
        return cluster_spec.from_json(cluster)  # its own messages for missing or malformed files
    if isinstance(cluster, nx.Graph):
        return cluster_spec.from_networkx(cluster)
    raise InputTypeError(f"cluster must be a ClusterSpec, a networkx graph or a JSON path, got {type(cluster).__name__}")


as_cluster_spec = as_cluster  # the name before 0.2


def _peek_json(path):
    try:  # bounded and strict: /dev/zero or a FIFO is refused, not read without end
        return read_json_file(path, "cluster file")
    except (OSError, ValueError):
        return None  # from_json reports the problem


def as_model_specs(jobs: Iterable) -> list:
    """ModelSpecs from catalogue names and/or ModelSpec objects."""
    out = []
    for j in jobs:
        out.append(models.get(j) if isinstance(j, str) else j)
        if not isinstance(out[-1], models.ModelSpec):
            raise InputTypeError(f"jobs: expected model names or hulk.models.ModelSpec, got {type(j).__name__}")
    if not out:
        raise InputError("jobs: give at least one job")
    names = [j.name for j in out]
    if len(set(names)) != len(names):
        raise InputError(f"jobs: each job must appear once, got {names}")
    return out
