"""Interchangeable machines (``Cluster::machine_class``): Search on a generated measured cluster
against Search on its twin whose machines are all told apart, side by side in one run.

The twin is the same cluster with machine ``i`` of ``n``'s access latency raised by
``TWIN_MS * (1 + i / n)``, 0.1-0.2 microseconds (the least nonzero access latency a cluster
takes): no two machines are then alike, so every group is laid out and cached on its own, as
before layouts were shared, while a send time moves by at most 0.4 microseconds: 1% of the
45-microsecond one-way latency of a region's LAN (``cloud_network.LAN_LATENCY_MS``), less against
its 100 Gbit/s transfer of a stage's activations and the milliseconds of a region pair. For every cluster (the clusters of
``bench_plan_anytime.py``, measured mode) and job set, two runs on each of the pair, cluster and
twin alternating:

* a fixed number of moves (``--moves``, no time limit that binds): the wall time, so the speed
  with the walk's work fixed;
* a time budget (``--budget``): how many moves Search makes and the makespan it reaches.

With ``--explicit`` both are expanded into explicit clusters (``to_spec()``: one link per machine
pair, as a networkx graph built from region-level measurements gives them), whose alike machines
are found by comparing their pairs.

The report gives per size, network kind and GPU kind (odd k in the small-regions regime: every machine an
A100 80GB) the geometric means and ranges of twin / cluster wall time, cluster / twin moves
and cluster / twin makespan.

    python benchmarks/bench_interchangeable.py --results benchmarks/interchangeable493.jsonl \\
        --sizes 47,200 --instances 5 --first-instance 493
    python benchmarks/bench_interchangeable.py --results benchmarks/interchangeable_explicit504.jsonl \\
        --sizes 47,200 --instances 4 --first-instance 504 --explicit
    python benchmarks/bench_interchangeable.py --results benchmarks/interchangeable493.jsonl --report --write benchmarks/RESULTS.md
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

import hulk.plan as hp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_plan_anytime as anytime  # noqa: E402  (the same clusters, job sets and results file format)

TWIN_MS = 1e-4  # machine i of n: access latency + this x (1 + i / n), no two machines alike
_MOVES = re.compile(r"(\d+) local-search moves")


def distinct_twin(cluster):
    """The cluster with machine i of n's access latency raised by TWIN_MS x (1 + i / n)."""
    n = len(cluster)
    return dataclasses.replace(cluster, access_ms=cluster.access_ms + TWIN_MS * (1 + np.arange(n) / n))


def search_moves(plan) -> int:
    m = _MOVES.search(plan.notes[0])
    if not m:
        raise RuntimeError(f"no move count in Search's first note: {plan.notes[0]!r}")
    return int(m.group(1))


def run(args) -> None:
    rows, _ = anytime.read_results(args.results)
    network = "explicit" if args.explicit else "regional"
    done = {(r["n"], r["instance"], r["job_set"], r["variant"], r["run"]) for r in rows
            if r.get("kind") == "plan" and r.get("network", "regional") == network}
    meta = anytime.RunMeta(args.results, moves=args.moves, budget_s=args.budget, seed=args.seed,
                           measured_regime="small-regions", network=network)
    args.modes, args.bundled, args.measured_regime = ["measured"], False, "small-regions"
    for mode, n, k, cluster_seed, make in anytime.instances(args):
        pair = None
        for set_name in args.job_sets:
            jobs = anytime.JOB_SETS[set_name]
            for variant in ("cluster", "twin", "twin", "cluster"):  # alternating: drift hits both alike
                nth = "first" if (n, k, set_name, variant, "first") not in done else "second"
                if (n, k, set_name, variant, nth) in done:
                    continue
                meta.before_plan()
                if pair is None:
                    base = make()
                    pair = {"cluster": base, "twin": distinct_twin(base)}
                    if args.explicit:
                        pair = {side: c.to_spec() for side, c in pair.items()}
                c = pair[variant]
                t0 = time.perf_counter()
                capped = hp.plan(c, jobs, "search", time_limit_s=600, max_iterations=args.moves, seed=args.seed)
                capped_s = time.perf_counter() - t0
                timed = hp.plan(c, jobs, "search", time_limit_s=args.budget, seed=args.seed)
                row = {"kind": "plan", "mode": mode, "n": n, "instance": k, "cluster_seed": cluster_seed,
                       "job_set": set_name, "variant": variant, "run": nth, "all_a100": bool(k % 2), "network": network,
                       "capped_moves": search_moves(capped), "capped_s": capped_s,
                       "capped_makespan_s": capped.makespan_s if capped.feasible else None,
                       "budget_moves": search_moves(timed), "budget_makespan_s": timed.makespan_s if timed.feasible else None}
                anytime.append(args.results, row)
                done.add((n, k, set_name, variant, nth))
                print(f"{n:>5} #{k} {network} {set_name:>16} {variant:>7}: {args.moves} moves in {capped_s:6.2f} s; "
                      f"{args.budget:g} s: {row['budget_moves']:>7} moves, {timed.makespan_s / 3600:8.3f} h", flush=True)


