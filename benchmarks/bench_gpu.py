#!/usr/bin/env python
"""GPU benchmark of the hulk engine's CUDA backend, side by side with cuSPARSE, PyTorch and
PyTorch Geometric in one run (benchmarks/gpu_check.sh runs it on a lent GPU).

For each synthetic graph (N nodes, directed, in-degree 16 "uniform" or power-law sources
"powerlaw", deduplicated, seeded) and width F it measures, as medians of timed repeats after
warm-up runs, each repeat ending in a device synchronisation:

* SpMM ``A @ X`` (X [N, F] float32, A the unweighted in-adjacency): hulk's kernels, hulk's cached
  cuSPARSE path, and ``torch.sparse.mm`` on the same CSR; and hulk's SpMM bandwidth as a fraction
  of a measured device-to-device copy, counting the bytes a row-split SpMM moves: the CSR (int64
  offsets, int32 indices), one row of X gathered per entry, the output written once (the
  "compulsory" fraction beside it counts X read only once, the floor no SpMM can go below);
* GCN layer forward + backward (input gradient included): hulk's GCNConv against
  ``torch_geometric.nn.GCNConv(F, F, cached=True)`` (normalisation cached), same N, F;
* EdgePool forward + backward (paper eq. 4, sum pooling, 4 edge features): hulk's fast path
  against the per-edge PyG equivalent (a MessagePassing whose message is
  ``Linear([x_i || x_j || e_ij])``), with the peak device memory each allocates;
* one training epoch of ``hulk.GNN(hidden=(F, F))`` on the GPU against the same on the CPU
  (1e6 nodes and below; the CPU epoch is skipped above ``--cpu-epoch-max``).

It writes a section of benchmarks/RESULTS.md (markers ``<!-- bench_gpu:begin/end -->``) with the
GPU's name, the command and the date, and prints a summary table of ratios against the issue's
targets last.

Made to lose nothing when killed or short of memory (benchmarks/gpu_check.sh runs it in parts, each
one device command of at most 10 minutes):

* every finished row is appended at once, as one JSON line, to ``--rows`` (default
  ``$OUT/bench_gpu_rows.jsonl`` where OUT is set, else ``benchmarks/out/bench_gpu_rows.jsonl``; with
  ``--quick`` only where ``--rows`` is given);
  ``--from-rows a.jsonl,b.jsonl --out RESULTS.md`` writes the section from such files (the parts of
  a run made in several commands) without measuring anything;
* before each baseline (torch.sparse, PyG GCNConv, the per-edge PyG EdgePool) its peak device
  memory is estimated (``baseline_bytes``) and checked against the device's free memory; a case that
  would not fit is skipped, and the row says which and why (an out-of-memory error that still
  happens is caught and recorded the same way); ``--memory-plan`` prints those estimates for
  ``--sizes``/``--widths`` against ``--device-gib`` without a device;
* ``--model-only`` prints the model of the expected figures (benchmarks/gpu_model.py: compulsory
  bytes, bytes moved, lower-bound time at a copy bandwidth) without a device; the written section
  has the same table at the measured bandwidth with the measured times beside it;
* with torch on the GPU the graphs and features are generated on the device (torch.Generator on
  cuda) rather than by numpy on the host. Without a GPU it runs on the SIMT build's simulator only with ``--quick`` (a smoke
test of the script: tiny graphs, no timings worth reading, nothing written unless ``--out``).

    cd /tmp && python /path/to/hulk/benchmarks/bench_gpu.py                 # full run
    cd /tmp && python /path/to/hulk/benchmarks/bench_gpu.py --sizes 1e4,1e5 # fewer sizes
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shlex
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_model import model_table  # noqa: E402
from results_file import write_section  # noqa: E402

BEGIN = "<!-- bench_gpu:begin -->"
END = "<!-- bench_gpu:end -->"
DEFAULT_OUT = Path(__file__).resolve().parent / "RESULTS.md"
DEGREE = 16
EDGE_FEATURES = 4
# --model-only's default copy bandwidth: the H100 SXM's HBM3 peak, 3.35 TB/s
# (https://www.nvidia.com/en-us/data-center/h100/); a measured copy reaches less, so bounds at
# the peak are lower still. A device run uses the bandwidth it measures.
H100_PEAK_BW = 3.35e12


def make_edges_torch(torch, dev, n: int, kind: str, seed: int):
    """make_edges on the torch device (same distribution, another random stream): (src, dst) int64
    tensors on ``dev``, sorted by (src, dst)."""
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed)
    dst = torch.arange(n, device=dev, dtype=torch.int64).repeat_interleave(DEGREE)
    if kind == "uniform":
        src = torch.randint(0, n, (dst.numel(),), generator=gen, device=dev, dtype=torch.int64)
    else:
        src = torch.clamp((n * torch.rand(dst.numel(), generator=gen, device=dev, dtype=torch.float64) ** 4)
                          .to(torch.int64), max=n - 1)
        src = torch.randperm(n, generator=gen, device=dev)[src] if n > 1 else src
    keep = src != dst
    key = torch.unique(src[keep] * n + dst[keep])
    del src, dst, keep
    return key // n, key % n


def make_edges(n: int, kind: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Directed edges src -> dst, DEGREE per target before deduplication, no self loops."""
    rng = np.random.default_rng(seed)
    dst = np.repeat(np.arange(n, dtype=np.int64), DEGREE)
    if kind == "uniform":
        src = rng.integers(0, n, size=dst.size, dtype=np.int64)
    else:  # power law: P(source rank r) ~ r^-0.75 after cubing a uniform draw; node 0 is a hub
        src = np.minimum((n * rng.random(dst.size) ** 4).astype(np.int64), n - 1)
        src = rng.permutation(n)[src] if n > 1 else src
    keep = src != dst
    key = np.unique(src[keep] * n + dst[keep])
    return key // n, key % n


