"""Quality against planning time: Hulk and Search at budgets of 0.1-30 s over Search at 60 s.

For every cluster (generated in both modes of ``hulk.plan.generate_cluster``, and the bundled
47-server cluster) and every job set (both include OPT-175B), the script plans with Search at the
reference budget (60 s) and with Hulk and Search at each budget ``t``, all through the public API
``hulk.plan.plan(cluster, jobs, planner, time_limit_s=t, seed=seed)``. Every plan is one JSON
line appended to the results file as soon as it finishes, so a killed run keeps what it did and
a rerun with the same file skips what is there. The shipped learned planner is loaded before
the first timed plan (a once-per-process cost, like the import). ``--report`` renders the tables from that file:

* per mode, size and budget: Hulk(t) / Search(60 s) and Search(t) / Search(60 s), mean and worst
  over the instances (job sets included), Hulk(t) / Search(t) and how many instances have it over
  1.02 (issue 17's bound; also totalled per mode), Hulk's planning time, and the count of
  instances where a planner gives no plan while Search at 60 s finds one;
* the older figures: Hulk / Search at 10 s and Hulk's planning time at that budget.
* a speed check: per size from 1,000 machines, the median work outside the budget of Hulk's and
  Search's rows, flagged where they differ by more than 15% (rows rerun on a slower or faster
  machine than the rows they are compared with).
* where the file holds several plan seeds (runs with ``--seed 0``, ``--seed 1``, ... into one
  file): each planner's spread across the seeds of one instance, and Hulk / Search on each
  instance's mean over its seeds beside the seed-by-seed count.

``--write`` replaces the results file's RESULTS.md section but keeps hand-written notes placed
between ``<!-- notes:begin -->`` and ``<!-- notes:end -->`` in it.

Generated clusters, instance k of size n: ``generate_cluster(n, seed=3000 + k, mode=mode, ...)``.
The measured mode's regime: regions of 1-8 machines (8-16 above 8,000 machines, to stay under
the generator's region cap), 8-GPU machines, and on odd k one GPU type for all (A100 80GB)
(``--measured-regime small-regions``, the default and the regime the planner was tuned on).
``--measured-regime large-regions`` is held out: the generator's own region sizes and GPU mix,
4-GPU machines and throughput drawn independently of RTT. One results file holds one regime.

    python benchmarks/bench_plan_anytime.py --results plan_anytime.jsonl              # full run (hours)
    python benchmarks/bench_plan_anytime.py --results q.jsonl --sizes 47,200 --instances 1 \\
        --budgets 0.1,0.3 --reference 2 --modes paper,measured --job-sets paper4        # quick look
    python benchmarks/bench_plan_anytime.py --results plan_anytime.jsonl --report [--write RESULTS.md]
    python benchmarks/bench_plan_anytime.py --results plan_anytime_heldout.jsonl --modes measured \\
        --no-bundled --sizes 47,200,1000 --instances 8 --first-instance 30 --budgets 0.1,0.3,1,3 \\
        --reference 3         # clusters the default run never planned (its own section in RESULTS.md)
    python benchmarks/bench_plan_anytime.py --results search_again.jsonl --planners search ...  # an earlier
        # run's options: Search alone again, for --report --rerun search_again.jsonl (Search against itself)
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import math
import os
import platform
import re
import statistics
import sys
import time
from pathlib import Path

import hulk
import hulk.plan as hp
from hulk._device import uses_openblas
from hulk.plan import cluster_spec, generate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_file import report_section, write_section  # noqa: E402

BEGIN, END = "<!-- bench_plan_anytime:begin -->", "<!-- bench_plan_anytime:end -->"

SIZES = (47, 200, 1000, 5000, 20000)
BUDGETS = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0)
REFERENCE_S = 60.0
MODES = ("paper", "measured")
JOB_SETS = {"paper4": list(hp.PAPER_JOBS_4), "OPT+RoBERTa+BERT": ["OPT-175B", "RoBERTa-large", "BERT-large"],
            "paper6": list(hp.PAPER_JOBS_6), "Llama-2": ["Llama-2-70B", "Llama-2-13B", "Llama-2-7B"]}
# The default run's job sets. "paper6" (all six of the paper's jobs) and "Llama-2" are planned
# only when asked for: no rule of the planner was tuned on them, so they are held-out job sets.
DEFAULT_JOB_SETS = ("paper4", "OPT+RoBERTa+BERT")
CLUSTER_SEED_BASE = 3000
OLD_BUDGET_S = 10.0


def markers(results_path) -> tuple[str, str]:
    """RESULTS.md's section markers for a results file: the main grid's (plan_anytime.jsonl)
    are BEGIN and END; another file gets its own section, named by its stem."""
    stem = Path(results_path).stem
    if stem == "plan_anytime":
        return BEGIN, END
    return f"<!-- bench_plan_anytime:{stem}:begin -->", f"<!-- bench_plan_anytime:{stem}:end -->"


# ---------------------------------------------------------------------------------------------
# Instances
# ---------------------------------------------------------------------------------------------

# The ablations of issue 17 (Hulk without one of its parts), planned at --ablation-budget.
ABLATIONS = {"hulk-greedy": {"model": "greedy"},        # no GNN: the greedy rule's candidates instead
             "hulk-no-growth": {"grow_rounds": 0},       # no growth of the classifications
             "hulk-no-refine": {"refine_iterations": 0}}  # no refinement (nor Search's starts)


def measured_regime(n: int, k: int) -> dict:
    """The measured mode's regime for instance k of n machines (see the module docstring)."""
    kw = {"machines_per_region": (1, 8) if n <= 8000 else (8, 16), "gpus_per_machine": 8}
    if k % 2 == 1:
        kw["gpu_mix"] = {"A100 80GB": 1}
    return kw


