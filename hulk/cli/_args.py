"""argparse helpers of the command line: bounded number and path types, one-line errors."""

from __future__ import annotations

import argparse
import math

from ..plan.report import figure_format

# Bounds of the numeric arguments: far beyond any sensible run, small enough that a value
# cannot make the process allocate without end or overflow the engine's integer types.
MAX_SEED = 2**64 - 1               # seeds are uint64 everywhere (hulk._checks.check_seed)
MAX_SECONDS = 7 * 24 * 3600.0      # a search or labelling time limit: one week
MAX_ITERATIONS = 10**12
MAX_EPOCHS = 1_000_000
MAX_WIDTH = 1 << 16                 # a hidden layer's width
MAX_LAYERS = 64
MAX_GENERATED = 10_000_000          # machines of --generate


def integer(lo: int, hi: int):
    def parse(text: str) -> int:
        try:
            v = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{text} is out of range [{lo}, {hi}]")
        return v
    return parse


def real(lo: float, hi: float, lo_open: bool = False):
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(v) or v > hi or v < lo or (lo_open and v == lo):
            raise argparse.ArgumentTypeError(f"{text} is out of range {'(' if lo_open else '['}{lo:g}, {hi:g}]")
        return v
    return parse


def widths(text: str) -> list[int]:
    try:
        sizes = [int(s) for s in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not sizes or min(sizes) < 1 or max(sizes) > MAX_WIDTH or len(sizes) > MAX_LAYERS:
        raise argparse.ArgumentTypeError(f"expected 1 to {MAX_LAYERS} layer widths in [1, {MAX_WIDTH}], got {text!r}")
    return sizes


def file_path(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("the path is empty")
    return text


def figure_path(text: str) -> str:
    """A figure's path whose extension names a format the figure writer honours."""
    path = file_path(text)
    try:
        figure_format(path)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return path


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors ("hulk plan: error: argument --seed: ..."), exit code 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")
