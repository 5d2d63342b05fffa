#!/usr/bin/env python
"""CPU benchmark of the hulk GNN engine, with scipy.sparse as an outside reference for SpMM.

For each graph size N (synthetic, undirected, average degree about 16) and each width H it times

* building ``hulk.Graph`` from numpy arrays (validation + CSR construction),
* one training epoch of ``hulk.GNN(num_classes=4, hidden=(H, H))``: the C++ epoch time from the
  history's ``seconds`` field (forward, loss, backward, Adam step and the evaluation forward the
  trainer runs every epoch), and the wall time of the whole ``fit(epochs=1)`` call from Python,
* one inference (``predict_proba``), wall time,
* the neighbour-sum SpMM ``A @ X`` with X [N, F], F = H: ``Graph.spmm`` with the default thread
  count and with one thread, and ``scipy.sparse.csr_matrix @ X`` (single-threaded) on the same
  adjacency, after checking that both give the same result.

Every figure is the median of ``--repeats`` timed runs after one untimed warm-up run; where one
run is slow (a single measurement over ``--budget`` seconds in total) fewer repeats are taken
and the table says so.

The result is printed and written as a section of benchmarks/RESULTS.md (between the markers
``<!-- bench_cpu:begin -->`` and ``<!-- bench_cpu:end -->``; the rest of the file is kept).

Run it from outside the repository checkout (or anywhere: the script's own folder is what
lands on sys.path) so that the installed package is imported::

    pip install . scipy
    cd /tmp && python /path/to/hulk/benchmarks/bench_cpu.py            # full: 1e3 .. 1e6 nodes
    cd /tmp && python /path/to/hulk/benchmarks/bench_cpu.py --quick    # smoke test, prints only

Timings come only from runs of this script; no test asserts on time.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import re
import resource
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

BEGIN = "<!-- bench_cpu:begin -->"
END = "<!-- bench_cpu:end -->"
DEFAULT_OUT = Path(__file__).resolve().parent / "RESULTS.md"
RESULTS_HEADER = """# Benchmark results

