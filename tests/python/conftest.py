"""Shared setup for the Python tests.

The tests exercise the *installed* package (``pip install .``), which carries the compiled
extension ``hulk._core``. The source tree's ``hulk/`` folder has no extension, so when the
suite is started as ``python -m pytest tests/python`` from the repository root (which puts the
current directory first on ``sys.path``) the source folder would shadow the installed package
and ``import hulk`` would fail. Below, the repository root is taken off ``sys.path`` only in
exactly that situation: the source tree holds no built ``_core`` extension. With an in-place
build (or an editable install) nothing is changed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# libgomp's default active spin-waiting makes small OpenMP regions very slow when the CPU is
# shared with other work (measured here: 200 epochs on 450 nodes took 23 s instead of 0.4 s on a
# loaded 2-core machine). The variable must be set before the extension is loaded; an explicit
# setting in the environment wins. It changes timing only, never results.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

_ROOT = Path(__file__).resolve().parents[2]


def _source_tree_has_extension() -> bool:
    pkg = _ROOT / "hulk"
    return any(pkg.glob("_core*.so")) or any(pkg.glob("_core*.pyd"))


def _is_root(entry: str) -> bool:
    try:
        return Path(entry or os.getcwd()).resolve() == _ROOT
    except OSError:
        return False


if "hulk" not in sys.modules and not _source_tree_has_extension():
    sys.path[:] = [p for p in sys.path if not _is_root(p)]

try:
    import hulk  # noqa: E402,F401
    import hulk._core  # noqa: E402,F401
except ImportError as exc:  # pragma: no cover - environment problem, not a test failure
    pytest.exit(f"cannot import the compiled hulk package ({exc}); install it first: pip install .", returncode=4)


@pytest.fixture(scope="session")
def hulk47_graph():
    """(networkx graph, hulk.Graph, labels, class names) of the paper's cluster."""
    G = hulk.datasets.hulk47(clean="quiet")
    labels, classes = hulk.datasets.hulk47_table2_labels()
    g = hulk.Graph.from_networkx(G, node_attrs=["capability", "memory_gb"], edge_attrs=["latency_ms"])
    return G, g, labels, classes


@pytest.fixture(scope="session")
def tiny_dataset(tmp_path_factory):
    """(samples, cache folder): 8 small generated clusters labelled by a short search."""
    from hulk.plan import training
    cache = tmp_path_factory.mktemp("labels")
    return training.make_dataset(8, seed=3, sizes=(16, 40), time_limit_s=0.5, iterations=150, cache_dir=cache,
                                 workers=1, progress=False), cache


@pytest.fixture(scope="session")
def tiny_planner(tiny_dataset):
    """(LearnedPlanner, history) trained for 3 epochs on ``tiny_dataset``."""
    from hulk.plan import training
    samples, _ = tiny_dataset
    pl, history = training.train(samples, hidden=(16, 16), epochs=3, batch_graphs=3, progress=False,
                                 log=lambda *a: None)
    return pl, history


@pytest.fixture(scope="session")
def good_file(tmp_path_factory):
    """(bytes of a weight file of a small fitted GNN, its Graph)."""
    from helpers import fitted_model
    m, g = fitted_model()
    path = tmp_path_factory.mktemp("weights") / "good.gnn"
    m.save(path)
    return path.read_bytes(), g
