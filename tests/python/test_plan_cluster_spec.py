"""hulk.plan.cluster_spec: loaders, derivation rules, validation errors, JSON round trip."""

from __future__ import annotations

import json
import math
import re
import warnings
from importlib.resources import files

import networkx as nx
import numpy as np
import pytest

from hulk.datasets import DataCleaningWarning
from hulk.plan import cluster_spec, cluster_spec as cs


def _paper_files():
    d = files("hulk") / "data" / "hulk47"
    return str(d / "node_feature.csv"), str(d / "edge.txt")


def _small_graph():
    G = nx.Graph()
    G.add_node("a", region="Beijing", capability=8.6, memory_gb=96.0, lat=39.9, lon=116.4)
    G.add_node("b", region="Tokyo", gpu="A100 80GB", gpus=8, memory_gb=640.0)
    G.add_node("c", region="Rome", capability=6.1, memory_gb=64.0, tflops=10.0)
    G.add_edge("a", "b", latency_ms=74.0)
    G.add_edge("b", "c", latency_ms=150.0, bandwidth_gbps=0.5)
    return G


def _doc():
    return {
        "version": "hulk-cluster/1",
        "machines": [
            {"name": "m0", "region": "Beijing", "capability": 8.0, "memory_gb": 320},
            {"name": "m1", "region": "Tokyo", "gpu": "V100 32GB", "gpus": 4, "memory_gb": 128},
        ],
        "links": [{"a": "m0", "b": 1, "latency_ms": 74}],
    }


# ------------------------------------------------------------------------------ GPU table

def test_gpu_table_has_paper_gpus_with_sources_and_capability():
    t = cs.gpu_table()
    want = {"A100 40GB (SXM4)": 8.0, "A100 80GB (SXM4)": 8.0, "A40": 8.6, "V100 SXM2 16GB": 7.0,
            "V100 SXM2 32GB": 7.0, "RTX A5000": 8.6, "GeForce GTX 1080 Ti": 6.1, "GeForce RTX 3090": 8.6,
            "TITAN Xp": 6.1, "T4": 7.5, "H100 SXM5 80GB": 9.0}
    for name, cc in want.items():
        assert t[name]["compute_capability"] == cc
        assert t[name]["source"], name
        assert "cuda" in t[name]["compute_capability_source"].lower()
        assert t[name]["training_peak_tflops"] > 0
    # Pascal GPUs use the fp32 peak (no fp16 tensor cores); the others the dense fp16 tensor peak
    assert t["GeForce GTX 1080 Ti"]["training_peak_basis"] == "fp32_tflops"
    assert t["TITAN Xp"]["training_peak_basis"] == "fp32_tflops"
    assert t["A100 80GB (SXM4)"]["training_peak_tflops"] == 312
    # the values are copied from the shared, sourced table
    assert t["GeForce RTX 3090"]["fp16_tensor_tflops_dense"] == 142
    assert t["V100 SXM2 32GB"]["memory_gb"] == 32


def test_gpu_info_aliases_and_unknown():
    assert cs.gpu_info("rtx-3090")["name"] == "GeForce RTX 3090"
    assert cs.gpu_info("a100 80gb")["name"] == "A100 80GB (SXM4)"
    with pytest.raises(ValueError, match=r"unknown gpu 'RTX 9090'.*known GPUs:.*A40"):
        cs.gpu_info("RTX 9090")
    assert cs.gpu_name("a100 80gb") == "A100 80GB (SXM4)"
    with pytest.raises(ValueError, match=r"unknown gpu 'RTX 9090'"):
        cs.gpu_name("RTX 9090")


def test_gpu_info_and_the_table_are_fresh_copies():
    """Callers may change what they get; the shared table must not change with it."""
    first = cs.gpu_info("T4")
    first["memory_gb"] = -1
    first.setdefault("aliases", []).append("changed")
    table = cs.gpu_table()
    table["T4"]["memory_gb"] = -2
    assert cs.gpu_info("t4")["memory_gb"] == 16 and "changed" not in cs.gpu_info("T4").get("aliases", [])
    assert cs.gpu_table()["T4"]["memory_gb"] == 16


