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
