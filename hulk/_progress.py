"""A small progress bar for long loops (labelling, training), written to stderr.

On a terminal it redraws one line; elsewhere (logs, CI) it prints a line at every 10 % so
that logs stay short.
"""

from __future__ import annotations

import sys
import threading
import time


class Progress:
    def __init__(self, total: int, label: str, enabled: bool = True, stream=None):
        self.total, self.label, self.enabled = max(int(total), 0), label, enabled
        self.stream = stream if stream is not None else sys.stderr
        self.done, self.t0 = 0, time.perf_counter()
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_decile = -1

    def update(self, n: int = 1, info: str = "") -> None:
        self.done += n
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.t0
        frac = self.done / self.total if self.total else 1.0
        eta = elapsed / frac - elapsed if frac > 0 else float("nan")
        bar = "#" * int(24 * frac) + "." * (24 - int(24 * frac))
        line = f"{self.label} [{bar}] {self.done}/{self.total} {elapsed:6.1f} s, eta {eta:5.0f} s {info}"
        if self._tty:
            self.stream.write("\r" + line)
            if self.done >= self.total:
                self.stream.write("\n")
        else:
            decile = int(10 * frac)
            if decile != self._last_decile or self.done >= self.total:
                self._last_decile = decile
                self.stream.write(line + "\n")
        self.stream.flush()


class Status:
    """One line per step of long work (loading a cluster, each planner), written to stderr
    with the time since the start, and every ``every`` seconds a "still ..." line while a step
    runs (the planners release the GIL), so that a long run is never silent. Call ``done()``
    at the end; on a terminal the line is then cleared, in a log the lines stay."""

    def __init__(self, enabled: bool = True, stream=None, prefix: str = "hulk", every: float = 10.0):
        self.enabled, self.prefix, self.every = enabled, prefix, every
        self.stream = stream if stream is not None else sys.stderr
        self.t0 = time.perf_counter()
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._width = 0
        self._step, self._step_t0 = "", self.t0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None

    def _write(self, message: str) -> None:
        line = f"{self.prefix}: [{time.perf_counter() - self.t0:6.1f} s] {message}"
        with self._lock:
            if self._tty:
                self.stream.write("\r" + line.ljust(self._width))
                self._width = len(line)
            else:
                self.stream.write(line + "\n")
            self.stream.flush()

    def __call__(self, message: str) -> None:
        if not self.enabled:
            return
        self._step, self._step_t0 = message, time.perf_counter()
        self._write(message)
        if self._thread is None and self.every > 0:
            self._thread = threading.Thread(target=self._beat, daemon=True, name="hulk-status")
            self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            self._write(f"still {self._step} ({time.perf_counter() - self._step_t0:.0f} s so far)")

    def done(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.enabled and self._tty and self._width:
            with self._lock:
                self.stream.write("\r" + " " * self._width + "\r")
                self.stream.flush()
