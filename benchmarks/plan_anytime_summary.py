"""Issue 17's bound across every results file of bench_plan_anytime.py, one row per file and mode.

Each `plan_anytime*.jsonl` has its own RESULTS.md section (how it was run, which build, notes).
This table puts their Hulk(t) / Search(t) figures side by side: the mean per cell (machines x
budget; issue 17 asks for <= 1.00), how many single plans are over 1.02x Search(t) (the bound on
the worst case), and, for files with several plan seeds, how many instances (cluster, job set,
budget) are over 1.02x on their geometric mean over the seeds, and how often each planner's plan
of one seed is over 1.02x its own plan of another seed (Search's is the per-plan noise floor).

    python benchmarks/plan_anytime_summary.py                       # print the table
    python benchmarks/plan_anytime_summary.py --write benchmarks/RESULTS.md
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_plan_anytime import MODE_ORDER, WORST_BOUND, plans_by_key, read_results, seed_pair_ratios  # noqa: E402
from results_file import write_section  # noqa: E402

BEGIN, END = "<!-- plan_anytime_summary:begin -->", "<!-- plan_anytime_summary:end -->"
HERE = Path(__file__).resolve().parent


def _ranges(values) -> str:
    """Sorted integers as runs: 1-3, 7."""
    v = sorted(set(values))
    out, start = [], None
    for a, b in zip(v, v[1:] + [None]):
        start = a if start is None else start
        if b != a + 1:
            out.append(f"{start}-{a}" if a != start else f"{a}")
            start = None
    return ", ".join(out)


def file_rows(rows: list, meta: list) -> list:
    """One dict per mode of a results file: what it covers and its Hulk(t) / Search(t) figures.
    A plan counts where both planners have a feasible plan of the same instance, seed and budget."""
    plans = plans_by_key(rows)
    by_mode = {}
    for (mode, n, inst, job_set, seed, planner, budget), r in plans.items():
        if planner != "hulk" or not r["feasible"]:
            continue
        s = plans.get((mode, n, inst, job_set, seed, "search", budget))
        if s is None or not s["feasible"]:
            continue
        m = by_mode.setdefault(mode, {"cells": {}, "instances": {}, "n": set(), "budgets": set(), "k": set(),
                                      "seeds": set()})
        q = r["makespan_s"] / s["makespan_s"]
        m["cells"].setdefault((n, budget), []).append(q)
        m["instances"].setdefault((n, inst, job_set, budget), []).append((r["makespan_s"], s["makespan_s"]))
        m["n"].add(n)
        m["budgets"].add(budget)
        m["k"].add(inst)
        m["seeds"].add(seed)
    dates = sorted(x["date"] for x in meta if "date" in x)
    out = []
    for mode in sorted(by_mode, key=lambda x: MODE_ORDER.get(x, 9)):
        m = by_mode[mode]
        ratios = [q for v in m["cells"].values() for q in v]
        cell_means = [sum(v) / len(v) for v in m["cells"].values()]
        seed_means = [statistics.geometric_mean([h for h, _ in v]) / statistics.geometric_mean([s for _, s in v])
                      for v in m["instances"].values() if len(v) > 1]
        search_pairs, hulk_pairs = _seed_pairs_over(m["instances"].values())
        out.append({
            "mode": mode, "sizes": sorted(m["n"]), "budgets": sorted(m["budgets"]), "k": _ranges(m["k"]),
            "seeds": len(m["seeds"]), "dates": (dates[0], dates[-1]) if dates else None, "plans": len(ratios),
            "mean": sum(ratios) / len(ratios), "cells": len(cell_means),
            "cells_over_1": sum(c > 1.0 for c in cell_means), "worst_cell": max(cell_means),
            "over": sum(q > WORST_BOUND for q in ratios), "worst": max(ratios),
            "seed_means": len(seed_means), "seed_means_over": sum(q > WORST_BOUND for q in seed_means),
            "worst_seed_mean": max(seed_means) if seed_means else None,
            "seed_pairs": search_pairs[1], "search_pairs_over": search_pairs[0], "hulk_pairs_over": hulk_pairs[0]})
    return out


def _seed_pairs_over(instances) -> tuple:
    """Each planner against itself: over the ordered pairs of two seeds of one instance, how many
    times its plan of one seed is over WORST_BOUND times its plan of the other. Search's count is
    the noise floor of a per-plan bound: a Search(t) whose result depends on timing and seed is
    this often over 1.02x itself. Returns ((search over, pairs), (hulk over, pairs))."""
    search = [q for v in instances for q in seed_pair_ratios([s for _, s in v])]
    hulk = [q for v in instances for q in seed_pair_ratios([h for h, _ in v])]
    return ((sum(q > WORST_BOUND for q in search), len(search)), (sum(q > WORST_BOUND for q in hulk), len(hulk)))


def table_lines(files: list) -> list:
    out = ["| file | mode | machines | budgets s | clusters k | seeds | runs (UTC) | plans | "
           "Hulk(t) / Search(t) mean | cells over 1.00 (worst cell) | plans over 1.02x (worst) | "
           "instances over 1.02x on the seed means (worst) | seed pairs over 1.02x: Search / Hulk against itself |",
           "|---|---|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for path in files:
        rows, meta = read_results(path)
        for f in file_rows(rows, meta):
            dates = "-"
            if f["dates"]:
                first, last = f["dates"]
                dates = first if first == last else f"{first} to {last[11:] if last[:10] == first[:10] else last}"
            seed = (f"{f['seed_means_over']} of {f['seed_means']} ({f['worst_seed_mean']:.3f})"
                    if f["seed_means"] else "-")
            pairs = (f"{f['search_pairs_over']} / {f['hulk_pairs_over']} of {f['seed_pairs']:,}"
                     if f["seed_pairs"] else "-")
            out.append(f"| `{Path(path).name}` | {f['mode']} | {', '.join(f'{n:,}' for n in f['sizes'])} | "
                       f"{', '.join(f'{b:g}' for b in f['budgets'])} | {f['k']} | {f['seeds']} | {dates} | "
                       f"{f['plans']} | {f['mean']:.3f} | {f['cells_over_1']} of {f['cells']} ({f['worst_cell']:.3f}) | "
                       f"{f['over']} of {f['plans']} ({f['worst']:.3f}) | {seed} | {pairs} |")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", help="results files (default: benchmarks/plan_anytime*.jsonl)")
    ap.add_argument("--write", metavar="RESULTS.md", help="write the table into this file's summary section")
    args = ap.parse_args(argv)
    files = args.files or sorted(str(p) for p in HERE.glob("plan_anytime*.jsonl"))
    missing = [f for f in files if not Path(f).is_file()]
    if missing:
        ap.error(f"no such results file: {', '.join(missing)}")
    lines = table_lines(files)
    print("\n".join(lines))
    if args.write:
        text = [BEGIN, "## Planner: issue 17's bound in every results file (`benchmarks/plan_anytime_summary.py`)", "",
                "One row per results file and mode, each from its own section below (which build, how it was run, "
                "notes); files differ in build and in the machine's load, so rows are not a time series of one "
                "planner. A plan counts where Hulk and Search both have a feasible plan of the same instance, "
                "seed and budget. Mean = arithmetic mean of Hulk(t) / Search(t) over the plans; a cell = one size "
                f"and budget; over = above {WORST_BOUND:g}x; seed means = each instance's geometric mean over its "
                "plan seeds (files with several seeds); seed pairs = each planner against itself, over the "
                "ordered pairs of two seeds of one instance: how often its plan of one seed is over "
                f"{WORST_BOUND:g}x its plan of the other (Search's count is the noise floor of a per-plan "
                "bound).", "", *lines, "", END]
        write_section(args.write, BEGIN, END, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
