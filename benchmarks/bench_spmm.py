#!/usr/bin/env python
"""CPU SpMM: ``hulk.Graph.spmm`` against ``torch.sparse`` CSR @ dense, on the same threads.

For each graph (uniform random, undirected, average degree 16, as in bench_cpu.py) and width F
it times ``A @ X`` (X [N, F] float32) both ways, interleaved (hulk, torch, hulk, torch, ...) so
that both see the same machine load, after checking that the two results agree. Each figure is
the median of ``--repeats`` wall-clock runs after a warm-up. Both sides allocate their result
on every call, as a user's call does.

The byte model beside each row (what the product must move at least):

* compulsory: X read once (4 N F), the result written once (4 N F), the CSR's row pointers
  and column indices read once (8 (N + 1) + 4 nnz);
* gathered: 4 nnz F, the bytes of every neighbour row added (each row of X is read deg times;
  caches serve part of that);
* the machine's copy bandwidth: the median of ``torch.Tensor.copy_`` over 1 GiB with the same
  threads, counting bytes read plus bytes written.

The table gives the compulsory bytes over the time (GB/s) and its share of the copy bandwidth:
an SpMM that reached the copy bandwidth on its compulsory bytes could not be faster without
compressing the data.

    cd /tmp && python /path/to/hulk/benchmarks/bench_spmm.py            # 1e4 .. 1e6 nodes, F 16..256
    cd /tmp && python /path/to/hulk/benchmarks/bench_spmm.py --quick    # smoke test, prints only

Needs torch (``pip install torch``; CPU wheels suffice). Writes its section of
benchmarks/RESULTS.md unless ``--quick`` or ``--no-write``. No test asserts on time.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cpu import cpu_model, load_average, synthetic_graph, total_memory_gb  # noqa: E402
from results_file import write_section  # noqa: E402

BEGIN = "<!-- bench_spmm:begin -->"
END = "<!-- bench_spmm:end -->"
DEFAULT_OUT = Path(__file__).resolve().parent / "RESULTS.md"


def copy_bandwidth_gbs(torch, repeats: int = 5) -> float:
    """Bytes read + written per second by torch's parallel copy of 1 GiB (float32)."""
    src = torch.ones(1 << 28)
    dst = torch.empty_like(src)
    dst.copy_(src)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        dst.copy_(src)
        times.append(time.perf_counter() - t)
    return 2 * src.numel() * 4 / statistics.median(times) / 1e9


