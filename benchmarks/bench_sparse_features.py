#!/usr/bin/env python
"""Epoch time with the same node features dense and sparse, side by side (issue 20).

One synthetic citation-like graph (default: the size of Cora, 2,708 nodes and 1,433 bag-of-words
features at 1% density, 7 classes, uniform random undirected edges of average degree about 4)
and the model ``hulk.GNN(hidden=(16,), edge_pool=False, dropout=0.5)``: GCNConv(F -> 16), ReLU,
dropout, Linear(16 -> C). The features are given once as a numpy array and once as the
scipy.sparse CSR matrix holding the same values; both models start from the same seed.

Per run and side: the median C++ epoch time over ``--epochs`` epochs after ``--warmup`` (history
``seconds``: forward, loss, backward, Adam and the evaluation forward fit runs every epoch), the
process CPU time per epoch of that fit (steadier than wall time on a shared machine), the wall
time of one ``predict_proba`` and the largest difference of the two sides' training losses.
The sides alternate within each of ``--repeats`` runs; the table gives the median and the range.

    cd /tmp && python /path/to/hulk/benchmarks/bench_sparse_features.py --threads 1

Timings come only from runs of this script; no test asserts on time.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import scipy.sparse as sp

import hulk


def citation_like(n: int, f: int, density: float, degree: float, classes: int, seed: int):
    rng = np.random.default_rng(seed)
    x = sp.random(n, f, density=density, format="csr", random_state=seed, dtype=np.float32)
    x.data[:] = 1.0  # bag of words: word present
    pairs = rng.integers(0, n, (int(n * degree), 2))
    pairs = np.unique(np.sort(pairs[pairs[:, 0] != pairs[:, 1]], axis=1), axis=0)
    labels = rng.integers(0, classes, n)
    return x, pairs, labels


def one_side(g: hulk.Graph, labels, classes: int, args) -> tuple[float, float, float, list[float]]:
    model = hulk.GNN(num_classes=classes, hidden=(16,), edge_pool=False, dropout=0.5, seed=0)
    model.fit(g, labels, epochs=args.warmup)
    cpu0 = time.process_time()
    hist = model.fit(g, labels, epochs=args.epochs)
    cpu = (time.process_time() - cpu0) / args.epochs
    t0 = time.perf_counter()
    model.predict_proba(g)
    infer = time.perf_counter() - t0
    return statistics.median(h["seconds"] for h in hist), cpu, infer, [h["train_loss"] for h in hist]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nodes", type=int, default=2708)
    p.add_argument("--features", type=int, default=1433)
    p.add_argument("--density", type=float, default=0.01)
    p.add_argument("--degree", type=float, default=2.0, help="edges per node drawn (undirected: ~2x degree)")
    p.add_argument("--classes", type=int, default=7)
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=0, help="OpenMP threads (0: leave as is)")
    args = p.parse_args()
    if args.threads:
        hulk.set_num_threads(args.threads)
    x, edges, labels = citation_like(args.nodes, args.features, args.density, args.degree, args.classes, 0)
    graphs = {"dense": hulk.Graph(args.nodes, edges, node_features=x.toarray()),
              "sparse": hulk.Graph(args.nodes, edges, node_features=x)}
    runs = {side: [] for side in graphs}
    loss_gap = 0.0
    for _ in range(args.repeats):
        losses = {}
        for side, g in graphs.items():
            epoch, cpu, infer, losses[side] = one_side(g, labels, args.classes, args)
            runs[side].append((epoch, cpu, infer))
        loss_gap = max(loss_gap, max(abs(a - b) / abs(b) for a, b in zip(losses["sparse"], losses["dense"])))
    print(f"graph: {args.nodes} nodes, {len(edges)} undirected edges, {args.features} features at density "
          f"{x.nnz / (args.nodes * args.features):.4f} ({x.nnz} non-zeros), {args.classes} classes; "
          f"threads {hulk.get_num_threads()}; {args.repeats} runs of {args.epochs} epochs after {args.warmup}")
    print(f"{'features':<9} {'epoch ms':<26} {'CPU ms per epoch':<26} {'predict_proba ms':<26}  (median (range))")

    def cell(values) -> str:
        ms = [1e3 * v for v in values]
        return f"{statistics.median(ms):8.2f} ({min(ms):.2f} - {max(ms):.2f})".ljust(26)

    for side, r in runs.items():
        print(f"{side:<9} {cell(a for a, _, _ in r)} {cell(b for _, b, _ in r)} {cell(c for _, _, c in r)}")
    dense_ms = statistics.median(a for a, _, _ in runs["dense"])
    sparse_ms = statistics.median(a for a, _, _ in runs["sparse"])
    print(f"sparse / dense epoch time: {sparse_ms / dense_ms:.3f}; largest relative training-loss "
          f"difference: {loss_gap:.2e}")


if __name__ == "__main__":
    main()
