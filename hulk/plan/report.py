"""Text tables and figures for plans."""

from __future__ import annotations

import math
import os
from typing import Sequence

from ..errors import InputError


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


def machine_locations(cluster) -> tuple:
    """Per machine: region name, latitude and longitude (NaN when unknown); see
    :meth:`hulk.plan.Cluster.locations`."""
    return cluster.locations()


def _world_outline() -> dict:
    import json
    from pathlib import Path
    doc = json.loads((Path(__file__).resolve().parent.parent / "data" / "world_outline.json").read_text(encoding="utf-8"))
    return doc["polygons"]


def _dot_offsets(k: int, spacing: float):
    """Offsets (dx, dy) in degrees for k dots packed in a disc (a sunflower spiral)."""
    import numpy as np
    i = np.arange(k)
    r = spacing * np.sqrt(i + 0.5)
    a = i * math.pi * (3 - math.sqrt(5))
    return r * np.cos(a), r * np.sin(a)


def _draw_map(ax, plan, jobs, names, lat, lon) -> None:
    import numpy as np
    from matplotlib.patches import Polygon
    for poly in _world_outline().values():
        ax.add_patch(Polygon(poly, closed=True, facecolor="#efeee8", edgecolor="#a9a9a0", linewidth=0.6, zorder=0))
    for x in range(-180, 181, 30):
        ax.axvline(x, color="#dddddd", linewidth=0.4, zorder=0)
    for y in range(-60, 91, 30):
        ax.axhline(y, color="#dddddd", linewidth=0.4, zorder=0)
    n = len(names)
    assign = np.array(plan.assignment())
    spacing = 1.25 if n <= 100 else max(1.25 * math.sqrt(100 / n), 0.05)
    size = 24 if n <= 100 else max(24 * 100 / n, 0.5)
    xs, ys = np.full(n, np.nan), np.full(n, np.nan)
    unknown = [i for i in range(n) if not (math.isfinite(lat[i]) and math.isfinite(lon[i]))]
    groups: dict = {}
    for i in range(n):
        if i not in unknown:
            groups.setdefault((names[i], lat[i], lon[i]), []).append(i)
    for (region, la, lo), members in groups.items():
        dx, dy = _dot_offsets(len(members), spacing)
        # Machines of a region sorted by job so that each job forms one patch of colour.
        order = sorted(members, key=lambda i: (assign[i] < 0, assign[i]))
        xs[order], ys[order] = lo + dx, la + dy
        ax.annotate(f"{region} ({len(members)})", (lo + dx.max() + 0.8, la), va="center", fontsize=6,
                    color="#333333")
    shown_lon = lon[np.isfinite(lon)] if np.isfinite(lon).any() else np.array([-180.0, 180.0])
    centre = float((max(shown_lon.min() - 25, -180) + min(shown_lon.max() + 25, 180)) / 2)
    if unknown:  # machines without coordinates: a row below the map, said so
        step = min(2.5, 200.0 / len(unknown))
        xs[unknown] = centre + step * (np.arange(len(unknown)) - (len(unknown) - 1) / 2)
        ys[unknown] = -56.0
        ax.annotate(f"no coordinates ({len(unknown)} machines)", (centre, -51), ha="center", fontsize=6)
    if plan.sequential:  # every machine runs the jobs one after another: no job colour applies
        colours = ["#555555" if a >= 0 else "#bbbbbb" for a in assign.tolist()]
    else:
        colours = [f"C{a}" if a >= 0 else "#bbbbbb" for a in assign.tolist()]
    ax.scatter(xs, ys, c=colours, s=size, linewidths=0.2, edgecolors="black", zorder=2)
    shown_lat = lat[np.isfinite(lat)] if np.isfinite(lat).any() else np.array([-60.0, 80.0])
    x0, x1 = max(shown_lon.min() - 25, -180), min(shown_lon.max() + 25, 180)
    y0, y1 = max(shown_lat.min() - 20, -60), min(shown_lat.max() + 20, 85)
    if unknown:
        y0 = -62.0  # room for the row of machines without coordinates
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal")
    ax.set_xlabel("longitude (degrees)", fontsize=7)
    ax.set_ylabel("latitude (degrees)", fontsize=7)
    ax.tick_params(labelsize=6)
    span = f"makespan {plan.makespan_s / 3600:.2f} h" if math.isfinite(plan.makespan_s) else "not every job can run"
    how = "; jobs one after another on the dark machines" if plan.sequential else ""
    ax.set_title(f"{plan.title}: {span}{how}", fontsize=9)


