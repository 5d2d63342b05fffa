"""Datasets shipped with hulk.

``hulk47`` is the cluster published with the paper "Hulk: Graph Neural Networks
for Optimizing Regionally Distributed Computing Systems" (Z. Yuan, H. Xue,
C. Zhang, Y. Liu, arXiv 2302.13741): 47 GPU servers in 12 cities, with the
measured time in ms to send 64 bytes between pairs of servers. The paper's text
says 46 servers, but the files hold 47 (ids 0..46), hence the name.

The raw files ``node_feature.csv`` and ``edge.txt`` are kept byte for byte as
they are in ``Hulk_data.zip`` of github.com/DLYuanGod/Hulk, commit
9bfa993572a97b2cbf788f2d735e23cf0abca07c. That repository grants no license:
use the data for research and reproduction only, and cite the paper.

The raw files have a few known defects. The loader finds them from the data
(it does not hard-code line numbers) and fixes them by these rules:

a. leading/trailing whitespace in a city name is stripped ("Neimeng " -> "Neimeng");
b. self loops (``4 4 10``, ``14 14 10``) are dropped;
c. when an undirected pair appears more than once (11-30 as 214 and 265;
   13-14 as 10 and ``14 13 4``) the FIRST line in file order is kept and the
   later ones are dropped.

Every fix is reported (one ``DataCleaningWarning`` per load by default) and
listed in ``G.graph["cleaning"]``. Nothing else is altered; in particular the
implausible 25-30 latency of 4 ms (Tokyo-Berlin) is kept as published. See
``hulk/data/hulk47/README.md`` for the provenance, checksums and notes.

This module imports only the standard library, numpy and networkx, so it works
without the compiled extension.
"""

import csv
import math
from pathlib import Path
import warnings
from importlib.resources import files

import networkx as nx
import numpy as np
from .errors import InputError

__all__ = ["DataCleaningWarning", "HULK47_CLASSES", "hulk47", "hulk47_table2_labels"]

HULK47_CLASSES = ("OPT-175B", "T5-11B", "GPT-2 1.5B", "BERT-large")

_SOURCE = (
    "github.com/DLYuanGod/Hulk commit 9bfa993572a97b2cbf788f2d735e23cf0abca07c "
    "(Hulk_data.zip: node_feature.csv, edge.txt); Yuan et al., 'Hulk: Graph Neural "
    "Networks for Optimizing Regionally Distributed Computing Systems', arXiv 2302.13741; "
    "no license granted, research/reproduction use only"
)
_CLEAN_MODES = ("warn", "quiet", "error")


_DATA = files("hulk") / "data" / "hulk47"


class DataCleaningWarning(UserWarning):
    """A packaged dataset had defects that the loader fixed by its documented rules."""


def _read_lines(source):
    # Bytes + splitlines: the files use CRLF and edge.txt has no final newline,
    # so do not depend on the platform's text mode. source: a Path or package resource.
    return source.read_bytes().decode("utf-8-sig").splitlines()


def _num(x):
    """Format a latency the way the raw file writes it (214.0 -> '214', 0.8 -> '0.8')."""
    return f"{x:g}"


def _check_nonneg(value, what, where, label):
    # NaN or negative values are not a known defect with a documented fix: refuse.
    if not math.isfinite(value) or value < 0:
        raise InputError(f"{label}: {where}: {what} must be finite and >= 0, got {value!r}")


def hulk47(clean: str = "warn") -> nx.Graph:
    """Load the 47-server cluster of the Hulk paper as an undirected graph.

    Parameters
    ----------
    clean : {"warn", "quiet", "error"}, default "warn"
        What to do about the known defects of the raw files (whitespace in city
        names, self loops, duplicate pairs; see the module docstring).
        ``"warn"`` applies the documented fixes and emits one
        :class:`DataCleaningWarning` listing all of them; ``"quiet"`` applies
        them without a warning; ``"error"`` raises instead of fixing. With
        ``"warn"`` and ``"quiet"`` the applied fixes are listed in
        ``G.graph["cleaning"]``.

    Returns
    -------
    networkx.Graph
        Nodes ``0..46`` (int) with attributes ``region`` (str), ``capability``
        (float, CUDA compute capability) and ``memory_gb`` (float, GPU memory
        of the server). Edges carry ``latency_ms`` (float, ms to send 64
        bytes). Graph attributes: ``name`` ("hulk47"), ``source`` (provenance
        and attribution) and ``cleaning`` (list of str, one per fix applied).
        After cleaning the graph has 613 edges (617 lines less 2 self loops
        and 2 duplicates) and is connected.

    Raises
    ------
    ValueError
        If ``clean`` is not one of the accepted values; if ``clean="error"``
        and the data has a defect (the message names the first one); if the
        files are malformed (bad header or row, unknown node id, negative or
        non-finite number), which no mode repairs.

    Warns
    -----
    DataCleaningWarning
        With ``clean="warn"`` when any fix was applied.
    """
    return read_paper_files(_DATA / "node_feature.csv", _DATA / "edge.txt", clean, label="hulk47", stacklevel=3,
                            _source=_SOURCE)


