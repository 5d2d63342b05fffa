"""``hulk plan``: plan jobs on a cluster with every planner (or one), compare them, repair them."""

from __future__ import annotations

import argparse
import json
import os
import sys

from .. import datasets
from .._io import parse_json, read_json_file
from .._progress import Status
from ..plan import cluster_spec, export, generate, models, report
from ..plan.bundle import DEFAULT_PORT
from ..plan.learned import LearnedPlanner
from ..plan.planners import plan, table2_gnn
from ..plan.profile import load_profile
from ._args import MAX_GENERATED, MAX_ITERATIONS, MAX_SECONDS, MAX_SEED, figure_path, file_path, integer, real
from ..errors import InputError


def add_parser(sub) -> None:
    p = sub.add_parser("plan", help="plan jobs on a cluster (default: the paper's four jobs on its 47-server "
                                    "cluster) with Systems A/B/C, Search and Hulk, and compare them")
    p.add_argument("--jobs", default="paper4", help="paper4 (default: OPT-175B, T5-11B, GPT-2 1.5B, BERT-large), "
                                                    "paper6 (adds RoBERTa-large, XLNet-large) or names, comma-separated")
    p.add_argument("--models", metavar="FILE", type=file_path, help="JSON file of your own models (schema: hulk.plan.models); "
                   "--jobs names are looked up there before the catalogue")
    p.add_argument("--cluster", metavar="FILE", type=file_path, help="cluster JSON file (schema: hulk.plan.cluster_spec); default: the "
                                                     "bundled 47-server cluster")
    p.add_argument("--planner", default="all", choices=["all", "a", "b", "c", "search", "hulk", "table2"],
                   help="one planner, or all (default)")
    p.add_argument("--time-limit", type=real(0, MAX_SECONDS, lo_open=True), default=2.0,
                   help="planning time in seconds of search and hulk (hulk uses all of it, its classification "
                        "included; default 2; at most a week)")
    p.add_argument("--search-thread", action="store_true",
                   help="hulk also runs Search in a second thread for the same time limit and returns the shorter "
                        "plan: never longer than search's, at the price of a second core")
    p.add_argument("--seed", type=integer(0, MAX_SEED), default=0, help="random seed (default 0)")
    p.add_argument("--generate", type=integer(2, MAX_GENERATED), metavar="N", help="plan on a generated cluster of N machines "
                                                               "(hulk.plan.generate, seeded by --seed)")
    p.add_argument("--generate-mode", choices=list(generate.MODES), default="paper",
                   help="the generator for --generate: paper (default; the network fitted to the paper's cluster, "
                        "at most 40 regions) or measured (cloud regions with measured RTT and throughput, "
                        "8-GPU machines)")
    p.add_argument("--max-iterations", type=integer(0, MAX_ITERATIONS), default=0, help="also stop the local search of search and "
                   "hulk after this many moves (reproducible plans; default 0 = time limit only)")
    p.add_argument("--classifier", choices=["learned", "heuristic", "greedy"], default="learned",
                   help="how Hulk classifies machines: the learned planner (default: the model shipped with "
                        "the package, or --model), the region heuristic, or the learned planner's candidates "
                        "without the GNN (the greedy rule of hulk.plan.rules)")
    p.add_argument("--model", metavar="PATH", type=file_path, help="a learned planner written by `hulk train`")
    p.add_argument("--gnn", action="store_true", help="Hulk classifies machines with a GNN trained on the "
                                                      "paper's Table 2 labels (the paper's own setup)")
    p.add_argument("--fail", type=integer(0, 2**31), metavar="MACHINE", help="then repair the concurrent plans after this "
                                                                "machine fails")
    p.add_argument("--add", metavar="JSON", help="then add a machine: JSON text or file with 'machine' (region, "
                                                 "memory_gb, capability or gpu or tflops) and 'links' (to, latency_ms)")
    p.add_argument("--profile", metavar="FILE", type=file_path, action="append",
                   help="a measured profile (hulk-profile/1, written by `hulk profile`) of one job on one GPU type; "
                        "repeat for more models or GPU types. Profiled machines cost the job's compute from it")
    p.add_argument("--compute-model", choices=["flop", "flop-curve"], default="flop",
                   help="where no profile applies: flop (the cluster's tflops = peak x 0.35 for every layer; default) "
                        "or flop-curve (efficiency grows with layer width and tokens per micro-batch)")
    p.add_argument("--json", action="store_true", help="print the plans as JSON (with the cluster's notes)")
    p.add_argument("--verbose", action="store_true", help="also print the notes on how the cluster's attributes "
                                                          "were derived")
    p.add_argument("--figure", "--png", dest="png", metavar="PATH", type=figure_path,
                   help="write a figure: machines on a world map coloured by job (Hulk and Search) and per-job "
                        "time bars, in the format of PATH's extension (.png, .pdf, .svg, .eps, .ps; needs "
                        "matplotlib). --png is the old name of this option")
    p.add_argument("--export", metavar="DIR", type=file_path,
                   help="write one launch bundle per job into DIR (new or empty): <job>/job.json (stage map, "
                        "torchrun line per machine) and README.md; run one with python -m hulk.launch. Needs one "
                        "--planner")
    p.add_argument("--hosts", metavar="FILE", type=file_path,
                   help="with --export: JSON object of machine name -> address (host name or IP) for the "
                        "rendezvous; default: the cluster file's address fields, else a placeholder")
    p.add_argument("--port", type=integer(1, 65535),
                   help="with --export: the rendezvous port on rank 0's machine (default 29500)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Plans the jobs with every planner (or one) and prints the comparison first, then the
    per-planner tables; the cluster's derivation notes go to --verbose and the JSON."""
    _check_arguments(args)
    status = args.status = Status(enabled=not args.json)
    spec = _cluster(args, status)
    jobs, job_specs = _jobs(args)
    default_cluster = args.cluster is None and args.generate is None
    names = _planner_names(args, jobs, default_cluster)
    add = _check_repairs(args, spec, names)
    model = _classifier(args, jobs, default_cluster, status)
    measured = [load_profile(path) for path in args.profile or []]
    plans = []
    for k, name in enumerate(names):
        status(f"planning with {name} ({k + 1}/{len(names)})"
               + (f"; {name} time limit {args.time_limit:g} s" if name in ("search", "hulk") else ""))
        plans.append(_plan_one(args, spec, job_specs, name, model, measured))
    repaired = _repaired(plans, args.fail, add)
    status.done()
    if args.json:
        _print_json(spec, jobs, plans, repaired)
    else:
        _print_text(args, spec, jobs, plans, repaired, add)
    if args.png:
        report.save_figure(plans, args.png, cluster=spec)
        if not args.json:
            print(f"figure written to {args.png}")
    if args.export:
        _export(args, plans[0])
    return 0


def _export(args, p) -> None:
    """--export: the plan's launch bundles; what was written (or skipped, and why) to stderr
    when --json holds stdout."""
    hosts = export.load_hosts(args.hosts) if args.hosts else None
    port = args.port if args.port is not None else DEFAULT_PORT
    index = export.export_plan(p, args.export, hosts=hosts, hosts_path=args.hosts, port=port)
    out = sys.stderr if args.json else sys.stdout
    for e in index:
        where = os.path.join(args.export, e["bundle"]) if e["bundle"] else f"no bundle ({e['reason']})"
        print(f"export: {e['job']}: {where}", file=out)


def _plan_one(args, spec, job_specs, name, model, measured):
    """plan() with the options; a budget too short for any plan is reported as --time-limit's."""
    try:
        return plan(spec, job_specs, name, time_limit_s=args.time_limit, seed=args.seed, model=model,
                    max_iterations=args.max_iterations, profile=measured, compute_model=args.compute_model,
                    search_thread=args.search_thread and name == "hulk")
    except InputError as exc:
        prefix = f"time_limit_s={args.time_limit!r} "
        if str(exc).startswith(prefix):
            raise InputError(f"--time-limit {args.time_limit:g} " + str(exc)[len(prefix):]) from None
        raise


def _check_arguments(args) -> None:
    """Options that contradict each other, refused before any work."""
    if args.cluster is not None and args.generate is not None:
        raise InputError("give --cluster or --generate, not both")
    if args.generate_mode != "paper" and args.generate is None:
        raise InputError(f"--generate-mode {args.generate_mode} has no effect without --generate N")
    if args.model is not None and args.classifier != "learned":
        raise InputError(f"--model {args.model!r} has no effect with --classifier {args.classifier}; give one of them")
    if args.export is not None and args.planner == "all":
        raise InputError("--export writes the bundles of one plan: give --planner (a, b, c, search, hulk or table2)")
    if (args.hosts is not None or args.port is not None) and args.export is None:
        raise InputError("--hosts and --port go with --export")
    if args.export is not None:
        export.check_empty_directory(args.export)  # before planning, which may take long
    if args.model is not None and args.gnn:
        raise InputError(f"--model {args.model!r} has no effect with --gnn; give one of them")
    if args.search_thread and args.planner not in ("hulk", "all"):
        raise InputError(f"--search-thread is hulk's option; it has no effect with --planner {args.planner}")


def _cluster(args, status):
    """--cluster, --generate, or the bundled 47-server cluster."""
    if args.cluster is not None:
        status(f"loading cluster {args.cluster}")
        return _load_cluster(args.cluster)
    if args.generate is not None:
        status(f"generating a cluster of {args.generate} machines ({args.generate_mode} mode)")
        return generate.generate_cluster(args.generate, seed=args.seed, mode=args.generate_mode)
    return cluster_spec.hulk47_spec()


def _jobs(args) -> tuple:
    """(job names, what the planners take): --jobs, looked up in --models before the catalogue."""
    jobs = _job_list(args.jobs)
    job_specs = jobs
    if args.models:  # the user's models, looked up before the catalogue
        user = models.load_models(args.models)
        job_specs = [models.get(name, user) for name in jobs]
        jobs = [m.name for m in job_specs]
    return jobs, job_specs


def _planner_names(args, jobs, default_cluster) -> list[str]:
    if args.planner != "all":
        return [args.planner]
    names = ["a", "b", "c", "search", "hulk"]
    if default_cluster and sorted(jobs) == sorted(datasets.HULK47_CLASSES):
        names.append("table2")
    return names


def _check_repairs(args, spec, names):
    """--fail and --add checked against the cluster and the planners; returns --add's
    ``(machine, links)`` or None."""
    if args.fail is not None and not 0 <= args.fail < len(spec):
        raise InputError(f"--fail {args.fail}: the cluster has {len(spec)} machines (0-{len(spec) - 1})")
    add = _load_add(args.add) if args.add is not None else None
    if add is not None and not spec.accepts_new_machines:
        raise InputError("--add: a generated cluster (--generate, or a hulk-regional/1 file) does not take new "
                         "machines; use an explicit cluster (the bundled one or a hulk-cluster/1 file)")
    if (args.fail is not None or add is not None) and not any(n in ("search", "hulk", "table2") for n in names):
        raise InputError(f"--fail/--add repair concurrent plans, but --planner {args.planner} plans jobs one "
                         "after another; use --planner all, search, hulk or table2")
    return add


def _classifier(args, jobs, default_cluster, status):
    """Hulk's ``model``: --classifier, --model or --gnn."""
    model = None
    if args.classifier in ("heuristic", "greedy"):
        model = args.classifier
    elif args.model is not None:
        model = LearnedPlanner.load(args.model)
    if args.gnn:
        if not default_cluster or jobs != list(datasets.HULK47_CLASSES):
            raise InputError("--gnn trains the classifier on the paper's Table 2 labels: it needs the bundled "
                             f"cluster and the jobs {', '.join(datasets.HULK47_CLASSES)} in that order")
        status("training the Table 2 GNN")
        model = table2_gnn(args.seed)
    return model


def _repaired(plans, fail, add) -> list:
    """(plan, repaired plan) for each concurrent plan after --fail and/or --add."""
    repaired = []
    if fail is not None or add is not None:
        for p in plans:
            if p.sequential:
                continue  # Systems A/B/C re-plan from scratch on the whole cluster; nothing to repair
            q = p.without(fail) if fail is not None else p
            if add is not None:
                q = q.with_machine(*add)
            repaired.append((p, q))
    return repaired


def _print_json(spec, jobs, plans, repaired) -> None:
    out = dict(cluster=spec.summary(), cluster_notes=spec.derivation_notes(), jobs=jobs,
               plans=[p.to_dict() for p in plans],
               repaired=[dict(planner=p.planner, plan=q.to_dict()) for p, q in repaired])
    json.dump(out, sys.stdout, indent=2, allow_nan=False)
    print()


def _print_text(args, spec, jobs, plans, repaired, add) -> None:
    notes = spec.derivation_notes()
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


def _job_list(text: str) -> list[str]:
    presets = {"paper4": models.PAPER_JOBS_4, "paper6": models.PAPER_JOBS_6}
    if text.lower() in presets:
        return list(presets[text.lower()])
    return [s.strip() for s in text.split(",") if s.strip()]


def _load_add(text: str) -> tuple:
    """--add: a JSON file or JSON text holding a machine (or {"machine": ..., "links": [...]})."""
    if os.path.exists(text):
        doc = read_json_file(text, "--add file", max_bytes=1 << 20)
        where = f"--add file {text!r}"
    else:
        if not text.lstrip().startswith("{"):
            raise InputError(f"--add: {text!r} is neither a file nor a JSON object")
        doc = parse_json(text, "--add")
        where = "--add"
    if not isinstance(doc, dict):
        raise InputError(f"{where}: expected a JSON object with 'machine' and 'links', got {doc!r:.80}")
    machine, links = (doc["machine"], doc.get("links", [])) if "machine" in doc else (doc, [])
    if "machine" in doc and set(doc) - {"machine", "links"}:
        raise InputError(f"{where}: unknown keys {sorted(set(doc) - {'machine', 'links'})}; allowed: machine, links")
    if not isinstance(machine, dict):
        raise InputError(f"{where}: 'machine' must be an object, got {machine!r:.80}")
    if not isinstance(links, list) or not all(isinstance(l, dict) for l in links):
        raise InputError(f"{where}: 'links' must be a list of objects with 'to' and 'latency_ms', got {links!r:.80}")
    return machine, links


def _load_cluster(path: str):
    """--cluster FILE: a hulk-cluster/1 or hulk-regional/1 JSON file (read once, strictly)."""
    doc = read_json_file(path, "--cluster")
    try:
        if isinstance(doc, dict) and doc.get("version") == generate.SCHEMA_VERSION:
            return generate.RegionalCluster.from_dict(doc)
        return cluster_spec.from_json(doc)
    except (ValueError, TypeError) as exc:
        raise InputError(f"--cluster {path!r}: {exc}") from None
