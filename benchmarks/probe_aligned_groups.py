"""A probe, not a planner: how far from a good plan are Search(60 s) and Hulk(1 s) on measured
clusters? It builds the largest job's group by a simple rule that no planner has yet, and lays
the plan out with the same cost model (``plan_assignment``: best_pipeline per job).

The rule, "replica-aligned region chain": regions are chained nearest first by send time (from
each of the 8 regions with the most machines); walking the chain, each region gives the largest
multiple of D of its machines (D = 1, 2, 3, 4, 6, 8), so a stage's D replicas can sit in one
region and its gradient all-reduce stays on the LAN; every prefix of 8 machines or more, up to
3/4 of the cluster, is laid out by best_pipeline, and the fastest is kept. The other jobs share
the machines left, in proportion to their parameters (a crude split: where it leaves a job
without a feasible layout the row reads "no plan").

Against the references of a bench_plan_anytime results file (Search at 60 s, and Hulk at 1 s
where the file has it):

    python benchmarks/probe_aligned_groups.py --results benchmarks/plan_anytime_t3_519_ref60.jsonl \\
        --write benchmarks/RESULTS.md
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_plan_anytime as anytime  # noqa: E402  (the same clusters and job sets)
from results_file import write_section  # noqa: E402

BEGIN, END = "<!-- probe_aligned_groups:begin -->", "<!-- probe_aligned_groups:end -->"
REPLICAS = (1, 2, 3, 4, 6, 8)
STARTS = 8            # chains start from the regions with the most machines
SEND_BYTES = 1e8      # regions chained by the send time of this many bytes between their first machines
LARGEST_SHARE = 0.75  # prefixes up to this share of the cluster's machines


def candidates(spec, core):
    """(D, group) for every replica-aligned region-chain prefix of 8 machines or more, up to
    LARGEST_SHARE of the cluster, in the order tried."""
    members = {}
    for i, r in enumerate(spec.region):
        members.setdefault(int(r), []).append(i)
    n = len(spec.region)

    def send(a, b):
        return core.send_time(members[a][0], members[b][0], SEND_BYTES)

    for d in REPLICAS:
        for start in sorted(members, key=lambda r: (-len(members[r]), r))[:STARTS]:
            chain, left = [start], set(members) - {start}
            while left:
                nxt = min(left, key=lambda q: (send(chain[-1], q), q))
                chain.append(nxt)
                left.remove(nxt)
            group = []
            for r in chain:
                take = len(members[r]) // d * d
                if take == 0:
                    continue
                group += members[r][:take]
                if len(group) >= 8:
                    yield d, sorted(group)
                if len(group) > LARGEST_SHARE * n:
                    break


def aligned_group(spec, core, model) -> tuple:
    """(iteration s, group) of the fastest candidate for `model` (a core ModelSpec), the first
    on a tie; (inf, []) when none is feasible."""
    from hulk import _core
    best = (math.inf, [])
    for _, group in candidates(spec, core):
        p = _core.plan.best_pipeline(core, model, group)
        if p["feasible"] and p["iteration_s"] < best[0]:
            best = (p["iteration_s"], group)
    return best


def plan_around(spec, core, names: list, group: list) -> dict:
    """The whole job set laid out with the largest job (by parameters) on `group` and the other
    jobs on the machines left, in proportion to their parameters."""
    from hulk import _core
    from hulk.plan import catalogue
    cat = catalogue()
    jobs = [cat[j].to_core() for j in names]
    big = max(range(len(names)), key=lambda j: cat[names[j]].params)
    assign = [-1] * len(spec.region)
    for i in group:
        assign[i] = big
    rest = [i for i in range(len(assign)) if assign[i] < 0]
    others = [j for j in range(len(names)) if j != big]
    weights = [cat[names[j]].params for j in others]
    cut = 0
    for q, j in enumerate(others):
        count = round(len(rest) * weights[q] / sum(weights)) if q < len(others) - 1 else len(rest) - cut
        for i in rest[cut:cut + count]:
            assign[i] = j
        cut += count
    return _core.plan.plan_assignment(core, jobs, assign, "replica-aligned region chain").to_dict()


def references(path) -> dict:
    """{(mode, n, k, job set): {"search60": s, "hulk1": s}} from a bench_plan_anytime results file."""
    ref = {}
    plans, _ = anytime.read_results(path)
    for r in plans:
        key = (r["mode"], r["n"], r["instance"], r["job_set"])
        if r["planner"] == "search" and r["budget_s"] == 60:
            ref.setdefault(key, {})["search60"] = r["makespan_s"]
        elif r["planner"] == "hulk" and r["budget_s"] == 1:
            ref.setdefault(key, {})["hulk1"] = r["makespan_s"]
    return {k: v for k, v in ref.items() if "search60" in v and k[0] != "bundled"}


def run(path) -> list:
    from hulk.plan import catalogue, generate
    rows = []
    for (mode, n, k, set_name), ref in sorted(references(path).items()):
        kw = anytime.measured_regime(n, k) if mode == "measured" else {}
        spec = generate.generate_cluster(n, seed=anytime.CLUSTER_SEED_BASE + k, mode=mode, **kw)
        core = spec.to_core()
        names = anytime.JOB_SETS[set_name]
        big = max(names, key=lambda j: catalogue()[j].params)
        start = time.perf_counter()
        _, group = aligned_group(spec, core, catalogue()[big].to_core())
        plan = plan_around(spec, core, names, group) if group else None
        seconds = time.perf_counter() - start
        makespan = plan["makespan_s"] if plan and plan["feasible"] else math.inf
        rows.append({"mode": mode, "n": n, "k": k, "job_set": set_name, "machines": len(group),
                     "probe": makespan / ref["search60"], "hulk1": ref.get("hulk1", math.nan) / ref["search60"],
                     "seconds": seconds})
    return rows


def report_lines(rows: list) -> list:
    lines = ["| cluster | job set | GPUs | largest job's machines | probe / Search(60 s) | Hulk(1 s) / Search(60 s) | probe s |",
             "|---|---|---|---:|---:|---:|---:|"]
    for r in rows:
        gpus = "all A100" if r["mode"] == "measured" and r["k"] % 2 == 1 else "mixed"
        probe = f"{r['probe']:.3f}" if math.isfinite(r["probe"]) else "no plan"
        lines.append(f"| {r['mode']} {r['n']} #{r['k']} | {r['job_set']} | {gpus} | {r['machines']} | {probe} | "
                     f"{r['hulk1']:.3f} | {r['seconds']:.2f} |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", required=True, help="a bench_plan_anytime results file with Search at 60 s")
    ap.add_argument("--write", metavar="RESULTS.md", help="write the section into this file")
    args = ap.parse_args(argv)
    if not Path(args.results).is_file():
        ap.error(f"--results {args.results}: no such file")
    rows = run(args.results)
    if not rows:
        ap.error(f"--results {args.results}: no plan of Search at 60 s on a generated cluster")
    table = report_lines(rows)
    print("\n".join(table))
    if args.write:
        command = "python benchmarks/probe_aligned_groups.py " + shlex.join(argv if argv is not None else sys.argv[1:])
        write_section(args.write, BEGIN, END, [
            BEGIN, "## Probe: a replica-aligned region chain for the largest job (`benchmarks/probe_aligned_groups.py`)", "",
            f"Command: `{command}` ({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
            f"{anytime.machine()}). Not a planner: a rule no planner has yet, to see how far Search(60 s), the "
            "references of issue 17's targets, is from a good plan under the same cost model (the module "
            "docstring gives the rule). Below 1.000 the probe's plan is shorter than Search's at 60 s.", "",
            *table, "", END])
    return 0


if __name__ == "__main__":
    sys.exit(main())