def read_paper_files(node_feature_csv, edge_txt, clean: str = "warn", label: str | None = None,
                     stacklevel: int = 2, _source: str | None = None) -> nx.Graph:
    """Read a cluster in the Hulk paper's format with the cleaning rules of :func:`hulk47`.

    ``node_feature.csv``: header ``node,City,Capability,Memory``, ids 0..N-1 in order;
    ``edge.txt``: ``src dst latency_ms`` per line, undirected. Paths or package resources.
    ``clean`` as in :func:`hulk47`; ``label`` prefixes messages and names the graph.
    """
    label = label or str(node_feature_csv)
    source = _source or f"paper-format files {node_feature_csv}, {edge_txt}"
    if clean not in _CLEAN_MODES:
        raise InputError(f"clean must be one of {_CLEAN_MODES}, got {clean!r}")
    node_feature_csv, edge_txt = Path(node_feature_csv) if isinstance(node_feature_csv, str) else node_feature_csv, \
        Path(edge_txt) if isinstance(edge_txt, str) else edge_txt

    # Defects found, in file order, as (what is wrong, what was done about it).
    defects = []
    G = nx.Graph(name=label, source=source)
    stripped = _read_nodes(G, node_feature_csv, label, defects)
    self_loops, duplicates = _read_edges(G, edge_txt, label, defects)

    if defects and clean == "error":
        raise InputError(f"{label}: {defects[0][0]} ({len(defects)} defects in total; "
                         f"pass clean='warn' or clean='quiet' to apply the documented fixes)")
    G.graph["cleaning"] = [fix for _, fix in defects]

    if defects and clean == "warn":
        warnings.warn(f"{label}: " + _cleaning_summary(self_loops, duplicates, stripped), category=DataCleaningWarning,
                      stacklevel=stacklevel)
    return G


def _read_nodes(G: nx.Graph, node_feature_csv, label: str, defects: list) -> list:
    """Adds the machines of ``node_feature.csv`` to ``G``; returns the nodes whose region name
    had whitespace around it (stripped; recorded in ``defects``)."""
    rows = list(csv.reader(_read_lines(node_feature_csv)))
    if not rows or [h.strip() for h in rows[0]] != ["node", "City", "Capability", "Memory"]:
        raise InputError(f"{label}: unexpected header in node_feature.csv: {rows[:1]!r}")
    stripped = []
    for lineno, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        try:
            node, city, capability, memory = row
            node, capability, memory = int(node), float(capability), float(memory)
        except ValueError:
            raise InputError(f"{label}: node_feature.csv line {lineno}: expected 'node,City,Capability,Memory', "
                             f"got {row!r}") from None
        if node != G.number_of_nodes():
            raise InputError(f"{label}: node_feature.csv line {lineno}: expected node id {G.number_of_nodes()}, got {node}")
        region = city.strip()
        if region != city:
            stripped.append(node)
            defects.append((f"node {node} has whitespace around its region name {city!r}",
                            f"stripped region of node {node}: {city!r} -> {region!r}"))
        _check_nonneg(capability, "Capability", f"node_feature.csv line {lineno}", label)
        _check_nonneg(memory, "Memory", f"node_feature.csv line {lineno}", label)
        G.add_node(node, region=region, capability=capability, memory_gb=memory)
    if G.number_of_nodes() == 0:
        raise InputError(f"{label}: empty cluster: node_feature.csv has no machines")
    return stripped