def timed(fn, repeats: int, warmup: int, sync) -> float:
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def torch_parts():
    """torch, torch_geometric and the per-edge EdgePool module, or None where missing."""
    try:
        import torch
    except ImportError:
        return None, None, None
    try:
        import torch_geometric
        from torch_geometric.nn import GCNConv, MessagePassing
    except ImportError:
        return torch, None, None

    class PerEdgePool(MessagePassing):
        """EdgePool as a PyG user writes it: one message Linear([x_i || x_j || e_ij]) per edge."""

        def __init__(self, f, fe, o):
            super().__init__(aggr="add")
            self.lin = torch.nn.Linear(2 * f + fe, o)

        def forward(self, x, edge_index, edge_attr):
            return self.propagate(edge_index, x=x, edge_attr=edge_attr)

        def message(self, x_i, x_j, edge_attr):
            return self.lin(torch.cat([x_i, x_j, edge_attr], dim=-1))

    return torch, (torch_geometric, GCNConv), PerEdgePool


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1e4,1e5,1e6,4e6")
    ap.add_argument("--kinds", default="uniform,powerlaw")
    ap.add_argument("--widths", default="64,256")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=3, help="timed epochs per device (median)")
    ap.add_argument("--cpu-epoch-max", type=float, default=1e6, help="largest N with a CPU epoch")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="smoke test: 2e3 nodes, F=32, few repeats")
    ap.add_argument("--out", default=None, help="RESULTS.md to write (default: benchmarks/RESULTS.md; "
                                                "nothing with --quick unless given)")
    ap.add_argument("--rows", default=None, help="JSON-lines file each finished row is appended to "
                                                 "(default $OUT/bench_gpu_rows.jsonl, else benchmarks/out/)")
    ap.add_argument("--from-rows", default=None, help="comma-separated row files: write the section from "
                                                      "them (--out) and measure nothing")
    ap.add_argument("--allow-simulated", action="store_true",
                    help="run any sizes on the SIMT build's simulator (gpu_check.sh --dry-run)")
    ap.add_argument("--memory-plan", action="store_true", help="print the baselines' estimated peak memory "
                                                               "for --sizes/--widths and exit")
    ap.add_argument("--device-gib", type=float, default=80.0, help="device memory for --memory-plan")
    ap.add_argument("--model-only", action="store_true", help="print the model of the expected figures "
                    "(benchmarks/gpu_model.py: compulsory and moved bytes, lower-bound times) for --sizes/--widths/"
                    "--kinds at --copy-gbps, nnz taken as 16 N, without a device")
    ap.add_argument("--copy-gbps", type=float, default=H100_PEAK_BW / 1e9,
                    help="copy bandwidth (GB/s read + written) for --model-only (default: H100 SXM peak)")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes, args.widths, args.repeats, args.warmup, args.epochs = "2e3", "32", 2, 1, 1
    return args


