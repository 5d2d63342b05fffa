"""The launch bundle's ``job.json`` (format ``hulk-launch/1``): what one job of a plan runs.

``hulk plan --export DIR`` (:func:`hulk.plan.export.export_plan`) writes one per job;
``python -m hulk.launch DIR/<job>/job.json`` reads it with :func:`read_bundle`. Pure Python (no torch). The format::

    {"version": "hulk-launch/1",
     "job": "BERT-large", "planner": "hulk",
     "model": {"name", "layers", "hidden", "seq_len", "heads", "params", "global_batch",
               "recompute"},      # recompute: GPipe re-materialisation (keep each stage's inputs,
                                  # recompute its forward pass in the backward), as the plan costs it
     "micro_batches": 8,          # m: micro-batches per replica per iteration (GPipe)
     "micro_batch_size": 16,      # b: sequences per micro-batch = global_batch // (replicas * m)
     "nnodes": 6,                 # processes = machines of the job; one process per machine
     "nproc_per_node": 1,
     "ranks": [{"rank": 0, "machine": 12, "name": "beijing-0", "address": "10.0.0.7" or null,
                "replica": 0, "stage": 0}, ...],          # ordered by rank
     "stages": [{"stage": 0, "layers": [0, 8], "ranks": [0, 3]}, ...],  # ranks = the stage's
                                  # replica group: its gradients are all-reduced among them
     "pipelines": [[0, 1, 2], [3, 4, 5]],                 # per replica, its ranks in stage order
     "rendezvous": {"address": "10.0.0.7" or null, "port": 29500, "rank": 0},
     "commands": [{"rank": 0, "name": "beijing-0", "command": "torchrun ..."}, ...],
     "predicted": {"iteration_s", "compute_s", "comm_s"},  # the cost model's figures
     "notes": ["..."]}

Ranks are replica-major: rank = replica * stages + stage. An address is null where the
cluster file gave none and no ``--hosts`` file named it; the commands then hold the
placeholder ``ADDRESS_OF_RANK0`` which the user replaces (see the bundle's README).
Layers are ``[first, last)`` and every replica has the same split (the cost model requires it).
"""

from __future__ import annotations

import math
import re

from .._checks import is_int, is_real
from .._io import read_json_file
from ..errors import FileFormatError, InputError

BUNDLE_VERSION = "hulk-launch/1"
ADDRESS_PLACEHOLDER = "ADDRESS_OF_RANK0"
DEFAULT_PORT = 29500
MAX_BUNDLE_BYTES = 64 << 20

_ADDRESS = re.compile(r"^[A-Za-z0-9._:\[\]-]{1,253}$")  # a host name, IPv4 or (bracketed) IPv6 address
_KEYS = ("version", "job", "planner", "model", "micro_batches", "micro_batch_size", "nnodes", "nproc_per_node",
         "ranks", "stages", "pipelines", "rendezvous", "commands", "predicted", "notes")
_MODEL_KEYS = ("name", "layers", "hidden", "seq_len", "heads", "params", "global_batch", "recompute")


def read_bundle(path) -> dict:
    """The checked content of a ``job.json``; a :class:`FileFormatError` names the file and the field."""
    doc = read_json_file(path, "launch bundle", max_bytes=MAX_BUNDLE_BYTES)
    check_bundle(doc, path)
    return doc