# ------------------------------------------------------------------------------ rules

@pytest.mark.parametrize("cap,gpu,mem", [(8.0, "A100 80GB (SXM4)", 80), (8.6, "GeForce RTX 3090", 24),
                                         (7.0, "V100 SXM2 32GB", 32), (6.1, "GeForce GTX 1080 Ti", 11),
                                         (7.5, "T4", 16)])
def test_rule_a_capability_to_gpu_and_count(cap, gpu, mem):
    G = nx.Graph()
    G.add_node(0, region="X", capability=cap, memory_gb=96.0)
    s = cs.from_networkx(G)
    m = s.machines[0]
    assert m["gpu"] == gpu
    assert m["capability"] == cap
    assert m["gpus"] == pytest.approx(96.0 / mem)
    assert any(f"capability {cap:g} -> {gpu}" in n for n in s.notes)
    assert any("GPUs from 96 GB" in n and "fractional" in n for n in s.notes)


def test_rule_a_unknown_capability_names_value():
    G = nx.Graph()
    G.add_node(0, region="X", capability=5.2, memory_gb=12.0)
    with pytest.raises(ValueError, match=r"machine 0.*capability 5\.2 has no representative GPU"):
        cs.from_networkx(G)


def test_rule_b_tflops():
    s = cs.from_networkx(_small_graph())
    a, b, c = s.machines
    assert a["tflops"] == pytest.approx(4 * 142 * 0.35)              # 96 GB / 24 GB RTX 3090
    assert b["tflops"] == pytest.approx(8 * 312 * 0.35)              # explicit gpu + gpus
    assert c["tflops"] == 10.0                                       # given: kept
    s2 = cs.from_networkx(_small_graph(), utilisation=0.5)
    assert s2.machines[0]["tflops"] == pytest.approx(4 * 142 * 0.5)
    # fp32 peak for GPUs without fp16 tensor cores
    G = nx.Graph()
    G.add_node(0, region="X", capability=6.1, memory_gb=22.0)
    assert cs.from_networkx(G).machines[0]["tflops"] == pytest.approx(2 * 11.3 * 0.35)
    assert any("rule b" in n and "utilisation 0.35" in n for n in s.notes)
    with pytest.raises(ValueError, match="utilisation"):
        cs.from_networkx(_small_graph(), utilisation=0)


def test_rule_c_bandwidth_fit_recomputed_from_dtfm_numbers():
    # The 7 measured pairs of DT-FM's regional_us scenario (/work/shared/data/dtfm_regional_us.json):
    # same region (5 ms, 2 Gbps) and six region pairs.
    delay = np.array([5, 67, 59, 11, 12, 49, 52], dtype=float)
    bw = np.array([2.0, 1.15, 1.05, 1.12, 1.25, 1.10, 1.02])
    A = np.column_stack([np.ones_like(delay), np.log(delay)])
    (c0, c1), *_ = np.linalg.lstsq(A, np.log(bw), rcond=None)
    assert cs.BW_FIT_A == pytest.approx(math.exp(c0), rel=1e-9)
    assert cs.BW_FIT_K == pytest.approx(-c1, rel=1e-9)
    resid = np.log(bw) - np.log(cs.BW_FIT_A * delay ** -cs.BW_FIT_K)
    assert np.sqrt(np.mean(resid ** 2)) == pytest.approx(0.133, abs=1e-3)
    assert cs.bandwidth_from_latency(10.0) == pytest.approx(cs.BW_FIT_A * 10 ** -cs.BW_FIT_K)
    # clamping to [0.1, 10]
    assert cs.bandwidth_from_latency(0.0) == 10.0
    assert cs.bandwidth_from_latency(1e-9) == 10.0
    assert cs.bandwidth_from_latency(1e12) == 0.1
    arr = cs.bandwidth_from_latency([1.0, 100.0])
    assert arr.shape == (2,) and arr[0] > arr[1]
    with pytest.raises(ValueError, match="latency_ms"):
        cs.bandwidth_from_latency(-1.0)


