"""Recovery from a failed machine (``Plan.without``): how far the repaired plan is from a plan
made afresh on the cluster without that machine, with and without the shortening step.

For every cluster (the bundled one and the generated clusters of ``bench_plan_anytime.py``) and
job set, each planner (``--planners``) plans at ``--budget`` seconds; then for every job of the
plan its lowest-numbered machine fails, one at a time, and three plans are made on the cluster
without it, side by side:

* *kept*: ``plan.without(x, shorten=False)``: only the hit job changes (it takes idle or other
  jobs' spare machines only if it no longer fits);
* *shortened*: ``plan.without(x)``: the same, then, where the makespan grew, machines move to
  the job that finishes last while that shortens it (Hulk's and Search's plans);
* *afresh*: the same planner at the same budget on the smaller cluster, the reference.

Where the cluster takes new machines (explicit clusters: the bundled one, and generated ones with
``--explicit``, expanded into one link per machine pair), the machine then joins the fresh plan
again (``afresh.with_machine``, its own fields and links; with ``shorten=False`` and with the
default), and each is compared with the first plan, made at the same budget on the whole cluster:
how well a join keeps up with planning again.

The report gives per cluster kind and size the mean and worst of each repair's makespan over
the fresh plan's, how often the repair left the makespan more than 5% longer than that, the
machines each repair moved and its wall time.

    python benchmarks/bench_repair.py --results benchmarks/repair508.jsonl --sizes 47,200 \\
        --instances 3 --first-instance 508
    python benchmarks/bench_repair.py --results benchmarks/repair508.jsonl --report --write benchmarks/RESULTS.md
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import hulk.plan as hp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_plan_anytime as anytime  # noqa: E402  (the same clusters, job sets and results file format)

GREW = 1.05  # a repair "leaves the makespan longer" when it is over this times the fresh plan's


def machine_and_links(spec, x: int) -> tuple:
    """Machine ``x`` of an explicit cluster as ``with_machine`` takes it after ``spec.without(x)``:
    its fields, and its links with the other ends' indices shifted past ``x``."""
    keys = ("name", "region", "memory_gb", "gpu", "gpus", "tflops")
    machine = {k: v for k, v in spec.machines[x].items() if k in keys and v is not None}
    links = []
    for link in spec.links:
        if x in (link["a"], link["b"]):
            other = link["b"] if link["a"] == x else link["a"]
            links.append({"to": other - (other > x), "latency_ms": link["latency_ms"],
                          "bandwidth_gbps": link["bandwidth_gbps"]})
    return machine, links


def failures(plan) -> list:
    """Per job with machines, its lowest-numbered machine, each once, ascending."""
    return sorted({min(j["machines"]) for j in plan.jobs if j["machines"]})


def run(args) -> None:
    rows, _ = anytime.read_results(args.results)
    done = {(r["mode"], r["n"], r["instance"], r["job_set"], r["planner"]) for r in rows if r.get("kind") == "plan"}
    meta = anytime.RunMeta(args.results, budget_s=args.budget, seed=args.seed, measured_regime=args.measured_regime)
    for mode, n, k, cluster_seed, make in anytime.instances(args):
        cluster = None
        for set_name in args.job_sets:
            jobs = anytime.JOB_SETS[set_name]
            for planner in args.planners:
                if (mode, n, k, set_name, planner) in done:
                    continue
                meta.before_plan()
                if cluster is None:
                    cluster = make()
                    if args.explicit and not cluster.accepts_new_machines:
                        cluster = cluster.to_spec()
                plan = hp.plan(cluster, jobs, planner, time_limit_s=args.budget, seed=args.seed)
                if not plan.feasible:
                    print(f"{mode} {n} #{k} {set_name} {planner}: no feasible plan to repair", flush=True)
                    continue
                for x in failures(plan):
                    kept, shortened = plan.without(x, shorten=False), plan.without(x)
                    afresh = hp.plan(cluster.without(x), jobs, planner, time_limit_s=args.budget, seed=args.seed)
                    row = {"kind": "plan", "mode": mode, "n": n, "instance": k, "cluster_seed": cluster_seed,
                           "job_set": set_name, "planner": planner, "budget_s": args.budget, "seed": args.seed,
                           "failed": x, "makespan_s": plan.makespan_s,
                           "kept_s": kept.makespan_s if kept.feasible else None, "kept_moved": len(kept.moved),
                           "kept_repair_s": kept.repair_s,
                           "shortened_s": shortened.makespan_s if shortened.feasible else None,
                           "shortened_moved": len(shortened.moved), "shortened_repair_s": shortened.repair_s,
                           "afresh_s": afresh.makespan_s if afresh.feasible else None}
                    if cluster.accepts_new_machines and afresh.feasible:
                        machine, links = machine_and_links(cluster, x)
                        joined_kept = afresh.with_machine(machine, links, shorten=False)
                        joined = afresh.with_machine(machine, links)
                        row.update(joined_kept_s=joined_kept.makespan_s if joined_kept.feasible else None,
                                   joined_s=joined.makespan_s if joined.feasible else None,
                                   joined_moved=len(joined.moved), joined_repair_s=joined.repair_s)
                    anytime.append(args.results, row)
                    ratio = (lambda v: f"{v / afresh.makespan_s:.3f}" if v and afresh.feasible else "-")  # noqa: E731
                    print(f"{mode:>8} {n:>4} #{k} {set_name:>16} {planner:>6} machine {x:>4}: kept "
                          f"{ratio(row['kept_s'])}, shortened {ratio(row['shortened_s'])} of afresh "
                          f"({shortened.repair_s:.3f} s, {len(shortened.moved)} moved)", flush=True)
                done.add((mode, n, k, set_name, planner))


