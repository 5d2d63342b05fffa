"""Export a plan as launch bundles: ``DIR/<job>/job.json`` + ``README.md`` per job, ``DIR/plan.json``.

The bundle's format is documented in :mod:`hulk.plan.bundle`; ``python -m hulk.launch
job.json`` runs it. One process per machine: the cost model treats a machine as one device,
so each machine runs one stage of one replica. Ranks are replica-major (rank = replica *
stages + stage); torchrun's static rendezvous (``--master-addr`` / ``--master-port`` on
rank 0's machine, ``--node-rank``) keeps that order, which the c10d rendezvous would not.

Addresses: a machine's ``address`` comes from the ``hosts`` mapping (machine name -> host),
else from the cluster file's optional ``address`` field, else it is null and the commands hold
the placeholder ``ADDRESS_OF_RANK0`` (only rank 0's address is needed to launch).

Jobs that cannot be launched this way are listed in ``plan.json`` with the reason and get no
bundle: infeasible jobs and tensor-parallel jobs (the launcher runs pipelines and replicas).
"""

from __future__ import annotations

import json
import os
import re
import shlex

from .._checks import is_int
from .._io import atomic_write, read_json_file
from ..errors import FileFormatError, InputError
from .bundle import ADDRESS_PLACEHOLDER, BUNDLE_VERSION, DEFAULT_PORT, check_address, check_bundle
from .torch_block import heads_of


def load_hosts(path) -> dict:
    """A hosts file: a JSON object ``{"machine name": "address", ...}``."""
    doc = read_json_file(path, "hosts file", max_bytes=16 << 20)
    if not isinstance(doc, dict):
        raise FileFormatError(path, None, f"must be a JSON object of machine name -> address, got {doc!r:.80}")
    return doc  # the names and addresses are checked against the cluster by export_plan


def export_plan(plan, directory, *, hosts: dict | None = None, hosts_path=None, port: int = DEFAULT_PORT) -> list:
    """Writes the plan's launch bundles into ``directory`` (new or empty); returns the
    ``plan.json`` entries (job, bundle path or None, reason)."""
    if not is_int(port) or not 1 <= port <= 65535:
        raise InputError(f"port must be an integer in [1, 65535], got {port!r}")
    directory = os.fsdecode(directory)
    check_empty_directory(directory)
    names = list(plan.cluster.machine_table().names)
    addresses = _addresses(plan.cluster, names, hosts or {}, hosts_path)
    bundles, index, used = [], [], set()
    for job, spec in zip(plan.jobs, plan.job_specs):
        reason = _not_launchable(job)
        if reason:
            index.append(dict(job=job["job"], bundle=None, reason=reason))
            continue
        folder = _folder_name(job["job"], used)
        bundles.append((folder, _bundle(plan, job, spec, names, addresses, port)))
        index.append(dict(job=job["job"], bundle=f"{folder}/job.json", reason=None))
    if not bundles:
        raise InputError(f"export {directory!r}: no job of this plan can be launched: "
                         + "; ".join(f"{e['job']}: {e['reason']}" for e in index))
    os.makedirs(directory, exist_ok=True)
    for folder, doc in bundles:
        os.makedirs(os.path.join(directory, folder), exist_ok=True)
        check_bundle(doc, os.path.join(directory, folder, "job.json"))  # what we write, the launcher reads
        atomic_write(os.path.join(directory, folder, "job.json"), json.dumps(doc, indent=2, allow_nan=False) + "\n",
                     what="launch bundle")
        atomic_write(os.path.join(directory, folder, "README.md"), bundle_readme(doc), what="bundle README")
    atomic_write(os.path.join(directory, "plan.json"),
                 json.dumps(dict(version=BUNDLE_VERSION, planner=plan.planner, jobs=index), indent=2) + "\n",
                 what="export index")
    return index


def check_empty_directory(directory: str) -> None:
    if not directory:
        raise InputError("export directory: the path is empty")
    if os.path.lexists(directory):
        if not os.path.isdir(directory):
            raise InputError(f"export directory {directory!r} exists and is not a folder")
        if os.listdir(directory):
            raise InputError(f"export directory {directory!r} exists and is not empty; "
                             "give a new or empty folder (bundles are never overwritten)")


def _addresses(cluster, names, hosts, hosts_path) -> list:
    """Per machine: its address from ``hosts``, else the cluster's ``address`` field, else None."""
    known = set(names)
    for name, address in hosts.items():
        where = hosts_path if hosts_path is not None else "hosts"
        if name not in known:
            raise FileFormatError(where, name, "is not a machine of the cluster")
        try:
            check_address(address, "address")
        except InputError as exc:
            raise FileFormatError(where, name, str(exc)) from None
    own = [m.get("address") for m in getattr(cluster, "machines", [])] or [None] * len(names)
    return [hosts.get(name, own[i]) for i, name in enumerate(names)]


def _not_launchable(job) -> str | None:
    if not job["feasible"]:
        return f"infeasible: {job['reason']}"
    if job["strategy"] != "pipeline":
        return "tensor parallel: the launcher runs pipeline stages and data-parallel replicas only"
    bounds = {tuple(b) for _, b in job["replicas"]}
    if len(bounds) != 1:
        return "its replicas split the layers differently"
    return None