def large_regions_regime(n: int, k: int) -> dict:
    """A held-out measured regime no rule of the planner was tuned on: the generator's own region
    sizes (rule 5's Dirichlet shares: a few regions of tens to hundreds of machines beside small
    ones), its whole GPU mix, 4-GPU machines, and throughput drawn independently of RTT."""
    return {"gpus_per_machine": 4, "rtt_coupling": 0.0}


# --measured-regime: the keyword arguments of generate_cluster(mode="measured") per instance,
# and the words the report uses for them.
MEASURED_REGIMES = {
    "small-regions": (measured_regime, "regions of 1-8 machines, 8-GPU machines, uniform A100 80GB on odd k"),
    "large-regions": (large_regions_regime, "the generator's Dirichlet region sizes and whole GPU mix, 4-GPU "
                                            "machines, throughput independent of RTT (rtt_coupling 0)"),
}


def instances(args):
    """(mode, n, k, cluster_seed, make) for every cluster of the run."""
    if args.bundled:
        yield "bundled", 47, 0, None, cluster_spec.hulk47_spec
    for mode in args.modes:
        for n in args.sizes:
            for k in range(args.first_instance, args.first_instance + args.instances):
                seed = CLUSTER_SEED_BASE + k
                kw = MEASURED_REGIMES[args.measured_regime][0](n, k) if mode == "measured" else {}
                yield mode, n, k, seed, (lambda n=n, seed=seed, mode=mode, kw=kw:
                                          generate.generate_cluster(n, seed=seed, mode=mode, **kw))


def key(row: dict) -> tuple:
    return (row["mode"], row["n"], row["instance"], row["job_set"], row["planner"], row["budget_s"], row["seed"])


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------

def read_results(path) -> tuple[list, list]:
    """(plan rows, meta rows) of a results file; a torn last line (a run killed mid-write) is skipped."""
    plans, meta = [], []
    if not os.path.exists(path):
        return plans, meta
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict):
                (plans if row.get("kind") == "plan" else meta if row.get("kind") == "meta" else []).append(row)
    return plans, meta


def append(path, row: dict) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")
        f.flush()
        os.fsync(f.fileno())


class RunMeta:
    """A run's meta row (command, date, machine, hulk version, then ``fields``), appended to
    ``path`` once, just before the run's first plan row: a run that plans nothing adds none."""

    def __init__(self, path, **fields):
        self.path = path
        self.row = {"kind": "meta", "command": command_line(),
                    "date": f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
                    "machine": machine(), "hulk": hulk.__version__, **fields}

    def before_plan(self) -> None:
        if self.row is not None:
            append(self.path, self.row)
            self.row = None


def regime_of(meta: list, path) -> str:
    """The measured regime of a results file's runs (files from before the option: small-regions);
    a file whose runs used two regimes is refused, since its measured rows would mix them."""
    regimes = {m.get("measured_regime", "small-regions") for m in meta} or {"small-regions"}
    if len(regimes) > 1:
        sys.exit(f"{path}: runs with different --measured-regime ({', '.join(sorted(regimes))}); use one file per regime")
    return regimes.pop()


def read_results_of_regime(path, measured_regime: str) -> tuple[list, list]:
    """read_results for a run that appends: exits when the file holds runs of another
    --measured-regime (one results file holds one regime)."""
    plans, meta = read_results(path)
    if meta and (regime := regime_of(meta, path)) != measured_regime:
        sys.exit(f"--measured-regime {measured_regime}: {path} holds runs of --measured-regime "
                 f"{regime}; use another results file")
    return plans, meta


def run(args) -> None:
    plans, _ = read_results_of_regime(args.results, args.measured_regime)
    done = {key(r) for r in plans}
    # Warm-up: the shipped learned planner is read from disk once per process (tens of ms), a
    # cost like importing the package; loaded here, it is not charged to the first timed plan.
    hp.default_planner()
    meta = RunMeta(args.results, budgets=args.budgets, reference_s=args.reference, seed=args.seed,
                   measured_regime=args.measured_regime)
    for mode, n, k, cluster_seed, make in instances(args):
        cluster = None
        for set_name in args.job_sets:
            jobs = JOB_SETS[set_name]
            todo = [("search", args.reference)] + [(p, t) for t in args.budgets for p in ("hulk", "search")
                                                   if p in args.planners]
            if args.ablations:
                todo += [(a, args.ablation_budget) for a in ABLATIONS]
            todo = list(dict.fromkeys(todo))  # the reference may be one of the budgets
            for planner, budget in todo:
                row = {"kind": "plan", "mode": mode, "n": n, "instance": k, "cluster_seed": cluster_seed,
                       "job_set": set_name, "planner": planner, "budget_s": budget, "seed": args.seed}
                if key(row) in done:
                    continue
                meta.before_plan()
                if cluster is None:
                    cluster = make()
                t0 = time.perf_counter()
                p = hp.plan(cluster, jobs, "hulk" if planner in ABLATIONS else planner, time_limit_s=budget,
                            seed=args.seed, **ABLATIONS.get(planner, {}))
                row.update(wall_s=time.perf_counter() - t0, planning_s=p.planning_s, feasible=bool(p.feasible),
                           makespan_s=p.makespan_s if p.feasible else None, machines=len(cluster),
                           regions=getattr(cluster, "n_regions", None), **plan_story(p.notes))
                append(args.results, row)
                print(f"{mode:>8} {n:>6} #{k} {set_name:>16} {planner:>6} {budget:>5g} s: "
                      f"{'%.1f h' % (p.makespan_s / 3600) if p.feasible else 'NO PLAN':>10}  "
                      f"planning {p.planning_s:7.2f} s", flush=True)


