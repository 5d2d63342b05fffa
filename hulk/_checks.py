"""Input checks shared by the Python API: every message names the argument and the value."""

from __future__ import annotations

import contextlib
import numbers

import numpy as np
from .errors import InputError, InputTypeError, OutOfMemoryError

INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1
FLOAT32_MAX = float(np.finfo(np.float32).max)  # 3.4028235e38: the engine computes in float32
INT32_MAX = 2**31 - 1  # the engine's CSR column indices are int32
# scipy.sparse formats taken as sparse features; CSC and COO are converted to CSR (sparse to
# sparse, never to dense; COO's duplicate entries are summed, as scipy's tocsr does).
SPARSE_FORMATS = ("csr", "csc", "coo")


def is_int(x) -> bool:
    """A Python or numpy integer, not a bool."""
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def is_real(x) -> bool:
    """A Python or numpy real (np.float32 and integers included), not a bool."""
    t = type(x)
    if t is float or t is int:  # the common case, without the slow ABC check (1 M links per file)
        return True
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def check_int(value, name: str, lo: int = 0, hi: int = INT64_MAX) -> int:
    """``value`` as an int after checking it is an integer (not a bool) in ``[lo, hi]``; the
    default ``hi`` is the int64 range of the C++ core's integer arguments."""
    if not is_int(value) or not lo <= value <= hi:
        top = "2**63 - 1" if hi == INT64_MAX else "2**64 - 1" if hi == UINT64_MAX else str(hi)
        raise InputError(f"{name} must be an integer in [{lo}, {top}], got {value!r}")
    return int(value)


def check_seed(value, name: str = "seed") -> int:
    """A random seed: an integer in [0, 2**64 - 1], the uint64 the C++ core (models, search
    planner) takes; generators seeded in Python keep to the same range so that one seed works
    everywhere."""
    return check_int(value, name, 0, UINT64_MAX)


def check_hashable(value, name: str) -> None:
    """Raises InputTypeError naming ``name`` when ``value`` cannot be a dict key or set member
    (ids are looked up by value: a list or a dict cannot be one)."""
    try:
        hash(value)
    except TypeError:
        raise InputTypeError(f"{name} = {_short(value)} is of type {type(value).__name__}, which is not hashable; "
                             f"ids must be hashable (a number, a string, a tuple, ...)") from None


def _short(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def format_bytes(n: float) -> str:
    """``n`` bytes in a readable unit (``"1.5 GiB"``)."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"  # pragma: no cover


@contextlib.contextmanager
def naming_out_of_memory(call: str, sizes, estimate_bytes=None):
    """Turns a MemoryError inside the block (numpy's, Python's, or the C++ core's generic
    OutOfMemoryError) into an :class:`OutOfMemoryError` that names ``call``, the ``sizes``
    (a dict, or a callable returning one, e.g. nodes, edges, features) and, when given, an
    estimate of the bytes; the original exception stays chained. An error already named by an
    inner call passes through unchanged."""
    try:
        yield
    except MemoryError as exc:
        if getattr(exc, "hulk_call", None) is not None:
            raise
        # describing the sizes must not hide the out-of-memory error: each part may fail alone
        try:
            shown = sizes() if callable(sizes) else sizes
            text = ", ".join(f"{k} {v}" for k, v in shown.items())
        except Exception:
            text = "sizes unknown"
        try:
            est = estimate_bytes() if callable(estimate_bytes) else estimate_bytes
            if est is not None:
                text += f"; needs about {format_bytes(est)}"
        except Exception:
            pass
        err = OutOfMemoryError(f"{call}: out of memory ({text}); use a smaller graph, model or cluster, "
                               f"or free memory first")
        err.hulk_call = call
        raise err from exc


def is_sparse_matrix(value) -> bool:
    """A scipy.sparse matrix or array (checked without importing scipy)."""
    return hasattr(value, "tocsr") and hasattr(value, "nnz") and hasattr(value, "format")


def as_csr(value, name: str, rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``(indptr int64, indices int32, data float32, cols)`` of a scipy.sparse matrix [rows, cols]
    in a format of SPARSE_FORMATS, checked: every value finite and in float32 range, every column
    index in range (before the cast to int32, which would wrap a large int64 index)."""
    if value.format not in SPARSE_FORMATS:
        raise InputTypeError(f"{name}: scipy.sparse {type(value).__name__} (format {value.format!r}) is not taken; "
                             f"pass it as CSR ({name}.tocsr()), CSC or COO")
    if len(value.shape) != 2 or value.shape[0] != rows:
        raise InputError(f"{name}: expected {rows} rows, got shape {value.shape}")
    if value.dtype.kind not in "biuf":
        raise InputError(f"{name}: expected real numbers, got dtype {value.dtype}")
    cols = int(value.shape[1])
    if cols > INT32_MAX:
        raise InputError(f"{name}: {cols} columns is more than the {INT32_MAX} the engine's int32 column indices "
                         f"hold")
    csr = value.tocsr()
    indptr, indices = np.asarray(csr.indptr, np.int64), np.asarray(csr.indices)
    bad = np.flatnonzero(np.diff(indptr) < 0)
    if indptr[0] != 0 or len(bad) or indptr[-1] != len(indices):
        raise InputError(f"{name}: indptr is not a CSR's row offsets (indptr[0] = {indptr[0]}, indptr[-1] = "
                         f"{indptr[-1]} for {len(indices)} entries" +
                         (f", indptr[{bad[0] + 1}] = {indptr[bad[0] + 1]} < indptr[{bad[0]}] = {indptr[bad[0]]})"
                          if len(bad) else ")"))

    def where(k: int) -> str:
        return f"row {int(np.searchsorted(indptr, k, side='right')) - 1}, column {indices[k]}"

    out_of_range = (indices < 0) | (indices >= cols)
    if out_of_range.any():
        k = int(np.argmax(out_of_range))
        raise InputError(f"{name}: column index {indices[k]} at {where(k)} is out of range [0, {cols})")
    data = np.asarray(csr.data)
    if not np.isfinite(data).all():
        k = int(np.argmax(~np.isfinite(data)))
        raise InputError(f"{name}: value {data[k]} at {where(k)} is not finite "
                         f"({int((~np.isfinite(data)).sum())} non-finite value(s) in all)")
    with np.errstate(over="ignore"):
        data32 = np.ascontiguousarray(data, dtype=np.float32)
    if not np.isfinite(data32).all():
        k = int(np.argmax(~np.isfinite(data32)))
        raise InputError(f"{name}: value {float(data[k])!r} at {where(k)} is outside the float32 range the engine "
                         f"computes in (-3.4e38 to 3.4e38)")
    return np.ascontiguousarray(indptr), np.ascontiguousarray(indices, dtype=np.int32), data32, cols


def _as_float(value, name: str, what: str) -> np.ndarray:
    # float32 input passes through without a float64 round trip (large feature matrices).
    arr = value if isinstance(value, np.ndarray) and value.dtype == np.float32 else None
    if arr is None and is_sparse_matrix(value):
        raise InputTypeError(f"{name}: got a scipy.sparse {type(value).__name__} of shape {value.shape}; only node "
                             f"features may be sparse, pass {name}.toarray()")
    if arr is None and np.iscomplexobj(value):
        raise InputError(f"{name}: expected real numbers, got complex values (the imaginary part would be lost)")
    if arr is None:
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(f"{name}: expected a numeric {what} array ({exc})") from None
    return arr


def as_matrix(value, name: str, rows: int | None = None) -> np.ndarray:
    """A finite float32 C-contiguous [rows, cols] array from array-like ``value``."""
    arr = _as_float(value, name, "2-D")
    if arr.ndim == 1 and rows is not None and arr.shape[0] == rows:
        arr = arr.reshape(rows, 1)
    if arr.ndim != 2:
        raise InputError(f"{name}: expected a 2-D array, got shape {arr.shape}")
    if rows is not None and arr.shape[0] != rows:
        raise InputError(f"{name}: expected {rows} rows, got shape {arr.shape}")
    return _to_float32(arr, name)


def _to_float32(arr: np.ndarray, name: str) -> np.ndarray:
    """``arr`` (finite) as C-contiguous float32; a value that overflows float32 is named."""
    check_finite(arr, name)
    if arr.dtype == np.float32:
        return np.ascontiguousarray(arr)
    with np.errstate(over="ignore"):
        out = np.ascontiguousarray(arr, dtype=np.float32)
    if not np.isfinite(out).all():
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(out))[0])
        count = int((~np.isfinite(out)).sum())
        raise InputError(f"{name}: value {float(arr[where])!r} at index {where if len(where) > 1 else where[0]} is "
                         f"outside the float32 range the engine computes in (-3.4e38 to 3.4e38; {count} such "
                         f"value(s) in all)")
    return out