def _folder_name(job: str, used: set) -> str:
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", job).strip("._") or "job"
    name, k = base, 2
    while name in used:
        name, k = f"{base}-{k}", k + 1
    used.add(name)
    return name


def _bundle(plan, job, spec, names, addresses, port) -> dict:
    replicas = job["replicas"]
    D, S = len(replicas), len(replicas[0][0])
    bounds = list(replicas[0][1])
    m = int(spec.micro_batches)
    b = spec.global_batch // (D * m)
    notes = []
    if b < 1:
        raise InputError(f"job {job['job']!r}: global_batch {spec.global_batch} is smaller than "
                         f"{D} replicas x {m} micro-batches; it cannot be launched")
    if b * D * m != spec.global_batch:
        notes.append(f"global_batch {spec.global_batch} does not divide into {D} replicas x {m} micro-batches: "
                     f"each micro-batch holds {b} sequences, {b * D * m} per iteration")
    ranks = []
    for d, (chain, _) in enumerate(replicas):
        for s, machine in enumerate(chain):
            ranks.append(dict(rank=d * S + s, machine=int(machine), name=names[machine],
                              address=addresses[machine], replica=d, stage=s))
    first = ranks[0]
    rdzv = dict(address=first["address"], port=int(port), rank=0)
    n = D * S
    host = first["address"] or ADDRESS_PLACEHOLDER
    if first["address"] is None:
        notes.append(f"no address for machine {first['name']!r} (rank 0, the rendezvous): replace "
                     f"{ADDRESS_PLACEHOLDER} in the commands, or export with --hosts")
    commands = [dict(rank=r["rank"], name=r["name"], command=shlex.join([
        "torchrun", f"--nnodes={n}", f"--node-rank={r['rank']}", "--nproc-per-node=1",
        f"--master-addr={host}", f"--master-port={port}", "-m", "hulk.launch", "job.json"])) for r in ranks]
    model = dict(name=spec.name, layers=int(spec.layers), hidden=int(spec.hidden), seq_len=int(spec.seq_len),
                 heads=heads_of(int(spec.hidden)), params=float(spec.params), global_batch=int(spec.global_batch),
                 recompute=bool(spec.recompute))
    return {
        "version": BUNDLE_VERSION, "job": job["job"], "planner": plan.planner, "model": model,
        "micro_batches": m, "micro_batch_size": b, "nnodes": n, "nproc_per_node": 1, "ranks": ranks,
        "stages": [dict(stage=s, layers=[int(bounds[s]), int(bounds[s + 1])], ranks=[d * S + s for d in range(D)])
                   for s in range(S)],
        "pipelines": [list(range(d * S, (d + 1) * S)) for d in range(D)],
        "rendezvous": rdzv, "commands": commands,
        "predicted": dict(iteration_s=float(job["iteration_s"]), compute_s=float(job["compute_s"]),
                          comm_s=float(job["comm_s"])),
        "notes": notes,
    }


def bundle_readme(doc: dict) -> str:
    """The README.md of one bundle: what it runs and how to start it."""
    S, D = len(doc["stages"]), len(doc["pipelines"])
    model = doc["model"]
    lines = [f"# Launch bundle: {doc['job']} ({doc['planner']} plan)", "",
             f"{D} replica(s) x {S} pipeline stage(s) = {doc['nnodes']} processes, one per machine. "
             f"Each iteration runs {doc['micro_batches']} micro-batches of {doc['micro_batch_size']} sequences "
             f"per replica (GPipe); the gradients of each stage are all-reduced among its replicas.", "",
             f"Model: {model['layers']} transformer blocks, hidden {model['hidden']}, {model['heads']} heads, "
             f"sequence length {model['seq_len']}. The cost model predicts "
             f"{doc['predicted']['iteration_s']:.4g} s per iteration.", "",
             "| stage | layers | ranks (machines) |", "|---|---|---|"]
    for st in doc["stages"]:
        who = ", ".join(f"{r} ({doc['ranks'][r]['name']})" for r in st["ranks"])
        lines.append(f"| {st['stage']} | {st['layers'][0]}-{st['layers'][1] - 1} | {who} |")
    lines += ["", "## Run", "",
              "Copy this folder to every machine, install `hulk[torch]`, and on each machine run its line "
              "from this folder (rank 0's machine hosts the rendezvous):", ""]
    for c in doc["commands"]:
        lines.append(f"- rank {c['rank']} on `{c['name']}`: `{c['command']}`")
    if doc["rendezvous"]["address"] is None:
        lines += ["", f"The cluster gave no address for rank 0's machine: replace `{ADDRESS_PLACEHOLDER}` with it "
                      "(or export again with `hulk plan ... --export DIR --hosts HOSTS.json`, a JSON object of "
                      "machine name -> address)."]
    lines += ["", "`python -m hulk.launch job.json --help` lists the options: a scaled-down model for CPUs "
                  "(`--hidden`, `--layers`, `--seq-len`), iterations, and `--out` for the measured times.",
              "A launch whose process count is not the bundle's `nnodes` stops with an error."]
    for note in doc["notes"]:
        lines += ["", f"Note: {note}"]
    return "\n".join(lines) + "\n"