def interleaved(fns, repeats: int) -> list[float]:
    """Median wall time of each function, the functions run in turn, after one warm-up each."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - t)
    return [statistics.median(t) for t in times]


def bench_row(hulk, torch, n: int, widths: list[int], repeats: int, seed: int) -> list[dict]:
    edges, _, _, _ = synthetic_graph(n, seed=seed)
    g = hulk.Graph(n, edges)
    indptr, indices, _ = g.core.in_csr()
    a = torch.sparse_csr_tensor(torch.from_numpy(indptr.astype(np.int64)), torch.from_numpy(indices.astype(np.int64)),
                                torch.ones(len(indices)), size=(n, n))
    nnz = len(indices)
    rng = np.random.default_rng(seed + 1)
    rows = []
    for f in widths:
        x = rng.standard_normal((n, f), dtype=np.float32)
        xt = torch.from_numpy(x)
        ours, theirs = g.spmm(x), (a @ xt).numpy()
        if not np.allclose(ours, theirs, rtol=1e-4, atol=1e-4):
            raise AssertionError(f"N={n} F={f}: hulk and torch disagree (max diff {np.abs(ours - theirs).max():.3g})")
        t_hulk, t_torch = interleaved([lambda: g.spmm(x), lambda: a @ xt], repeats)
        compulsory = 8 * n * f + 8 * (n + 1) + 4 * nnz
        rows.append({"n": n, "nnz": nnz, "f": f, "hulk_ms": t_hulk * 1e3, "torch_ms": t_torch * 1e3,
                     "compulsory_mb": compulsory / 1e6, "gathered_mb": 4 * nnz * f / 1e6,
                     "hulk_gbs": compulsory / t_hulk / 1e9, "load": os.getloadavg()[0]})
        print(f"N={n:>8} F={f:>4}  hulk {t_hulk * 1e3:9.2f} ms  torch {t_torch * 1e3:9.2f} ms  "
              f"torch/hulk {t_torch / t_hulk:5.2f}x", flush=True)
    return rows


def fmt_n(n: int) -> str:
    e = int(round(np.log10(n)))
    return f"1e{e}" if 10 ** e == n else f"{n:,}"


def section(rows, copy_gbs: float, args, threads: int, hulk, torch, total_s: float, load_start: str) -> list[str]:
    command = "cd /tmp && python " + shlex.join([str(Path(__file__).resolve())] + (args.argv or []))
    lines = [BEGIN, "## CPU: SpMM against torch.sparse (`benchmarks/bench_spmm.py`)", "", "Command:", "", "```",
             command, "```", "",
             f"Date: {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC; whole run {total_s:.0f} s. "
             f"Load average (1/5/15 min) at the start {load_start}, at the end {load_average()}.", "",
             "Machine:", "",
             f"- CPU: {cpu_model()}, {os.cpu_count()} logical cores; {total_memory_gb() or 0:.1f} GiB RAM",
             f"- OS: {platform.platform()}; Python {platform.python_version()}",
             f"- hulk {hulk.__version__}, torch {torch.__version__}; both on {threads} threads "
             f"(`hulk.set_num_threads`, `torch.set_num_threads`), OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}",
             f"- copy bandwidth (torch `copy_` of 1 GiB, read + write): {copy_gbs:.1f} GB/s", "",
             "Graphs: uniform random undirected, average degree 16 (as bench_cpu.py). `A @ X`, X [N, F] float32, "
             f"wall time, median of {args.repeats} interleaved runs after a warm-up; results checked equal first.", "",
             "| N | nnz | F | hulk ms | torch ms | torch/hulk | compulsory MB | gathered MB | hulk GB/s (compulsory) "
             "| share of copy bandwidth | load |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {fmt_n(r['n'])} | {r['nnz']:,} | {r['f']} | {r['hulk_ms']:.2f} | {r['torch_ms']:.2f} | "
                     f"{r['torch_ms'] / r['hulk_ms']:.2f}x | {r['compulsory_mb']:.0f} | {r['gathered_mb']:.0f} | "
                     f"{r['hulk_gbs']:.1f} | {r['hulk_gbs'] / copy_gbs:.0%} | {r['load']:.1f} |")
    ratios = [r["torch_ms"] / r["hulk_ms"] for r in rows]
    lines += ["", f"torch/hulk over the rows: min {min(ratios):.2f}x, median {statistics.median(ratios):.2f}x, "
              f"max {max(ratios):.2f}x (> 1: hulk is faster).", "",
              "*compulsory MB*: X read once, the result written once, the CSR read once. *gathered MB*: every "
              "neighbour row read (caches serve part). *share of copy bandwidth*: compulsory bytes per second "
              "over the copy bandwidth above. *load*: the 1-minute load average after the row; above the core "
              "count, other processes shared the machine and the row is less reliable.", END]
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="10000,100000,1000000")
    p.add_argument("--widths", default="16,64,256")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--threads", type=int, default=0, help="threads for both (default: hulk's default)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="1e4 nodes only, 3 repeats, print only")
    p.add_argument("--no-write", action="store_true")
    p.add_argument("--out", default=str(DEFAULT_OUT))
    args = p.parse_args(argv)
    args.argv = argv if argv is not None else sys.argv[1:]
    # torch and hulk each bring an OpenMP runtime; interleaved in one process on few cores, the
    # idle one's spinning workers slow the other (hulk's 1e4 x 256 product took 7.2 ms right after
    # torch calls, 1.4 ms alone). Passive waiting, for both, unless the caller set a policy.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import torch
    except ImportError:
        print("bench_spmm needs torch: pip install torch", file=sys.stderr)
        return 2
    import hulk
    threads = args.threads or hulk.get_num_threads()
    hulk.set_num_threads(threads)
    torch.set_num_threads(threads)
    sizes = [10_000] if args.quick else [int(float(s)) for s in args.sizes.split(",")]
    widths = [int(w) for w in args.widths.split(",")]
    repeats = 3 if args.quick else args.repeats
    args.repeats = repeats
    t0, load_start = time.perf_counter(), load_average()
    copy_gbs = copy_bandwidth_gbs(torch)
    print(f"copy bandwidth {copy_gbs:.1f} GB/s; {threads} threads")
    rows = []
    for n in sizes:
        rows += bench_row(hulk, torch, n, widths, repeats, args.seed)
    lines = section(rows, copy_gbs, args, threads, hulk, torch, time.perf_counter() - t0, load_start)
    print("\n".join(lines[1:-1]))
    if not (args.quick or args.no_write):
        write_section(args.out, BEGIN, END, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