def default_rows_path() -> Path:
    base = Path(os.environ["OUT"]) if os.environ.get("OUT") else Path(__file__).resolve().parent / "out"
    return base / "bench_gpu_rows.jsonl"


def append_row(path: Path, row: dict) -> None:
    """One JSON line, flushed to disk at once: a killed run keeps every finished row."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fh.write(json.dumps(row) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def read_rows(paths: str) -> list:
    rows = []
    for p in paths.split(","):
        for line in Path(p).read_text().splitlines():
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:  # a line cut short by a kill
                    print(f"bench_gpu: {p}: skipped an incomplete line", file=sys.stderr)
    return rows


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.memory_plan:
        return memory_plan(args)
    if args.model_only:
        cases = [(k, int(float(n)), DEGREE * int(float(n)), int(w)) for k in args.kinds.split(",")
                 for n in args.sizes.split(",") for w in args.widths.split(",")]
        print(f"model of the expected figures at {args.copy_gbps:.0f} GB/s copy bandwidth, nnz = {DEGREE} N "
              "(benchmarks/gpu_model.py says what is counted)")
        print("\n".join(model_table(cases, args.copy_gbps * 1e9)))
        return 0
    if args.from_rows:
        rows = read_rows(args.from_rows)
        if not rows:
            print("bench_gpu: no rows in " + args.from_rows, file=sys.stderr)
            return 1
        meta = rows[0]["meta"]
        lines = report(rows, meta["gpu"], meta["copy_bw"], argparse.Namespace(**meta["args"]), meta["cmd"])
        print("\n".join(lines[1:-1]))
        write_section(args.out or DEFAULT_OUT, BEGIN, END, lines)
        return 0

    import hulk
    from hulk import _core

    on_gpu = hulk.cuda_available()
    if not on_gpu and not (hulk.cuda_simulated() and (args.quick or args.allow_simulated)):
        print("bench_gpu: no GPU is usable here (" + hulk.cuda_unavailable_reason() + "); on the SIMT build "
              "only --quick runs, as a smoke test of this script", file=sys.stderr)
        return 2
    torch, pyg, PerEdgePool = torch_parts() if on_gpu else (None, None, None)
    dev = torch.device("cuda") if torch is not None else None
    sync_torch = (lambda: torch.cuda.synchronize()) if torch is not None else (lambda: None)
    gpu_name = torch.cuda.get_device_name(0) if torch is not None else ("simulated (SIMT build)" if not on_gpu else "GPU")

    sizes = [int(float(s)) for s in args.sizes.split(",")]
    widths = [int(w) for w in args.widths.split(",")]
    kinds = args.kinds.split(",")
    copy_bw = _core.bench.copy_bandwidth(256 << 20 if on_gpu else 1 << 20, repeats=args.repeats)
    print(f"device: {gpu_name}; device-to-device copy {copy_bw / 1e9:.0f} GB/s (read + written)", flush=True)
    rows_path = Path(args.rows) if args.rows else (None if args.quick else default_rows_path())
    cmd = "python benchmarks/bench_gpu.py " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    meta = dict(gpu=gpu_name, copy_bw=copy_bw, cmd=cmd, date=_dt.date.today().isoformat(),
                args=dict(repeats=args.repeats, warmup=args.warmup), blas=dict(_core.engine.blas_info()))
    if rows_path:
        print(f"rows are appended to {rows_path} as they finish", flush=True)

    rows = []  # dicts, one per (kind, n, f)
    for kind in kinds:
        for n in sizes:
            t0 = time.perf_counter()
            g, src, dst, t_ei, t_csr = bench_graph(hulk, n, kind, args.seed, torch, dev)
            nnz = src.size
            print(f"\n{kind} N={n:.0e} nnz={nnz:.2e} (built in {time.perf_counter() - t0:.1f} s, "
                  f"generated on {'the device' if torch is not None else 'the host'})", flush=True)
            del src, dst
            for f in widths:
                r = dict(kind=kind, n=n, nnz=nnz, f=f)
                guarded_hulk("hulk ops", r, lambda: measure_hulk_ops(_core, r, g, f, args, on_gpu, copy_bw))
                _core.engine.cuda_empty_cache()  # hulk's cached blocks would count as used in torch's check
                if torch is not None:
                    measure_torch(torch, pyg, PerEdgePool, dev, sync_torch, r, t_ei, t_csr, f, args)
                if n <= 1_000_000 and kind == "uniform":
                    guarded_hulk("epochs", r, lambda: measure_epochs(hulk, r, g, n, f, args))
                    _core.engine.cuda_empty_cache()
                rows.append(dict(r, meta=meta))  # the live report reads the BLAS from the meta, as --from-rows does
                if rows_path:
                    append_row(rows_path, rows[-1])
                print("  " + "  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                       for k, v in r.items() if k not in ("kind", "n", "nnz", "f")), flush=True)
            del g, t_ei, t_csr
            _core.engine.cuda_empty_cache()
            if torch is not None:
                torch.cuda.empty_cache()

    lines = report(rows, gpu_name, copy_bw, args, cmd)
    print("\n".join(lines[1:-1]))
    out = args.out or (None if args.quick else DEFAULT_OUT)
    if out:
        write_section(out, BEGIN, END, lines)
    return 0


def guarded_hulk(what, r, fn) -> None:
    """Runs one of hulk's measurements; running out of memory is recorded in the row, not fatal."""
    try:
        fn()
    except (MemoryError, RuntimeError) as exc:
        if "memory" not in str(exc).lower():
            raise
        reason = f"{what}: out of memory ({str(exc).splitlines()[0][:200]})"
        r.setdefault("skipped", []).append(reason)
        print("  " + reason, flush=True)


