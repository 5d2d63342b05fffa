"""Command line: ``hulk plan`` (the main job), ``hulk train``, ``hulk classify`` and ``hulk info``."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings

import numpy as np

from . import _core, datasets
from ._device import cuda_available, cuda_unavailable_reason, get_num_threads
from .gnn import GNN, format_epoch, format_epoch_header
from .graph import Graph

NODE_ATTRS = ["capability", "memory_gb"]
EDGE_ATTRS = ["latency_ms"]


# Bounds of the numeric arguments: far beyond any sensible run, small enough that a value
# cannot make the process allocate without end or overflow the engine's integer types.
MAX_SEED = 2**63 - 1
MAX_SECONDS = 7 * 24 * 3600.0      # a search or labelling time limit: one week
MAX_ITERATIONS = 10**12
MAX_EPOCHS = 1_000_000
MAX_WIDTH = 1 << 16                 # a hidden layer's width
MAX_LAYERS = 64
MAX_GENERATED = 10_000_000          # machines of --generate


def _integer(lo: int, hi: int):
    def parse(text: str) -> int:
        try:
            v = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{text} is out of range [{lo}, {hi}]")
        return v
    return parse


def _real(lo: float, hi: float, lo_open: bool = False):
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(v) or v > hi or v < lo or (lo_open and v == lo):
            raise argparse.ArgumentTypeError(f"{text} is out of range {'(' if lo_open else '['}{lo:g}, {hi:g}]")
        return v
    return parse


def _hidden(text: str) -> list[int]:
    try:
        sizes = [int(s) for s in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not sizes or min(sizes) < 1 or max(sizes) > MAX_WIDTH or len(sizes) > MAX_LAYERS:
        raise argparse.ArgumentTypeError(f"expected 1 to {MAX_LAYERS} layer widths in [1, {MAX_WIDTH}], got {text!r}")
    return sizes


def _path(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("the path is empty")
    return text


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors ("hulk plan: error: argument --seed: ..."), exit code 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


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


def _load_add(text: str) -> tuple:
    """--add: a JSON file or JSON text holding a machine (or {"machine": ..., "links": [...]})."""
    from ._io import parse_json, read_json_file
    if os.path.exists(text):
        doc = read_json_file(text, "--add file", max_bytes=1 << 20)
        where = f"--add file {text!r}"
    else:
        if not text.lstrip().startswith("{"):
            raise ValueError(f"--add: {text!r} is neither a file nor a JSON object")
        doc = parse_json(text, "--add")
        where = "--add"
    if not isinstance(doc, dict):
        raise ValueError(f"{where}: expected a JSON object with 'machine' and 'links', got {doc!r:.80}")
    machine, links = (doc["machine"], doc.get("links", [])) if "machine" in doc else (doc, [])
    if "machine" in doc and set(doc) - {"machine", "links"}:
        raise ValueError(f"{where}: unknown keys {sorted(set(doc) - {'machine', 'links'})}; allowed: machine, links")
    if not isinstance(machine, dict):
        raise ValueError(f"{where}: 'machine' must be an object, got {machine!r:.80}")
    if not isinstance(links, list) or not all(isinstance(l, dict) for l in links):
        raise ValueError(f"{where}: 'links' must be a list of objects with 'to' and 'latency_ms', got {links!r:.80}")
    return machine, links


def _load_cluster(path: str):
    """--cluster FILE: a hulk-cluster/1 or hulk-regional/1 JSON file (read once, strictly)."""
    from . import cluster_spec, generate
    from ._io import read_json_file
    doc = read_json_file(path, "--cluster")
    try:
        if isinstance(doc, dict) and doc.get("version") == generate.SCHEMA_VERSION:
            return generate.RegionalCluster.from_dict(doc)
        return cluster_spec.from_json(doc)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"--cluster {path!r}: {exc}") from None


def cmd_plan(args: argparse.Namespace) -> int:
    """Plans the jobs with every planner (or one) and prints the comparison first, then the
    per-planner tables; the cluster's derivation notes go to --verbose and the JSON."""
    from . import cluster_spec, generate, planner as planner_mod, report
    from ._progress import Status
    if args.cluster is not None and args.generate is not None:
        raise ValueError("give --cluster or --generate, not both")
    if args.model is not None and args.classifier != "learned":
        raise ValueError(f"--model {args.model!r} has no effect with --classifier {args.classifier}; give one of them")
    if args.model is not None and args.gnn:
        raise ValueError(f"--model {args.model!r} has no effect with --gnn; give one of them")
    status = args.status = Status(enabled=not args.json)
    if args.cluster is not None:
        status(f"loading cluster {args.cluster}")
        spec = _load_cluster(args.cluster)
    elif args.generate is not None:
        status(f"generating a cluster of {args.generate} machines")
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
    default_cluster = args.cluster is None and args.generate is None
    if args.planner == "all":
        names = ["a", "b", "c", "search", "hulk"]
        if default_cluster and sorted(jobs) == sorted(datasets.HULK47_CLASSES):
            names.append("table2")
    else:
        names = [args.planner]
    if args.fail is not None and not 0 <= args.fail < len(spec):
        raise ValueError(f"--fail {args.fail}: the cluster has {len(spec)} machines (0-{len(spec) - 1})")
    add = _load_add(args.add) if args.add is not None else None
    if add is not None and isinstance(spec, generate.RegionalCluster):
        raise ValueError("--add: a generated cluster (--generate, or a hulk-regional/1 file) does not take new "
                         "machines; use an explicit cluster (the bundled one or a hulk-cluster/1 file)")
    if (args.fail is not None or add is not None) and not any(n in ("search", "hulk", "table2") for n in names):
        raise ValueError(f"--fail/--add repair concurrent plans, but --planner {args.planner} plans jobs one "
                         "after another; use --planner all, search, hulk or table2")
    model = None
    if args.classifier in ("heuristic", "greedy"):
        model = args.classifier
    elif args.model is not None:
        from . import learn
        model = learn.LearnedPlanner.load(args.model)
    if args.gnn:
        if not default_cluster or jobs != list(datasets.HULK47_CLASSES):
            raise ValueError("--gnn trains the classifier on the paper's Table 2 labels: it needs the bundled "
                             f"cluster and the jobs {', '.join(datasets.HULK47_CLASSES)} in that order")
        status("training the Table 2 GNN")
        model = _table2_gnn(args.seed)
    plans = []
    for k, name in enumerate(names):
        status(f"planning with {name} ({k + 1}/{len(names)})"
               + (f"; search time limit {args.time_limit:g} s" if name in ("search", "hulk") else ""))
        plans.append(planner_mod.plan(spec, job_specs, name, time_limit_s=args.time_limit, seed=args.seed,
                                      model=model, max_iterations=args.max_iterations))
    repaired = []
    if args.fail is not None or add is not None:
        for p in plans:
            if p.sequential:
                continue  # Systems A/B/C re-plan from scratch on the whole cluster; nothing to repair
            q = p.without(args.fail) if args.fail is not None else p
            if add is not None:
                q = q.with_machine(*add)
            repaired.append((p, q))
    status.done()
    notes = list(getattr(spec, "notes", []))
    if args.json:
        out = dict(cluster=spec.summary(), cluster_notes=notes, jobs=jobs, plans=[p.to_dict() for p in plans],
                   repaired=[dict(planner=p.planner, plan=q.to_dict()) for p, q in repaired])
        json.dump(out, sys.stdout, indent=2, allow_nan=False)
        print()
    else:
        summary = [line for line in spec.summary().splitlines() if not line.startswith("note: ")]
        print("\n".join(summary))
        print(f"jobs: {', '.join(jobs)}\n")
        print(report.comparison_table(plans) + "\n")
        print(report.job_comparison_table(plans) + "\n")
        for p in plans:
            print(report.plan_table(p) + "\n")
        for p, q in repaired:
            what = []
            if args.fail is not None:
                what.append(f"machine {args.fail} failed")
            if add is not None:
                what.append("a machine joined")
            print(f"{p.title} after {' and '.join(what)}: repaired in {q.repair_s * 1e3:.1f} ms, "
                  f"moved machines {report.ranges(q.moved) if q.moved else 'none'}")
            print(report.plan_table(q) + "\n")
        if args.verbose:
            print("how the cluster's attributes were derived:")
            print("\n".join(f"note: {n}" for n in notes))
        elif notes:
            print(f"{len(notes)} notes on how the cluster's attributes were derived (--verbose shows them; "
                  f"--json has them)")
    if args.png:
        report.save_figure(plans, args.png, cluster=spec)
        if not args.json:
            print(f"figure written to {args.png}")
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
                                   lr=args.lr, seed=args.seed, device=args.device, boost=args.boost,
                                   idle_ratio=args.idle_ratio,
                                   progress=not args.quiet, log=log)
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
    if not 2 <= lo <= hi <= 100_000:
        raise ValueError(f"--sizes {text}: expected 2 <= LO <= HI <= 100000")
    return lo, hi


