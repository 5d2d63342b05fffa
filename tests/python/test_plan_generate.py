"""hulk.plan.generate: seeded synthetic regional clusters, their rules, conversions and scale."""

from __future__ import annotations

import csv
import json
import math
import re
import sys
import time
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest

from helpers import run_limited
from hulk.plan import cluster_spec as cs, generate as gen


@pytest.fixture(scope="module")
def mid():
    return gen.generate_cluster(300, seed=7, missing_fraction=0.3)


# ------------------------------------------------------------------------------ cities, distance, fit

def test_cities_table_has_the_paper_cities_by_their_exact_names():
    table = gen.cities()
    names = [c["name"] for c in table]
    assert 35 <= len(table) <= 45 and len(set(names)) == len(names)
    rows = list(csv.reader((files("hulk") / "data" / "hulk47" / "node_feature.csv").read_text().splitlines()))
    paper = {r[1].strip() for r in rows[1:] if r}
    assert len(paper) == 12
    assert {c["name"] for c in table if c["paper"]} == paper
    for c in table:
        assert set(c) == {"name", "lat", "lon", "paper"}
        assert -90 <= c["lat"] <= 90 and -180 <= c["lon"] <= 180
        assert round(c["lat"], 2) == c["lat"] and round(c["lon"], 2) == c["lon"]
    table[0]["name"] = "changed"
    assert gen.cities()[0]["name"] != "changed"  # a fresh copy each call


def test_great_circle_known_distances_and_broadcasting():
    where = {c["name"]: (c["lat"], c["lon"]) for c in gen.cities()}
    assert gen.great_circle_km(*where["London"], *where["Paris"]) == pytest.approx(344, abs=3)
    assert gen.great_circle_km(10.0, 20.0, 10.0, 20.0) == 0.0
    assert gen.great_circle_km(0, 0, 0, 180) == pytest.approx(math.pi * 6371)
    d = gen.great_circle_km(np.zeros(3), np.zeros(3), 0.0, np.array([0.0, 90.0, -90.0]))
    assert d.shape == (3,) and d[1] == pytest.approx(d[2]) == pytest.approx(math.pi * 6371 / 2)


def test_latency_constants_are_the_rounded_fit_of_the_paper_data():
    fit = gen.fit_latency_model()
    assert len(fit["pairs"]) == 45 and fit["n_lan_links"] == 60
    assert fit["a"] > 0 and fit["b"] > 0
    assert abs(fit["a"] - gen.LATENCY_A_MS) <= 0.0005
    assert abs(fit["b"] - gen.LATENCY_B_MS_PER_KM) <= 5e-7
    assert fit["lan_ms"] == gen.LAN_LATENCY_MS
    assert fit["mad_ms"] == pytest.approx(79.5, abs=0.05) and fit["r"] == pytest.approx(0.43, abs=0.005)
    # The robust fit has a smaller intercept than least squares (which overstates short hops).
    assert fit["a"] < 0.5 * fit["a_ols"]


# ------------------------------------------------------------------------------ generation rules