def bench_graph(hulk, n, kind, seed, torch=None, dev=None):
    """(hulk.Graph with 8 node and EDGE_FEATURES edge features, src, dst, torch edge index, torch
    CSR adjacency) of a generated graph. With torch, edges and features are drawn on ``dev`` and
    the torch tensors stay there (hulk.Graph takes host arrays: one copy down); without, by numpy
    on the host and the last two are None."""
    if torch is None:
        src, dst = make_edges(n, kind, seed)
        rng = np.random.default_rng(seed + 1)
        x = rng.standard_normal((n, 8)).astype(np.float32)
        e = rng.standard_normal((src.size, EDGE_FEATURES)).astype(np.float32)
        t_ei = t_csr = None
    else:
        t_src, t_dst = make_edges_torch(torch, dev, n, kind, seed)
        gen = torch.Generator(device=dev)
        gen.manual_seed(seed + 1)
        x = torch.randn(n, 8, generator=gen, device=dev).cpu().numpy()
        e = torch.randn(t_src.numel(), EDGE_FEATURES, generator=gen, device=dev).cpu().numpy()
        t_ei, t_csr = torch_graph(torch, dev, n, t_src, t_dst)
        src, dst = t_src.cpu().numpy(), t_dst.cpu().numpy()
        del t_src, t_dst
    g = hulk.Graph(n, np.stack([src, dst], 1), node_features=x, edge_features=e, directed=True)
    return g, src, dst, t_ei, t_csr