_SEARCH_STORY = re.compile(r"search: local search from the best of [^,]*, the (.*?) start(?: and from Hulk's)?, (\d+) "
                           r"local-search moves")
_SEARCH_AS_IS = re.compile(r"search: (.*?) \(a start, with jobs waiting for others\) beat every concurrent assignment")
_HULK_SOURCE = re.compile(r"hulk: best candidate before refinement: (.*?) \((\d+(?:\.\d+)?) h\)")
_HULK_MOVES = re.compile(r"hulk: refinement \((\d+) local-search moves")


def plan_story(notes: list) -> dict:
    """What a plan's notes say about how it was found, for diagnosis across runs: ``source`` (the
    start Search walked from, or Hulk's best candidate before refinement), ``moves`` (local-search
    moves) and, for Hulk, ``refined`` (whether refinement beat that candidate). Missing keys when
    the notes do not say (ablations, Systems A/B/C)."""
    text = "\n".join(notes)
    story = {}
    if m := _SEARCH_STORY.search(text):
        story.update(source=m.group(1), moves=int(m.group(2)))
    if m := _SEARCH_AS_IS.search(text):  # Search returned one of its Algorithm 1 plans, not the walk's
        story["source"] = m.group(1) + " (returned as is)"
    if m := _HULK_SOURCE.search(text):
        story["source"] = m.group(1)
        if moves := _HULK_MOVES.search(text):
            story["moves"] = int(moves.group(1))
        story["refined"] = "found nothing shorter" not in text
    return story


def command_line() -> str:
    return "python " + " ".join([str(Path(sys.argv[0]).resolve())] + sys.argv[1:])


def machine() -> str:
    # the BLAS too: the reference BLAS makes the GNN's proposal ~3x slower at 20,000 machines,
    # which changes which sources fit a short budget (hulk info, blas_line)
    blas = "OpenBLAS" if uses_openblas() else "BLAS not OpenBLAS"
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, {platform.node()}, {blas}"


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------

MODE_ORDER = {"bundled": 0, "paper": 1, "measured": 2}  # the tables' row order
WORST_BOUND = 1.02  # issue 17's bound on any one instance's Hulk(t) / Search(t)


def plans_by_key(rows: list) -> dict:
    """(mode, n, instance, job set, seed, planner, budget) -> row; a later row replaces an earlier one."""
    return {(r["mode"], r["n"], r["instance"], r["job_set"], r["seed"], r["planner"], r["budget_s"]): r for r in rows}


def summarise(rows: list, reference_s: float) -> tuple[dict, dict]:
    """(cells, old): cells[(mode, n, budget)] and old[(mode, n)] with ratio lists and counts.

    An instance is (mode, n, instance, job set, seed); ratios are over Search at ``reference_s``
    on the same instance and only where both plans exist; 'no plan' counts an instance where the
    planner has none and the reference has one."""
    plans = plans_by_key(rows)
    cells, old = {}, {}
    for (mode, n, inst, job_set, seed, planner, budget), r in plans.items():
        if planner != "hulk":
            continue
        ref = plans.get((mode, n, inst, job_set, seed, "search", reference_s))
        same = plans.get((mode, n, inst, job_set, seed, "search", budget))
        if ref is None or same is None:
            continue
        c = cells.setdefault((mode, n, budget), {"hulk": [], "search": [], "vs_same": [], "hulk_s": [],
                                                 "hulk_none": 0, "search_none": 0, "instances": 0})
        c["instances"] += 1
        c["hulk_s"].append(r["planning_s"])
        if ref["feasible"]:
            for who, p in (("hulk", r), ("search", same)):
                if p["feasible"]:
                    c[who].append(p["makespan_s"] / ref["makespan_s"])
                else:
                    c[f"{who}_none"] += 1
        if r["feasible"] and same["feasible"]:
            c["vs_same"].append(r["makespan_s"] / same["makespan_s"])
            if budget == OLD_BUDGET_S:
                o = old.setdefault((mode, n), {"ratio": [], "hulk_s": []})
                o["ratio"].append(r["makespan_s"] / same["makespan_s"])
                o["hulk_s"].append(r["planning_s"])
    return cells, old