def test_rule_c_applied_only_when_absent():
    s = cs.from_networkx(_small_graph())
    l0, l1 = s.links
    assert l0["bandwidth_derived"] is True
    assert l0["bandwidth_gbps"] == pytest.approx(cs.bandwidth_from_latency(74.0))
    assert l1["bandwidth_derived"] is False and l1["bandwidth_gbps"] == 0.5
    assert any(n.startswith("rule c") and "(links 0)" in n for n in s.notes)


def test_rule_d_missing_links_note_and_forbid():
    s = cs.from_networkx(_small_graph())
    assert s.missing_links == "route"
    assert any("rule d: 1 of 3 machine pairs have no direct link" in n and "route" in n for n in s.notes)
    f = cs.from_networkx(_small_graph(), missing_links="forbid")
    assert f.missing_links == "forbid" and any("infeasible" in n for n in f.notes)
    G = _small_graph()
    G.add_node("d", region="Paris", capability=7.0, memory_gb=32.0)
    assert any("2 connected components" in n for n in cs.from_networkx(G).notes)
    with pytest.raises(ValueError, match="missing_links must be one of"):
        cs.from_networkx(_small_graph(), missing_links="teleport")


# ------------------------------------------------------------------------------ loaders

def test_from_networkx_basic():
    s = cs.from_networkx(_small_graph())
    assert [m["name"] for m in s.machines] == ["a", "b", "c"]
    assert s.machines[0]["lat"] == 39.9 and s.machines[1]["lat"] is None
    assert s.machines[1]["capability"] == 8.0  # filled in from the GPU table
    assert (s.links[0]["a"], s.links[0]["b"]) == (0, 1)
    assert "3 machines" in s.summary()


def test_networkx_round_trip():
    s = cs.from_networkx(_small_graph())
    G = s.to_networkx()
    assert G.number_of_nodes() == 3 and G.number_of_edges() == 2
    assert G.edges[0, 1]["bandwidth_derived"] is True
    assert cs.from_networkx(G) == s


def test_from_json_dict_text_file_and_round_trip(tmp_path):
    s = cs.from_json(_doc())
    assert s.machines[0]["gpu"] == "A100 80GB (SXM4)" and s.machines[0]["gpus"] == 4
    assert s.machines[1]["gpu"] == "V100 SXM2 32GB" and s.machines[1]["tflops"] == pytest.approx(4 * 125 * 0.35)
    assert s.links[0]["a"] == 0 and s.links[0]["b"] == 1
    text = s.to_json()
    assert json.loads(text)["version"] == "hulk-cluster/1"
    assert cs.from_json(text) == s
    p = tmp_path / "c.json"
    s.to_json(p)
    assert cs.from_json(p) == s and cs.from_json(str(p)) == s
    doc = _doc()
    doc["utilisation"] = 0.5
    assert cs.from_json(doc).machines[1]["tflops"] == pytest.approx(4 * 125 * 0.5)


def test_hulk47_spec():
    s = cs.hulk47_spec()
    assert len(s.machines) == 47 and len(s.links) == 613
    assert all(l["bandwidth_derived"] for l in s.links)
    assert s.machines[0]["name"] == "Beijing-0" and s.machines[5]["region"] == "Neimeng"
    assert s.machines[1]["gpu"] == "A100 80GB (SXM4)" and s.machines[1]["gpus"] == 4  # cap 8, 320 GB
    assert s.total_memory_gb == pytest.approx(sum(nx.get_node_attributes(
        __import__("hulk.datasets", fromlist=["x"]).hulk47(clean="quiet"), "memory_gb").values()))
    text = "\n".join(s.notes)
    for needle in ("rule a", "rule b", "rule c", "rule d", "cleaning: dropped self loop 4-4",
                   "duplicate pair 11-30", "T4 (representative) (not in the paper's GPU list",
                   "DLYuanGod/Hulk"):
        assert needle in text, needle
    assert cs.from_json(s.to_json()) == s
    print("\n" + s.summary().split("\nnote:")[0])