Latest figures of the scripts in `benchmarks/`. Each section below is written (and replaced on
the next run) by the script named in it, together with the exact command, the date and the
machine it ran on. Speed claims about hulk are made only from figures like these, which anyone
can repeat with the command given; the tests never assert on time. See `benchmarks/README.md`.
"""

NUM_FEATURES = 16       # node features F_in
NUM_EDGE_FEATURES = 4   # edge features Fe
NUM_CLASSES = 4
AVG_DEGREE = 16


# -- synthetic data ------------------------------------------------------------------------------

def synthetic_graph(n: int, avg_degree: int = AVG_DEGREE, seed: int = 0):
    """Uniform random undirected graph (Erdos-Renyi like) with about ``n * avg_degree / 2`` edges.

    Returns ``edges`` [M, 2] int64 (each undirected pair once, as (lo, hi), no self loops, no
    duplicates), node features [n, 16], edge features [M, 4] (float32 standard normals) and
    labels [n] in 0..3. Vectorised: pairs are drawn in bulk, self loops dropped and duplicates
    removed with np.unique on the pair code lo * n + hi (first draw wins, draw order kept).
    """
    rng = np.random.default_rng(seed)
    target = min(n * avg_degree // 2, n * (n - 1) // 2)
    codes = np.empty(0, np.int64)
    while len(codes) < target:
        draw = int((target - len(codes)) * 1.05) + 64
        u = rng.integers(0, n, draw, dtype=np.int64)
        v = rng.integers(0, n, draw, dtype=np.int64)
        keep = u != v
        lo, hi = np.minimum(u, v)[keep], np.maximum(u, v)[keep]
        allc = np.concatenate([codes, lo * n + hi])
        _, first = np.unique(allc, return_index=True)
        codes = allc[np.sort(first)]
    codes = codes[:target]
    edges = np.stack([codes // n, codes % n], axis=1)
    x = rng.standard_normal((n, NUM_FEATURES), dtype=np.float32)
    e = rng.standard_normal((len(edges), NUM_EDGE_FEATURES), dtype=np.float32)
    labels = rng.integers(0, NUM_CLASSES, n, dtype=np.int64)
    return edges, x, e, labels


def scipy_adjacency(n: int, edges: np.ndarray):
    """The in-adjacency of the undirected graph as a float32 scipy CSR (both directions)."""
    import scipy.sparse as sp
    rows = np.concatenate([edges[:, 1], edges[:, 0]])
    cols = np.concatenate([edges[:, 0], edges[:, 1]])
    data = np.ones(len(rows), np.float32)
    a = sp.csr_matrix((data, (rows, cols)), shape=(n, n), dtype=np.float32)
    a.sort_indices()
    return a


# -- timing --------------------------------------------------------------------------------------

class Timer:
    """Warm-up run, then the median of ``repeats`` timed runs (fewer if one run is slow).

    With ``inner=True`` ``fn`` returns the measurement itself in seconds (e.g. the C++ epoch
    time); otherwise the wall time of the call is used. The wall time is always recorded too.
    """

    def __init__(self, repeats: int, budget_s: float):
        self.repeats = repeats
        self.budget_s = budget_s

    def __call__(self, fn, inner: bool = False):
        t0 = time.perf_counter()
        fn()
        warm = time.perf_counter() - t0
        reps = self.repeats
        if warm * reps > self.budget_s:
            reps = max(1, int(self.budget_s // max(warm, 1e-9)))
        values, wall = [], []
        for _ in range(reps):
            t0 = time.perf_counter()
            r = fn()
            wall.append(time.perf_counter() - t0)
            values.append(float(r) if inner else wall[-1])
        return statistics.median(values), statistics.median(wall), reps


# -- machine description -------------------------------------------------------------------------

def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def total_memory_gb() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 1024 ** 2
    except OSError:
        pass
    return None


def blas_of(core_file: str) -> str:
    """The BLAS the extension is linked against, from ldd (hulk's CMake asks for OpenBLAS)."""
    try:
        out = subprocess.run(["ldd", core_file], capture_output=True, text=True, timeout=10).stdout
        libs = sorted({m.group(1) for m in re.finditer(r"^\s*(\S*(?:blas|lapack|mkl)\S*)", out, re.M | re.I)})
        if libs:
            return "linked against " + ", ".join(f"`{x}`" for x in libs)
    except (OSError, subprocess.SubprocessError):
        pass
    return "OpenBLAS requested at build time (CMake BLA_VENDOR=OpenBLAS); not visible to ldd (static?)"


def machine_lines(hulk, threads: int) -> list[str]:
    import scipy
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    mem = total_memory_gb()
    return [
        f"- CPU: {cpu_model()}, {os.cpu_count()} logical cores ({affinity} usable by this process)"
        + (f", {mem:.1f} GiB RAM" if mem else ""),
        f"- OS: {platform.platform()}; Python {platform.python_version()}",
        f"- hulk {hulk.__version__} (`{hulk.__file__}`), CPU build, OpenMP threads: {threads} "
        f"(default `hulk.get_num_threads()`); BLAS: {blas_of(hulk._core.__file__)}",
        f"- numpy {np.__version__}, scipy {scipy.__version__} (scipy.sparse CSR @ dense is single-threaded)",
    ]


# -- the benchmark ------------------------------------------------------------------------------

def bench_size(hulk, n: int, hiddens: list[int], timer: Timer, threads: int, seed: int, log) -> list[dict]:
    t0 = time.perf_counter()
    edges, x, e, labels = synthetic_graph(n, seed=seed)
    log(f"N={n}: generated {len(edges)} undirected edges in {time.perf_counter() - t0:.2f} s")

    holder = {}

    def build():
        holder.pop("g", None)  # free the previous graph first (memory at 1e6 nodes)
        holder["g"] = hulk.Graph(n, edges, x, e)

    build_s, _, build_reps = timer(build)
    g = holder["g"]
    a = scipy_adjacency(n, edges)
    nnz = int(a.nnz)
    assert nnz == 2 * g.num_edges, (nnz, g.num_edges)
    log(f"N={n}: hulk.Graph built in {build_s:.3f} s (median of {build_reps}); {nnz} directed entries")

    rows = []
    rng = np.random.default_rng(seed + 1)
    for h in hiddens:
        row = dict(n=n, nnz=nnz, h=h, build_s=build_s, build_reps=build_reps)

        # training: the first fit builds the model (and the scaler), so it is the warm-up of the timer
        model = hulk.GNN(num_classes=NUM_CLASSES, hidden=(h, h), seed=seed)
        epoch_s, fit_wall_s, reps = timer(lambda: model.fit(g, labels, epochs=1)[0]["seconds"], inner=True)
        row.update(epoch_ms=1e3 * epoch_s, fit_wall_ms=1e3 * fit_wall_s, train_reps=reps)
        log(f"N={n} H={h}: epoch {1e3 * epoch_s:.1f} ms (C++), fit(epochs=1) {1e3 * fit_wall_s:.1f} ms wall "
            f"[{reps} reps]")

        infer_s, _, reps = timer(lambda: model.predict_proba(g))
        row.update(infer_ms=1e3 * infer_s, infer_reps=reps)
        log(f"N={n} H={h}: predict_proba {1e3 * infer_s:.1f} ms [{reps} reps]")
        del model

        # SpMM, F = H
        X = rng.standard_normal((n, h), dtype=np.float32)
        ours = g.spmm(X)
        ref = a @ X
        if not np.allclose(ours, ref, rtol=1e-4, atol=1e-4):
            err = float(np.max(np.abs(ours - ref)))
            raise AssertionError(f"N={n} F={h}: Graph.spmm differs from scipy.sparse (max abs diff {err:g})")
        del ours, ref
        hulk.set_num_threads(threads)
        spmm_t, _, reps_t = timer(lambda: g.spmm(X))
        hulk.set_num_threads(1)
        try:
            spmm_1, _, reps_1 = timer(lambda: g.spmm(X))
        finally:
            hulk.set_num_threads(threads)
        scipy_s, _, reps_s = timer(lambda: a @ X)
        row.update(spmm_t_ms=1e3 * spmm_t, spmm_1_ms=1e3 * spmm_1, scipy_ms=1e3 * scipy_s,
                   spmm_reps=min(reps_t, reps_1, reps_s))
        log(f"N={n} F={h}: spmm {1e3 * spmm_t:.2f} ms ({threads} thr), {1e3 * spmm_1:.2f} ms (1 thr), "
            f"scipy {1e3 * scipy_s:.2f} ms; ratio scipy/ours {scipy_s / spmm_t:.2f}x ({threads} thr), "
            f"{scipy_s / spmm_1:.2f}x (1 thr)")
        del X
        row["load"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        rows.append(row)
    del holder, g, a
    return rows


def fmt_n(n: int) -> str:
    exp = int(round(np.log10(n))) if n > 0 else 0
    return f"1e{exp}" if 10 ** exp == n else str(n)


def fmt_ms(v: float) -> str:
    return f"{v:.3f}" if v < 1 else f"{v:.2f}" if v < 100 else f"{v:.0f}"


def table(rows: list[dict], threads: int, repeats: int) -> list[str]:
    head = ["N", "edges (directed entries)", "H = F", "graph build s", "train epoch ms", "fit(epochs=1) wall ms",
            "inference ms", f"SpMM ours ms ({threads} thr)", "SpMM ours ms (1 thr)", "SpMM scipy ms",
            f"scipy/ours ({threads} thr)", "scipy/ours (1 thr)", "load"]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---:" for _ in head) + "|"]
    for r in rows:
        cells = [fmt_n(r["n"]), f"{r['nnz']:,}", str(r["h"]), f"{r['build_s']:.3f}", fmt_ms(r["epoch_ms"]),
                 fmt_ms(r["fit_wall_ms"]), fmt_ms(r["infer_ms"]), fmt_ms(r["spmm_t_ms"]), fmt_ms(r["spmm_1_ms"]),
                 fmt_ms(r["scipy_ms"]), f"{r['scipy_ms'] / r['spmm_t_ms']:.2f}x",
                 f"{r['scipy_ms'] / r['spmm_1_ms']:.2f}x", f"{r['load']:.1f}"]
        out.append("| " + " | ".join(cells) + " |")
    reduced = [f"N={fmt_n(r['n'])} H={r['h']}: " + ", ".join(
        f"{what} {r[key]}" for what, key in (("build", "build_reps"), ("train", "train_reps"),
                                              ("inference", "infer_reps"), ("SpMM", "spmm_reps"))
        if r[key] < repeats) for r in rows if min(r["build_reps"], r["train_reps"], r["infer_reps"],
                                                  r["spmm_reps"]) < repeats]
    if reduced:
        out += ["", "Fewer repeats than asked (a single run exceeded the time budget): " + "; ".join(reduced) + "."]
    return out


def load_average() -> str:
    try:
        return "/".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "n/a"


def section(rows, args, command: str, cwd: str, machine: list[str], total_s: float, load_start: str) -> str:
    load_end = load_average()
    try:
        busy = max(float(load_start.split("/")[0]), float(load_end.split("/")[0])) > (os.cpu_count() or 1)
    except ValueError:
        busy = False
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2  # Linux: KiB
    lines = [
        BEGIN,
        "## CPU: training epoch, inference and SpMM (`benchmarks/bench_cpu.py`)",
        "",
        "Command (run from a directory outside the checkout, so the installed package is imported):",
        "",
        "```",
        f"cd {cwd} && {command}",
        "```",
        "",
        f"Date: {_dt.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}; whole run {total_s:.0f} s, "
        f"peak RSS {peak_gb:.1f} GiB. Load average (1/5/15 min) at the start {load_start}, at the end "
        f"{load_end}." + (" The load was above the core count: other processes shared the cores, so the figures, "
                          "the multi-threaded ones most, are slower and noisier than on an idle machine."
                          if busy else ""),
        "",
        "Machine:",
        "",
        *machine,
        "",
        f"Graphs: uniform random undirected graphs (seed {args.seed}), average degree {AVG_DEGREE} "
        f"(N * {AVG_DEGREE // 2} unique pairs, no self loops), {NUM_FEATURES} node features, "
        f"{NUM_EDGE_FEATURES} edge features, {NUM_CLASSES} classes, every node labelled and trained on. "
        f"Model: `hulk.GNN(num_classes={NUM_CLASSES}, hidden=(H, H))` = EdgePool(H) -> GCNConv(H) -> Linear, "
        "default options (sum pooling, no dropout, standardised features). Figures are medians of "
        f"{args.repeats} timed runs after one warm-up run.",
        "",
        *table(rows, args.threads, args.repeats),
        "",
        "Columns:",
        "",
        "- *edges (directed entries)*: non-zeros of the adjacency A (each undirected edge counted both ways).",
        "- *graph build s*: `hulk.Graph(N, edges, x, e)` from numpy arrays (input checks, duplicate detection, "
        "CSR construction); the same graph serves both rows of one N.",
        "- *train epoch ms*: the `seconds` field of the epoch's history entry, measured in C++: forward, loss, "
        "backward, Adam step and the evaluation forward the trainer runs after every step to report the accuracy "
        "(so two forwards and one backward). *fit(epochs=1) wall ms* adds what `fit` does once per call "
        "(input checks, feature standardisation and the per-graph edge-feature sums) and the Python overhead.",
        "- *inference ms*: `predict_proba(graph)` wall time (one forward, softmax, copy out).",
        "- *SpMM*: `A @ X` with X [N, F] float32, F = H. Ours is `Graph.spmm(X)` wall time (including the copy of "
        "X into the engine and of the result out), with the default OpenMP thread count and with "
        "`hulk.set_num_threads(1)`. scipy is `csr_matrix @ X` on a float32 CSR of the same adjacency, built "
        "outside the timing; scipy runs it on one thread. Both results were checked equal "
        "(`np.allclose`, rtol 1e-4) before timing. *scipy/ours* > 1 means hulk is faster.",
        "- *load*: the 1-minute load average when the row was done. This benchmark alone accounts for 1 to "
        f"{args.threads}; more means other processes were running and the row's figures are less reliable.",
        END,
    ]
    return "\n".join(lines) + "\n"


def write_section(path: Path, text: str) -> None:
    old = path.read_text() if path.exists() else RESULTS_HEADER
    if BEGIN in old and END in old:
        before, rest = old.split(BEGIN, 1)
        after = rest.split(END, 1)[1].lstrip("\n")
        new = before + text + ("\n" + after if after else "")
    else:
        new = old.rstrip("\n") + "\n\n" + text
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(new)


def parse_ints(s: str, what: str) -> list[int]:
    try:
        vals = [int(float(t)) for t in s.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what}: expected comma-separated numbers like 1e3,1e4, got {s!r}")
    if not vals or any(v < 2 for v in vals):
        raise argparse.ArgumentTypeError(f"{what}: values must be >= 2, got {s!r}")
    return vals


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=lambda s: parse_ints(s, "--sizes"), default=None,
                   help="node counts, comma separated (default 1e3,1e4,1e5,1e6; 1e3,1e4 with --quick)")
    p.add_argument("--hidden", type=lambda s: parse_ints(s, "--hidden"), default=[64, 256],
                   help="hidden widths H, also the SpMM feature widths F (default 64,256)")
    p.add_argument("--repeats", type=int, default=None, help="timed runs per figure (default 5; 3 with --quick)")
    p.add_argument("--threads", type=int, default=None,
                   help="OpenMP threads for the multi-threaded figures (default: hulk.get_num_threads())")
    p.add_argument("--budget", type=float, default=120.0,
                   help="seconds one figure's timed runs may take in total before repeats are reduced (default 120)")
    p.add_argument("--seed", type=int, default=0, help="seed of the synthetic graphs and models (default 0)")
    p.add_argument("--out", type=Path, default=None,
                   help=f"markdown file to write the section into (default {DEFAULT_OUT}; "
                        "with --quick nothing is written unless --out is given)")
    p.add_argument("--quick", action="store_true", help="small sizes only (1e3,1e4): a smoke test")
    args = p.parse_args(argv)
    if args.sizes is None:
        args.sizes = [1000, 10000] if args.quick else [1000, 10000, 100000, 1000000]
    if args.repeats is None:
        args.repeats = 3 if args.quick else 5
    if args.repeats < 1:
        p.error("--repeats must be >= 1")
    out = args.out if args.out is not None else (None if args.quick else DEFAULT_OUT)

    try:
        import scipy.sparse  # noqa: F401
    except ImportError:
        p.error("scipy is needed for the reference SpMM: pip install scipy")
    import hulk

    if args.threads is None:
        args.threads = hulk.get_num_threads()
    if args.threads < 1:
        p.error("--threads must be >= 1")
    hulk.set_num_threads(args.threads)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    log(f"hulk {hulk.__version__} from {hulk.__file__}; {args.threads} threads; sizes {args.sizes}; "
        f"hidden {args.hidden}; {args.repeats} repeats")
    machine = machine_lines(hulk, args.threads)
    load_start = load_average()
    t0 = time.perf_counter()
    timer = Timer(args.repeats, args.budget)
    rows = []
    for n in args.sizes:
        rows += bench_size(hulk, n, args.hidden, timer, args.threads, args.seed, log)
    total = time.perf_counter() - t0

    command = "python " + shlex.join(sys.argv if argv is None else [sys.argv[0], *argv])
    text = section(rows, args, command, os.getcwd(), machine, total, load_start)
    print(text)
    if out is not None:
        write_section(out, text)
        log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
