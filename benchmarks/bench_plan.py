"""The planners under one cost model; writes two sections of benchmarks/RESULTS.md.

1. The paper's two experiments: every planner on the bundled 47-server cluster with the
   paper's 4 jobs and with its 6 jobs.
2. Scale: generated clusters of 200, 1,000, 5,000 and 20,000 machines (seeds 1000 + k, not the
   learned planner's) and the bundled cluster, with two job sets that include OPT-175B. Per
   planner (Hulk with the region heuristic, Search, Systems A/B/C): the share of instances
   with a feasible plan (and whether one exists: every job fits alone on the whole cluster),
   the makespan, planning time; for Hulk and Search the gain of the whole-cost layout
   (best_pipeline) over the old bottleneck layout (bottleneck_pipeline) on the same machines;
   Search's time against its limit; and the gap between a 10 s and a 100 s search.

    cd /tmp && python /path/to/hulk/benchmarks/bench_plan.py [--time-limit 2] [--scale-time-limit 10]
        [--gap-time-limit 100] [--no-scale] [--out RESULTS.md]
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
from hulk import datasets
from hulk.plan import as_model_specs, cluster_spec, models, planners, report
from results_file import write_section  # benchmarks/ is on sys.path when run as a script

BEGIN, END = "<!-- bench_plan:begin -->", "<!-- bench_plan:end -->"
SCALE_BEGIN, SCALE_END = "<!-- bench_plan_scale:begin -->", "<!-- bench_plan_scale:end -->"
# (machines, instances): fewer instances at the large sizes keep the run under 10 min on 2 cores.
SIZES = ((200, 3), (1000, 2), (5000, 1), (20000, 1))
JOB_SETS = (("paper4", list(models.PAPER_JOBS_4)), ("OPT+RoBERTa+BERT", ["OPT-175B", "RoBERTa-large", "BERT-large"]))
GAP_SIZES = (1000, 5000)


def experiment(spec, jobs, time_limit, seed, gnn):
    names = ["a", "b", "c", "search", "hulk"]
    if sorted(jobs) == sorted(datasets.HULK47_CLASSES):
        names.append("table2")
    plans = [planners.plan(spec, jobs, n, time_limit_s=time_limit, seed=seed) for n in names]
    if gnn is not None and jobs == list(datasets.HULK47_CLASSES):
        p = planners.plan(spec, jobs, "hulk", model=gnn)
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


def even_bounds(S, L):
    """System B's even split: L // S layers per stage, the remainder to the first stages."""
    out = [0]
    for s in range(S):
        out.append(out[-1] + L // S + (1 if s < L % S else 0))
    return out


def layout_gains(spec, p):
    """Per feasible pipeline job of plan p, on the job's machines: the iteration time of the old
    bottleneck layout over the new whole-cost layout (inf: the old layout found no feasible
    split there), and of the even split over the new layout, in the new layout's stage order
    and in its reverse (inf: the even split does not fit). >= 1 means the new one is faster."""
    from hulk import _core
    cc = spec.to_core()
    old_gain, even_gain = [], []
    for j, m in zip(p.jobs, as_model_specs([j["job"] for j in p.jobs])):
        if not j["feasible"] or j["strategy"] != "pipeline":
            continue
        g = sorted(j["machines"])
        cm = m.to_core()
        new = _core.plan.best_pipeline(cc, cm, g)
        old = _core.plan.bottleneck_pipeline(cc, cm, g)
        old_gain.append(old["iteration_s"] / new["iteration_s"] if old["feasible"] else math.inf)
        even = [math.inf]
        for order in (1, -1):
            reps = [(list(ms)[::order], even_bounds(len(ms), m.layers)) for ms, _ in new["replicas"]]
            e = _core.plan.pipeline_cost(cc, cm, reps)
            if e["feasible"]:
                even.append(e["iteration_s"])
        even_gain.append(min(even) / new["iteration_s"])
    return old_gain, even_gain


def scale_instances():
    from hulk.plan import generate
    for n, count in SIZES:
        for k in range(count):
            yield f"generated {n}", n, (lambda n=n, k=k: generate.generate_cluster(n, seed=1000 + k))
    yield "bundled 47", 47, cluster_spec.hulk47_spec


def feasible_exists(spec, jobs):
    """A feasible plan exists when every job fits alone on the whole cluster (jobs can then
    run one after another): best_pipeline on all machines."""
    from hulk import _core
    cc = spec.to_core()
    everything = list(range(len(spec)))
    return all(_core.plan.best_pipeline(cc, m.to_core(), everything)["feasible"]
               for m in as_model_specs(jobs))


def scale(args):
    names = ["hulk", "search", "a", "b", "c"]
    rows = {}  # (size label, planner) -> lists
    gap = []
    for label, n, make in scale_instances():
        spec = make()
        for set_name, jobs in JOB_SETS:
            exists = feasible_exists(spec, jobs)
            for name in names:
                kw = dict(time_limit_s=args.scale_time_limit, seed=args.seed)
                if name == "hulk":
                    kw["model"] = "heuristic"
                t = time.perf_counter()
                p = planners.plan(spec, jobs, name, **kw)
                wall = time.perf_counter() - t
                r = rows.setdefault((label, name), dict(n=0, exists=0, feasible=0, makespans=[], planning=[],
                                                         wall=[], gains=[], even=[], over=[]))
                r["n"] += 1
                r["exists"] += exists
                r["feasible"] += p.feasible
                if p.feasible:
                    r["makespans"].append(p.makespan_s / 3600)
                r["planning"].append(p.planning_s)
                r["wall"].append(wall)
                if name == "search":
                    r["over"].append(p.planning_s / args.scale_time_limit)
                if name in ("hulk", "search"):
                    old_gain, even_gain = layout_gains(spec, p)
                    r["gains"] += old_gain
                    r["even"] += even_gain
                print(f"{label:>16} {set_name:>17} {name:>6}: {'feasible' if p.feasible else 'INFEASIBLE':>10} "
                      f"{p.makespan_s / 3600:10.1f} h  planning {p.planning_s:6.2f} s (wall {wall:6.2f} s)"
                      f"{'' if exists else '  [no feasible plan exists]'}", flush=True)
            if n in GAP_SIZES and set_name == "paper4" and args.gap_time_limit > 0 and \
                    not any(g[0] == label for g in gap):
                short = planners.plan(spec, jobs, "search", time_limit_s=args.scale_time_limit, seed=args.seed)
                long = planners.plan(spec, jobs, "search", time_limit_s=args.gap_time_limit, seed=args.seed)
                gap.append((label, short.makespan_s, long.makespan_s, long.planning_s))
                print(f"{label}: search {args.scale_time_limit:g} s {short.makespan_s / 3600:.1f} h, "
                      f"{args.gap_time_limit:g} s {long.makespan_s / 3600:.1f} h", flush=True)
    return rows, gap


def scale_table(rows, gap, args):
    def mean(v):
        return sum(v) / len(v) if v else math.nan
    def gain(values, what):
        finite = [g for g in values if math.isfinite(g)]
        if not values:
            return "-"
        text = f"{mean(finite):.3f} ({min(finite):.3f}, {max(finite):.3f}; {len(finite)})" if finite else ""
        return text + (f"; {what} infeasible for {len(values) - len(finite)}" if len(finite) < len(values) else "")
    out = ["| cluster | planner | plans (clusters x job sets) | a feasible plan exists | feasible | mean makespan h (feasible) | "
           "planning s mean / max | wall s max | layout gain: old / new time, mean (min, max; jobs) | "
           "even split / new time, mean (min, max; jobs) |",
           "|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for (label, name), r in rows.items():
        out.append(f"| {label} | {planners.PLANNER_TITLES[name]} | {r['n']} | {r['exists']} | {r['feasible']} | "
                   f"{mean(r['makespans']):.1f} | {mean(r['planning']):.2f} / {max(r['planning']):.2f} | "
                   f"{max(r['wall']):.2f} | {gain(r['gains'], 'old layout')} | {gain(r['even'], 'even split')} |")
    over = [(label, max(r["over"])) for (label, name), r in rows.items() if name == "search"]
    out += ["", "Search's planning time over its limit, worst instance per size: " +
            ", ".join(f"{label} {v:.3f}x" for label, v in over) + "."]
    if gap:
        out += ["", f"Search {args.scale_time_limit:g} s against {args.gap_time_limit:g} s (paper4, first instance):",
                "", "| cluster | makespan h at short | at long | short / long | long planning s |",
                "|---|---:|---:|---:|---:|"]
        for label, a, b, t in gap:
            out.append(f"| {label} | {a / 3600:.1f} | {b / 3600:.1f} | {a / b:.3f} | {t:.1f} |")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time-limit", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scale-time-limit", type=float, default=10.0, help="Search's limit in the scale section")
    ap.add_argument("--gap-time-limit", type=float, default=100.0, help="the long search of the gap (0: none)")
    ap.add_argument("--no-scale", action="store_true", help="only the paper's experiments")
    ap.add_argument("--out", default=str(Path(__file__).with_name("RESULTS.md")))
    args = ap.parse_args(argv)
    spec = cluster_spec.hulk47_spec()
    gnn = planners.table2_gnn(args.seed)
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
            f"Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; whole run {time.perf_counter() - t0:.1f} s. "
            f"Machine: {platform.processor() or platform.machine()}, hulk {hulk.__version__}, "
            f"search time limit {args.time_limit} s, seed {args.seed}.", "",
            "Cluster: the bundled 47-server cluster (`hulk.plan.hulk47_spec()`, its derivation rules in "
            "`hulk/plan/cluster_spec.py`). Cost model: `csrc/plan/cost.h`. Makespan = time until every job has run "
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
    if args.no_scale:
        return 0
    t1 = time.perf_counter()
    scale_rows, gap = scale(args)
    text = [SCALE_BEGIN, "## Planner at scale (`benchmarks/bench_plan.py`)", "",
            f"Command: `{cmd}`", "",
            f"Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; scale section {time.perf_counter() - t1:.0f} s. "
            f"Machine: 2-core CPU VM ({platform.processor() or platform.machine()}), shared with other builds; "
            f"hulk {hulk.__version__}; Search limit {args.scale_time_limit:g} s, seed {args.seed}.", "",
            "Clusters: `hulk.plan.generate_cluster(n, seed=1000 + k)` (" +
            ", ".join(f"{n:,} machines x {c}" for n, c in SIZES) + " instances; fewer at the large sizes to keep "
            "the run short) and the bundled 47-server cluster. Job sets: " +
            "; ".join(f"{a} ({', '.join(j)})" for a, j in JOB_SETS) + ". 'A feasible plan exists': every job "
            "fits alone on the whole cluster (best_pipeline on all machines), so the jobs can run one after "
            "another. Hulk = region heuristic, Algorithm 1, growth of the last job, 300-move refinement. Layout gain: on each feasible "
            "job's machines in Hulk's and Search's plans, the iteration time of the old layout "
            "(`bottleneck_pipeline`: least slowest stage, contiguous replicas) over the new one "
            "(`best_pipeline`: whole iteration time, stage and ring orders); even split: the new layout's "
            "machines and stage order (and its reverse, the better of the two) with System B's even split. "
            "Planning s is the planner's own "
            "clock; wall s adds the Python side (building the C++ cluster from the generated one).", "",
            *scale_table(scale_rows, gap, args), "", SCALE_END]
    write_section(args.out, SCALE_BEGIN, SCALE_END, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