def ablation_lines(rows: list, reference_s: float) -> list:
    """Per mode and size: each ablation over Hulk at the same budget and over the reference."""
    plans = plans_by_key(rows)
    cells = {}
    for (mode, n, inst, job_set, seed, planner, budget), r in plans.items():
        full = plans.get((mode, n, inst, job_set, seed, "hulk", budget))
        ref = plans.get((mode, n, inst, job_set, seed, "search", reference_s))
        if planner not in ABLATIONS or full is None or not (r["feasible"] and full["feasible"]):
            continue
        c = cells.setdefault((mode, n, budget, planner), {"vs_hulk": [], "vs_ref": []})
        c["vs_hulk"].append(r["makespan_s"] / full["makespan_s"])
        if ref is not None and ref["feasible"]:
            c["vs_ref"].append(r["makespan_s"] / ref["makespan_s"])
    if not cells:
        return []
    out = ["", "Ablations (Hulk without one part, same budget): `hulk-greedy` = no GNN (`model=\"greedy\"`), "
           "`hulk-no-growth` = `grow_rounds=0`, `hulk-no-refine` = `refine_iterations=0` (Hulk's own candidates "
           "through Algorithm 1 and growth, no Search starts, no refinement).", "",
           f"| mode | machines | budget s | ablation | instances | over Hulk(t) mean / worst | "
           f"over Search({reference_s:g} s) mean / worst |", "|---|---:|---:|---|---:|---:|---:|"]
    for (mode, n, budget, name) in sorted(cells, key=lambda x: (MODE_ORDER.get(x[0], 9), x[1], x[2], x[3])):
        c = cells[(mode, n, budget, name)]
        out.append(f"| {mode} | {n:,} | {budget:g} | {name} | {len(c['vs_hulk'])} | {_mw(c['vs_hulk'])} | "
                   f"{_mw(c['vs_ref'])} |")
    return out


def job_set_lines(rows: list) -> list:
    """Hulk(t) / Search(t), mean / worst, per mode, job set and size, a column per budget; only
    when the file holds more than one job set (the tables above pool them)."""
    plans = plans_by_key(rows)
    cells, budgets = {}, set()
    for (mode, n, inst, job_set, seed, planner, budget), r in plans.items():
        same = plans.get((mode, n, inst, job_set, seed, "search", budget))
        if planner != "hulk" or same is None or not (r["feasible"] and same["feasible"]):
            continue
        cells.setdefault((mode, job_set, n), {}).setdefault(budget, []).append(r["makespan_s"] / same["makespan_s"])
        budgets.add(budget)
    if len({k[1] for k in cells}) < 2:
        return []
    cols = sorted(budgets)
    out = ["", "Hulk(t) / Search(t) by job set, mean / worst over the clusters (a column per budget t in s).", "",
           "| mode | job set | machines | " + " | ".join(f"{b:g}" for b in cols) + " |",
           "|---|---|---:|" + "---:|" * len(cols)]
    sets = list(JOB_SETS)
    for (mode, job_set, n) in sorted(cells, key=lambda x: (MODE_ORDER.get(x[0], 9), sets.index(x[1]) if x[1] in sets else 99,
                                                            x[1], x[2])):
        c = cells[(mode, job_set, n)]
        out.append(f"| {mode} | {job_set} | {n:,} | " + " | ".join(_mw(c.get(b, [])) for b in cols) + " |")
    return out


def _over(v: list) -> str:
    """How many of the ratios exceed WORST_BOUND, "k of n" ("-" for none)."""
    return f"{sum(x > WORST_BOUND for x in v)} of {len(v)}" if v else "-"


def _mw(v: list) -> str:
    return f"{sum(v) / len(v):.3f} / {max(v):.3f}" if v else "-"