def torch_graph(torch, dev, n, src, dst):
    """(edge index, CSR in-adjacency) of the graph, built on the torch device from device tensors."""
    t_ei = torch.stack([src, dst])
    order = torch.argsort(dst * n + src)
    indptr = torch.zeros(n + 1, dtype=torch.int64, device=dev)
    indptr[1:] = torch.cumsum(torch.bincount(dst, minlength=n), 0)
    t_csr = torch.sparse_csr_tensor(indptr, src[order], torch.ones(src.numel(), device=dev), size=(n, n))
    return t_ei, t_csr


def baseline_bytes(n: int, nnz: int, f: int) -> dict:
    """Estimated peak device memory (bytes) of each baseline at N = n, nnz edges, width f, over what
    is already allocated (graph, CSR). Float32 tensors; upper estimates, from what each one
    materialises:
    * torch_spmm: X and the output, [N, F] each;
    * pyg_gcn (GCNConv, cached, forward + backward): E' = nnz + N edges with self loops; the
      gathered messages x_j and their normalised copy, [E', F] each, and the gradient of the gather
      in backward, [E', F] once more; the linear's input, output and gradients, [N, F] x 4;
    * pyg_edge_pool (message Linear([x_i || x_j || e])): the concatenation [E, 2F + 4] (saved for
      the weight gradient) and its gradient, the messages [E, F] and their gradient, and [N, F] x 4
      (x_i and x_j, [E, F] each, are gone once concatenated)."""
    e2 = nnz + n
    return {"torch_spmm": 4 * 2 * n * f,
            "pyg_gcn": 4 * (3 * e2 * f + 4 * n * f) + 8 * 2 * e2,
            "pyg_edge_pool": 4 * (2 * nnz * (2 * f + EDGE_FEATURES) + 2 * nnz * f + 4 * n * f)}


def fits(torch, r, what, need, margin=0.9) -> bool:
    """True when ``need`` bytes fit in the device's free memory; else records the skip in ``r``."""
    torch.cuda.empty_cache()
    free, _total = torch.cuda.mem_get_info()
    if need <= margin * free:
        return True
    reason = f"{what} skipped: needs about {need / 2**30:.1f} GiB, {free / 2**30:.1f} GiB free"
    r.setdefault("skipped", []).append(reason)
    print("  " + reason, flush=True)
    return False


def memory_plan(args) -> int:
    """--memory-plan: the estimates of baseline_bytes for the configured sizes, no device needed."""
    dev = args.device_gib * 2**30
    print(f"estimated peak memory of the baselines (GiB) against {args.device_gib:.0f} GiB "
          f"(skipped above {0.9 * args.device_gib:.0f} GiB free); nnz taken as {DEGREE} N")
    for n in (int(float(s)) for s in args.sizes.split(",")):
        for f in (int(w) for w in args.widths.split(",")):
            est = baseline_bytes(n, DEGREE * n, f)
            print(f"  N={n:.0e} F={f}: " + ", ".join(
                f"{k} {v / 2**30:.1f}{'' if v <= 0.9 * dev else ' SKIP'}" for k, v in est.items()))
    return 0


def measure_hulk_ops(_core, r, g, f, args, on_gpu, copy_bw) -> None:
    """hulk's SpMM (and cuSPARSE's), GCN layer and EdgePool layer, into row ``r``."""
    n, nnz = r["n"], r["nnz"]
    r["spmm"] = _core.bench.spmm(g.core, f, False, "cuda", "custom", args.repeats, args.warmup)
    if on_gpu:
        r["spmm_cusparse"] = _core.bench.spmm(g.core, f, False, "cuda", "cusparse", args.repeats,
                                              args.warmup)
    csr_bytes = 8 * (n + 1) + 4 * nnz
    r["spmm_bw_fraction"] = (csr_bytes + 4 * f * (nnz + n)) / r["spmm"] / copy_bw
    r["spmm_min_bw_fraction"] = (csr_bytes + 2 * 4 * n * f) / r["spmm"] / copy_bw
    r["gcn"] = _core.bench.gcn_layer(g.core, f, f, "cuda", "custom", args.repeats, args.warmup)["seconds"]
    ep = _core.bench.edge_pool(g.core, f, EDGE_FEATURES, f, False, "cuda", args.repeats, args.warmup)
    r["edge_pool"], r["edge_pool_bytes"] = ep["seconds"], ep["peak_bytes"]