def test_same_seed_same_cluster_other_seed_differs():
    a = gen.generate_cluster(200, seed=3)
    b = gen.generate_cluster(200, seed=3)
    c = gen.generate_cluster(200, seed=4)
    assert a == b
    for name in ("base_latency_ms", "region_link", "region", "access_ms", "gpu", "gpus", "tflops"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
    assert a != c
    assert not np.array_equal(a.access_ms, c.access_ms)


def test_changing_missing_fraction_keeps_the_other_draws():
    a = gen.generate_cluster(200, seed=3, missing_fraction=0.0)
    b = gen.generate_cluster(200, seed=3, missing_fraction=0.5)
    assert a.region_link.all() and not b.region_link.all()
    for name in ("base_latency_ms", "region", "access_ms", "gpu", "gpus"):
        assert np.array_equal(getattr(a, name), getattr(b, name))


def test_shapes_dtypes_and_ranges(mid):
    c = mid
    N, R, G = len(c), len(c.region_names), len(c.gpu_names)
    assert N == 300 and R == round(math.sqrt(300)) and G == len(cs.gpu_table())
    for name, dtype, shape in (("region_lat", np.float64, (R,)), ("base_latency_ms", np.float64, (R, R)),
                               ("base_bandwidth_gbps", np.float64, (R, R)), ("region_link", np.bool_, (R, R)),
                               ("region", np.int64, (N,)), ("access_ms", np.float64, (N,)),
                               ("gpu", np.int64, (N,)), ("gpus", np.int64, (N,)),
                               ("memory_gb", np.float64, (N,)), ("tflops", np.float64, (N,))):
        arr = getattr(c, name)
        assert arr.dtype == dtype and arr.shape == shape, name
    assert ((c.access_ms >= gen.ACCESS_MS_LOW) & (c.access_ms <= gen.ACCESS_MS_HIGH)).all()
    assert set(np.unique(c.gpus).tolist()) <= set(gen.GPUS_PER_SERVER)
    info = [cs.gpu_info(g) for g in c.gpu_names]
    mem = np.array([g["memory_gb"] for g in info])
    peak = np.array([g["training_peak_tflops"] for g in info])
    assert np.array_equal(c.memory_gb, c.gpus * mem[c.gpu])
    assert np.allclose(c.tflops, c.gpus * peak[c.gpu] * cs.DEFAULT_UTILISATION)
    assert np.array_equal(c.base_bandwidth_gbps, cs.bandwidth_from_latency(c.base_latency_ms))
    lan = np.diag(c.base_latency_ms)
    wan = c.base_latency_ms[~np.eye(R, dtype=bool)]
    assert (lan > 0).all() and lan.max() < wan.min()
    names = c.machine_names()
    assert len(set(names)) == N and names[0] == f"{c.region_names[c.region[0]]}-0"


def test_region_arrays_are_symmetric(mid):
    for name in ("base_latency_ms", "base_bandwidth_gbps", "region_link"):
        arr = getattr(mid, name)
        assert np.array_equal(arr, arr.T), name
    assert np.diag(mid.region_link).all()


def _connected(link: np.ndarray) -> bool:
    seen, todo = {0}, [0]
    while todo:
        r = todo.pop()
        for s in np.flatnonzero(link[r]).tolist():
            if s not in seen:
                seen.add(s)
                todo.append(s)
    return len(seen) == link.shape[0]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n_regions", [3, 5, 12, 40])
def test_region_graph_stays_connected_with_half_the_links_missing(seed, n_regions):
    c = gen.generate_cluster(100, seed=seed, n_regions=n_regions, missing_fraction=0.5)
    R = n_regions
    pairs = R * (R - 1) // 2
    missing = int((~c.region_link[np.triu_indices(R, k=1)]).sum())
    assert missing == min(round(0.5 * pairs), pairs - (R - 1))
    assert _connected(c.region_link)


@pytest.mark.parametrize("n, n_regions", [(2, None), (3, 3), (10, None), (40, 40), (500, None), (1000, 12)])
def test_every_region_has_a_machine_and_machines_are_grouped(n, n_regions):
    c = gen.generate_cluster(n, seed=1, n_regions=n_regions)
    sizes = np.bincount(c.region, minlength=len(c.region_names))
    assert sizes.min() >= 1 and sizes.sum() == n
    assert (np.diff(c.region) >= 0).all()
    if n_regions is None:
        assert len(c.region_names) == min(int(np.clip(round(math.sqrt(n)), 3, 40)), n)


def test_paper_cities_come_first_from_twelve_regions_on():
    paper = [x["name"] for x in gen.cities() if x["paper"]]
    for R in (12, 20, 40):
        c = gen.generate_cluster(100, seed=2, n_regions=R)
        assert c.region_names[:12] == paper and len(set(c.region_names)) == R
    for seed in range(4):
        c = gen.generate_cluster(50, seed=seed, n_regions=5)
        assert set(c.region_names) <= set(paper)


def test_latency_grows_with_distance():
    c = gen.generate_cluster(400, seed=5, n_regions=40)
    a, b = np.triu_indices(40, k=1)
    km = gen.great_circle_km(c.region_lat[a], c.region_lon[a], c.region_lat[b], c.region_lon[b])
    lat = c.base_latency_ms[a, b]
    assert np.corrcoef(km, lat)[0, 1] > 0.8
    ratio = lat / (gen.LATENCY_A_MS + gen.LATENCY_B_MS_PER_KM * km)   # the jitter factor
    assert abs(np.log(ratio).std() - gen.JITTER_SIGMA) < 0.03


def test_gpu_mix_restricts_types_and_accepts_aliases():
    c = gen.generate_cluster(100, seed=0, gpu_mix={"V100 32GB": 1.0, "T4": 3.0, "A40": 0.0})
    assert c.gpu_names == ["V100 SXM2 32GB", "T4"]
    assert set(np.unique(c.gpu).tolist()) == {0, 1}
    one = gen.generate_cluster(20, seed=0, gpu_mix={"T4": 1}, utilisation=0.5)
    assert one.gpu_names == ["T4"] and np.allclose(one.tflops, one.gpus * 65 * 0.5)


# ------------------------------------------------------------------------------ pairs, sample, spec

def test_pair_values_follow_the_regional_rule(mid):
    i, j = np.array([0, 5, 299]), np.array([1, 200, 3])
    ri, rj = mid.region[i], mid.region[j]
    assert np.array_equal(mid.pair_latency_ms(i, j),
                          mid.access_ms[i] + mid.access_ms[j] + mid.base_latency_ms[ri, rj])
    assert np.array_equal(mid.pair_bandwidth_gbps(j, i), mid.base_bandwidth_gbps[ri, rj])
    with pytest.raises(ValueError, match="different from j"):
        mid.pair_latency_ms([0, 4], [1, 4])
    with pytest.raises(ValueError, match="machine index"):
        mid.pair_latency_ms(0, 300)


def test_the_core_cluster_sends_by_the_same_tables(mid):
    # to_core passes the R x R tables as arrays; the C++ cluster must read them unchanged.
    core = mid.to_core()
    i, j = np.array([0, 5, 299, 17]), np.array([1, 200, 3, 250])
    for a, b in zip(i.tolist(), j.tolist()):
        lat_s = mid.pair_latency_ms([a], [b])[0] / 1e3
        bw_Bps = mid.pair_bandwidth_gbps([a], [b])[0] * 1e9 / 8
        assert core.latency_s(a, b) == pytest.approx(lat_s, rel=1e-12)
        assert core.send_time(a, b, 1e6) == pytest.approx(lat_s + 1e6 / bw_Bps, rel=1e-12)


def test_the_core_region_tables_refuse_a_lossy_cast(mid):
    from hulk import _core
    R = mid.n_regions
    args = dict(names=mid.machine_names(), regions=[mid.region_names[r] for r in mid.region.tolist()],
                memory_gb=mid.memory_gb.tolist(), tflops=mid.tflops.tolist(), n_regions=R,
                region=mid.region.tolist(), access_ms=mid.access_ms.tolist(),
                base_latency_ms=mid.base_latency_ms.ravel(), base_bandwidth_gbps=mid.base_bandwidth_gbps.ravel(),
                region_link=mid.region_link.ravel().astype(np.uint8), missing_links="route")
    assert _core.plan.PlanCluster.from_network(**args).size == len(mid)
    with pytest.raises(TypeError):
        _core.plan.PlanCluster.from_network(**{**args, "region_link": mid.region_link.ravel().astype(float) * 0.5})


def test_sample_links_is_a_valid_sparse_sample(mid):
    k_local, k_remote = 4, 3
    a, b, lat, bw = mid.sample_links(k_local=k_local, k_remote=k_remote, seed=1)
    n = len(mid)
    assert (a < b).all() and a.dtype == np.int64
    key = a * n + b
    assert np.unique(key).size == key.size
    assert mid.region_link[mid.region[a], mid.region[b]].all()
    assert np.array_equal(lat, mid.pair_latency_ms(a, b)) and np.array_equal(bw, mid.pair_bandwidth_gbps(a, b))
    assert a.size <= n * (k_local + k_remote)
    # each machine drew min(k, available) distinct partners of each kind
    same = mid.region[a] == mid.region[b]
    ends = np.concatenate([a, b])
    local_deg = np.bincount(np.concatenate([a[same], b[same]]), minlength=n)
    remote_deg = np.bincount(np.concatenate([a[~same], b[~same]]), minlength=n)
    sizes = mid.region_sizes()
    linked_others = (mid.region_link & ~np.eye(len(sizes), dtype=bool)) @ sizes
    assert (local_deg >= np.minimum(k_local, sizes[mid.region] - 1)).all()
    assert (remote_deg >= np.minimum(k_remote, linked_others[mid.region])).all()
    assert np.bincount(ends, minlength=n).min() >= 1
    again = mid.sample_links(k_local=k_local, k_remote=k_remote, seed=1)
    assert all(np.array_equal(x, y) for x, y in zip((a, b, lat, bw), again))


def test_machine_names_are_computed_once_and_returned_as_a_fresh_list():
    import pickle
    c = gen.generate_cluster(300, seed=4)
    first = c.machine_names()
    first[0] = "changed"
    again = c.machine_names()
    assert again[0] != "changed" and again == c.machine_names() and len(again) == len(c)
    assert "_cache_machine_names" in c.__dict__
    restored = pickle.loads(pickle.dumps(c))
    assert "_cache_machine_names" not in restored.__dict__ and restored.machine_names() == again


def test_remote_draws_of_a_complete_region_table_skip_the_table():
    # Every region pair linked (measured clusters): the remote draws map positions without the
    # R x R table, to the same machines as the general mapping.
    c = gen.generate_cluster(600, seed=11, n_regions=40, missing_fraction=0)
    assert c.region_link.all()
    members, starts, _ = c._grouping()
    sizes = c.region_sizes()
    R = c.n_regions
    cum = np.cumsum(np.where(~np.eye(R, dtype=bool), sizes[None, :], 0), axis=1)
    rng = np.random.default_rng(5)
    population = len(c) - sizes[c.region]
    pos = rng.integers(-1, population[:, None], size=(len(c), 6))
    fast, general = c._remote_machines(pos, members, starts, sizes), c._remote_machines(pos, members, starts, sizes, cum)
    assert np.array_equal(fast, general)
    assert (fast[pos >= 0] >= 0).all() and (c.region[np.maximum(fast, 0)] != c.region[:, None])[pos >= 0].all()


def test_sample_links_takes_everything_when_k_is_large():
    c = gen.generate_cluster(30, seed=0, n_regions=3, missing_fraction=0.0)
    a, b, _, _ = c.sample_links(k_local=100, k_remote=100)
    assert a.size == 30 * 29 // 2
    a, b, _, _ = c.sample_links(k_local=0, k_remote=0)
    assert a.size == 0


def test_to_spec_gives_a_valid_cluster_spec_with_the_pair_values():
    c = gen.generate_cluster(40, seed=11, n_regions=6, missing_fraction=0.4, missing_links="forbid")
    spec = c.to_spec()
    assert isinstance(spec, cs.ClusterSpec) and len(spec) == 40
    spec.validate()
    assert spec.missing_links == "forbid"
    a = np.array([l["a"] for l in spec.links])
    b = np.array([l["b"] for l in spec.links])
    all_a, all_b = np.triu_indices(40, k=1)
    assert a.size == c.region_link[c.region[all_a], c.region[all_b]].sum() < all_a.size
    assert np.array_equal([l["latency_ms"] for l in spec.links], c.pair_latency_ms(a, b))
    assert np.array_equal([l["bandwidth_gbps"] for l in spec.links], c.pair_bandwidth_gbps(a, b))
    assert not any(l["bandwidth_derived"] for l in spec.links)
    m = spec.machines[0]
    assert m["name"] == c.machine_names()[0] and m["region"] == c.region_names[c.region[0]]
    assert m["lat"] == c.region_lat[c.region[0]] and m["capability"] is None
    assert spec.total_memory_gb == pytest.approx(c.memory_gb.sum())
    assert any("seed=11" in s and "n=40" in s for s in spec.notes)
    assert cs.from_json(spec.to_json()).links == spec.links
    with pytest.raises(ValueError, match="max_machines"):
        c.to_spec(max_machines=39)


def test_json_round_trip(tmp_path, mid):
    path = tmp_path / "c.json"
    text = mid.to_json(path)
    assert json.loads(text)["version"] == "hulk-regional/1"
    back = gen.RegionalCluster.from_json(path)
    assert back == mid and gen.RegionalCluster.from_json(text) == mid
    assert back.region_link.dtype == np.bool_ and back.gpus.dtype == np.int64
    assert gen.RegionalCluster.from_dict(mid.to_dict()) == mid


def test_hundred_thousand_machines_are_fast():
    t0 = time.perf_counter()
    c = gen.generate_cluster(100_000, seed=0)
    t1 = time.perf_counter()
    a, b, lat, bw = c.sample_links()
    t2 = time.perf_counter()
    print(f"N=100,000: generate {t1 - t0:.2f} s, sample_links {t2 - t1:.2f} s, {a.size} links")
    assert len(c) == 100_000 and len(c.region_names) == 40
    assert a.size > 100_000 and (a < b).all()
    assert t2 - t0 < 60  # loose: not a benchmark
    with pytest.raises(ValueError, match="max_machines"):
        c.to_spec()


# ------------------------------------------------------------------------------ errors

@pytest.mark.parametrize("kwargs, match", [
    ({"n": 1}, "n must be"),
    ({"n": 10.0}, "n must be"),
    ({"n": True}, "n must be"),
    ({"n": 10, "seed": -1}, "seed must be"),
    ({"n": 10, "seed": 1.5}, "seed must be"),
    ({"n": 10, "n_regions": 0}, "n_regions must be"),
    ({"n": 10, "n_regions": 11}, "n_regions must be"),
    ({"n": 100, "n_regions": 41}, "n_regions must be"),
    ({"n": 10, "missing_fraction": 1.0}, "missing_fraction must be"),
    ({"n": 10, "missing_fraction": -0.1}, "missing_fraction must be"),
    ({"n": 10, "missing_fraction": float("nan")}, "missing_fraction must be"),
    ({"n": 10, "missing_links": "relay"}, "missing_links must be"),
    ({"n": 10, "gpu_mix": {"Voodoo 5": 1.0}}, "gpu_mix: unknown gpu"),
    ({"n": 10, "gpu_mix": {"T4": -1.0}}, r"gpu_mix\['T4'\]"),
    ({"n": 10, "gpu_mix": {"T4": 0.0}}, "gpu_mix needs"),
    ({"n": 10, "utilisation": 0.0}, "utilisation must be"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    n = kwargs.pop("n")
    with pytest.raises(ValueError, match=match):
        gen.generate_cluster(n, **kwargs)


@pytest.mark.parametrize("field, value, match", [
    ("base_latency_ms", lambda d: [[1.0, 2.0, 3.0], [2.5, 1.0, 3.0], [3.0, 3.0, 1.0]],
     "base_latency_ms must be symmetric"),
    ("base_bandwidth_gbps", lambda d: [[0.0] * 3] * 3, "base_bandwidth_gbps must be > 0"),
    ("region_link", lambda d: [[False, True, True], [True, True, True], [True, True, True]],
     "region_link must be True"),
    ("region", lambda d: [0] * (len(d["region"]) - 1) + [3], "region must be a region index"),
    ("region", lambda d: [0.5] * len(d["region"]), "region must be integers"),
    ("access_ms", lambda d: [float("nan")] * len(d["region"]), "access_ms must be finite"),
    ("gpus", lambda d: [0] * len(d["region"]), "gpus must be > 0"),
    ("tflops", lambda d: [1.0], "tflops must have shape"),
    ("gpu_names", lambda d: ["T4", "T4"] + d["gpu_names"][2:], "duplicate name 'T4'"),
    ("region_names", lambda d: ["", "b", "c"], r"region_names\[0\]"),
    ("missing_links", lambda d: "maybe", "missing_links must be"),
])
def test_validate_names_the_field(field, value, match):
    d = gen.generate_cluster(12, seed=0, n_regions=3).to_dict()
    d[field] = value(d)
    with pytest.raises(ValueError, match=match):
        gen.RegionalCluster.from_dict(d)


def test_from_dict_rejects_unknown_keys_and_versions():
    d = gen.generate_cluster(5, seed=0).to_dict()
    with pytest.raises(ValueError, match="unknown keys"):
        gen.RegionalCluster.from_dict({**d, "latency": 1})
    with pytest.raises(ValueError, match="version"):
        gen.RegionalCluster.from_dict({**d, "version": "hulk-cluster/1"})


def test_sample_links_and_to_spec_check_their_arguments(mid):
    for kwargs, match in (({"k_local": -1}, "k_local"), ({"k_remote": 1.5}, "k_remote"), ({"seed": -2}, "seed")):
        with pytest.raises(ValueError, match=match):
            mid.sample_links(**kwargs)
    with pytest.raises(ValueError, match="max_machines"):
        mid.to_spec(max_machines=0)


def test_absurd_values_of_a_regional_cluster_are_refused_by_name():
    c = gen.generate_cluster(30, seed=2)
    doc = c.to_dict()
    for key, value in (("tflops", 1e308), ("access_ms", 1e-300)):
        bad = json.loads(json.dumps(doc))
        bad[key][3] = value
        with pytest.raises(ValueError, match=f"{key} must be in the plausible range .*, got {re.escape(repr(value))} at 3"):
            gen.RegionalCluster.from_dict(bad)


# ------------------------------------------------------------------------------ seeds, out of memory

@pytest.mark.parametrize("seed", [2**64, 2**200, -1, True])
def test_seed_outside_uint64_is_refused_everywhere(seed):
    # before: generate_cluster and sample_links took any non-negative int (2**200 too, and True as 1),
    # which no other seed of hulk (the model's, the search planner's: uint64) accepts
    with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 2\*\*64 - 1\], got "):
        gen.generate_cluster(10, seed=seed)
    c = gen.generate_cluster(10, seed=2**64 - 1)
    assert c.seed == 2**64 - 1
    with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 2\*\*64 - 1\]"):
        c.sample_links(seed=seed)
    with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 2\*\*64 - 1\]"):
        gen.RegionalCluster.from_dict(dict(c.to_dict(), seed=seed))


def test_generate_out_of_memory_names_the_sizes(monkeypatch):
    def fail(*args, **kwargs):
        raise MemoryError("Unable to allocate 4.47 GiB for an array with shape (50000000, 12)")
    monkeypatch.setattr(gen, "_draw_categorical", fail)
    import hulk
    with pytest.raises(hulk.OutOfMemoryError) as exc:
        gen.generate_cluster(1000, seed=1, n_regions=5, gpu_mix={"T4": 1, "A100": 1})
    assert str(exc.value).startswith("generate_cluster: out of memory (machines 1000, regions 5, GPU types 2; "
                                     "needs about 171.9 KiB)")
    assert "Unable to allocate" in str(exc.value.__cause__)


def test_generate_out_of_memory_in_a_limited_child(tmp_path):
    out = run_limited("import hulk.plan.generate\n    hulk.plan.generate.generate_cluster(50_000_000)\n"
                      "except MemoryError as exc:\n    print('ERROR', type(exc).__name__, exc)\n    sys.exit(0)",
                      tmp_path)
    assert out.startswith("ERROR OutOfMemoryError generate_cluster: out of memory (machines 50000000, regions 40, "), out


def test_errors_in_a_regional_cluster_file_name_the_file(tmp_path):
    from hulk.errors import FileFormatError
    doc = gen.generate_cluster(20, seed=3).to_dict()
    doc["tflops"][2] = 1e308
    path = tmp_path / "regional.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(FileFormatError, match=f"^{re.escape(str(path))}: tflops must be in the plausible range"):
        gen.RegionalCluster.from_json(str(path))


def test_gpu_names_must_be_the_tables_canonical_names():
    """A regional cluster names its GPU types as hulk/data/gpus.json does; an alias is refused
    with the canonical name in the message."""
    import dataclasses
    c = gen.generate_cluster(10, seed=1)
    with pytest.raises(ValueError, match=r"gpu_names: 'a100 40gb \(sxm4\)' must be a canonical name.*'A100 40GB \(SXM4\)'"):
        dataclasses.replace(c, gpu_names=[g.lower() for g in c.gpu_names])