def _read_edges(G: nx.Graph, edge_txt, label: str, defects: list) -> tuple:
    """Adds the links of ``edge.txt`` to ``G``, dropping self loops and repeated pairs (first
    wins; each recorded in ``defects``); returns ``(self loops, duplicates)``."""
    self_loops, duplicates = [], []
    first_seen = {}  # undirected pair -> (latency, line) of its first occurrence
    for lineno, line in enumerate(_read_lines(edge_txt), start=1):
        if not line.strip():
            continue
        try:
            src, dst, weight = line.split()
            u, v, latency = int(src), int(dst), float(weight)
        except ValueError:
            raise InputError(f"{label}: edge.txt line {lineno}: expected 'src dst latency', got {line!r}") from None
        for n in (u, v):
            if n not in G:
                raise InputError(f"{label}: edge.txt line {lineno}: unknown node id {n}")
        _check_nonneg(latency, "latency", f"edge.txt line {lineno}", label)
        if u == v:
            self_loops.append(u)
            defects.append((f"edge.txt line {lineno} is a self loop {u}-{v} ({_num(latency)} ms)",
                            f"dropped self loop {u}-{v} (edge.txt line {lineno}, {_num(latency)} ms)"))
            continue
        pair = (min(u, v), max(u, v))
        if pair in first_seen:
            # Keep the first occurrence. Alternatives considered: keep the last,
            # the min, the mean, or refuse. "First wins" is the simplest rule to
            # state and to reproduce with any tool, and it fits the data: 11-30
            # keeps 214 like every other Nanjing-Berlin pair and the paper's
            # 213.7 (the later 265 is the Nanjing-Paris value), while for 13-14
            # both 10 and 4 are ordinary same-city values.
            kept, kept_line = first_seen[pair]
            duplicates.append((pair, kept, latency))
            defects.append((
                f"edge.txt line {lineno} repeats pair {pair[0]}-{pair[1]} "
                f"({_num(latency)} ms; first given as {_num(kept)} ms on line {kept_line})",
                f"dropped duplicate pair {pair[0]}-{pair[1]} (edge.txt line {lineno}, {_num(latency)} ms); "
                f"kept first value {_num(kept)} ms from line {kept_line}",
            ))
            continue
        first_seen[pair] = (latency, lineno)
        G.add_edge(u, v, latency_ms=latency)
    return self_loops, duplicates


def _cleaning_summary(self_loops: list, duplicates: list, stripped: list) -> str:
    """The one-line warning of :func:`read_paper_files` (``clean="warn"``)."""
    parts = []
    if self_loops:
        parts.append(f"dropped {len(self_loops)} self loops ({', '.join(f'{n}-{n}' for n in self_loops)})")
    if duplicates:
        parts.append(f"{len(duplicates)} duplicate pairs kept first value: " + ", ".join(
            f"{a}-{b} ({_num(k)} kept, {_num(d)} dropped)" for (a, b), k, d in duplicates))
    if stripped:
        parts.append(f"stripped whitespace in {len(stripped)} region names "
                     f"(nodes {', '.join(map(str, stripped))})")
    return "; ".join(parts)


def hulk47_table2_labels() -> tuple[np.ndarray, list[str]]:
    """Model assignment of the paper's Table 2 as sparse node labels for ``hulk47``.

    Returns
    -------
    labels : numpy.ndarray of int64, shape (47,)
        Class id per node (index into ``class_names``), ``-1`` for servers that
        Table 2 leaves unassigned. OPT-175B: nodes 0-4, 20-24, 27-31 (15);
        T5-11B: 5-14 (10); GPT-2 1.5B: 15-19, 25, 26, 32-34 (10);
        BERT-large: 35-38 (4); unlabelled: 39-46 (8).
    class_names : list of str
        ``list(HULK47_CLASSES)``: ["OPT-175B", "T5-11B", "GPT-2 1.5B", "BERT-large"].

    Notes
    -----
    The paper calls its published data "unlabeled"; these labels are the
    project's transcription of the assignment in Table 2. A fresh array and
    list are returned on each call, so callers may modify them.
    """
    labels = np.full(47, -1, dtype=np.int64)
    groups = {
        0: [*range(0, 5), *range(20, 25), *range(27, 32)],  # OPT-175B
        1: [*range(5, 15)],                                 # T5-11B
        2: [*range(15, 20), 25, 26, *range(32, 35)],        # GPT-2 1.5B
        3: [*range(35, 39)],                                # BERT-large
    }
    for cls, nodes in groups.items():
        labels[nodes] = cls
    return labels, list(HULK47_CLASSES)
