"""``hulk profile``: measure a model's layer with PyTorch on this machine, write a hulk-profile/1 file."""

from __future__ import annotations

import argparse
import os

from ..plan import models
from ..plan.hf_config import spec_from_hf_config
from ..plan.profiling import DTYPES, measure
from ._args import MAX_SEED, file_path, integer
from ..errors import InputError

MAX_REPEATS = 100_000
MAX_MICRO_BATCH = 1 << 20


def add_parser(sub) -> None:
    p = sub.add_parser("profile", help="measure a model's transformer block with PyTorch (CPU or CUDA) and write a "
                                       "profile for `hulk plan --profile` (needs `pip install hulk[torch]`)")
    p.add_argument("--model", help="the model: a catalogue name (see hulk/data/models.json) or one of --models; with "
                                   "--hf-config, the name the profile gives the model (default: the config's)")
    p.add_argument("--hf-config", metavar="PATH_OR_NAME",
                   help="size the block from a Hugging Face config instead: a config.json, a model directory or a "
                        "hub name (needs `pip install transformers`; a hub name needs the network or the cache)")
    p.add_argument("--seq-len", type=integer(1, 1 << 24),
                   help="with --hf-config: the sequence length (default: the config's max_position_embeddings)")
    p.add_argument("--models", metavar="FILE", type=file_path, help="JSON file of your own models (schema: hulk.plan.models)")
    p.add_argument("--out", metavar="FILE", type=file_path, required=True, help="where to write the profile (JSON)")
    p.add_argument("--micro-batch", type=integer(1, MAX_MICRO_BATCH), nargs="+", default=[1, 2, 4], metavar="B",
                   help="micro-batch sizes to measure, in sequences per GPU (default: 1 2 4)")
    p.add_argument("--device", default="cpu", help="PyTorch device: cpu (default), cuda or cuda:N")
    p.add_argument("--dtype", choices=DTYPES, default="float32", help="parameter and activation type (default float32)")
    p.add_argument("--warmup", type=integer(0, MAX_REPEATS), default=3, help="untimed passes first (default 3)")
    p.add_argument("--repeats", type=integer(1, MAX_REPEATS), default=10,
                   help="timed passes per size; the profile keeps their median (default 10)")
    p.add_argument("--gpu", help="the GPU type the cluster's machines name (default: 'cpu' on the CPU, the CUDA "
                                 "device's name on a GPU)")
    p.add_argument("--seed", type=integer(0, MAX_SEED), default=0, help="random seed of the weights and inputs")
    p.add_argument("--statistic", choices=["median", "mean"], default="median",
                   help="figure written from the timed passes (default median; mean under a CPU quota)")
    p.add_argument("--threads", type=integer(1, 4096), help="PyTorch intra-op threads (default: PyTorch's choice); "
                                                           "give what the training processes use, e.g. 1")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Measures, prints progress, writes the profile."""
    if os.path.isdir(args.out):
        raise InputError(f"--out {args.out!r} is a directory; give a file name")
    heads = None
    if args.hf_config is not None:
        if args.models:
            raise InputError("give --hf-config or --models, not both")
        spec, heads, notes = spec_from_hf_config(args.hf_config, seq_len=args.seq_len, name=args.model)
        for note in notes:
            print(f"note: {note}", flush=True)
    elif args.model is None:
        raise InputError("give --model (a catalogue or --models name) or --hf-config")
    else:
        if args.seq_len is not None:
            raise InputError("--seq-len applies only with --hf-config (a model spec states its own)")
        spec = models.get(args.model, models.load_models(args.models) if args.models else None)
    prof = measure(spec, args.micro_batch, device=args.device, dtype=args.dtype, warmup=args.warmup,
                   repeats=args.repeats, gpu=args.gpu, seed=args.seed, threads=args.threads,
                   statistic=args.statistic, heads=heads, progress=lambda line: print(line, flush=True))
    prof.save(args.out)
    print(f"profile of {spec.name} on {prof.device} written to {args.out}")
    return 0