def as_vector(value, name: str, length: int) -> np.ndarray:
    """A finite float32 vector of the given length."""
    arr = _as_float(value, name, "1-D")
    if arr.shape != (length,):
        raise InputError(f"{name}: expected shape ({length},), got {arr.shape}")
    return _to_float32(arr, name)


def check_finite(arr: np.ndarray, name: str) -> None:
    if np.isfinite(arr).all():
        return
    bad = np.argwhere(~np.isfinite(arr))
    if len(bad):
        where = tuple(int(i) for i in bad[0])
        raise InputError(f"{name}: value {arr[where]} at index {where if len(where) > 1 else where[0]} is not finite "
                         f"({len(bad)} non-finite value(s) in all)")


def as_labels(value, name: str, length: int, num_classes: int | None = None) -> np.ndarray:
    """An int64 label vector: class ids, or -1 for unlabelled nodes."""
    arr = np.asarray(value)
    if arr.shape != (length,):
        raise InputError(f"{name}: expected shape ({length},), got {arr.shape}")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise InputError(f"{name}: expected integer class ids, got non-integer values")
    elif arr.dtype.kind not in "iu":
        raise InputError(f"{name}: expected integer class ids, got dtype {arr.dtype}")
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        i = int(np.argmax(arr))
        raise InputError(f"{name}[{i}] = {arr[i]} is not a class id (it would wrap to a negative int64)")
    if arr.dtype.kind == "f" and arr.size and np.abs(arr).max() >= 2.0**63:
        i = int(np.argmax(np.abs(arr)))
        raise InputError(f"{name}[{i}] = {arr[i]} is not a class id (out of the int64 range)")
    arr = arr.astype(np.int64)
    low = arr < -1
    if low.any():
        i = int(np.argmax(low))
        raise InputError(f"{name}[{i}] = {arr[i]}: labels must be class ids >= 0, or -1 for unlabelled")
    if num_classes is not None and (arr >= num_classes).any():
        i = int(np.argmax(arr >= num_classes))
        raise InputError(f"{name}[{i}] = {arr[i]} is not a class in [0, {num_classes})")
    return arr


def as_mask(value, name: str, length: int) -> np.ndarray:
    """A uint8 0/1 mask of the given length from booleans or 0/1 integers."""
    arr = np.asarray(value)
    if arr.shape != (length,):
        raise InputError(f"{name}: expected shape ({length},), got {arr.shape}")
    if arr.dtype != bool:
        if arr.dtype.kind not in "iu" or not np.isin(arr, (0, 1)).all():
            raise InputError(f"{name}: expected booleans (or 0/1), got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.uint8)