def cmd_info(args: argparse.Namespace) -> int:
    print(f"hulk {_core.__version__}")
    print(f"CUDA backend compiled: {bool(_core.engine.built_with_cuda)}"
          + (" (SIMT build: the kernels run on the CPU simulator)" if _core.engine.cuda_simulated else ""))
    print(f"CUDA usable: {cuda_available()}" + ("" if cuda_available() else f" ({cuda_unavailable_reason()})"))
    print(f"CPU threads: {get_num_threads()}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="hulk", description="Hulk: GNN planner for geo-distributed training")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("classify", help="train the GNN on the bundled 47-server cluster with the paper's labels "
                                        "and print the per-epoch table and each machine's predicted job")
    p.add_argument("--epochs", type=_integer(1, MAX_EPOCHS), default=200, help="training epochs (default 200)")
    p.add_argument("--hidden", type=_hidden, default=[64, 64], help="layer widths, e.g. 64,64 (default)")
    p.add_argument("--pooling", choices=["sum", "mean"], default="sum", help="EdgePool pooling (default sum)")
    p.add_argument("--lr", type=_real(0, 1, lo_open=True), default=0.01, help="Adam learning rate in (0, 1] "
                                                                              "(default 0.01)")
    p.add_argument("--weight-decay", type=_real(0, 1), default=5e-4, help="L2 weight decay in [0, 1] (default 5e-4)")
    p.add_argument("--dropout", type=_real(0, 0.99), default=0.0, help="dropout between layers (default 0)")
    p.add_argument("--seed", type=_integer(0, MAX_SEED), default=0, help="random seed (default 0)")
    p.add_argument("--save", metavar="PATH", type=_path, help="write the trained weights to PATH (atomically)")
    p.add_argument("--json", action="store_true", help="print the history and predictions as JSON")
    p.set_defaults(func=cmd_classify)
    p = sub.add_parser("plan", help="plan jobs on a cluster (default: the paper's four jobs on its 47-server "
                                    "cluster) with Systems A/B/C, Search and Hulk, and compare them")
    p.add_argument("--jobs", default="paper4", help="paper4 (default: OPT-175B, T5-11B, GPT-2 1.5B, BERT-large), "
                                                    "paper6 (adds RoBERTa-large, XLNet-large) or names, comma-separated")
    p.add_argument("--models", metavar="FILE", type=_path, help="JSON file of your own models (schema: hulk.models); "
                   "--jobs names are looked up there before the catalogue")
    p.add_argument("--cluster", metavar="FILE", type=_path, help="cluster JSON file (schema: hulk.cluster_spec); default: the "
                                                     "bundled 47-server cluster")
    p.add_argument("--planner", default="all", choices=["all", "a", "b", "c", "search", "hulk", "table2"],
                   help="one planner, or all (default)")
    p.add_argument("--time-limit", type=_real(0, MAX_SECONDS, lo_open=True), default=2.0,
                   help="search time limit in seconds (default 2; at most a week)")
    p.add_argument("--seed", type=_integer(0, MAX_SEED), default=0, help="random seed (default 0)")
    p.add_argument("--generate", type=_integer(2, MAX_GENERATED), metavar="N", help="plan on a generated cluster of N machines "
                                                               "(hulk.generate, seeded by --seed)")
    p.add_argument("--max-iterations", type=_integer(0, MAX_ITERATIONS), default=0, help="also stop the search after this many moves "
                                                                 "(reproducible plans; default 0 = time limit only)")
    p.add_argument("--classifier", choices=["learned", "heuristic", "greedy"], default="learned",
                   help="how Hulk classifies machines: the learned planner (default: the model shipped with "
                        "the package, or --model), the region heuristic, or the learned planner's candidates "
                        "without the GNN (the greedy rule of hulk.greedy)")
    p.add_argument("--model", metavar="PATH", type=_path, help="a learned planner written by `hulk train`")
    p.add_argument("--gnn", action="store_true", help="Hulk classifies machines with a GNN trained on the "
                                                      "paper's Table 2 labels (the paper's own setup)")
    p.add_argument("--fail", type=_integer(0, 2**31), metavar="MACHINE", help="then repair the concurrent plans after this "
                                                                "machine fails")
    p.add_argument("--add", metavar="JSON", help="then add a machine: JSON text or file with 'machine' (region, "
                                                 "memory_gb, capability or gpu or tflops) and 'links' (to, latency_ms)")
    p.add_argument("--json", action="store_true", help="print the plans as JSON (with the cluster's notes)")
    p.add_argument("--verbose", action="store_true", help="also print the notes on how the cluster's attributes "
                                                          "were derived")
    p.add_argument("--png", metavar="PATH", type=_path, help="write a figure: machines on a world map coloured by "
                                                            "job (Hulk and Search) and per-job time bars "
                                                            "(needs matplotlib)")
    p.set_defaults(func=cmd_plan)
    p = sub.add_parser("train", help="label generated clusters with the search planner (cached) and train the "
                                     "learned planner on them")
    p.add_argument("--samples", type=_integer(1, 100_000), default=600, help="generated clusters (default 600)")
    p.add_argument("--sizes", default="16,2000", help="machine counts LO,HI, drawn log-uniformly (default 16,2000)")
    p.add_argument("--label-time", type=_real(0, MAX_SECONDS, lo_open=True), default=2.0, help="search time limit per cluster, s (default 2)")
    p.add_argument("--label-iterations", type=_integer(0, MAX_ITERATIONS), default=2000, help="search moves per cluster (default 2000)")
    p.add_argument("--workers", type=_integer(1, 1024), default=None,
                   help="labelling processes, >= 1 (default: CPU count)")
    p.add_argument("--cache", metavar="DIR", type=_path, help="label cache (default: $HULK_CACHE/labels or ~/.cache/hulk/labels)")
    p.add_argument("--epochs", type=_integer(1, MAX_EPOCHS), default=30, help="training epochs (default 30)")
    p.add_argument("--batch", type=_integer(1, 1_000_000), default=8, help="graphs per optimiser step (default 8)")
    p.add_argument("--hidden", type=_hidden, default=[64, 64, 64], help="layer widths (default 64,64,64)")
    p.add_argument("--idle-ratio", type=_real(0, 1e6, lo_open=True), default=8.0,
                   help="idle machines per busy one in each step's loss (a random subset; default 8)")
    p.add_argument("--boost", type=_integer(1, 100), default=4,
                   help="times per epoch a cluster is seen where the greedy rule is over 2%% behind the teacher "
                        "(default 4)")
    p.add_argument("--lr", type=_real(0, 1, lo_open=True), default=0.005,
                   help="Adam learning rate in (0, 1] (default 0.005)")
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument("--seed", type=_integer(0, MAX_SEED), default=0,
                   help="seed of the data set, split and weights (default 0)")
    p.add_argument("--out", type=_path, default="hulk-planner.gnn", help="model file (default hulk-planner.gnn; the "
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
        try:
            return args.func(args)
        finally:
            status = getattr(args, "status", None)
            if status is not None:
                status.done()  # stops the progress heartbeat, also when the command failed
    except (ValueError, RuntimeError, OSError, TypeError, KeyError) as exc:
        message = " ".join(str(exc).split())  # one line, whatever the exception's text holds
        if sys.stderr.isatty():
            sys.stderr.write("\r\033[K")  # clear a progress line
        print(f"hulk {args.command}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"hulk {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