# The formats matplotlib's Agg, PDF, SVG and PS backends write with no extra package.
FIGURE_FORMATS = ("png", "pdf", "svg", "eps", "ps")


def figure_format(path) -> str:
    """The figure format a path's extension names (``.png``, ``.pdf``, ``.svg``, ``.eps``,
    ``.ps``; case ignored). Any other extension, or none, is an :class:`InputError`: the
    bytes written must be what the name says."""
    name = os.fspath(path)
    ext = os.path.splitext(name)[1].lower().lstrip(".")
    if ext not in FIGURE_FORMATS:
        said = f"the extension '.{ext}' is not a figure format hulk writes" if ext else "it has no extension"
        raise InputError(f"figure path {name!r}: {said}; end the name in one of "
                         f"{', '.join('.' + f for f in FIGURE_FORMATS)}")
    return ext


def save_figure(plans, path: str, cluster=None) -> None:
    """Writes the figure to ``path`` in the format its extension names (:func:`figure_format`).

    Two world maps side by side (Hulk and Search: each machine a dot at its region's
    coordinates, a region a cluster of dots, coloured by the job it trains) above stacked
    compute / communication bars per job and planner (the paper's figures 8 and 10), with
    the legends outside the axes. Coordinates come from :func:`machine_locations`; the
    outline is the coarse hand-drawn ``hulk/data/world_outline.json``."""
    fmt = figure_format(path)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("figures need matplotlib: pip install 'hulk[plot]'") from None
    from .._io import atomic_write
    cluster = cluster if cluster is not None else plans[0].cluster
    jobs = [j["job"] for j in plans[0].jobs]
    by_name = {p.planner: p for p in plans}
    maps = [by_name[n] for n in ("hulk", "search") if n in by_name]
    if not maps:
        maps = [p for p in plans if not p.sequential][:2] or plans[:1]
    fig = plt.figure(figsize=(16, 7.5))
    grid = fig.add_gridspec(2, 2, height_ratios=[0.75, 1], hspace=0.32, wspace=0.1)
    names, lat, lon = machine_locations(cluster)
    for k, p in enumerate(maps):
        _draw_map(fig.add_subplot(grid[0, k] if len(maps) > 1 else grid[0, :]), p, jobs, names, lat, lon)
    handles = [plt.Line2D([], [], marker="o", linestyle="", color=f"C{k}", label=name) for k, name in enumerate(jobs)]
    handles.append(plt.Line2D([], [], marker="o", linestyle="", color="#bbbbbb", label="idle"))
    fig.legend(handles=handles, loc="upper center", ncol=len(handles), fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, 0.985), title="machines by job", title_fontsize=8)
    ax_bar = fig.add_subplot(grid[1, :])
    width = 0.8 / len(plans)
    # Planners get shades of a sequential map, so that they do not look like the job colours.
    shades = plt.get_cmap("viridis")([0.05 + 0.9 * k / max(len(plans) - 1, 1) for k in range(len(plans))])
    legend = []
    for k, p in enumerate(plans):
        xs = [i + (k - (len(plans) - 1) / 2) * width for i in range(len(jobs))]
        comp = [j["compute_s"] if j["feasible"] else 0 for j in p.jobs]
        comm = [j["comm_s"] if j["feasible"] else 0 for j in p.jobs]
        ax_bar.bar(xs, comp, width, color=shades[k], edgecolor="white", linewidth=0.3)
        ax_bar.bar(xs, comm, width, bottom=comp, color=shades[k], alpha=0.45, hatch="//", edgecolor="white",
                   linewidth=0.3)
        legend.append(plt.Rectangle((0, 0), 1, 1, color=shades[k], label=p.title))
    legend.append(plt.Rectangle((0, 0), 1, 1, facecolor="#888888", label="compute (solid)"))
    legend.append(plt.Rectangle((0, 0), 1, 1, facecolor="#888888", alpha=0.45, hatch="//",
                                label="communication (hatched)"))
    ax_bar.set_xticks(range(len(jobs)), jobs)
    ax_bar.set_yscale("log")
    ax_bar.set_ylabel("seconds per iteration (log)")
    ax_bar.set_title("Per-iteration time per job and planner (missing bar: the planner cannot run the job)",
                     fontsize=9)
    ax_bar.legend(handles=legend, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.subplots_adjust(left=0.05, right=0.8, top=0.9, bottom=0.06)
    import io
    buf = io.BytesIO()
    fig.savefig(buf, dpi=110, format=fmt)
    plt.close(fig)
    atomic_write(path, buf.getvalue(), what=f"{fmt.upper()} figure")
