"""``hulk train``: label generated clusters with the search planner and train the learned planner."""

from __future__ import annotations

import argparse

from ..plan.training import make_dataset, train
from ._args import MAX_EPOCHS, MAX_ITERATIONS, MAX_SECONDS, MAX_SEED, file_path, integer, real, widths
from ..errors import InputError


def add_parser(sub) -> None:
    p = sub.add_parser("train", help="label generated clusters with the search planner (cached) and train the "
                                     "learned planner on them")
    p.add_argument("--samples", type=integer(1, 100_000), default=600, help="generated clusters (default 600)")
    p.add_argument("--sizes", default="16,2000", help="machine counts LO,HI, drawn log-uniformly (default 16,2000)")
    p.add_argument("--label-time", type=real(0, MAX_SECONDS, lo_open=True), default=2.0, help="search time limit per cluster, s (default 2)")
    p.add_argument("--label-iterations", type=integer(0, MAX_ITERATIONS), default=2000, help="search moves per cluster (default 2000)")
    p.add_argument("--workers", type=integer(1, 1024), default=None,
                   help="labelling processes, >= 1 (default: CPU count)")
    p.add_argument("--cache", metavar="DIR", type=file_path, help="label cache (default: $HULK_CACHE/labels or ~/.cache/hulk/labels)")
    p.add_argument("--epochs", type=integer(1, MAX_EPOCHS), default=30, help="training epochs (default 30)")
    p.add_argument("--batch", type=integer(1, 1_000_000), default=8, help="graphs per optimiser step (default 8)")
    p.add_argument("--hidden", type=widths, default=[64, 64, 64], help="layer widths (default 64,64,64)")
    p.add_argument("--idle-ratio", type=real(0, 1e6, lo_open=True), default=8.0,
                   help="idle machines per busy one in each step's loss (a random subset; default 8)")
    p.add_argument("--boost", type=integer(1, 100), default=4,
                   help="times per epoch a cluster is seen where the greedy rule is over 2%% behind the teacher "
                        "(default 4)")
    p.add_argument("--lr", type=real(0, 1, lo_open=True), default=0.005,
                   help="Adam learning rate in (0, 1] (default 0.005)")
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument("--seed", type=integer(0, MAX_SEED), default=0,
                   help="seed of the data set, split and weights (default 0)")
    p.add_argument("--out", type=file_path, default="hulk-planner.gnn", help="model file (default hulk-planner.gnn; the "
                                                             "encoding goes to OUT.json)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Labels generated clusters with the search planner (cached) and trains the learned planner."""
    log = (lambda *a, **k: None) if args.quiet else print
    sizes = _sizes(args.sizes)
    samples = make_dataset(args.samples, seed=args.seed, sizes=sizes, time_limit_s=args.label_time,
                           iterations=args.label_iterations, cache_dir=args.cache, workers=args.workers,
                           progress=not args.quiet)
    unlabelled = sum(1 for s in samples if not (s.labels >= 0).any())
    log(f"{len(samples)} labelled clusters of {sizes[0]}-{sizes[1]} machines "
        f"({unlabelled} where the search kept a sequential plan; not used)")
    planner, history = train(samples, hidden=args.hidden, epochs=args.epochs, batch_graphs=args.batch,
                             lr=args.lr, seed=args.seed, device=args.device, boost=args.boost,
                             idle_ratio=args.idle_ratio, progress=not args.quiet, log=log)
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
        raise InputError(f"--sizes: expected two integers LO,HI, got {text!r}") from None
    if not 2 <= lo <= hi <= 100_000:
        raise InputError(f"--sizes {text}: expected 2 <= LO <= HI <= 100000")
    return lo, hi
