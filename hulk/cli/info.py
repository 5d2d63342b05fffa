"""``hulk info``: version, CUDA availability, thread count and the BLAS."""

from __future__ import annotations

import argparse

from .. import _core
from .._device import cuda_available, cuda_unavailable_reason, get_num_threads, uses_openblas


def add_parser(sub) -> None:
    p = sub.add_parser("info", help="version, CUDA availability, thread count and the BLAS")
    p.set_defaults(func=run)


def blas_line() -> str:
    """Which BLAS the extension was built against: OpenBLAS, or another one, which hulk runs on one
    thread and which, if it is the reference BLAS, is several times slower (the learned planner's
    forward pass at 20,000 machines took 0.19 s on Debian's libblas3 against 0.056 s on OpenBLAS,
    2-core VM, 2026-11-27), enough to change which candidate sources fit a planning budget."""
    if uses_openblas():
        return "OpenBLAS"
    return ("not OpenBLAS (found at build time instead; if it is the reference BLAS the dense math is several "
            "times slower: install libopenblas-dev and rebuild, scripts/setup.sh)")


def blas_kernels_line() -> str | None:
    """The kernels OpenBLAS picked for this CPU (None for another BLAS). OpenBLAS 0.3.21
    (Debian 12) does not know every newer CPU and falls back to its generic "Prescott" kernels,
    which are slower and round differently: on an AVX-512 VM (2026-11-28) it picked Prescott
    unless OPENBLAS_CORETYPE named a core (Haswell, SkylakeX, Cooperlake, ...)."""
    core = _core.engine.blas_info().get("core", "")
    if not uses_openblas() or not core:
        return None
    if core.lower() == "prescott":
        return (f"{core} (OpenBLAS's generic kernels, its choice on a CPU it does not know; the environment "
                "variable OPENBLAS_CORETYPE picks others, e.g. Haswell on a CPU with AVX2)")
    return core


def run(args: argparse.Namespace) -> int:
    """Prints the version, whether CUDA is built and usable, the thread count and the BLAS."""
    print(f"hulk {_core.__version__}")
    print(f"CUDA backend compiled: {bool(_core.engine.built_with_cuda)}"
          + (" (SIMT build: the kernels run on the CPU simulator)" if _core.engine.cuda_simulated else ""))
    print(f"CUDA usable: {cuda_available()}" + ("" if cuda_available() else f" ({cuda_unavailable_reason()})"))
    print(f"CPU threads: {get_num_threads()}")
    print(f"BLAS: {blas_line()}")
    if (kernels := blas_kernels_line()) is not None:
        print(f"BLAS kernels: {kernels}")
    return 0
