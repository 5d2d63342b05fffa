"""``python -m hulk.launch job.json``: run one exported job (one process of it, under torchrun)."""

from __future__ import annotations

import argparse
import os
import sys

from ..cli._args import Parser, file_path, integer, real
from ..errors import HulkError
from ..plan.bundle import read_bundle
from .run import shape_of, train_distributed, train_single, write_result


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="python -m hulk.launch",
               description="Train one job of an exported plan (hulk plan --export) on PyTorch: run it under "
                           "torchrun with the bundle's command lines, one process per machine; --single trains "
                           "the same model and data in this one process (the reference).")
    p.add_argument("bundle", type=file_path, help="the bundle's job.json")
    p.add_argument("--iterations", type=integer(1, 10**6), default=10, help="measured iterations (default 10)")
    p.add_argument("--warmup", type=integer(0, 10**6), default=2, help="iterations before the measured ones (default 2)")
    p.add_argument("--layers", type=integer(1, 4096), help="scale down: this many blocks (stage splits scaled)")
    p.add_argument("--hidden", type=integer(1, 1 << 16), help="scale down: hidden size")
    p.add_argument("--heads", type=integer(1, 1 << 12), help="attention heads (default: the bundle's, or hidden/64 "
                                                            "with --hidden)")
    p.add_argument("--seq-len", type=integer(1, 1 << 20), help="scale down: sequence length")
    p.add_argument("--micro-batch-size", type=integer(1, 1 << 20), help="scale down: sequences per micro-batch")
    p.add_argument("--seed", type=integer(0, 2**31 - 1), default=0, help="weights and data seed (default 0)")
    p.add_argument("--lr", type=real(0, 10.0, lo_open=True), default=1e-3, help="Adam learning rate (default 1e-3)")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="auto (default): CUDA with NCCL when a GPU is there, else the CPU with gloo")
    p.add_argument("--dtype", choices=["float32", "float64", "bfloat16", "float16"], default="float32")
    p.add_argument("--single", action="store_true", help="train the whole model in this process (no torchrun)")
    p.add_argument("--out", metavar="FILE", type=file_path, help="write the measured iteration times and losses "
                                                                 "as JSON (rank 0)")
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        doc = read_bundle(args.bundle)
        shape = shape_of(doc, args.layers, args.hidden, args.heads, args.seq_len, args.micro_batch_size)
        common = dict(iterations=args.iterations, warmup=args.warmup, seed=args.seed, lr=args.lr,
                      device=args.device, dtype_name=args.dtype)
        if args.single:
            result = train_single(doc, shape, **common)
        else:
            if "RANK" not in os.environ:
                parser.error("no RANK in the environment: run under torchrun (see the bundle's README), "
                             "or give --single")
            result = train_distributed(doc, args.bundle, shape, **common)
    except HulkError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    if result is not None:
        print(f"mean {result['mean_iteration_s']:.4f} s per iteration over {args.iterations} "
              f"(predicted {result['predicted_iteration_s']:.4g} s for the plan's full-size model)")
        if args.out:
            write_result(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
