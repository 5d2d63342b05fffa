"""Hulk with Search in a second thread (``plan(..., "hulk", search_thread=True)``) against
Search, at the same wall-clock budget.

For every cluster and job set (the clusters of ``bench_plan_anytime.py``: the bundled 47-server
cluster and ``generate_cluster(n, seed=3000 + k, mode=...)``) and every budget ``t``, four plans:

* ``search``: Search alone (one thread), the yardstick;
* ``hulk``: Hulk alone (one thread), as every other benchmark runs it;
* ``hulk+search``: Hulk with Search in a second thread, the shorter plan returned (two threads);
* ``search x2``: the fair opponent at two threads, Search with seeds ``s`` and ``s + 1`` in two
  threads, the shorter plan kept.

The report gives, per mode, size and budget, each planner's makespan over ``search``'s
(geometric mean, worst, and how many instances are over 1.02, issue 17's bound), and
``hulk+search`` over ``search x2``. Two threads slow each other where the machine has no spare
core; the header names the machine's CPUs. Every plan is one JSON line appended as it finishes
(a rerun with the same file skips what is there).

    python benchmarks/bench_plan_thread.py --results benchmarks/plan_thread453.jsonl \\
        --sizes 47,200,1000,5000 --instances 3 --first-instance 453 --budgets 0.3,1,3
    python benchmarks/bench_plan_thread.py --results benchmarks/plan_thread453.jsonl --report --write benchmarks/RESULTS.md
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import hulk.plan as hp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_plan_anytime as anytime  # noqa: E402  (the same clusters, job sets and results file format)

PLANNERS = ("search", "hulk", "hulk+search", "search x2")
CHALLENGERS = ("hulk", "hulk+search", "search x2")
BUDGETS = (0.3, 1.0, 3.0)
WORST_BOUND = anytime.WORST_BOUND


def best_of_two_searches(cluster, jobs, t: float, seed: int):
    """Search with seeds ``seed`` and ``seed + 1`` in two threads (plan_search releases the GIL);
    the plan with the shorter makespan (a feasible one first)."""
    out = [None, None]

    def run(i):
        out[i] = hp.plan(cluster, jobs, "search", time_limit_s=t, seed=seed + i)

    other = threading.Thread(target=run, args=(1,))
    other.start()
    run(0)
    other.join()
    return min(out, key=lambda p: (not p.feasible, p.makespan_s if p.feasible else 0.0))


def plan_one(planner: str, cluster, jobs, t: float, seed: int):
    if planner == "search x2":
        return best_of_two_searches(cluster, jobs, t, seed)
    name = "search" if planner == "search" else "hulk"
    return hp.plan(cluster, jobs, name, time_limit_s=t, seed=seed, search_thread=planner == "hulk+search")


def run(args) -> None:
    plans, _ = anytime.read_results_of_regime(args.results, args.measured_regime)
    done = {anytime.key(r) for r in plans}
    hp.default_planner()  # the learned planner read once, before the first timed plan
    meta = anytime.RunMeta(args.results, budgets=args.budgets, seed=args.seed, measured_regime=args.measured_regime)
    for mode, n, k, cluster_seed, make in anytime.instances(args):
        cluster = None
        for set_name in args.job_sets:
            jobs = anytime.JOB_SETS[set_name]
            for t in args.budgets:
                for planner in PLANNERS:
                    row = {"kind": "plan", "mode": mode, "n": n, "instance": k, "cluster_seed": cluster_seed,
                           "job_set": set_name, "planner": planner, "budget_s": t, "seed": args.seed}
                    if anytime.key(row) in done:
                        continue
                    meta.before_plan()
                    if cluster is None:
                        cluster = make()
                    t0 = time.perf_counter()
                    p = plan_one(planner, cluster, jobs, t, args.seed)
                    won = "search" if any(x.startswith("hulk: Search in a second thread") and "found the shorter plan" in x
                                          for x in p.notes) else None
                    row.update(wall_s=time.perf_counter() - t0, planning_s=p.planning_s, feasible=bool(p.feasible),
                               makespan_s=p.makespan_s if p.feasible else None, machines=len(cluster),
                               thread_plan_returned=won)
                    anytime.append(args.results, row)
                    print(f"{mode:>8} {n:>6} #{k} {set_name:>16} {t:>4g} s {planner:>11}: "
                          f"{'%.2f h' % (p.makespan_s / 3600) if p.feasible else 'NO PLAN':>10}  wall {row['wall_s']:6.2f} s",
                          flush=True)


def geometric_mean(v: list) -> float:
    return math.exp(sum(math.log(x) for x in v) / len(v))


def ratios(rows: list) -> dict:
    """(mode, n, budget) -> {challenger: [its makespan / search's, per instance and job set]},
    plus "hulk+search / search x2"; only where both plans exist."""
    by = {(r["mode"], r["n"], r["instance"], r["job_set"], r["budget_s"], r["planner"]): r for r in rows}
    out = defaultdict(lambda: defaultdict(list))
    for (mode, n, k, js, t, planner), r in by.items():
        if planner != "search":
            continue
        base = r["makespan_s"]
        for c in CHALLENGERS:
            o = by.get((mode, n, k, js, t, c))
            if base and o and o["makespan_s"]:
                out[(mode, n, t)][c].append(o["makespan_s"] / base)
        a, b = by.get((mode, n, k, js, t, "hulk+search")), by.get((mode, n, k, js, t, "search x2"))
        if a and b and a["makespan_s"] and b["makespan_s"]:
            out[(mode, n, t)]["hulk+search / search x2"].append(a["makespan_s"] / b["makespan_s"])
    return out


def _cell(v: list) -> str:
    if not v:
        return "-"
    over = sum(x > WORST_BOUND for x in v)
    return f"{geometric_mean(v):.3f} / {max(v):.3f} / {over}"


def report_lines(rows: list, meta: list) -> list:
    cells = ratios(rows)
    cols = list(CHALLENGERS) + ["hulk+search / search x2"]
    lines = ["| mode | machines | budget (s) | instances | " + " | ".join(f"{c} / search" if c in CHALLENGERS else c
                                                                      for c in cols) + " |",
             "|---|---:|---:|---:|" + "---:|" * len(cols)]
    totals = defaultdict(list)
    for (mode, n, t) in sorted(cells, key=lambda x: (anytime.MODE_ORDER.get(x[0], 9), x[1], x[2])):
        c = cells[(mode, n, t)]
        lines.append(f"| {mode} | {n:,} | {t:g} | {len(c['hulk'])} | " + " | ".join(_cell(c[x]) for x in cols) + " |")
        for x in cols:
            totals[x] += c[x]
    lines.append("| all | | | " + str(len(totals["hulk"])) + " | " + " | ".join(_cell(totals[x]) for x in cols) + " |")
    returned = [r for r in rows if r["planner"] == "hulk+search"]
    won = sum(r.get("thread_plan_returned") == "search" for r in returned)
    head = [f"Command: `{m['command']}`; {m['date']}; machine: {m['machine']}; hulk {m['hulk']}; measured regime "
            f"{m.get('measured_regime', 'small-regions')}." for m in meta]
    return head + [
        "",
        "Each cell: geometric mean / worst / instances over 1.02 of the makespan over Search's at the same budget "
        "(one thread); the last column compares the two-thread planners with each other.",
        "",
        *lines,
        "",
        f"Search's plan (from the second thread) was returned in {won} of {len(returned)} hulk+search plans.",
    ]


def report(args) -> None:
    anytime.side_report(args, "bench_plan_thread", "## Hulk with Search in a second thread ({stem}.jsonl)", report_lines)


def main(argv=None) -> int:
    ap = anytime.side_parser(__doc__, sizes=[47, 200, 1000, 5000], instances=3, first_instance=453)
    ap.add_argument("--budgets", type=anytime._floats, default=list(BUDGETS))
    ap.add_argument("--modes", type=anytime._choices(anytime.MODES), default=list(anytime.MODES))
    ap.add_argument("--measured-regime", choices=tuple(anytime.MEASURED_REGIMES), default="small-regions")
    ap.add_argument("--no-bundled", dest="bundled", action="store_false", help="skip the bundled 47-server cluster")
    ap.add_argument("--seed", type=int, default=0, help="the planners' seed (default 0; search x2 adds seed + 1)")
    args = ap.parse_args(argv)
    return anytime.side_run(ap, args, run, report)


if __name__ == "__main__":
    sys.exit(main())
