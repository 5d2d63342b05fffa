"""Which devices this build and machine can use."""

from __future__ import annotations

from . import _core
from ._checks import check_int
from .errors import InputError, DeviceError


def cuda_available() -> bool:
    """True when hulk was built with CUDA and a CUDA device is usable here.

    False in the SIMT build (see :func:`cuda_simulated`), which uses no GPU."""
    return bool(_core.engine.built_with_cuda) and _core.engine.cuda_device_count() > 0


def cuda_simulated() -> bool:
    """True in the SIMT build (``HULK_CUDA=SIMT``): ``device="cuda"`` runs the CUDA kernels
    on the CPU simulator, for tests and debugging. Never the default build."""
    return bool(_core.engine.cuda_simulated)


def cuda_unavailable_reason() -> str:
    """Why :func:`cuda_available` is False ("" when it is True)."""
    return "" if cuda_available() else _core.engine.cuda_unavailable_reason()


def check_device(device: str) -> str:
    """Validates a ``device`` argument and returns it normalised ("cpu" or "cuda")."""
    if not isinstance(device, str) or device.lower() not in ("cpu", "cuda"):
        raise InputError(f"device must be 'cpu' or 'cuda', got {device!r}")
    device = device.lower()
    if device == "cuda" and not (cuda_available() or cuda_simulated()):
        raise DeviceError(f"device='cuda' was requested but no GPU is usable: {cuda_unavailable_reason()}")
    return device


def uses_openblas() -> bool:
    """Whether the extension was built against OpenBLAS (CMake falls back to any BLAS it finds;
    the reference BLAS is several times slower: ``hulk info``)."""
    return _core.engine.blas_info()["vendor"] == "openblas"


def get_num_threads() -> int:
    """Number of OpenMP threads the C++ core uses."""
    return _core.engine.get_num_threads()


def set_num_threads(n: int) -> None:
    """Sets the number of OpenMP threads the C++ core uses (n >= 1), GEMMs included: the BLAS runs
    single-threaded inside them (one thread pool; OpenBLAS is set to one thread)."""
    _core.engine.set_num_threads(check_int(n, "num_threads", 1, 2**31 - 1))  # a C int