def report_lines(rows: list, meta: list) -> list:
    cells = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if not r.get("afresh_s"):
            continue
        cell = cells[(r["mode"], r["n"], r["planner"])]
        cell["failures"].append(1)
        for side in ("kept", "shortened"):
            v = r[f"{side}_s"]
            ratio = v / r["afresh_s"] if v else float("inf")
            cell[side].append(ratio)
            cell[f"{side}_moved"].append(r[f"{side}_moved"])
            cell[f"{side}_repair_s"].append(r[f"{side}_repair_s"])
    lines = [f"Command: `{m['command']}`; {m['date']}; machine: {m['machine']}; hulk {m['hulk']}." for m in meta] + [
        "",
        "Each row: every failure of the cell (per plan, each job's lowest-numbered machine). *kept*: "
        "`plan.without(x, shorten=False)`; *shortened*: `plan.without(x)`; each over the same planner's plan "
        f"made afresh at the same budget on the cluster without `x`: mean / worst, and the failures over {GREW:g}x. "
        "*Moved*: machines whose job changed, mean / most. *Time*: the repair's wall time, mean / most.",
        "",
        "| cluster | machines | planner | failures | kept / afresh | over | shortened / afresh | over | moved (kept, shortened) | time (kept, shortened) |",
        "|---|---:|---|---:|---:|---:|---:|---:|---|---|"]

    def mw(v):
        return f"{sum(v) / len(v):.3f} / {max(v):.3f}"

    for (mode, n, planner), c in sorted(cells.items()):
        over = {side: sum(x > GREW for x in c[side]) for side in ("kept", "shortened")}
        moved = ", ".join(f"{sum(c[f'{s}_moved']) / len(c[f'{s}_moved']):.1f} / {max(c[f'{s}_moved'])}" for s in ("kept", "shortened"))
        secs = ", ".join(f"{sum(c[f'{s}_repair_s']) / len(c[f'{s}_repair_s']):.3f} / {max(c[f'{s}_repair_s']):.3f} s"
                         for s in ("kept", "shortened"))
        lines.append(f"| {mode} | {n} | {planner} | {len(c['failures'])} | {mw(c['kept'])} | {over['kept']} | "
                     f"{mw(c['shortened'])} | {over['shortened']} | {moved} | {secs} |")
    joins = defaultdict(list)
    for r in rows:
        if r.get("joined_s") is not None and r.get("makespan_s"):
            joins[(r["mode"], r["n"], r["planner"])].append(r)
    if joins:
        lines += ["", "Joins: the failed machine joins the fresh plan on the smaller cluster again (*kept*: "
                  "`with_machine(..., shorten=False)`, where recorded; *joined*: the default); each makespan over the "
                  "plan made at the same budget on the whole cluster: mean / worst, the joins over "
                  f"{GREW:g}x, and those that shortened the fresh plan. *Moved* and *time*: the default join's.", "",
                  "| cluster | machines | planner | joins | kept / whole | over | joined / whole | over | shortened | moved | time |",
                  "|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|"]
        for (mode, n, planner), rs in sorted(joins.items()):
            cols = []
            for key in ("joined_kept_s", "joined_s"):
                ratios = [r[key] / r["makespan_s"] for r in rs if r.get(key)]
                cols += [mw(ratios), str(sum(x > GREW for x in ratios))] if ratios else ["-", "-"]
            shorter = sum(r["joined_s"] < r["afresh_s"] for r in rs)
            lines.append(f"| {mode} | {n} | {planner} | {len(rs)} | {' | '.join(cols)} | "
                         f"{shorter} | {sum(r['joined_moved'] for r in rs) / len(rs):.1f} / {max(r['joined_moved'] for r in rs)} | "
                         f"{sum(r['joined_repair_s'] for r in rs) / len(rs):.3f} / {max(r['joined_repair_s'] for r in rs):.3f} s |")
    return lines


def report(args) -> None:
    anytime.side_report(args, "bench_repair", "## Planner: recovery from a failed machine ({stem}.jsonl)", report_lines)


def main(argv=None) -> int:
    ap = anytime.side_parser(__doc__, sizes=[47, 200], instances=3, first_instance=508)
    ap.add_argument("--modes", type=anytime._choices(("measured", "paper")), default=["measured", "paper"])
    ap.add_argument("--no-bundled", dest="bundled", action="store_false", help="leave the bundled cluster out")
    ap.add_argument("--planners", type=anytime._choices(("hulk", "search")), default=["hulk", "search"])
    ap.add_argument("--budget", type=float, default=1.0, help="each plan's time limit, s (default 1)")
    ap.add_argument("--seed", type=int, default=0, help="the planners' seed (default 0)")
    ap.add_argument("--explicit", action="store_true",
                    help="expand generated clusters into explicit ones (one link per machine pair), so that joins run too")
    args = ap.parse_args(argv)
    args.measured_regime = "small-regions"
    if not args.budget > 0:
        ap.error(f"--budget must be positive, got {args.budget}")
    return anytime.side_run(ap, args, run, report)


if __name__ == "__main__":
    sys.exit(main())