def _gm(v: list) -> str:
    return f"{math.exp(sum(math.log(x) for x in v) / len(v)):.2f} ({min(v):.2f}-{max(v):.2f})" if v else "-"


def report_lines(rows: list, meta: list) -> list:
    by = defaultdict(lambda: defaultdict(list))  # (n, network, k, job set) -> variant -> rows
    for r in rows:
        by[(r["n"], r.get("network", "regional"), r["instance"], r["job_set"])][r["variant"]].append(r)
    cells = defaultdict(lambda: defaultdict(list))
    for (n, network, k, _), v in by.items():
        if not v["cluster"] or not v["twin"]:
            continue
        mean = lambda key, side: sum(r[key] for r in v[side]) / len(v[side])  # noqa: E731
        cell = cells[(n, network, "all A100" if k % 2 else "mixed")]
        cell["speed"].append(mean("capped_s", "twin") / mean("capped_s", "cluster"))
        cell["moves"].append(mean("budget_moves", "cluster") / mean("budget_moves", "twin"))
        if all(r["budget_makespan_s"] for side in ("cluster", "twin") for r in v[side]):
            cell["makespan"].append(mean("budget_makespan_s", "cluster") / mean("budget_makespan_s", "twin"))
    m0 = meta[0] if meta else {}
    lines = [f"Command: `{m['command']}`; {m['date']}; machine: {m['machine']}; hulk {m['hulk']}." for m in meta] + [
        "",
        f"Each cell: geometric mean (range) over clusters x job sets, each side the mean of its two runs. "
        f"*Speed*: the twin's wall time over the cluster's for {m0.get('moves', '?')} moves of Search. *Moves*: the "
        f"cluster's moves over the twin's within {m0.get('budget_s', '?')} s. *Makespan*: the cluster's plan over the "
        "twin's at that budget (below 1: shorter with layouts shared).",
        "",
        "| machines | network | GPUs | instances | speed (fixed moves) | moves (fixed time) | makespan (fixed time) |",
        "|---:|---|---|---:|---:|---:|---:|"]
    for (n, network, gpus), c in sorted(cells.items()):
        lines.append(f"| {n} | {network} | {gpus} | {len(c['speed'])} | {_gm(c['speed'])} | {_gm(c['moves'])} | "
                     f"{_gm(c['makespan'])} |")
    return lines


def report(args) -> None:
    anytime.side_report(args, "bench_interchangeable",
                        "## Interchangeable machines: Search with layouts shared and on a distinct twin ({stem}.jsonl)",
                        report_lines)


def main(argv=None) -> int:
    ap = anytime.side_parser(__doc__, sizes=[47, 200], instances=5, first_instance=493)
    ap.add_argument("--moves", type=int, default=3000, help="Search's move cap for the speed runs (default 3000)")
    ap.add_argument("--budget", type=float, default=1.0, help="Search's budget for the fixed-time runs (default 1 s)")
    ap.add_argument("--seed", type=int, default=0, help="Search's seed (default 0)")
    ap.add_argument("--explicit", action="store_true",
                    help="expand cluster and twin into explicit clusters (one link per machine pair) first")
    args = ap.parse_args(argv)
    if args.moves < 1 or not args.budget > 0:
        ap.error(f"--moves and --budget must be positive, got {args.moves} and {args.budget}")
    return anytime.side_run(ap, args, run, report)


if __name__ == "__main__":
    sys.exit(main())
