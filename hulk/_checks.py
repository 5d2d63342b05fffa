"""Input checks shared by the Python API: every message names the argument and the value."""

from __future__ import annotations

import numbers

import numpy as np
from .errors import InputError


def is_int(x) -> bool:
    """A Python or numpy integer, not a bool."""
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def is_real(x) -> bool:
    """A Python or numpy real (np.float32 and integers included), not a bool."""
    t = type(x)
    if t is float or t is int:  # the common case, without the slow ABC check (1 M links per file)
        return True
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _as_float(value, name: str, what: str) -> np.ndarray:
    # float32 input passes through without a float64 round trip (large feature matrices).
    arr = value if isinstance(value, np.ndarray) and value.dtype == np.float32 else None
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
    check_finite(arr, name)
    return np.ascontiguousarray(arr, dtype=np.float32)


def as_vector(value, name: str, length: int) -> np.ndarray:
    """A finite float32 vector of the given length."""
    arr = _as_float(value, name, "1-D")
    if arr.shape != (length,):
        raise InputError(f"{name}: expected shape ({length},), got {arr.shape}")
    check_finite(arr, name)
    return np.ascontiguousarray(arr, dtype=np.float32)


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
