"""The paper's two experiments under one cost model: every planner on the bundled 47-server
cluster with the paper's 4 jobs and with its 6 jobs; writes a section of benchmarks/RESULTS.md.

    cd /tmp && python /path/to/hulk/benchmarks/bench_plan.py [--time-limit 2] [--out RESULTS.md]
"""

from __future__ import annotations

import argparse
import datetime
import math
import platform
import sys
import time
from pathlib import Path

import hulk
from hulk import cluster_spec, datasets, models, planner, report
from results_file import write_section  # benchmarks/ is on sys.path when run as a script

BEGIN, END = "<!-- bench_plan:begin -->", "<!-- bench_plan:end -->"


def experiment(spec, jobs, time_limit, seed, gnn):
    names = ["a", "b", "c", "search", "hulk"]
    if sorted(jobs) == sorted(datasets.HULK47_CLASSES):
        names.append("table2")
    plans = [planner.plan(spec, jobs, n, time_limit_s=time_limit, seed=seed) for n in names]
    if gnn is not None and jobs == list(datasets.HULK47_CLASSES):
        p = planner.plan(spec, jobs, "hulk", model=gnn)
        p.planner = "hulk-gnn"
        plans.append(p)
    return plans


def rows(plans):
    base = [p.makespan_s for p in plans if p.planner in ("a", "b", "c") and p.feasible]
    best = min(base) if base else math.inf
    out = []
    for p in plans:
        title = p.title
        per_job = "; ".join(
            f"{j['job']}: {j['compute_s']:.2f}+{j['comm_s']:.2f} s" if j["feasible"] else f"{j['job']}: infeasible"
            for j in p.jobs)
        ms = f"{p.makespan_s / 3600:.1f}" if p.feasible else "infeasible"
        rel = f"{(1 - p.makespan_s / best) * 100:+.1f}%" if p.feasible and math.isfinite(best) else "-"
        out.append(f"| {title} | {ms} | {rel} | {p.planning_s * 1e3:.1f} | {per_job} |")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time-limit", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(Path(__file__).with_name("RESULTS.md")))
    args = ap.parse_args(argv)
    spec = cluster_spec.hulk47_spec()
    gnn = __import__("hulk.cli", fromlist=["_table2_gnn"])._table2_gnn(args.seed)
    t0 = time.perf_counter()
    sections = []
    for label, jobs in (("Experiment 1: the paper's 4 jobs", models.PAPER_JOBS_4),
                        ("Experiment 2: the paper's 6 jobs", models.PAPER_JOBS_6)):
        plans = experiment(spec, list(jobs), args.time_limit, args.seed, gnn)
        print(f"\n{label}\n" + report.comparison_table(plans) + "\n" + report.job_comparison_table(plans))
        sections.append((label, jobs, rows(plans), report.job_comparison_table(plans)))
    cmd = "cd /tmp && python " + " ".join([str(Path(sys.argv[0]).resolve())] + (argv or sys.argv[1:]))
    text = [BEGIN, "## Planner: the paper's experiments (`benchmarks/bench_plan.py`)", "",
            f"Command: `{cmd}`", "",
            f"Date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; whole run {time.perf_counter() - t0:.1f} s. "
            f"Machine: {platform.processor() or platform.machine()}, hulk {hulk.__version__}, "
            f"search time limit {args.time_limit} s, seed {args.seed}.", "",
            "Cluster: the bundled 47-server cluster (`hulk.cluster_spec.hulk47_spec()`, its derivation rules in "
            "`hulk/cluster_spec.py`). Cost model: `csrc/plan/cost.h`. Makespan = time until every job has run "
            "its iterations; Systems A/B/C run jobs one after another on the whole cluster, Search and Hulk run "
            "them concurrently on disjoint groups. 'vs best A/B/C' is the makespan reduction against the best "
            "feasible of Systems A, B and C (positive = less time). Per-job: compute + communication seconds "
            "per iteration.", ""]
    for label, jobs, table, per_job in sections:
        text += [f"### {label} ({', '.join(jobs)})", "",
                 "| planner | makespan h | vs best A/B/C | planning ms | per job (compute + comm per iteration) |",
                 "|---|---:|---:|---:|---|", *table, "", "Per job, seconds per iteration:", "", "```", per_job,
                 "```", ""]
    text.append(END)
    write_section(args.out, BEGIN, END, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
