"""Writes one script's section of benchmarks/RESULTS.md, between its begin/end markers."""

from __future__ import annotations

import re
from pathlib import Path


def write_section(out, begin: str, end: str, lines: list) -> None:
    """Replaces the text between ``begin`` and ``end`` in ``out`` (``lines`` includes both
    markers), or appends the section when the file has none yet."""
    out = Path(out)
    old = out.read_text() if out.exists() else "# Benchmark results\n"
    block = "\n".join(lines)
    new = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, old, flags=re.S) \
        if begin in old else old.rstrip() + "\n\n" + block + "\n"
    out.write_text(new)
    print(f"\nwrote {out}")


def report_section(script: str, results, title: str, body: list, write=None, kept_notes=None) -> None:
    """Prints the section of one results file of ``script`` (``title``, which may name the file's
    ``{stem}``, then ``body`` and the hand notes ``kept_notes(write, begin, end)`` returns from the
    section already in ``write``) between the script's markers for that file, and writes it into
    ``write`` when given."""
    stem = Path(results).stem
    begin, end = f"<!-- {script}:{stem}:begin -->", f"<!-- {script}:{stem}:end -->"
    notes = kept_notes(write, begin, end) if write and kept_notes else []
    lines = [begin, title.format(stem=stem), "", *body, "", *notes, end]
    print("\n".join(lines))
    if write:
        write_section(write, begin, end, lines)
