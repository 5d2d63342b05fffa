"""Text tables and figures for plans."""

from __future__ import annotations

import math
from typing import Sequence


def ranges(ids: Sequence[int]) -> str:
    """[0,1,2,5,7,8] -> '0-2,5,7-8'."""
    ids = sorted(ids)
    out, i = [], 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        out.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return ",".join(out) or "-"


def _fmt_s(x) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    return f"{x:.3f}" if x < 100 else f"{x:.1f}"


def _layout(job: dict) -> str:
    if job["strategy"] == "tensor_parallel":
        return f"TP x{len(job['tensor_group'])}"
    reps = job["replicas"]
    if not reps:
        return "-"
    stages = len(reps[0][0])
    return f"{len(reps)} x {stages} stages" if len(reps) > 1 else f"{stages} stages"


def plan_table(plan) -> str:
    """Per job: machines, layout, per-iteration compute / communication / total, finish time."""
    head = (f"{'job':<14} {'machines':<28} {'layout':<16} {'compute s':>10} {'comm s':>10} {'iter s':>10} "
            f"{'finish h':>9}")
    lines = [f"== {plan.title} ==  (planned in {plan.planning_s * 1e3:.1f} ms)", head, "-" * len(head)]
    for j in plan.jobs:
        if not j["feasible"]:
            lines.append(f"{j['job']:<14} {ranges(j['machines']):<28} {'infeasible':<16} {j['reason']}")
            continue
        lines.append(f"{j['job']:<14} {ranges(j['machines']):<28} {_layout(j):<16} {_fmt_s(j['compute_s']):>10} "
                     f"{_fmt_s(j['comm_s']):>10} {_fmt_s(j['iteration_s']):>10} {j['finish_s'] / 3600:>9.2f}")
    mode = "one after another" if plan.sequential else "concurrently"
    total = f"{plan.makespan_s / 3600:.2f} h" if plan.feasible else "not all jobs can run"
    lines.append(f"all jobs finish after {total} (jobs run {mode}; iterations per job: "
                 f"{', '.join(str(j['iterations']) for j in plan.jobs)})")
    for note in plan.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def comparison_table(plans) -> str:
    """One row per planner: makespan and its ratio to the best of Systems A/B/C."""
    base = [p.makespan_s for p in plans if p.planner in ("a", "b", "c") and p.feasible]
    best = min(base) if base else math.inf
    lines = [f"{'planner':<38} {'makespan h':>11} {'vs best of A/B/C':>17} {'planning ms':>12}"]
    for p in plans:
        ms = p.makespan_s / 3600 if p.feasible else math.inf
        rel = f"{(1 - p.makespan_s / best) * 100:+.1f}% less" if p.feasible and math.isfinite(best) else "-"
        lines.append(f"{p.title:<38} {ms:>11.2f} {rel:>17} {p.planning_s * 1e3:>12.1f}")
    return "\n".join(lines)


def job_comparison_table(plans) -> str:
    """Per job, the iteration time under every planner and the change of Search and Hulk
    against the best of Systems A/B/C for that job (the paper's per-job comparison)."""
    jobs = [j["job"] for j in plans[0].jobs]
    short = {"a": "A", "b": "B", "c": "C", "search": "Search", "hulk": "Hulk", "table2": "Table2", "hulk-gnn": "HulkGNN"}
    cols = [short.get(p.planner, p.planner) for p in plans]
    head = f"{'job (s/iteration)':<16}" + "".join(f"{c:>10}" for c in cols) + f"{'Search vs ABC':>15}{'Hulk vs ABC':>13}"
    lines = [head]
    for k, name in enumerate(jobs):
        times = {p.planner: (p.jobs[k]["iteration_s"] if p.jobs[k]["feasible"] else math.inf) for p in plans}
        best = min((times[x] for x in ("a", "b", "c") if x in times), default=math.inf)
        row = f"{name:<16}" + "".join(f"{_fmt_s(times[p.planner]) if math.isfinite(times[p.planner]) else 'infeas.':>10}"
                                       for p in plans)
        for x in ("search", "hulk"):
            t = times.get(x, math.inf)
            rel = f"{(1 - t / best) * 100:+.0f}%" if math.isfinite(t) and math.isfinite(best) else "-"
            row += f"{rel:>15}" if x == "search" else f"{rel:>13}"
        lines.append(row)
    lines.append("(+x% = that much less time per iteration than the best of Systems A/B/C; '-' = no baseline "
                 "can run the job)")
    return "\n".join(lines)


def save_figure(plans, path: str) -> None:
    """Stacked compute / communication bars per job and planner (like the paper's figures 8
    and 10) beside the cluster coloured by the first concurrent plan's assignment (figures 5-7)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import networkx as nx
    except ImportError:
        raise RuntimeError("figures need matplotlib: pip install 'hulk[plot]'") from None
    fig, (ax_bar, ax_graph) = plt.subplots(1, 2, figsize=(15, 6), gridspec_kw={"width_ratios": [3, 2]})
    jobs = [j["job"] for j in plans[0].jobs]
    width = 0.8 / len(plans)
    for k, p in enumerate(plans):
        xs = [i + (k - (len(plans) - 1) / 2) * width for i in range(len(jobs))]
        comp = [j["compute_s"] if j["feasible"] else 0 for j in p.jobs]
        comm = [j["comm_s"] if j["feasible"] else 0 for j in p.jobs]
        ax_bar.bar(xs, comp, width, color=f"C{k}", label=f"{p.title} compute")
        ax_bar.bar(xs, comm, width, bottom=comp, color=f"C{k}", alpha=0.45, hatch="//",
                   label=f"{p.title} communication")
    ax_bar.set_xticks(range(len(jobs)), jobs)
    ax_bar.set_yscale("log")
    ax_bar.set_ylabel("seconds per iteration (log)")
    ax_bar.set_title("Per-iteration time: compute (solid) + communication (hatched)")
    ax_bar.legend(fontsize=7, ncol=2)
    concurrent = next((p for p in plans if not p.sequential), plans[0])
    G = concurrent.cluster.to_networkx()
    assign = concurrent.assignment()
    pos = nx.spring_layout(G, seed=0, weight=None)
    colors = [f"C{a}" if a >= 0 else "lightgrey" for a in assign]
    nx.draw_networkx(G, pos, ax=ax_graph, node_color=colors, node_size=160, font_size=6, width=0.2,
                     edge_color="grey")
    for k, name in enumerate(jobs):
        ax_graph.scatter([], [], color=f"C{k}", label=name)
    ax_graph.scatter([], [], color="lightgrey", label="idle")
    ax_graph.legend(fontsize=7)
    ax_graph.set_title(f"Machines by job: {concurrent.title}")
    ax_graph.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