def check_bundle(doc, path) -> None:
    """Checks a parsed bundle: every key present, counts consistent, stages cover the layers."""
    def bad(field, message):
        raise FileFormatError(path, field, message)

    if not isinstance(doc, dict):
        bad(None, "the top level must be an object")
    missing = [k for k in _KEYS if k not in doc]
    extra = sorted(set(doc) - set(_KEYS))
    if missing or extra:
        bad(None, f"keys must be {list(_KEYS)}; missing {missing}, unknown {extra}")
    if doc["version"] != BUNDLE_VERSION:
        bad("version", f"must be {BUNDLE_VERSION!r}, got {doc['version']!r}")
    model = doc["model"]
    if not isinstance(model, dict) or sorted(model) != sorted(_MODEL_KEYS):
        bad("model", f"must be an object with keys {list(_MODEL_KEYS)}, got {model!r:.120}")
    for key in ("layers", "hidden", "seq_len", "heads", "global_batch"):
        _positive_int(model[key], f"model.{key}", bad)
    if not isinstance(model["recompute"], bool):
        bad("model.recompute", f"must be true or false, got {model['recompute']!r}")
    if model["hidden"] % model["heads"]:
        bad("model.heads", f"{model['heads']} does not divide model.hidden {model['hidden']}")
    for key in ("micro_batches", "micro_batch_size", "nnodes", "nproc_per_node"):
        _positive_int(doc[key], key, bad)
    if doc["nproc_per_node"] != 1:
        bad("nproc_per_node", f"must be 1 (one process per machine, as the plan costs it), got {doc['nproc_per_node']}")
    n = doc["nnodes"]
    ranks = doc["ranks"]
    if not isinstance(ranks, list) or len(ranks) != n:
        bad("ranks", f"must list nnodes = {n} ranks, got {len(ranks) if isinstance(ranks, list) else ranks!r}")
    for r, entry in enumerate(ranks):
        if not isinstance(entry, dict) or entry.get("rank") != r:
            bad(f"ranks[{r}]", f"must be an object with rank {r}, got {entry!r:.120}")
    stages, pipelines = doc["stages"], doc["pipelines"]
    if not isinstance(stages, list) or not stages:
        bad("stages", "must be a non-empty list")
    if not isinstance(pipelines, list) or not pipelines:
        bad("pipelines", "must be a non-empty list")
    S, D = len(stages), len(pipelines)
    if S * D != n:
        bad("nnodes", f"{n} processes, but {D} pipelines x {S} stages = {S * D}")
    edge = 0
    for s, st in enumerate(stages):
        layers = st.get("layers") if isinstance(st, dict) else None
        if not (isinstance(layers, list) and len(layers) == 2 and all(is_int(v) for v in layers)
                and layers[0] == edge and layers[1] > layers[0]):
            bad(f"stages[{s}].layers", f"must be [{edge}, last) with last > {edge}, got {layers!r}")
        edge = layers[1]
        if st.get("ranks") != [d * S + s for d in range(D)]:
            bad(f"stages[{s}].ranks", f"must be {[d * S + s for d in range(D)]} (rank = replica * stages + stage), "
                                      f"got {st.get('ranks')!r}")
    if edge != model["layers"]:
        bad("stages", f"the stages end at layer {edge}, but model.layers is {model['layers']}")
    for d, pipe in enumerate(pipelines):
        if pipe != list(range(d * S, (d + 1) * S)):
            bad(f"pipelines[{d}]", f"must be {list(range(d * S, (d + 1) * S))}, got {pipe!r}")
    rdzv = doc["rendezvous"]
    if not isinstance(rdzv, dict) or not is_int(rdzv.get("port")) or not 1 <= rdzv["port"] <= 65535:
        bad("rendezvous.port", f"must be a port number in [1, 65535], got {rdzv!r:.120}")
    predicted = doc["predicted"]
    if not isinstance(predicted, dict) or not all(
            is_real(predicted.get(k)) and math.isfinite(predicted[k]) and predicted[k] >= 0
            for k in ("iteration_s", "compute_s", "comm_s")):
        bad("predicted", f"must hold finite iteration_s, compute_s and comm_s >= 0, got {predicted!r:.120}")


def check_address(address, where: str) -> str:
    """A machine's address: a host name or an IP address (no spaces or shell characters)."""
    if not isinstance(address, str) or not _ADDRESS.match(address):
        raise InputError(f"{where}: address must be a host name or IP address, got {address!r:.80}")
    return address


def _positive_int(v, field, bad) -> None:
    if not is_int(v) or v < 1:
        bad(field, f"must be a positive integer, got {v!r}")


def check_world_size(doc, path, world_size: int) -> None:
    """The launch's process count must be the bundle's: otherwise ranks would hold the wrong stages."""
    if world_size != doc["nnodes"]:
        raise FileFormatError(path, "nnodes", f"the bundle is for {doc['nnodes']} processes (one per machine), "
                                              f"but this launch has WORLD_SIZE = {world_size}")


def stage_of(doc, rank: int) -> tuple:
    """``(replica, stage)`` of ``rank`` (ranks are replica-major)."""
    S = len(doc["stages"])
    return rank // S, rank % S
