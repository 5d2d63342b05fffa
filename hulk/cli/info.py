"""``hulk info``: version, CUDA availability and thread count."""

from __future__ import annotations

import argparse

from .. import _core
from .._device import cuda_available, cuda_unavailable_reason, get_num_threads


def add_parser(sub) -> None:
    p = sub.add_parser("info", help="version, CUDA availability and thread count")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Prints the version, whether CUDA is built and usable, and the thread count."""
    print(f"hulk {_core.__version__}")
    print(f"CUDA backend compiled: {bool(_core.engine.built_with_cuda)}"
          + (" (SIMT build: the kernels run on the CPU simulator)" if _core.engine.cuda_simulated else ""))
    print(f"CUDA usable: {cuda_available()}" + ("" if cuda_available() else f" ({cuda_unavailable_reason()})"))
    print(f"CPU threads: {get_num_threads()}")
    return 0