def test_from_paper_files_matches_hulk47(tmp_path):
    nodes, edges = _paper_files()
    with pytest.warns(DataCleaningWarning, match=r"dropped 2 self loops \(4-4, 14-14\)"):
        s = cs.from_paper_files(nodes, edges)
    ref = cs.hulk47_spec()
    assert s.machines == ref.machines and s.links == ref.links
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cs.from_paper_files(nodes, edges, clean="quiet")
    with pytest.raises(ValueError, match="whitespace around its region name.*defects in total"):
        cs.from_paper_files(nodes, edges, clean="error")


def _write(tmp_path, nodes_text, edges_text):
    n, e = tmp_path / "node_feature.csv", tmp_path / "edge.txt"
    n.write_text(nodes_text)
    e.write_text(edges_text)
    return str(n), str(e)


def test_from_paper_files_small_and_errors(tmp_path):
    hdr = "node,City,Capability,Memory\n"
    n, e = _write(tmp_path, hdr + "0,Rome,8.6,48\n1,Paris,7,64\n", "0 1 20\n")
    s = cs.from_paper_files(n, e)
    assert s.machines[1]["name"] == "Paris-1" and s.machines[0]["gpus"] == 2
    assert s.links[0]["latency_ms"] == 20
    cases = [
        ("node,City,Cap,Memory\n0,Rome,8.6,48\n", "", "expected header"),
        (hdr + "0,Rome,8.6\n", "", "line 2: expected 'node,City,Capability,Memory'"),
        (hdr + "1,Rome,8.6,48\n", "", "expected node id 0, got 1"),
        (hdr + "0,Rome,8.6,-48\n", "", "Memory must be finite and >= 0, got -48"),
        (hdr + "0,Rome,8.6,nan\n", "", "Memory must be finite"),
        (hdr, "", "empty cluster"),
        (hdr + "0,Rome,8.6,48\n1,Paris,7,64\n", "0 5 20\n", "line 1: unknown node id 5"),
        (hdr + "0,Rome,8.6,48\n1,Paris,7,64\n", "0 1 -3\n", "latency must be finite and >= 0, got -3"),
        (hdr + "0,Rome,8.6,48\n1,Paris,7,64\n", "0 1\n", "expected 'src dst latency'"),
        (hdr + "0,Rome,4.0,48\n", "", "capability 4.0 has no representative GPU"),
    ]
    for nodes_text, edges_text, msg in cases:
        n, e = _write(tmp_path, nodes_text, edges_text)
        with pytest.raises(ValueError, match=msg):
            cs.from_paper_files(n, e)


# ------------------------------------------------------------------------------ errors

def _node_graph(**attrs):
    G = nx.Graph()
    base = {"region": "X", "capability": 8.6, "memory_gb": 24.0}
    base.update(attrs)
    G.add_node(0, **{k: v for k, v in base.items() if v is not None})
    return G


@pytest.mark.parametrize("attrs,msg", [
    ({"region": None}, r"machine 0 \('0'\): region is required"),
    ({"region": "  "}, "region is required"),
    ({"memory_gb": None}, "memory_gb is required"),
    ({"memory_gb": -1.0}, r"memory_gb must be finite and > 0, got -1\.0"),
    ({"memory_gb": float("nan")}, "memory_gb must be finite and > 0, got nan"),
    ({"capability": None}, "needs 'gpu'"),
    ({"gpu": "RTX 9090"}, "unknown gpu 'RTX 9090'"),
    ({"gpu": "A100 80GB"}, "capability 8.6 does not match gpu 'A100 80GB"),
    ({"gpus": 0}, "gpus must be finite and > 0, got 0"),
    ({"tflops": float("inf")}, "tflops must be finite and > 0, got inf"),
    ({"tflops": -2.0}, "tflops must be finite and > 0"),
    ({"lat": 95.0}, r"lat must be None or a number in \[-90, 90\], got 95\.0"),
    ({"lon": float("nan")}, "lon must be None"),
])
def test_machine_errors(attrs, msg):
    with pytest.raises(ValueError, match=msg):
        cs.from_networkx(_node_graph(**attrs))