def measure_torch(torch, pyg, PerEdgePool, dev, sync_torch, r, t_ei, t_csr, f, args) -> None:
    """torch.sparse SpMM and, with PyG, GCNConv and the per-edge EdgePool, into row ``r``."""
    n, nnz = r["n"], r["nnz"]
    need = baseline_bytes(n, nnz, f)

    def guarded(what, fn):
        """Runs baseline ``what`` if its estimated peak fits; an OOM that still happens is recorded."""
        if not fits(torch, r, what, need[what]):
            return
        try:
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            r[what] = fn()
            r[what + "_bytes"] = torch.cuda.max_memory_allocated() - base
        except torch.cuda.OutOfMemoryError:
            reason = f"{what}: out of device memory (estimated {need[what] / 2**30:.1f} GiB)"
            r.setdefault("skipped", []).append(reason)
            print("  " + reason, flush=True)
        torch.cuda.empty_cache()

    def spmm():
        X = torch.randn(n, f, device=dev)
        return timed(lambda: torch.sparse.mm(t_csr, X), args.repeats, args.warmup, sync_torch)

    guarded("torch_spmm", spmm)
    if pyg is None:
        return
    dout = torch.randn(n, f, device=dev)
    Xg = torch.randn(n, f, device=dev, requires_grad=True)

    def gcn():
        conv = pyg[1](f, f, cached=True).to(dev)
        return timed(lambda: conv(Xg, t_ei).backward(dout), args.repeats, args.warmup, sync_torch)

    guarded("pyg_gcn", gcn)

    def pool():
        layer = PerEdgePool(f, EDGE_FEATURES, f).to(dev)
        ea = torch.randn(nnz, EDGE_FEATURES, device=dev)
        return timed(lambda: layer(Xg, t_ei, ea).backward(dout), args.repeats, args.warmup, sync_torch)

    guarded("pyg_edge_pool", pool)
    del Xg, dout
    torch.cuda.empty_cache()


def measure_epochs(hulk, r, g, n, f, args) -> None:
    """Median seconds of a training epoch on the GPU and (up to --cpu-epoch-max nodes) the CPU."""
    labels = np.random.default_rng(3).integers(0, 4, n)
    for device in ("cuda", "cpu"):
        if device == "cpu" and n > args.cpu_epoch_max:
            continue
        model = hulk.GNN(num_classes=4, hidden=(f, f), device=device)
        hist = model.fit(g, labels, epochs=args.epochs + 1)
        r[f"epoch_{device}"] = statistics.median(h["seconds"] for h in hist[1:])


def ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "n/a"


def cpu_baseline_fair(row) -> bool:
    """Whether the row's CPU epoch ran as hulk means it to: the BLAS on one thread inside hulk's
    OpenMP threads (csrc/ops/cpu/blas.h). Rows without the BLAS recorded (the first H200 run,
    2026-11-26, whose BLAS ran 16 threads inside each of hulk's 16) do not count."""
    blas = row.get("meta", {}).get("blas") or {}
    return blas.get("vendor") == "openblas" and blas.get("threads") == 1


