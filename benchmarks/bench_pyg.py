#!/usr/bin/env python
"""CPU: Kipf and Welling's two-layer GCN in hulk against PyTorch Geometric, same threads, one run.

The workloads every GNN library is first judged on are the citation graphs: a few thousand to
a few hundred thousand nodes, bag-of-words features (hundreds to thousands of columns, about
1% non-zero), a handful of classes, 20 labels per class. This script builds synthetic graphs
of those shapes (no download: the sizes, degrees and densities of Cora, CiteSeer, PubMed and
ogbn-arxiv, from Kipf and Welling, ICLR 2017, Table 1, and Hu et al., NeurIPS 2020, with
bag-of-words features drawn at 1% density) and trains the same model on both libraries:

    Dropout(0.5) -> GCNConv(F, H) -> ReLU -> Dropout(0.5) -> GCNConv(H, C)

with Adam (lr 0.01, L2 5e-4 on the first layer), full batch. One *epoch* is what both
libraries' reference scripts do per epoch: a training step (forward, masked cross-entropy,
backward, Adam) and an evaluation forward without dropout. Every (library, graph) pair runs in
its own process, so the peak memory is its own: the table gives the growth of the process's
peak RSS from just before the graph and model are built (inputs already in numpy) to the end.

* hulk: ``hulk.Sequential`` of ``hulk.nn`` layers, features dense (``x`` a numpy array) and
  sparse (``x`` a ``scipy.sparse.csr_matrix``, its input dropout on the CSR's values);
  ``standardize=False`` on both (the features are used as given). Epoch time: the C++
  trainer's per-epoch ``seconds``.
* PyG: ``torch_geometric.nn.GCNConv`` (``cached=True``: the normalised adjacency is built once,
  as hulk does), dense ``x``, the adjacency as a transposed torch CSR tensor (PyG's sparse
  path, faster on the CPU than ``edge_index``). Epoch time: wall time of the Python loop body.

Two rows per graph, the whole model on both: hulk with dense features, and hulk with sparse
features, each against the same PyG run (PyG on dense features; one PyG process per graph).

Figures are medians over ``--epochs`` epochs after ``--warmup``. Inference: one evaluation
forward and softmax, median of 5.

    cd /tmp && python /path/to/hulk/benchmarks/bench_pyg.py            # all graphs
    cd /tmp && python /path/to/hulk/benchmarks/bench_pyg.py --quick    # the Cora-sized graph, print only

Needs torch and torch_geometric (``pip install torch torch_geometric``). Writes its section of
benchmarks/RESULTS.md unless ``--quick`` or ``--no-write``. No test asserts on time.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cpu import cpu_model, load_average, total_memory_gb  # noqa: E402
from results_file import write_section  # noqa: E402

BEGIN = "<!-- bench_pyg:begin -->"
END = "<!-- bench_pyg:end -->"
DEFAULT_OUT = Path(__file__).resolve().parent / "RESULTS.md"

# name: nodes, average degree (directed entries per node), features, classes, hidden width.
# Nodes, degrees, features and classes of the public data sets (Kipf & Welling 2017, Table 1;
# ogbn-arxiv: Hu et al. 2020, 169,343 nodes, 1,166,243 edges, 40 classes, with bag-of-words
# features of the PubMed width here instead of its 128 dense embeddings).
GRAPHS = {
    "cora": (2_708, 3.9, 1_433, 7, 16),
    "citeseer": (3_327, 2.7, 3_703, 6, 16),
    "pubmed": (19_717, 4.5, 500, 3, 16),
    "pubmed-h256": (19_717, 4.5, 500, 3, 256),
    "arxiv": (169_343, 13.7, 500, 40, 256),
}
DENSITY = 0.01
LABELS_PER_CLASS = 20


def make_inputs(name: str, seed: int):
    """Edges [M, 2] (undirected pairs once), sparse features (CSR, float32, 1% ones scaled by
    row: each row sums to 1, as Kipf's row normalisation), labels [N], train mask [N]."""
    import scipy.sparse as sp
    n, degree, f, c, _ = GRAPHS[name]
    rng = np.random.default_rng(seed)
    pairs = int(n * degree / 2)
    u, v = rng.integers(0, n, pairs), rng.integers(0, n, pairs)
    keep = u != v
    codes = np.unique(np.minimum(u, v)[keep] * n + np.maximum(u, v)[keep])
    edges = np.stack([codes // n, codes % n], axis=1)
    x = sp.random(n, f, density=DENSITY, format="csr", dtype=np.float32, random_state=seed)
    x.data[:] = 1.0
    row_sums = np.asarray(x.sum(axis=1)).ravel()
    x = sp.diags(1.0 / np.maximum(row_sums, 1.0)).astype(np.float32) @ x
    labels = rng.integers(0, c, n).astype(np.int64)
    train = np.zeros(n, bool)
    for k in range(c):
        train[np.flatnonzero(labels == k)[:LABELS_PER_CLASS]] = True
    return edges, x.tocsr(), labels, train


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def reset_peak() -> float:
    """Resets the process's peak RSS to its current RSS (Linux: "5" to /proc/self/clear_refs),
    so a transient peak of the input generation (scipy.sparse.random draws an index array of
    N x F entries) does not count; returns the current RSS, the baseline."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    return rss_mb()


def peak_rss_mb() -> float:
    """The process's peak RSS (VmHWM). Not getrusage's ru_maxrss: Linux keeps that across exec,
    so a child started by a parent holding torch would start at the parent's peak."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1e3
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def child_hulk(name, sparse, threads, warmup, epochs, seed) -> dict:
    import hulk
    from hulk import nn
    hulk.set_num_threads(threads)
    edges, x, labels, train = make_inputs(name, seed)
    n, _, _, c, h = GRAPHS[name]
    features = x if sparse else x.toarray()
    base = reset_peak()
    g = hulk.Graph(n, edges, features)
    layers = [nn.Dropout(0.5), nn.GCNConv(h, weight_decay=5e-4), nn.ReLU(), nn.Dropout(0.5), nn.GCNConv(c)]
    model = hulk.Sequential(layers, standardize=False, seed=seed)
    hist = model.fit(g, labels, train_mask=train, epochs=warmup + epochs, lr=0.01, weight_decay=0.0)
    epoch_ms = [s["seconds"] * 1e3 for s in hist[warmup:]]
    inference = []
    for _ in range(5):
        t = time.perf_counter()
        model.predict_proba(g)
        inference.append(time.perf_counter() - t)
    peak = peak_rss_mb()
    return {"epoch_ms": statistics.median(epoch_ms), "epoch_ms_spread": [min(epoch_ms), max(epoch_ms)],
            "inference_ms": statistics.median(inference) * 1e3, "peak_mb": peak - base,
            "final_loss": hist[-1]["train_loss"]}


def child_pyg(name, threads, warmup, epochs, seed) -> dict:
    import torch
    import torch.nn.functional as F
    from torch_geometric.nn import GCNConv
    from torch_geometric.utils import to_torch_csr_tensor
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    edges, x, labels, train = make_inputs(name, seed)
    _, _, f, c, h = GRAPHS[name]
    xd = x.toarray()
    base = reset_peak()
    e = torch.from_numpy(edges.T.copy())
    edge_index = torch.cat([e, e.flip(0)], dim=1)
    # PyG's sparse-matrix path (adj_t = the transposed adjacency as a torch CSR tensor): faster on
    # the CPU than the default edge_index scatter (346 vs 619 ms per epoch on pubmed-h256, 1 thread).
    adj_t = to_torch_csr_tensor(edge_index.flip(0), size=(len(labels), len(labels)))
    xt, y, mask = torch.from_numpy(xd), torch.from_numpy(labels), torch.from_numpy(train)

    class Kipf(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = GCNConv(f, h, cached=True)
            self.conv2 = GCNConv(h, c, cached=True)

        def forward(self, x, ei):
            x = F.dropout(x, 0.5, self.training)
            x = F.relu(self.conv1(x, ei))
            x = F.dropout(x, 0.5, self.training)
            return self.conv2(x, ei)

    model = Kipf()
    opt = torch.optim.Adam([dict(params=model.conv1.parameters(), weight_decay=5e-4),
                            dict(params=model.conv2.parameters(), weight_decay=0.0)], lr=0.01)
    times, loss = [], None
    for epoch in range(warmup + epochs):
        t = time.perf_counter()
        model.train()
        opt.zero_grad()
        loss = F.cross_entropy(model(xt, adj_t)[mask], y[mask])
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            model(xt, adj_t).argmax(1)
        if epoch >= warmup:
            times.append(time.perf_counter() - t)
    inference = []
    for _ in range(5):
        t = time.perf_counter()
        with torch.no_grad():
            torch.softmax(model(xt, adj_t), 1).numpy()
        inference.append(time.perf_counter() - t)
    peak = peak_rss_mb()
    ms = [t * 1e3 for t in times]
    return {"epoch_ms": statistics.median(ms), "epoch_ms_spread": [min(ms), max(ms)],
            "inference_ms": statistics.median(inference) * 1e3, "peak_mb": peak - base, "final_loss": float(loss)}


def run_child(kind: str, name: str, args) -> dict | None:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", kind, "--graphs", name, "--threads",
           str(args.threads), "--warmup", str(args.warmup), "--epochs", str(args.epochs), "--seed", str(args.seed)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"  {kind} on {name} failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def section(rows, args, total_s, load_start, versions) -> list[str]:
    command = "cd /tmp && python " + shlex.join([str(Path(__file__).resolve())] + args.argv)
    lines = [BEGIN, "## CPU: Kipf & Welling's GCN against PyG (`benchmarks/bench_pyg.py`)", "", "Command:", "", "```",
             command, "```", "",
             f"Date: {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC; whole run {total_s:.0f} s. "
             f"Load average (1/5/15 min) at the start {load_start}, at the end {load_average()}.", "",
             "Machine:", "",
             f"- CPU: {cpu_model()}, {os.cpu_count()} logical cores; {total_memory_gb() or 0:.1f} GiB RAM",
             f"- OS: {platform.platform()}; Python {platform.python_version()}",
             f"- {versions}; both on {args.threads} thread{'s' if args.threads != 1 else ''}", "",
             "Model: Dropout(0.5) -> GCNConv(F, H) -> ReLU -> Dropout(0.5) -> GCNConv(H, C), Adam lr 0.01, L2 5e-4 on "
             "the first layer. Epoch = training step + evaluation forward. Synthetic graphs of the public data sets' "
             f"sizes, features at {DENSITY:.0%} density (row-normalised). Medians of {args.epochs} epochs after "
             f"{args.warmup} warm-up epochs (spread: min-max); each library and graph in its own process.", "",
             "| graph | N | F | C | H | features | hulk epoch ms | PyG epoch ms | PyG/hulk | hulk inference ms "
             "| PyG inference ms | hulk peak MB | PyG peak MB |",
             "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        n, _, f, c, h = GRAPHS[r["graph"]]
        hk, pg = r["hulk"], r["pyg"]
        if hk is None or pg is None:
            continue
        lines.append(
            f"| {r['graph']} | {n:,} | {f:,} | {c} | {h} | {r['features']} | {hk['epoch_ms']:.2f} "
            f"({hk['epoch_ms_spread'][0]:.2f}-{hk['epoch_ms_spread'][1]:.2f}) | {pg['epoch_ms']:.2f} "
            f"({pg['epoch_ms_spread'][0]:.2f}-{pg['epoch_ms_spread'][1]:.2f}) | {pg['epoch_ms'] / hk['epoch_ms']:.2f}x | "
            f"{hk['inference_ms']:.2f} | {pg['inference_ms']:.2f} | {hk['peak_mb']:.0f} | {pg['peak_mb']:.0f} |")
    lines += ["", "*PyG/hulk* > 1: hulk's epoch is faster. *peak MB*: growth of the process's peak RSS from just before "
              "the graph and model are built (inputs already in numpy; the peak reset there) to the end of the run. PyG always gets dense "
              "features (its GCNConv's linear layer takes a dense matrix), and both of a graph's rows compare with the "
              "same PyG run; hulk's *features* column says which it got.",
              END]
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--graphs", default=",".join(GRAPHS))
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="the Cora-sized graph only, print only")
    p.add_argument("--no-write", action="store_true")
    p.add_argument("--out", default=str(DEFAULT_OUT))
    p.add_argument("--child", choices=["hulk-dense", "hulk-sparse", "pyg"],
                   help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.argv = argv if argv is not None else sys.argv[1:]
    names = ["cora"] if args.quick else args.graphs.split(",")
    for name in names:
        if name not in GRAPHS:
            p.error(f"--graphs: unknown graph {name!r} (known: {', '.join(GRAPHS)})")
    if args.child:
        name = names[0]
        out = (child_pyg(name, args.threads, args.warmup, args.epochs, args.seed) if args.child == "pyg" else
               child_hulk(name, args.child == "hulk-sparse", args.threads, args.warmup, args.epochs, args.seed))
        print(json.dumps(out))
        return 0
    try:
        import torch
        import torch_geometric
    except ImportError:
        print("bench_pyg needs torch and torch_geometric: pip install torch torch_geometric", file=sys.stderr)
        return 2
    import hulk
    versions = f"hulk {hulk.__version__}, torch {torch.__version__}, torch_geometric {torch_geometric.__version__}"
    t0, load_start = time.perf_counter(), load_average()
    rows = []
    for name in names:
        pyg = run_child("pyg", name, args)  # one PyG run per graph, against both of hulk's
        for kind, features in (("hulk-dense", "dense"), ("hulk-sparse", "sparse")):
            hk = run_child(kind, name, args)
            rows.append({"graph": name, "features": features, "hulk": hk, "pyg": pyg})
            if hk and pyg:
                print(f"{name:>12} {kind:>11}: hulk {hk['epoch_ms']:8.2f} ms  PyG {pyg['epoch_ms']:8.2f} ms  "
                      f"PyG/hulk {pyg['epoch_ms'] / hk['epoch_ms']:5.2f}x  peak MB {hk['peak_mb']:.0f} vs "
                      f"{pyg['peak_mb']:.0f}", flush=True)
    lines = section(rows, args, time.perf_counter() - t0, load_start, versions)
    print("\n".join(lines[1:-1]))
    if not (args.quick or args.no_write):
        write_section(args.out, BEGIN, END, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
