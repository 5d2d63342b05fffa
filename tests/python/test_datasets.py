"""Tests for hulk.datasets (pure Python: no compiled extension needed)."""

import hashlib
import warnings
from collections import Counter
from importlib.resources import files

import networkx as nx
import numpy as np
import pytest

from hulk import datasets
from hulk.datasets import DataCleaningWarning, hulk47, hulk47_table2_labels


@pytest.fixture(scope="module")
def G():
    return hulk47(clean="quiet")


def test_packaged_files_are_unchanged():
    # The loader's cleaning is only meaningful on the exact published bytes.
    expected = {
        "node_feature.csv": "7a88967710ac72d1f5fe2ac247af4cde48d95ebc46fc89439ff179bcc2509ac0",
        "edge.txt": "1f679dccb97bec13e062fd7ce042f2a5c22e8e85cc85feed5f47baf56e596909",
    }
    for name, sha in expected.items():
        data = (files("hulk") / "data" / "hulk47" / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == sha, name


# edge.txt has 617 lines; dropping 2 self loops and 2 repeated pairs leaves 613.
# (The shared data README's "615 unique undirected pairs" counts the self loops.)
N_EDGES = 613


def test_shape(G):
    assert sorted(G.nodes) == list(range(47))
    assert all(type(n) is int for n in G.nodes)
    assert G.number_of_edges() == N_EDGES
    assert nx.is_connected(G)
    assert nx.number_of_selfloops(G) == 0
    assert G.graph["name"] == "hulk47"
    assert "9bfa993572a97b2cbf788f2d735e23cf0abca07c" in G.graph["source"]
    assert "2302.13741" in G.graph["source"]


def test_regions(G):
    regions = nx.get_node_attributes(G, "region")
    assert all(r == r.strip() for r in regions.values())
    expected = {
        "Beijing": range(0, 5), "Neimeng": range(5, 10), "Nanjing": range(10, 15),
        "Quanzhou": range(15, 20), "California": range(20, 25), "Tokyo": range(25, 30),
        "Berlin": range(30, 33), "London": range(33, 34), "New Delhi": range(34, 37),
        "Paris": range(37, 41), "Rome": range(41, 46), "Brasilia": range(46, 47),
    }
    assert Counter(regions.values()) == {city: len(ids) for city, ids in expected.items()}
    for city, ids in expected.items():
        assert all(regions[i] == city for i in ids)


def test_capability_and_memory(G):
    cap = nx.get_node_attributes(G, "capability")
    mem = nx.get_node_attributes(G, "memory_gb")
    assert all(isinstance(v, float) for v in [*cap.values(), *mem.values()])
    assert Counter(cap.values()) == {8.6: 21, 7.0: 10, 6.1: 8, 8.0: 6, 7.5: 2}
    assert set(mem.values()) == {64.0, 76.0, 96.0, 128.0, 144.0, 152.0, 320.0, 384.0, 640.0}


def test_latencies(G):
    lat = nx.get_edge_attributes(G, "latency_ms")
    assert all(isinstance(v, float) for v in lat.values())
    assert min(lat.values()) == 0.5 and max(lat.values()) == 741.0
    assert G[20][22]["latency_ms"] == 0.8
    assert G[20][24]["latency_ms"] == 0.5
    # Implausible but published: kept as is.
    assert G[25][30]["latency_ms"] == 4.0


def test_duplicates_keep_first_occurrence(G):
    assert G[11][30]["latency_ms"] == 214.0
    assert G[13][14]["latency_ms"] == 10.0
    assert G[14][13]["latency_ms"] == 10.0


def test_warn_once_listing_every_fix():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = hulk47()
    ours = [w for w in caught if issubclass(w.category, DataCleaningWarning)]
    assert len(ours) == 1
    assert issubclass(DataCleaningWarning, UserWarning)
    msg = str(ours[0].message)
    for needle in ("self loop", "4-4", "14-14", "duplicate", "11-30", "13-14", "214 kept", "265 dropped",
                   "10 kept", "4 dropped", "whitespace"):
        assert needle in msg, needle
    # The warning points at the caller, not at datasets.py.
    assert ours[0].filename == __file__
    assert g.number_of_edges() == N_EDGES


def test_cleaning_record():
    with pytest.warns(DataCleaningWarning):
        warned = hulk47(clean="warn")
    quiet = hulk47(clean="quiet")
    assert warned.graph["cleaning"] == quiet.graph["cleaning"]
    log = quiet.graph["cleaning"]
    assert all(isinstance(s, str) for s in log)
    # 4 region names, 2 self loops, 2 duplicates.
    assert len(log) == 8
    assert sum("self loop" in s for s in log) == 2
    assert sum("duplicate" in s for s in log) == 2
    assert sum("region" in s for s in log) == 4


def test_quiet_emits_no_cleaning_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataCleaningWarning)
        g = hulk47(clean="quiet")
    assert g.number_of_edges() == N_EDGES


def test_error_mode_raises_on_first_defect():
    with pytest.raises(ValueError, match="node 5") as exc:
        hulk47(clean="error")
    assert "Neimeng " in str(exc.value)


@pytest.mark.parametrize("bad", ["ignore", "WARN", "", None, True])
def test_bad_clean_value(bad):
    with pytest.raises(ValueError) as exc:
        hulk47(clean=bad)
    assert "clean" in str(exc.value)
    assert repr(bad) in str(exc.value)


def test_table2_labels():
    labels, names = hulk47_table2_labels()
    assert names == ["OPT-175B", "T5-11B", "GPT-2 1.5B", "BERT-large"]
    assert names == list(datasets.HULK47_CLASSES)
    assert isinstance(labels, np.ndarray)
    assert labels.dtype == np.int64 and labels.shape == (47,)
    counts = Counter(labels.tolist())
    assert counts == {0: 15, 1: 10, 2: 10, 3: 4, -1: 8}
    assert labels[[0, 4, 20, 24, 27, 31]].tolist() == [0] * 6
    assert labels[[5, 14]].tolist() == [1, 1]
    assert labels[[15, 19, 25, 26, 32, 34]].tolist() == [2] * 6
    assert labels[[35, 38]].tolist() == [3, 3]
    assert (labels[39:] == -1).all()


def test_table2_labels_are_fresh_copies():
    labels, names = hulk47_table2_labels()
    labels[:] = 7
    names.append("x")
    labels2, names2 = hulk47_table2_labels()
    assert labels2[0] == 0 and len(names2) == 4