def report(rows, gpu_name, copy_bw, args, cmd) -> list[str]:
    cmds = sorted({r["meta"]["cmd"] for r in rows if "meta" in r}) or [cmd]
    cmd = "`, `".join(cmds)
    lines = [BEGIN, "## GPU backend (`benchmarks/bench_gpu.py`)", "",
             f"Command: `{cmd}`. Date: {_dt.date.today().isoformat()}. Device: {gpu_name}; measured "
             f"device-to-device copy {copy_bw / 1e9:.0f} GB/s. Medians of {args.repeats} timed runs after "
             f"{args.warmup} warm-ups; ratios are the other system's time over hulk's (above 1: hulk is faster).",
             "",
             "| graph | N | nnz | F | SpMM ms | vs cuSPARSE | vs torch.sparse | SpMM / copy bandwidth (compulsory) "
             "| GCN fwd+bwd ms | vs PyG GCNConv | EdgePool fwd+bwd ms | vs PyG per-edge | EdgePool MB (PyG MB) "
             "| epoch GPU ms | GPU vs CPU epoch |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        mb = lambda b: f"{b / 2**20:.0f}" if b else "n/a"  # noqa: E731
        cpu = r.get("epoch_cpu") if cpu_baseline_fair(r) else None
        epoch = (f"{1e3 * r['epoch_cuda']:.2f} | {ratio(cpu, r['epoch_cuda'])}" if "epoch_cuda" in r else "n/a | n/a")
        ms = lambda k: f"{1e3 * r[k]:.3f}" if r.get(k) else "n/a"  # noqa: E731
        pct = lambda k: f"{100 * r[k]:.0f}%" if r.get(k) else "n/a"  # noqa: E731
        lines.append(
            f"| {r['kind']} | {r['n']:.0e} | {r['nnz']:.2e} | {r['f']} | {ms('spmm')} "
            f"| {ratio(r.get('spmm_cusparse'), r.get('spmm'))} | {ratio(r.get('torch_spmm'), r.get('spmm'))} "
            f"| {pct('spmm_bw_fraction')} ({pct('spmm_min_bw_fraction')}) | {ms('gcn')} "
            f"| {ratio(r.get('pyg_gcn'), r.get('gcn'))} | {ms('edge_pool')} "
            f"| {ratio(r.get('pyg_edge_pool'), r.get('edge_pool'))} "
            f"| {mb(r.get('edge_pool_bytes'))} ({mb(r.get('pyg_edge_pool_bytes'))}) | {epoch} |")
    lines += ["", f"Model (benchmarks/gpu_model.py) at the measured copy bandwidth, {copy_bw / 1e9:.0f} GB/s: "
              "the bytes each op must move (compulsory) and moves (a gathered row per nonzero), the lower-bound "
              "times, and the measured time beside them.", ""]
    lines += model_table([(r["kind"], r["n"], r["nnz"], r["f"]) for r in rows], copy_bw,
                         {(r["kind"], r["n"], r["f"]): r for r in rows})
    unfair = [r for r in rows if "epoch_cpu" in r and not cpu_baseline_fair(r)]
    if unfair:
        lines += ["", "GPU vs CPU epoch: not given for " + ", ".join(f"N={r['n']:.0e} F={r['f']}" for r in unfair)
                  + ": the CPU epoch of that run did not run the BLAS on one thread inside hulk's OpenMP "
                  "threads (BLAS " + str(unfair[0].get("meta", {}).get("blas", "not recorded")) + "), so it "
                  "measured thread oversubscription, not the CPU backend (CPU epochs "
                  + ", ".join(f"{r['epoch_cpu']:.2f}" for r in unfair) + " s)."]
    skipped = [f"{r['kind']} N={r['n']:.0e} F={r['f']}: {s}" for r in rows for s in r.get("skipped", [])]
    if skipped:
        lines += ["", "Baselines not measured (estimated peak memory over the device's free memory, or out of "
                  "memory): " + "; ".join(skipped) + "."]
    lines += ["", "Targets (issue 9), at N >= 1e6: SpMM at least as fast as cached cuSPARSE and >= 60% of copy "
              "bandwidth; GCN fwd+bwd >= 1.5x PyG GCNConv; EdgePool fwd+bwd >= 3x the per-edge PyG equivalent "
              "with no memory proportional to edges x features; a training epoch >= 20x our CPU backend.", END]
    return lines


if __name__ == "__main__":
    sys.exit(main())