def test_graph_errors():
    with pytest.raises(ValueError, match="empty cluster"):
        cs.from_networkx(nx.Graph())
    with pytest.raises(ValueError, match="undirected"):
        cs.from_networkx(nx.DiGraph(_small_graph()))
    with pytest.raises(ValueError, match="networkx.Graph"):
        cs.from_networkx({"a": 1})
    G = _small_graph()
    G.add_edge("a", "a", latency_ms=1.0)
    with pytest.raises(ValueError, match="self loop on node 'a'"):
        cs.from_networkx(G)
    for attrs, msg in [({"latency_ms": -1.0}, r"latency_ms must be finite and >= 0, got -1\.0"),
                       ({"latency_ms": float("nan")}, "latency_ms must be finite and >= 0, got nan"),
                       ({}, "latency_ms is required"),
                       ({"latency_ms": 1.0, "bandwidth_gbps": 0.0}, "bandwidth_gbps must be finite and > 0, got 0.0")]:
        G = _small_graph()
        G.add_edge("a", "c", **attrs)
        with pytest.raises(ValueError, match=r"link 1 \(0-2\): " + msg):
            cs.from_networkx(G)
    G = _small_graph()
    G.nodes["b"]["name"] = "a"
    with pytest.raises(ValueError, match=r"machine 1 \('a'\): duplicate machine name \(also machine 0\)"):
        cs.from_networkx(G)


def test_json_errors():
    def bad(mutate, msg):
        d = json.loads(json.dumps(_doc()))
        mutate(d)
        with pytest.raises(ValueError, match=msg):
            cs.from_json(d)

    bad(lambda d: d.update(version="hulk-cluster/2"), "version must be 'hulk-cluster/1'")
    bad(lambda d: d.update(machines=[]), "empty cluster")
    bad(lambda d: d.update(extra=1), r"unknown top-level keys \['extra'\]")
    bad(lambda d: d["machines"][0].update(memory=3), r"machine 0: unknown keys \['memory'\]")
    bad(lambda d: d["links"][0].update(lat=3), r"link 0: unknown keys \['lat'\]")
    bad(lambda d: d["links"][0].update(b="nope"), "b = 'nope' is not a machine name")
    bad(lambda d: d["links"][0].update(b=7), r"unknown machine index 7 \(the cluster has machines 0..1\)")
    bad(lambda d: d["links"][0].update(b=0), "self loop on machine 0")
    bad(lambda d: d["links"].append({"a": 1, "b": 0, "latency_ms": 3}),
        r"link 1 \(1-0\): duplicate link between machines 0 and 1 \(also link 0\)")
    bad(lambda d: d["links"][0].update(latency_ms=float("nan")), "latency_ms must be finite")
    bad(lambda d: d.update(missing_links="drop"), "missing_links must be one of")
    with pytest.raises(ValueError, match="expects a path"):
        cs.from_json(42)


def test_direct_construction_validates():
    s = cs.from_json(_doc())
    with pytest.raises(ValueError, match="empty cluster"):
        cs.ClusterSpec(machines=[], links=[])
    m = [dict(x) for x in s.machines]
    m[0]["memory_gb"] = -5.0
    with pytest.raises(ValueError, match=r"machine 0 \('m0'\): memory_gb must be finite and > 0, got -5\.0"):
        cs.ClusterSpec(machines=m, links=[])
    m = [dict(x) for x in s.machines]
    del m[1]["tflops"]
    with pytest.raises(ValueError, match=r"machine 1: keys must be .*missing \['tflops'\]"):
        cs.ClusterSpec(machines=m, links=[])
    with pytest.raises(ValueError, match="bandwidth_derived must be a bool"):
        cs.ClusterSpec(machines=s.machines, links=[{**s.links[0], "bandwidth_derived": "yes"}])
    with pytest.raises(ValueError, match="unknown machine index True"):
        cs.ClusterSpec(machines=s.machines, links=[{**s.links[0], "a": True}])


# ------------------------------------------------------------------------------ without / with_machine

