"""``hulk classify``: the paper's classifier on its 47-server cluster and Table 2 labels."""

from __future__ import annotations

import argparse
import json
import sys
import warnings

from .. import datasets
from ..gnn import GNN
from ..sequential import format_epoch, format_epoch_header
from ..graph import Graph
from ..plan.planners import PAPER_EDGE_ATTRS, PAPER_NODE_ATTRS
from ._args import MAX_EPOCHS, MAX_SEED, file_path, integer, real, widths


def add_parser(sub) -> None:
    p = sub.add_parser("classify", help="train the GNN on the bundled 47-server cluster with the paper's labels "
                                        "and print the per-epoch table and each machine's predicted job")
    p.add_argument("--epochs", type=integer(1, MAX_EPOCHS), default=200, help="training epochs (default 200)")
    p.add_argument("--hidden", type=widths, default=[64, 64], help="layer widths, e.g. 64,64 (default)")
    p.add_argument("--pooling", choices=["sum", "mean"], default="sum", help="EdgePool pooling (default sum)")
    p.add_argument("--lr", type=real(0, 1, lo_open=True), default=0.01, help="Adam learning rate in (0, 1] "
                                                                              "(default 0.01)")
    p.add_argument("--weight-decay", type=real(0, 1), default=5e-4, help="L2 weight decay in [0, 1] (default 5e-4)")
    p.add_argument("--dropout", type=real(0, 0.99), default=0.0, help="dropout between layers (default 0)")
    p.add_argument("--seed", type=integer(0, MAX_SEED), default=0, help="random seed (default 0)")
    p.add_argument("--save", metavar="PATH", type=file_path, help="write the trained weights to PATH (atomically)")
    p.add_argument("--json", action="store_true", help="print the history and predictions as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Trains the classifier on the bundled 47-server cluster with the paper's Table 2 labels."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", datasets.DataCleaningWarning)
        G = datasets.hulk47()
    for w in caught:
        print(f"note: {w.message}", file=sys.stderr)
    labels, classes = datasets.hulk47_table2_labels()
    g = Graph.from_networkx(G, node_attrs=PAPER_NODE_ATTRS, edge_attrs=PAPER_EDGE_ATTRS)
    model = GNN(num_classes=len(classes), hidden=args.hidden, pooling=args.pooling, dropout=args.dropout,
                seed=args.seed)
    if not args.json:
        print(f"hulk47: {g.num_nodes} machines, {g.num_edges} links; node features {PAPER_NODE_ATTRS}, "
              f"edge features {PAPER_EDGE_ATTRS}; {int((labels >= 0).sum())} machines labelled (paper Table 2)")
        print(format_epoch_header())
    history = model.fit(g, labels, epochs=args.epochs, lr=args.lr, weight_decay=args.weight_decay,
                        callback=None if args.json else lambda s: print(format_epoch(s), flush=True))
    proba = model.predict_proba(g)
    pred = proba.argmax(axis=1)
    rows = []
    for i, v in enumerate(g.node_ids):
        node = G.nodes[v]
        rows.append(dict(machine=v, region=node["region"], capability=node["capability"],
                         memory_gb=node["memory_gb"], label=classes[labels[i]] if labels[i] >= 0 else None,
                         predicted=classes[pred[i]], probability=float(proba[i, pred[i]])))
    labelled = labels >= 0
    accuracy = float((pred[labelled] == labels[labelled]).mean())
    if args.save:
        model.save(args.save)
    if args.json:
        # NaN (no validation set) becomes null: strict JSON has no NaN.
        history = [{k: (None if isinstance(v, float) and v != v else v) for k, v in h.items()} for h in history]
        json.dump(dict(classes=classes, history=history, machines=rows, train_accuracy=accuracy), sys.stdout,
                  indent=2, allow_nan=False)
        print()
        return 0
    print(f"\n{'machine':>7}  {'region':<11} {'cap':>4} {'mem_gb':>6}  {'label (Table 2)':<15} "
          f"{'predicted':<11} {'p':>5}")
    for r in rows:
        print(f"{r['machine']:>7}  {r['region']:<11} {r['capability']:>4} {r['memory_gb']:>6.0f}  "
              f"{r['label'] or '-':<15} {r['predicted']:<11} {r['probability']:5.2f}")
    print(f"\naccuracy on the {int(labelled.sum())} labelled machines: {accuracy:.3f} "
          f"after {len(history)} epochs ({model.num_parameters} parameters)")
    if args.save:
        print(f"weights saved to {args.save}")
    return 0


