"""Safe file input and output: bounded, strict JSON reads and atomic writes.

Reads: a path must be non-empty and name a regular file (not ``/dev/zero``, a FIFO or a
folder) no larger than ``max_bytes``; JSON must be strict (no NaN or Infinity) and an object
may not repeat a key (the last one would silently win). Every error names the file.

Writes: the data goes to a temporary file in the same folder, is flushed to disk and then
renamed over the target, so a failed or killed save (full disk, file-size limit, SIGKILL)
leaves the previous file as it was.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile

from .errors import FileFormatError, InputError

DEFAULT_MAX_JSON_BYTES = 1 << 30  # 1 GiB: a cluster file of a million links is about 40 MB


def check_input_path(path, what: str) -> str:
    """``path`` as a str, after checking that it names a regular, readable file."""
    if path is None or (isinstance(path, (str, bytes)) and len(path) == 0):
        raise InputError(f"{what}: the path is empty")
    try:
        p = os.fsdecode(path)
    except TypeError:
        raise InputError(f"{what}: expected a file path, got {type(path).__name__}") from None
    try:
        st = os.stat(p)
    except OSError as exc:
        raise InputError(f"{what}: cannot read {p!r} ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise InputError(f"{what}: {p!r} is {kind}")
    return p


def _no_duplicates(where: str):
    def hook(pairs):
        out = {}
        for k, v in pairs:
            if k in out:
                raise InputError(f"{where}: key {k!r} appears twice in one object")
            out[k] = v
        return out
    return hook


def _no_constant(where: str):
    def hook(name):
        raise InputError(f"{where}: {name} is not valid JSON (strict JSON has no NaN or Infinity)")
    return hook


def parse_json(text: str, where: str):
    """Strict JSON from text: no duplicate keys, no NaN/Infinity; errors name ``where``."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates(where), parse_constant=_no_constant(where))
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not valid JSON ({exc})") from None
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deeply") from None


def read_json_file(path, what: str, max_bytes: int = DEFAULT_MAX_JSON_BYTES):
    """Reads strict JSON from a regular file of at most ``max_bytes``."""
    p = check_input_path(path, what)
    size = os.path.getsize(p)
    if size > max_bytes:
        raise InputError(f"{what}: {p!r} has {size} bytes, more than the {max_bytes} this reader accepts")
    try:
        with open(p, "rb") as f:
            raw = f.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(f"{what}: cannot read {p!r} ({exc.strerror or exc})") from None
    if len(raw) > max_bytes:
        raise InputError(f"{what}: {p!r} grew beyond {max_bytes} bytes while being read")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{what}: {p!r} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return parse_json(text, f"{what} {p!r}")


def write_temp(path, data, *, what: str = "file") -> str:
    """Writes ``data`` (str or bytes) to a new temporary file in the folder of ``path``, flushed
    to disk and with the mode a plain ``open()`` gives; returns its name. On failure nothing is
    left behind. :func:`atomic_write` renames it over ``path``."""
    p = os.fsdecode(path)
    if not p:
        raise InputError(f"{what}: the path is empty")
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    folder = os.path.dirname(os.path.abspath(p))
    try:
        fd, tmp = tempfile.mkstemp(prefix=os.path.basename(p) + ".tmp-", dir=folder)
    except OSError as exc:
        raise OSError(exc.errno, f"{what}: cannot create a temporary file in {folder!r} to save {p!r} "
                                 f"({exc.strerror})") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the mode a plain open() would
    except BaseException as exc:
        _discard(tmp, exc, what, p)
    return tmp


def _discard(tmp: str, exc: BaseException, what: str, p: str):
    """Removes the temporary file of a failed save and re-raises: an OSError says that ``p`` is
    unchanged, anything else (KeyboardInterrupt, ...) goes on as it was."""
    try:
        os.unlink(tmp)
    except OSError:
        pass
    if isinstance(exc, OSError):
        raise OSError(exc.errno, f"{what}: saving {p!r} failed ({exc.strerror or exc}); "
                                 f"the previous file, if any, is unchanged") from None
    raise exc


def atomic_write(path, data, *, what: str = "file") -> None:
    """Writes ``data`` (str or bytes) to ``path`` through a temporary file in the same folder
    and a rename; on any failure the temporary file is removed and ``path`` is untouched."""
    tmp = write_temp(path, data, what=what)
    p = os.fsdecode(path)
    try:
        os.replace(tmp, p)
    except BaseException as exc:
        _discard(tmp, exc, what, p)


@contextlib.contextmanager
def naming_the_file(path):
    """Within it, an :class:`InputError` about the content read from ``path`` becomes a
    :class:`FileFormatError` whose message starts with the file's name (the field and value
    are the original message's)."""
    try:
        yield
    except FileFormatError:
        raise
    except InputError as exc:
        raise FileFormatError(os.fsdecode(path), None, str(exc)) from None
