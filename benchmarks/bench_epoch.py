#!/usr/bin/env python
"""Per-epoch time and page faults of full-batch training on two citation-like graphs (issue 20).

Two synthetic graphs the sizes of Cora (2,708 nodes, 1,433 features, 7 classes) and CiteSeer
(3,327 nodes, 3,703 features, 6 classes): uniform random undirected edges, average degree about
4, dense float32 standard-normal node features, no edge features. The model is
``hulk.GNN(hidden=(16,), edge_pool=False, dropout=0.5)``: GCNConv(F -> 16), ReLU, dropout,
Linear(16 -> C) (hulk's classifier head is a Linear layer, not a second GCNConv).

Each configuration (graph x thread count) runs in its own child process, under an
address-space cap, ``--repeats`` times. A run fits ``--warmup`` epochs, then ``--epochs`` (E) and 2E
more on the same model, and reports

* the median C++ epoch time of the last fit's epochs (history ``seconds``: forward, loss,
  backward, Adam, and the evaluation forward fit runs every epoch),
* minor page faults per epoch: ``getrusage`` around a fit of E epochs and one of 2E epochs;
  the difference over E cancels what a fit does once (preparing the graph).

The table gives, per configuration, the median over repeats and the spread (min - max).

    cd /tmp && PYTHONPATH=/path/to/checkout python /path/to/checkout/benchmarks/bench_epoch.py

Timings come only from runs of this script; no test asserts on time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys

GRAPHS = {"cora-like": (2708, 1433, 7), "citeseer-like": (3327, 3703, 6)}


def child(name: str, threads: int, warmup: int, epochs: int) -> dict:
    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30,) * 2)
    import numpy as np
    import hulk

    n, f, c = GRAPHS[name]
    rng = np.random.default_rng(0)
    m = n * 2  # average degree 4 (each undirected edge counts at both ends)
    a = rng.integers(0, n, size=3 * m)
    b = rng.integers(0, n, size=3 * m)
    keep = a != b
    lo, hi = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
    _, first = np.unique(lo * n + hi, return_index=True)
    first = np.sort(first)[:m]
    edges = np.stack([lo[first], hi[first]], axis=1)
    x = rng.standard_normal((n, f)).astype(np.float32)
    y = rng.integers(0, c, size=n)
    g = hulk.Graph(n, edges, node_features=x)
    hulk.set_num_threads(threads)
    model = hulk.GNN(num_classes=c, hidden=(16,), edge_pool=False, dropout=0.5, seed=0)
    model.fit(g, y, epochs=warmup)
    faults = []
    for k in (epochs, 2 * epochs):  # the difference cancels what a fit does once (prepare)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        hist = model.fit(g, y, epochs=k)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    return {"epoch_ms": 1e3 * statistics.median(s["seconds"] for s in hist),
            "faults": (faults[1] - faults[0]) / epochs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--graphs", nargs="+", default=list(GRAPHS), choices=list(GRAPHS))
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), args.warmup, args.epochs)))
        return
    print(f"| graph | threads | epoch ms, median (min - max) of {args.repeats} | "
          f"minor faults / epoch, median (min - max) |")
    print("| --- | --- | --- | --- |")
    for name in args.graphs:
        for t in args.threads:
            runs = []
            for _ in range(args.repeats):
                out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name, str(t),
                                      "--warmup", str(args.warmup), "--epochs", str(args.epochs)],
                                     check=True, capture_output=True, text=True).stdout
                runs.append(json.loads(out.strip().splitlines()[-1]))
            ms = [r["epoch_ms"] for r in runs]
            pf = [r["faults"] for r in runs]
            n, f, _ = GRAPHS[name]
            print(f"| {name} ({n} x {f}) | {t} | {statistics.median(ms):.1f} ({min(ms):.1f} - {max(ms):.1f}) | "
                  f"{statistics.median(pf):.0f} ({min(pf):.0f} - {max(pf):.0f}) |", flush=True)


if __name__ == "__main__":
    main()
