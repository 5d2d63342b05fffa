"""The Cluster interface (hulk.plan.cluster) that both cluster kinds implement: the planners, the
learned planner, the rules, the report and the CLI ask it, never the cluster's type."""

from __future__ import annotations

import copy
import pickle

import networkx as nx
import numpy as np
import pytest

from hulk.plan import Cluster, ClusterSpec, Machines, RegionalCluster, cities, generate, hulk47_spec


@pytest.fixture(scope="module")
def explicit():
    return hulk47_spec()


@pytest.fixture(scope="module")
def regional():
    return generate.generate_cluster(40, seed=3, missing_fraction=0.3)


def test_both_kinds_are_clusters_and_the_interface_is_abstract(explicit, regional):
    assert isinstance(explicit, Cluster) and isinstance(regional, Cluster)
    with pytest.raises(TypeError):
        Cluster()


@pytest.mark.parametrize("kind", ["explicit", "regional"])
def test_machine_table_shapes_and_values(kind, request):
    c = request.getfixturevalue(kind)
    m = c.machine_table()
    n = len(c)
    assert isinstance(m, Machines) and len(m) == n
    assert m.region.dtype == np.int64 and m.region.shape == (n,)
    assert m.pos.shape == (n, 3) and m.access_ms.shape == (n,)
    for a in (m.memory_gb, m.tflops, m.gpus):
        assert a.dtype == np.float64 and a.shape == (n,)
    assert 0 <= m.region.min() and m.region.max() < len(m.region_names)
    on_sphere = np.linalg.norm(m.pos, axis=1)
    assert np.allclose(on_sphere[on_sphere > 0], 1.0)


def test_explicit_machine_table_follows_the_machine_dicts(explicit):
    m = explicit.machine_table()
    assert m.names == [x["name"] for x in explicit.machines]
    assert [m.region_names[r] for r in m.region] == [x["region"] for x in explicit.machines]
    assert m.region_names == list(dict.fromkeys(x["region"] for x in explicit.machines))  # by first appearance
    assert m.memory_gb.tolist() == [x["memory_gb"] for x in explicit.machines]
    assert (np.linalg.norm(m.pos, axis=1) > 0).all()  # every region of hulk47 is a city of cities.json
    assert not m.access_ms.any()


def test_regional_machine_table_is_the_regions(regional):
    m = regional.machine_table()
    assert m.names == regional.machine_names() and m.region_names == regional.region_names
    assert np.array_equal(m.region, regional.region) and np.array_equal(m.access_ms, regional.access_ms)


def test_to_core_is_built_once(explicit, regional):
    for c in (explicit, regional):
        assert c.to_core() is c.to_core()
    assert explicit.without(0).to_core() is not explicit.to_core()


def test_a_cluster_pickles_and_copies_after_planning(explicit, regional):
    for c in (explicit, regional):
        c.to_core()
        for twin in (pickle.loads(pickle.dumps(c)), copy.deepcopy(c)):
            assert twin == c and twin.to_core() is not c.to_core()


def test_gnn_links(explicit, regional):
    a, b, lat, bw = explicit.gnn_links(1, 1, 5)  # an explicit cluster: its own links, whatever the arguments
    assert len(a) == len(explicit.links) and lat.tolist() == [l["latency_ms"] for l in explicit.links]
    got = regional.gnn_links(4, 2, seed=1)
    want = regional.sample_links(k_local=4, k_remote=2, seed=1)
    for x, y in zip(got, want):
        assert np.array_equal(x, y)


def test_links_of_a_machine(explicit, regional):
    a, b, lat, bw = explicit.links_of(5)
    mine = [l for l in explicit.links if 5 in (l["a"], l["b"])]
    assert list(zip(a.tolist(), b.tolist())) == [(l["a"], l["b"]) for l in mine]
    spec = regional.to_spec()
    for i in (0, 17, 39):
        a, b, lat, bw = regional.links_of(i)
        pairs = {(l["a"], l["b"]): (l["latency_ms"], l["bandwidth_gbps"]) for l in spec.links if i in (l["a"], l["b"])}
        assert set(zip(a.tolist(), b.tolist())) == set(pairs)
        for x, y, la, w in zip(a.tolist(), b.tolist(), lat.tolist(), bw.tolist()):
            assert (la, w) == pytest.approx(pairs[(x, y)])


def test_with_machine_links_are_the_new_machines(explicit):
    bigger = explicit.with_machine({"region": "Paris", "memory_gb": 80, "gpu": "A100 80GB"},
                                   [{"to": 0, "latency_ms": 5.0}, {"to": 3, "latency_ms": 7.0}])
    a, b, lat, _ = bigger.links_of(len(explicit))
    assert a.tolist() == [0, 3] and b.tolist() == [47, 47] and lat.tolist() == [5.0, 7.0]


def test_locations(explicit, regional):
    names, lat, lon = explicit.locations()
    city = {c["name"]: (c["lat"], c["lon"]) for c in cities()}
    assert names[0] == explicit.machines[0]["region"] and (lat[0], lon[0]) == city[names[0]]
    names, lat, lon = regional.locations()
    r = regional.region[7]
    assert names[7] == regional.region_names[r] and lat[7] == regional.region_lat[r]


def test_what_a_generated_cluster_cannot_do_says_why(regional):
    assert not regional.accepts_new_machines and hulk47_spec().accepts_new_machines
    with pytest.raises(ValueError, match="does not take new machines"):
        regional.with_machine({"region": "Paris", "memory_gb": 80, "gpu": "A100 80GB"}, [])
    with pytest.raises(ValueError, match="no explicit links"):
        regional.to_networkx()
    assert isinstance(regional.to_spec().to_networkx(), nx.Graph)


def test_derivation_notes(explicit, regional):
    assert explicit.derivation_notes() == explicit.notes and explicit.derivation_notes() is not explicit.notes
    assert regional.derivation_notes() == []


def test_without_keeps_the_kind(explicit, regional):
    assert isinstance(explicit.without(3), ClusterSpec) and len(explicit.without(3)) == 46
    assert isinstance(regional.without(3), RegionalCluster) and len(regional.without(3)) == 39


@pytest.mark.parametrize("bad, what", [([0, 99], "machine 99 out of range"), ([-1], "machine -1 out of range"),
                                       ([1, 2, 1], "machine 1 appears twice")])
@pytest.mark.parametrize("layout", ["best_pipeline", "bottleneck_pipeline"])
def test_core_layouts_name_a_bad_machine_id(regional, bad, what, layout):
    # The core's layout functions index machines unchecked; the binding checks the group first.
    from hulk import _core
    from hulk.plan import models
    core, job = regional.to_core(), models.get("BERT-large").to_core()
    with pytest.raises(ValueError, match=f"group: {what}"):
        getattr(_core.plan, layout)(core, job, bad)
    assert set(getattr(_core.plan, layout)(core, job, [1, 0])["machines"]) <= {0, 1}  # a valid group still lays out
