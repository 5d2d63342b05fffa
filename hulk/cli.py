"""Command line: ``hulk plan`` (the main job), ``hulk train``, ``hulk classify`` and ``hulk info``."""

from __future__ import annotations

import argparse
import json
import sys
import warnings

import numpy as np

from . import _core, datasets
from ._device import cuda_available, cuda_unavailable_reason, get_num_threads
from .gnn import GNN, format_epoch, format_epoch_header
from .graph import Graph

NODE_ATTRS = ["capability", "memory_gb"]
EDGE_ATTRS = ["latency_ms"]


def _hidden(text: str) -> list[int]:
    try:
        sizes = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"expected positive layer widths, got {text!r}")
    return sizes


def cmd_classify(args: argparse.Namespace) -> int:
    """Trains the classifier on the bundled 47-server cluster with the paper's Table 2 labels."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", datasets.DataCleaningWarning)
        G = datasets.hulk47()
    for w in caught:
        print(f"note: {w.message}", file=sys.stderr)
    labels, classes = datasets.hulk47_table2_labels()
    g = Graph.from_networkx(G, node_attrs=NODE_ATTRS, edge_attrs=EDGE_ATTRS)
    model = GNN(num_classes=len(classes), hidden=args.hidden, pooling=args.pooling, dropout=args.dropout,
                seed=args.seed)
    if not args.json:
        print(f"hulk47: {g.num_nodes} machines, {g.num_edges} links; node features {NODE_ATTRS}, "
              f"edge features {EDGE_ATTRS}; {int((labels >= 0).sum())} machines labelled (paper Table 2)")
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


def _job_list(text: str) -> list[str]:
    from . import models
    presets = {"paper4": models.PAPER_JOBS_4, "paper6": models.PAPER_JOBS_6}
    if text.lower() in presets:
        return list(presets[text.lower()])
    return [s.strip() for s in text.split(",") if s.strip()]


def _load_json_arg(text: str):
    import os
    if os.path.isfile(text):
        with open(text, encoding="utf-8") as f:
            return json.load(f)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--add: expected a JSON file or JSON text, could not parse it ({exc})") from None


def cmd_plan(args: argparse.Namespace) -> int:
    """Plans the jobs with every planner (or one) and prints per-job times and the makespan."""
    from . import cluster_spec, planner as planner_mod, report
    if args.cluster and args.generate:
        raise ValueError("give --cluster or --generate, not both")
    if args.cluster:
        spec = planner_mod.as_cluster_spec(args.cluster)
    elif args.generate:
        from . import generate
        spec = generate.generate_cluster(args.generate, seed=args.seed)
    else:
        spec = cluster_spec.hulk47_spec()
    jobs = _job_list(args.jobs)
    job_specs = jobs
    if args.models:  # the user's models, looked up before the catalogue
        from . import models
        user = models.load_models(args.models)
        job_specs = [models.get(name, user) for name in jobs]
        jobs = [m.name for m in job_specs]
    default_cluster = not args.cluster and not args.generate
    if args.planner == "all":
        names = ["a", "b", "c", "search", "hulk"]
        if default_cluster and sorted(jobs) == sorted(datasets.HULK47_CLASSES):
            names.append("table2")
    else:
        names = [args.planner]
    model = None
    if args.classifier == "heuristic":
        model = "heuristic"
    elif args.model:
        from . import learn
        model = learn.LearnedPlanner.load(args.model)
    if args.gnn:
        if not default_cluster or jobs != list(datasets.HULK47_CLASSES):
            raise ValueError("--gnn trains the classifier on the paper's Table 2 labels: it needs the bundled "
                             f"cluster and the jobs {', '.join(datasets.HULK47_CLASSES)} in that order")
        model = _table2_gnn(args.seed)
    plans = [planner_mod.plan(spec, job_specs, name, time_limit_s=args.time_limit, seed=args.seed, model=model,
                              max_iterations=args.max_iterations) for name in names]
    repaired = []
    if args.fail is not None or args.add:
        for p in plans:
            if p.sequential:
                continue  # Systems A/B/C re-plan from scratch on the whole cluster; nothing to repair
            q = p.without(args.fail) if args.fail is not None else p
            if args.add:
                add = _load_json_arg(args.add)
                q = q.with_machine(add.get("machine", add), add.get("links", []))
            repaired.append((p, q))
    if args.json:
        out = dict(cluster=spec.summary(), jobs=jobs, plans=[p.to_dict() for p in plans],
                   repaired=[dict(planner=p.planner, plan=q.to_dict()) for p, q in repaired])
        json.dump(out, sys.stdout, indent=2, allow_nan=False)
        print()
    else:
        print(spec.summary())
        print(f"jobs: {', '.join(jobs)}\n")
        for p in plans:
            print(report.plan_table(p) + "\n")
        print(report.comparison_table(plans) + "\n")
        print(report.job_comparison_table(plans))
        for p, q in repaired:
            what = []
            if args.fail is not None:
                what.append(f"machine {args.fail} failed")
            if args.add:
                what.append("a machine joined")
            print(f"\n{p.title} after {' and '.join(what)}: repaired in {q.repair_s * 1e3:.1f} ms, "
                  f"moved machines {report.ranges(q.moved) if q.moved else 'none'}")
            print(report.plan_table(q))
    if args.png:
        report.save_figure(plans, args.png)
        if not args.json:
            print(f"\nfigure written to {args.png}")
    return 0


def _table2_gnn(seed: int):
    """The paper's setup: the classifier trained on Table 2's labels of the bundled cluster."""
    G = datasets.hulk47(clean="quiet")
    labels, classes = datasets.hulk47_table2_labels()
    g = Graph.from_networkx(G, node_attrs=NODE_ATTRS, edge_attrs=EDGE_ATTRS)
    model = GNN(num_classes=len(classes), hidden=[64, 64], seed=seed)
    model.fit(g, labels, epochs=200)
    return model


def cmd_train(args: argparse.Namespace) -> int:
    """Labels generated clusters with the search planner (cached) and trains the learned planner."""
    from . import learn
    log = (lambda *a, **k: None) if args.quiet else print
    sizes = _sizes(args.sizes)
    samples = learn.make_dataset(args.samples, seed=args.seed, sizes=sizes, time_limit_s=args.label_time,
                                 iterations=args.label_iterations, cache_dir=args.cache, workers=args.workers,
                                 progress=not args.quiet)
    unlabelled = sum(1 for s in samples if not (s.labels >= 0).any())
    log(f"{len(samples)} labelled clusters of {sizes[0]}-{sizes[1]} machines "
        f"({unlabelled} where the search kept a sequential plan; not used)")
    planner, history = learn.train(samples, hidden=args.hidden, epochs=args.epochs, batch_graphs=args.batch,
                                   lr=args.lr, seed=args.seed, device=args.device, progress=not args.quiet, log=log)
    planner.info.update(command="hulk train " + " ".join(args.argv), samples_requested=args.samples,
                        sizes=list(sizes), label_time_s=args.label_time, label_iterations=args.label_iterations)
    planner.save(args.out)
    log(f"best validation accuracy {planner.info['best_val_acc']:.3f}; model written to {args.out} "
        f"(encoding in {args.out}.json)")
    return 0


def _sizes(text: str) -> tuple:
    try:
        lo, hi = (int(v) for v in text.split(","))
    except ValueError:
        raise ValueError(f"--sizes: expected two integers LO,HI, got {text!r}") from None
    return lo, hi


def cmd_info(args: argparse.Namespace) -> int:
    print(f"hulk {_core.__version__}")
    print(f"CUDA backend compiled: {bool(_core.built_with_cuda)}")
    print(f"CUDA usable: {cuda_available()}" + ("" if cuda_available() else f" ({cuda_unavailable_reason()})"))
    print(f"CPU threads: {get_num_threads()}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hulk", description="Hulk: GNN planner for geo-distributed training")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("classify", help="train the GNN on the bundled 47-server cluster with the paper's labels "
                                        "and print the per-epoch table and each machine's predicted job")
    p.add_argument("--epochs", type=int, default=200, help="training epochs (default 200)")
    p.add_argument("--hidden", type=_hidden, default=[64, 64], help="layer widths, e.g. 64,64 (default)")
    p.add_argument("--pooling", choices=["sum", "mean"], default="sum", help="EdgePool pooling (default sum)")
    p.add_argument("--lr", type=float, default=0.01, help="Adam learning rate (default 0.01)")
    p.add_argument("--weight-decay", type=float, default=5e-4, help="L2 weight decay (default 5e-4)")
    p.add_argument("--dropout", type=float, default=0.0, help="dropout between layers (default 0)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--save", metavar="PATH", help="write the trained weights to PATH")
    p.add_argument("--json", action="store_true", help="print the history and predictions as JSON")
    p.set_defaults(func=cmd_classify)
    p = sub.add_parser("plan", help="plan jobs on a cluster (default: the paper's four jobs on its 47-server "
                                    "cluster) with Systems A/B/C, Search and Hulk, and compare them")
    p.add_argument("--jobs", default="paper4", help="paper4 (default: OPT-175B, T5-11B, GPT-2 1.5B, BERT-large), "
                                                    "paper6 (adds RoBERTa-large, XLNet-large) or names, comma-separated")
    p.add_argument("--models", metavar="FILE", help="JSON file of your own models (schema: hulk.models); "
                   "--jobs names are looked up there before the catalogue")
    p.add_argument("--cluster", metavar="FILE", help="cluster JSON file (schema: hulk.cluster_spec); default: the "
                                                     "bundled 47-server cluster")
    p.add_argument("--planner", default="all", choices=["all", "a", "b", "c", "search", "hulk", "table2"],
                   help="one planner, or all (default)")
    p.add_argument("--time-limit", type=float, default=2.0, help="search time limit in seconds (default 2)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--generate", type=int, metavar="N", help="plan on a generated cluster of N machines "
                                                               "(hulk.generate, seeded by --seed)")
    p.add_argument("--max-iterations", type=int, default=0, help="also stop the search after this many moves "
                                                                 "(reproducible plans; default 0 = time limit only)")
    p.add_argument("--classifier", choices=["learned", "heuristic"], default="learned",
                   help="how Hulk classifies machines: the learned planner (default: the model shipped with "
                        "the package, or --model) or the region heuristic")
    p.add_argument("--model", metavar="PATH", help="a learned planner written by `hulk train`")
    p.add_argument("--gnn", action="store_true", help="Hulk classifies machines with a GNN trained on the "
                                                      "paper's Table 2 labels (the paper's own setup)")
    p.add_argument("--fail", type=int, metavar="MACHINE", help="then repair the concurrent plans after this "
                                                                "machine fails")
    p.add_argument("--add", metavar="JSON", help="then add a machine: JSON text or file with 'machine' (region, "
                                                 "memory_gb, capability or gpu or tflops) and 'links' (to, latency_ms)")
    p.add_argument("--json", action="store_true", help="print the plans as JSON")
    p.add_argument("--png", metavar="PATH", help="write a figure (needs matplotlib)")
    p.set_defaults(func=cmd_plan)
    p = sub.add_parser("train", help="label generated clusters with the search planner (cached) and train the "
                                     "learned planner on them")
    p.add_argument("--samples", type=int, default=600, help="generated clusters (default 600)")
    p.add_argument("--sizes", default="16,300", help="machine counts LO,HI, drawn log-uniformly (default 16,300)")
    p.add_argument("--label-time", type=float, default=2.0, help="search time limit per cluster, s (default 2)")
    p.add_argument("--label-iterations", type=int, default=2000, help="search moves per cluster (default 2000)")
    p.add_argument("--workers", type=int, default=None, help="labelling processes (default: CPU count)")
    p.add_argument("--cache", metavar="DIR", help="label cache (default: $HULK_CACHE/labels or ~/.cache/hulk/labels)")
    p.add_argument("--epochs", type=int, default=40, help="training epochs (default 40)")
    p.add_argument("--batch", type=int, default=8, help="graphs per optimiser step (default 8)")
    p.add_argument("--hidden", type=_hidden, default=[64, 64, 64], help="layer widths (default 64,64,64)")
    p.add_argument("--lr", type=float, default=0.005, help="Adam learning rate (default 0.005)")
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument("--seed", type=int, default=0, help="seed of the data set, split and weights (default 0)")
    p.add_argument("--out", default="hulk-planner.gnn", help="model file (default hulk-planner.gnn; the "
                                                             "encoding goes to OUT.json)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=cmd_train)
    p = sub.add_parser("info", help="version, CUDA availability and thread count")
    p.set_defaults(func=cmd_info)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[2:] if argv is None else argv[1:])
    try:
        return args.func(args)
    except (ValueError, RuntimeError, OSError) as exc:
        print(f"hulk {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