def test_without_shifts_indices_and_updates_notes():
    s = cs.from_networkx(_small_graph())          # a-b, b-c
    t = s.without(0)
    assert [m["name"] for m in t.machines] == ["b", "c"]
    assert [(l["a"], l["b"]) for l in t.links] == [(0, 1)]
    assert t.links[0]["bandwidth_gbps"] == 0.5
    assert any("removed machine 0 ('a') and its 1 links" in n for n in t.notes)
    assert not any(n.startswith("rule d") for n in t.notes)  # the 2 remaining machines are linked
    u = s.without(1)
    assert u.links == [] and any("rule d: 1 of 1 machine pairs" in n for n in u.notes)
    for bad in (-1, 3, True, 1.0):
        with pytest.raises(ValueError, match="without: machine must be an index in"):
            s.without(bad)
    one = cs.from_networkx(_node_graph())
    with pytest.raises(ValueError, match="empty cluster"):
        one.without(0)
    h = cs.hulk47_spec().without(46)
    assert len(h.machines) == 46 and all(max(l["a"], l["b"]) < 46 for l in h.links)


def test_with_machine():
    s = cs.from_networkx(_small_graph())
    t = s.with_machine({"region": "Paris", "capability": 7.0, "memory_gb": 64.0},
                       [{"to": 0, "latency_ms": 20.0}, {"to": "c", "latency_ms": 5.0, "bandwidth_gbps": 3.0}])
    new = t.machines[3]
    assert new["name"] == "3" and new["gpu"] == "V100 SXM2 32GB" and new["gpus"] == 2
    assert new["tflops"] == pytest.approx(2 * 125 * 0.35)
    assert [(l["a"], l["b"]) for l in t.links[2:]] == [(0, 3), (2, 3)]
    assert t.links[2]["bandwidth_derived"] and t.links[2]["bandwidth_gbps"] == pytest.approx(
        cs.bandwidth_from_latency(20.0))
    assert t.links[3]["bandwidth_gbps"] == 3.0 and not t.links[3]["bandwidth_derived"]
    text = "\n".join(t.notes)
    assert "added machine 3 ('3') with 2 links" in text and "capability 7 -> V100 SXM2 32GB" in text
    assert "rule d: 2 of 6 machine pairs" in text and "rule d: 1 of 3" not in text
    assert s.machines == t.machines[:3]  # the original is unchanged
    with pytest.raises(ValueError, match="unknown machine index 9"):
        s.with_machine({"region": "P", "capability": 7.0, "memory_gb": 64.0}, [{"to": 9, "latency_ms": 1.0}])
    with pytest.raises(ValueError, match="'to' = 'zz' is not a machine name"):
        s.with_machine({"region": "P", "capability": 7.0, "memory_gb": 64.0}, [{"to": "zz", "latency_ms": 1.0}])
    with pytest.raises(ValueError, match="duplicate machine name"):
        s.with_machine({"name": "a", "region": "P", "capability": 7.0, "memory_gb": 64.0})
    with pytest.raises(ValueError, match="memory_gb must be finite and > 0"):
        s.with_machine({"region": "P", "capability": 7.0, "memory_gb": -1.0})
    with pytest.raises(ValueError, match="duplicate link"):
        s.with_machine({"region": "P", "capability": 7.0, "memory_gb": 64.0},
                       [{"to": 0, "latency_ms": 1.0}, {"to": "a", "latency_ms": 2.0}])


def test_machine_names_must_be_strings_and_printable():
    doc = json.loads(cluster_spec.hulk47_spec().to_json())
    doc["machines"][0]["name"] = 17
    with pytest.raises(ValueError, match="name must be a string"):
        cluster_spec.from_json(doc)
    doc["machines"][0]["name"] = "a"
    doc["machines"][1]["region"] = "Paris\x1b[31m"
    with pytest.raises(ValueError, match="control character"):
        cluster_spec.from_json(doc)