def report_lines(rows: list, meta: list, reference_s: float) -> list:
    cells, old = summarise(rows, reference_s)
    ref = f"Search({reference_s:g} s)"
    out = [f"| mode | machines | budget s | instances (clusters x job sets) | Hulk(t) / {ref} mean / worst | "
           f"Search(t) / {ref} mean / worst | Hulk(t) / Search(t) mean / worst | "
           f"Hulk(t) over {WORST_BOUND:g}x Search(t) | Hulk planning s mean / max | "
           f"no plan where {ref} has one: Hulk / Search |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (mode, n, budget) in sorted(cells, key=lambda x: (MODE_ORDER.get(x[0], 9), x[1], x[2])):
        c = cells[(mode, n, budget)]
        hs = c["hulk_s"]
        out.append(f"| {mode} | {n:,} | {budget:g} | {c['instances']} | {_mw(c['hulk'])} | {_mw(c['search'])} | "
                   f"{_mw(c['vs_same'])} | {_over(c['vs_same'])} | {sum(hs) / len(hs):.2f} / {max(hs):.2f} | "
                   f"{c['hulk_none']} / {c['search_none']} |")
    totals = {}
    for (mode, _, _), c in cells.items():
        totals.setdefault(mode, []).extend(c["vs_same"])
    if totals:
        by_mode = ", ".join(f"{m} {_over(totals[m])}" for m in sorted(totals, key=lambda m: MODE_ORDER.get(m, 9)))
        out += ["", f"Instances (cluster, job set, budget) where Hulk(t) is over {WORST_BOUND:g}x Search(t), the "
                    f"issue's bound on the worst case, all sizes and budgets: {by_mode}."]
    out += ["", f"The older figures: Hulk / Search, both at {OLD_BUDGET_S:g} s, and Hulk's planning time there.", "",
            "| mode | machines | instances | Hulk / Search mean / worst | Hulk planning s mean / max |",
            "|---|---:|---:|---:|---:|"]
    if not old:
        out.append(f"| (no plans at {OLD_BUDGET_S:g} s in this file) | | | | |")
    for (mode, n) in sorted(old, key=lambda x: (MODE_ORDER.get(x[0], 9), x[1])):
        o = old[(mode, n)]
        out.append(f"| {mode} | {n:,} | {len(o['ratio'])} | {_mw(o['ratio'])} | "
                   f"{sum(o['hulk_s']) / len(o['hulk_s']):.2f} / {max(o['hulk_s']):.2f} |")
    return out + speed_lines(rows) + seed_lines(rows) + job_set_lines(rows) + ablation_lines(rows, reference_s)


# The speed check: outside its budget a plan converts the cluster and lays out the result, the
# same work for Hulk and Search (medians within 6% of each other in one run at 1,000-20,000
# machines). Rows planned on a slower machine show it there first: on 2026-11-24 the VM was
# 1.1-2x slower than on the day of the file's Search rows, and Hulk rows rerun that day took 0.70 s
# at 5,000 machines against Search's 0.47 s. Hulk(t) / Search(t) of such rows is no comparison.
SPEED_CHECK_MIN_MACHINES = 1000   # below, that work is milliseconds and noise
SPEED_CHECK_BOUND = 1.15          # Hulk's median over Search's beyond which the report warns
# ... when the medians also differ by this much: paper-fitted clusters of 1,000 and 5,000
# machines need 1-4 ms outside the budget, where a ratio of 0.3 is noise, not speed
# (plan_anytime_long350.jsonl).
SPEED_CHECK_MIN_GAP_S = 0.02


def speed_lines(rows: list) -> list:
    """Per mode and size (from SPEED_CHECK_MIN_MACHINES on), the median work outside the budget
    (wall_s - planning_s) of Hulk's and Search's rows, with a warning where they differ by more
    than SPEED_CHECK_BOUND and by SPEED_CHECK_MIN_GAP_S; [] when no size qualifies."""
    outside = {}
    for r in plans_by_key(rows).values():   # the rows the tables use: a later one replaces an earlier one
        if r["n"] >= SPEED_CHECK_MIN_MACHINES and r["planner"] in ("hulk", "search"):
            outside.setdefault((r["mode"], r["n"]), {}).setdefault(r["planner"], []).append(r["wall_s"] - r["planning_s"])
    out = []
    for (mode, n) in sorted(outside, key=lambda x: (MODE_ORDER.get(x[0], 9), x[1])):
        o = outside[(mode, n)]
        if "hulk" not in o or "search" not in o:
            continue
        h, s = statistics.median(o["hulk"]), statistics.median(o["search"])
        ratio = h / s if s > 0 else float("inf")
        differ = not 1 / SPEED_CHECK_BOUND <= ratio <= SPEED_CHECK_BOUND and abs(h - s) > SPEED_CHECK_MIN_GAP_S
        flag = "**different machine speeds: Hulk(t) / Search(t) here is no comparison**" if differ else "same speed"
        out.append(f"| {mode} | {n:,} | {h:.2f} | {s:.2f} | {ratio:.2f} | {flag} |")
    if not out:
        return []
    return ["", "Speed check: the work outside the budget (converting the cluster, laying out the plan; "
                "`wall_s - planning_s`), median over the rows; the same for both planners on one machine.", "",
            "| mode | machines | Hulk s | Search s | Hulk / Search | |", "|---|---:|---:|---:|---:|---|", *out]


def rerun_lines(rows: list, again: list) -> list:
    """The run-to-run spread: the same planner at the same budget on the same instance in two
    runs of one command (``rows`` and ``again``), per mode, size and budget. It is the noise
    floor of any one instance's Hulk(t) / Search(t): a ratio the planner reaches against itself
    says nothing about Hulk against Search."""
    first, second = plans_by_key(rows), plans_by_key(again)
    cells = {}
    for (mode, n, inst, job_set, seed, planner, budget), r in first.items():
        o = second.get((mode, n, inst, job_set, seed, planner, budget))
        if planner not in ("hulk", "search") or o is None or not (r["feasible"] and o["feasible"]):
            continue
        c = cells.setdefault((mode, n, budget), {"hulk": [], "search": [], "vs": {1: [], 2: []}})
        # both directions: either run may be the slower one
        c[planner] += [o["makespan_s"] / r["makespan_s"], r["makespan_s"] / o["makespan_s"]]
    # Hulk(t) / Search(t) within each run, in the cells above (a Search-only rerun has run 1's)
    for k, plans in ((1, first), (2, second)):
        for (mode, n, inst, job_set, seed, planner, budget), h in plans.items():
            srch = plans.get((mode, n, inst, job_set, seed, "search", budget))
            if planner == "hulk" and (mode, n, budget) in cells and srch and h["feasible"] and srch["feasible"]:
                cells[(mode, n, budget)]["vs"][k].append(h["makespan_s"] / srch["makespan_s"])
    if not cells:
        return []
    out = ["", f"Run to run: the same planner, budget and instance in the two runs (both directions, so "
               f"each instance counts twice); over {WORST_BOUND:g}x = how often a planner is more than 2% "
               "behind itself. Beside it Hulk(t) / Search(t) in each run.", "",
           "| mode | machines | budget s | Search run/run mean / worst | over | Hulk run/run mean / worst | over | "
           "Hulk(t) / Search(t) run 1: worst, over | run 2: worst, over |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    totals = {"search": [], "hulk": [], 1: [], 2: []}
    for (mode, n, budget) in sorted(cells, key=lambda x: (MODE_ORDER.get(x[0], 9), x[1], x[2])):
        c = cells[(mode, n, budget)]
        totals["search"] += c["search"]
        totals["hulk"] += c["hulk"]
        totals[1] += c["vs"][1]
        totals[2] += c["vs"][2]
        vs = [f"{max(v):.3f}, {_over(v)}" if v else "-" for v in (c["vs"][1], c["vs"][2])]
        out.append(f"| {mode} | {n:,} | {budget:g} | {_mw(c['search'])} | {_over(c['search'])} | {_mw(c['hulk'])} | "
                   f"{_over(c['hulk'])} | {vs[0]} | {vs[1]} |")
    out += ["", f"In all: Search against itself {_over(totals['search'])} ratios over {WORST_BOUND:g}x, Hulk against "
                f"itself {_over(totals['hulk'])}; Hulk(t) / Search(t) {_over(totals[1])} (run 1) and "
                f"{_over(totals[2])} (run 2)."]
    means = _rerun_seed_means(first, second)
    if means:
        out += ["", "On each instance's geometric mean over its seeds (instances with two or more seeds in both "
                    "runs, both directions): " + "; ".join(
                        f"{name} against itself {_over(v)} over {WORST_BOUND:g}x (worst {max(v):.3f})"
                        for name, v in means.items()) + "."]
    return out


def _rerun_seed_means(first: dict, second: dict) -> dict:
    """Planner name -> the ratios of each instance's geometric mean over its seeds in one run to
    the other's (both directions), where the instance has the same two or more seeds, all
    feasible, in both runs (``plans_by_key`` dicts); planners without such an instance left out."""
    seeds = {}
    for run, plans in ((0, first), (1, second)):
        for (mode, n, inst, job_set, seed, planner, budget), r in plans.items():
            if planner in ("hulk", "search"):
                seeds.setdefault((planner, mode, n, inst, job_set, budget), ({}, {}))[run][seed] = r
    out = {}
    for (planner, *_), (a, b) in sorted(seeds.items(), key=lambda x: x[0][0] != "search"):
        common = sorted(set(a) & set(b))
        if len(common) < 2 or not all(a[k]["feasible"] and b[k]["feasible"] for k in common):
            continue
        ratio = (statistics.geometric_mean([b[k]["makespan_s"] for k in common])
                 / statistics.geometric_mean([a[k]["makespan_s"] for k in common]))
        out.setdefault("Search" if planner == "search" else "Hulk", []).extend([ratio, 1 / ratio])
    return out


def seed_pair_ratios(makespans: list) -> list:
    """One planner against itself on one instance: its makespan of each seed over its makespan of
    each other seed (the ordered pairs), the noise floor of a per-seed bound."""
    return [a / b for a, b in itertools.permutations(makespans, 2)]


def seed_lines(rows: list) -> list:
    """The seed spread, for files that hold several plan seeds (``--seed``) of the same instances:
    per mode, size and budget, each planner's largest over least makespan across the seeds of one
    instance (cluster and job set), how often Hulk(t) / Search(t) is over WORST_BOUND seed by seed,
    how often one of Search's plans is over WORST_BOUND its plan of another seed (ordered pairs of
    seeds: the same count for Search against itself, the noise floor of the per-seed count),
    and Hulk / Search on each instance's geometric mean over the seeds (the planners' expected plan;
    a per-seed ratio mixes that with the walks' luck). Only instances where both planners have a
    feasible plan for every seed of the instance count; [] when no instance has two seeds."""
    by = {}
    for (mode, n, inst, job_set, seed, planner, budget), r in plans_by_key(rows).items():
        if planner in ("hulk", "search"):
            by.setdefault((mode, n, budget, inst, job_set), {}).setdefault(planner, {})[seed] = r
    cells = {}
    for (mode, n, budget, _, _), p in by.items():
        seeds = sorted(set(p.get("hulk", {})) & set(p.get("search", {})))
        if len(seeds) < 2 or not all(p[w][s]["feasible"] for w in ("hulk", "search") for s in seeds):
            continue
        h = [p["hulk"][s]["makespan_s"] for s in seeds]
        s_ = [p["search"][s]["makespan_s"] for s in seeds]
        c = cells.setdefault((mode, n, budget), {"seeds": set(), "hulk": [], "search": [], "per_seed": [], "mean": [],
                                                 "search_pairs": []})
        c["seeds"].add(len(seeds))
        c["hulk"].append(max(h) / min(h))
        c["search"].append(max(s_) / min(s_))
        c["per_seed"] += [a / b for a, b in zip(h, s_)]
        c["search_pairs"] += seed_pair_ratios(s_)
        c["mean"].append(statistics.geometric_mean(h) / statistics.geometric_mean(s_))
    if not cells:
        return []
    out = ["", "Seed spread: the same instance (cluster, job set) planned with several plan seeds "
               "(`--seed`). Across seeds = a planner's largest over least makespan on one instance; per seed = "
               f"Hulk(t) / Search(t) for each seed; Search seed to seed = one of Search's plans over its plan of "
               "another seed of the instance (ordered pairs: the same count for Search against itself); of the "
               "means = Hulk / Search on each instance's geometric mean over its seeds.", "",
           "| mode | machines | budget s | seeds | instances | Search across seeds mean / worst | over | "
           "Hulk across seeds mean / worst | over | per seed: over | Search seed to seed: over | "
           "of the means mean / worst | over |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    total = {"per_seed": [], "mean": [], "search_pairs": []}
    for (mode, n, budget) in sorted(cells, key=lambda x: (MODE_ORDER.get(x[0], 9), x[1], x[2])):
        c = cells[(mode, n, budget)]
        total["per_seed"] += c["per_seed"]
        total["mean"] += c["mean"]
        total["search_pairs"] += c["search_pairs"]
        seeds = "/".join(str(k) for k in sorted(c["seeds"]))
        out.append(f"| {mode} | {n:,} | {budget:g} | {seeds} | {len(c['mean'])} | {_mw(c['search'])} | "
                   f"{_over(c['search'])} | {_mw(c['hulk'])} | {_over(c['hulk'])} | {_over(c['per_seed'])} | "
                   f"{_over(c['search_pairs'])} | {_mw(c['mean'])} | {_over(c['mean'])} |")
    out += ["", f"In all: Hulk(t) over {WORST_BOUND:g}x Search(t) in {_over(total['per_seed'])} plans seed by seed, "
                f"in {_over(total['mean'])} instances on the means over the seeds; Search over {WORST_BOUND:g}x its "
                f"own plan of another seed in {_over(total['search_pairs'])} ordered pairs of seeds."]
    return out


NOTES_BEGIN, NOTES_END = "<!-- notes:begin -->", "<!-- notes:end -->"  # hand-written, kept by --write


def kept_notes(path, begin: str, end: str) -> list:
    """The hand-written notes of the section between ``begin`` and ``end`` in ``path`` (the text
    between NOTES_BEGIN and NOTES_END, markers included, then a blank line); [] when there are none.
    --write puts them back after the "Rendered with" paragraph so a rerun does not lose them."""
    p = Path(path)
    text = p.read_text() if p.exists() else ""
    section = re.search(re.escape(begin) + "(.*?)" + re.escape(end), text, flags=re.S)
    notes = section and re.search(re.escape(NOTES_BEGIN) + "(.*?)" + re.escape(NOTES_END), section.group(1), flags=re.S)
    return [NOTES_BEGIN, notes.group(1).strip("\n"), NOTES_END, ""] if notes else []


def report_reference(rows: list, meta: list, given) -> float:
    """Search's reference budget for --report: ``given`` when set, else the one the file's runs used
    (their metas' ``reference_s``; 60 s when no meta says). Exits when the runs used different ones
    and none was given, or when no row of Search has the reference budget (every ratio would be
    empty)."""
    if given is None:
        used = sorted({float(m["reference_s"]) for m in meta if "reference_s" in m})
        if len(used) > 1:
            sys.exit(f"the file's runs used different reference budgets ({', '.join(f'{u:g} s' for u in used)}): "
                     "pick one with --reference")
        given = used[0] if used else REFERENCE_S
    budgets = sorted({r["budget_s"] for r in rows if r.get("planner") == "search"})
    if given not in budgets:
        sys.exit(f"--reference {given:g}: no Search plan has that budget (Search's budgets: "
                 f"{', '.join(f'{b:g}' for b in budgets) or 'none'})")
    return given


def report(args) -> None:
    rows, meta = read_results(args.results)
    if not rows:
        sys.exit(f"{args.results}: no plan rows")
    args.reference = report_reference(rows, meta, args.reference)
    table = report_lines(rows, meta, args.reference)
    if args.rerun:
        again, again_meta = read_results(args.rerun)
        if not again:
            sys.exit(f"--rerun {args.rerun}: no plan rows")
        table += rerun_lines(rows, again)
        meta = meta + again_meta
    print("\n".join(table))
    if args.write:
        seeds = sorted({r["seed"] for r in rows})
        regime = regime_of(meta, args.results)
        begin, end = markers(args.results)
        title = "## Planner: quality against planning time (`benchmarks/bench_plan_anytime.py`)"
        if begin != BEGIN:
            title = f"### The same from another run (`{Path(args.results).name}`)"
        text = [begin, title, "",
                *[f"Command: `{m['command']}` ({m['date']}; {m['machine']}; hulk {m['hulk']})" for m in meta], "",
                f"Rendered with `--report` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC from "
                f"{len(rows)} plans; Search's reference budget {args.reference:g} s, plan "
                f"seed{'s' if len(seeds) > 1 else ''} {', '.join(str(s) for s in seeds)}. Ratios are makespans (lower is better); worst = the largest. Clusters: "
                "the bundled 47-server cluster and `generate_cluster(n, seed=3000 + k, mode=...)`, measured mode "
                f"in the regime `{regime}` ({MEASURED_REGIMES[regime][1]}). Job sets: " + "; ".join(f"{a} ({', '.join(j)})" for a, j in JOB_SETS.items()
                                                     if a in {r["job_set"] for r in rows}) + ".", "",
                *kept_notes(args.write, begin, end), *table, "", end]
        write_section(args.write, begin, end, text)


# ---------------------------------------------------------------------------------------------

def _floats(text: str) -> list:
    try:
        v = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
    if not v or any(not math.isfinite(x) or x <= 0 for x in v):
        raise argparse.ArgumentTypeError(f"expected positive numbers, got {text!r}")
    return v


def _ints(text: str) -> list:
    v = _floats(text)
    if any(x != int(x) or x < 2 for x in v):
        raise argparse.ArgumentTypeError(f"expected integers >= 2, got {text!r}")
    return [int(x) for x in v]


def _choices(allowed):
    def parse(text: str) -> list:
        v = [x.strip() for x in text.split(",") if x.strip()]
        bad = [x for x in v if x not in allowed]
        if not v or bad:
            raise argparse.ArgumentTypeError(f"expected a comma-separated subset of {list(allowed)}, got {text!r}")
        return v
    return parse


def side_parser(doc: str, sizes: list, instances: int, first_instance: int) -> argparse.ArgumentParser:
    """The arguments the scripts built on these clusters share (bench_interchangeable,
    bench_plan_thread, bench_repair): the results file, --report / --write, sizes, instances, job sets."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", required=True, help="the JSONL file runs are appended to (and read by --report)")
    ap.add_argument("--report", action="store_true", help="render the table from --results and plan nothing")
    ap.add_argument("--write", metavar="RESULTS.md", help="with --report: write the section into this file")
    ap.add_argument("--sizes", type=_ints, default=list(sizes))
    ap.add_argument("--instances", type=int, default=instances,
                    help=f"generated clusters per mode and size (default {instances})")
    ap.add_argument("--first-instance", type=int, default=first_instance,
                    help=f"the first instance k (default {first_instance})")
    ap.add_argument("--job-sets", type=_choices(tuple(JOB_SETS)), default=list(DEFAULT_JOB_SETS))
    return ap


def side_run(ap: argparse.ArgumentParser, args, run, report) -> int:
    """A side script's checks of side_parser's arguments, then ``report(args)`` with --report,
    else ``run(args)``."""
    if args.instances < 1 or args.first_instance < 0:
        ap.error("--instances must be >= 1 and --first-instance >= 0")
    if args.write and not args.report:
        ap.error("--write goes with --report")
    report(args) if args.report else run(args)
    return 0


def side_report(args, script: str, title: str, report_lines) -> None:
    """A side script's --report: its section of ``args.results`` (``report_lines(rows, meta)``
    under ``title``), hand notes kept, written into ``args.write`` when given."""
    rows, meta = read_results(args.results)
    if not rows:
        sys.exit(f"{args.results}: no plans to report")
    report_section(script, args.results, title, report_lines(rows, meta), args.write, kept_notes)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", required=True, help="the JSONL file plans are appended to (and read by --report)")
    ap.add_argument("--report", action="store_true", help="render the tables from --results and plan nothing")
    ap.add_argument("--write", metavar="RESULTS.md", help="with --report: write the section into this file")
    ap.add_argument("--rerun", metavar="JSONL", help="with --report: a second run of the same command; adds the "
                    "run-to-run table (each planner against itself, the noise floor of Hulk(t) / Search(t))")
    ap.add_argument("--sizes", type=_ints, default=list(SIZES), help="machines per generated cluster (default: "
                    + ",".join(map(str, SIZES)) + ")")
    ap.add_argument("--instances", type=int, default=5, help="generated clusters per mode and size (default 5)")
    ap.add_argument("--first-instance", type=int, default=0,
                    help="the first instance k (cluster seed 3000 + k; default 0): a later k gives clusters "
                         "the default run never planned, a check on clusters nothing was tuned on")
    ap.add_argument("--budgets", type=_floats, default=list(BUDGETS), help="planning budgets in seconds")
    ap.add_argument("--reference", type=float, default=None,
                    help="Search's reference budget (default: 60 s when planning; with --report, the budget "
                         "the file's runs used)")
    ap.add_argument("--modes", type=_choices(MODES), default=list(MODES))
    ap.add_argument("--ablations", action="store_true",
                    help="also plan Hulk without the GNN, without growth and without refinement")
    ap.add_argument("--ablation-budget", type=float, default=1.0, help="the ablations' budget (default 1 s)")
    ap.add_argument("--job-sets", type=_choices(tuple(JOB_SETS)), default=list(DEFAULT_JOB_SETS),
                    help="job sets to plan (default paper4,OPT+RoBERTa+BERT; paper6, all six of the paper's "
                         "jobs, and Llama-2, its 70B, 13B and 7B, are held-out sets no rule was tuned on)")
    ap.add_argument("--measured-regime", choices=tuple(MEASURED_REGIMES), default="small-regions",
                    help="the measured clusters' regime (default small-regions, the one the planner was tuned on; "
                         "large-regions is held out: " + MEASURED_REGIMES["large-regions"][1] + ")")
    ap.add_argument("--no-bundled", dest="bundled", action="store_false", help="skip the bundled 47-server cluster")
    ap.add_argument("--seed", type=int, default=0, help="the planners' seed (default 0)")
    ap.add_argument("--planners", type=_choices(("hulk", "search")), default=["hulk", "search"],
                    help="the planners run at each budget (default hulk,search; Search at the reference budget "
                         "always runs): an earlier run's command with --planners search into a new file gives "
                         "Search's own rows for --rerun, the noise floor of Hulk(t) / Search(t)")
    args = ap.parse_args(argv)
    if args.instances < 1:
        ap.error(f"--instances must be >= 1, got {args.instances}")
    if args.first_instance < 0:
        ap.error(f"--first-instance must be >= 0, got {args.first_instance}")
    if args.reference is not None and not (math.isfinite(args.reference) and args.reference > 0):
        ap.error(f"--reference must be a positive number of seconds, got {args.reference}")
    if (args.write or args.rerun) and not args.report:
        ap.error("--write and --rerun go with --report")
    if args.report:
        report(args)
    else:
        args.reference = REFERENCE_S if args.reference is None else args.reference
        run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