def test_batched_rule_c_gives_the_per_link_values():
    """Loading computes rule c once over all links (a full mesh of 1,400 machines has ~1 M);
    each value must equal the per-link formula."""
    rng = np.random.default_rng(4)
    n = 30
    machines = [{"region": f"R{i % 4}", "memory_gb": 80, "capability": 8.0} for i in range(n)]
    links = [{"a": i, "b": j, "latency_ms": float(rng.choice([0.0, rng.uniform(0, 400)]))}
             for i in range(n) for j in range(i + 1, n)]
    links[5]["bandwidth_gbps"] = 3.5
    spec = cluster_spec.from_json({"version": cluster_spec.SCHEMA_VERSION, "machines": machines, "links": links})
    for raw, got in zip(links, spec.links):
        want = raw.get("bandwidth_gbps", cluster_spec.bandwidth_from_latency(raw["latency_ms"]))
        assert got["bandwidth_gbps"] == want and got["bandwidth_derived"] == ("bandwidth_gbps" not in raw)
    assert not any("connected components" in s for s in spec.notes)
    sparse = cluster_spec.from_json({"version": cluster_spec.SCHEMA_VERSION, "machines": machines[:4],
                                     "links": [{"a": 0, "b": 1, "latency_ms": 1.0}, {"a": 2, "b": 3, "latency_ms": 1}]})
    assert any("2 connected components" in s for s in sparse.notes)


# ------------------------------------------------------------------------------ plausible values

@pytest.mark.parametrize("attrs, words", [
    (dict(tflops=1e308), "tflops = 1e+308 is outside the plausible range"),
    (dict(tflops=1e-300), "tflops = 1e-300 is outside the plausible range"),
    (dict(memory_gb=1e12), "memory_gb = 1000000000000.0 is outside the plausible range"),
    (dict(gpus=1e9), "gpus = 1000000000.0 is outside the plausible range"),
])
def test_absurd_machine_values_are_refused_by_name(attrs, words):
    G = _small_graph()
    G.nodes["c"].update(attrs)
    with pytest.raises(ValueError, match=f"machine 2 \\('c'\\).*{re.escape(words)}.*check the value and its unit"):
        cs.from_networkx(G)


@pytest.mark.parametrize("attrs, words", [
    (dict(latency_ms=1e-300), "latency_ms = 1e-300"), (dict(latency_ms=1e9), "latency_ms = 1000000000.0"),
    (dict(latency_ms=1.0, bandwidth_gbps=1e308), "bandwidth_gbps = 1e+308"),
    (dict(latency_ms=1.0, bandwidth_gbps=1e-12), "bandwidth_gbps = 1e-12"),
])
def test_absurd_link_values_are_refused_by_name(attrs, words):
    G = _small_graph()
    G.edges["b", "c"].update(attrs)
    with pytest.raises(ValueError, match=f"link 1 .*{re.escape(words)} is outside the plausible range"):
        cs.from_networkx(G)


def test_absurd_values_in_a_cluster_file_name_the_field(tmp_path):
    doc = _doc()
    doc["machines"][0]["tflops"] = 1e308
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="m0.*tflops = 1e\\+308 is outside the plausible range"):
        cs.from_json(str(path))


def test_the_largest_real_machines_and_links_are_plausible():
    from hulk.plan import cluster as cl
    r = cl.plausible_ranges()
    assert set(r) == {"memory_gb", "tflops", "gpus", "latency_ms", "bandwidth_gbps"}
    G = _small_graph()
    G.nodes["c"].update(memory_gb=13500.0, tflops=180000.0, gpus=72)  # GB200 NVL72 as one machine
    G.edges["b", "c"].update(latency_ms=0.001, bandwidth_gbps=6400.0)
    assert len(cs.from_networkx(G)) == 3
    G.edges["b", "c"].update(latency_ms=0.0)  # co-located: allowed, as before
    assert len(cs.from_networkx(G)) == 3


def test_errors_in_a_cluster_file_name_the_file_the_field_and_the_value(tmp_path):
    from hulk.errors import FileFormatError
    doc = _doc()
    doc["machines"][1]["memory_gb"] = -4
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(FileFormatError) as exc:
        cs.from_json(str(path))
    assert exc.value.path == str(path)
    assert str(exc.value).startswith(f"{path}: machine 1 ('m1'): memory_gb must be finite and > 0, got -4")
    doc["machines"][1]["name"] = ["m1"]  # unhashable: named, not a bare TypeError from the name lookup
    path.write_text(json.dumps(doc))
    with pytest.raises(FileFormatError, match=r"cluster.json: machine 1: name must be a string, got list \['m1'\]"):
        cs.from_json(str(path))
