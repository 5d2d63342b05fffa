"""Measured profiles (hulk/plan/profile.py, format hulk-profile/1): reading, writing, bad input
naming the file and the field, and plans costed from them against hand-computed figures."""

import copy
import json
import sys

import numpy as np
import pytest

from hulk import _core
from hulk.errors import FileFormatError, InputError, InputTypeError
from hulk.plan import cluster_spec, models, plan
from hulk.plan import profile as profiles
from hulk.plan import torch_block

L = 4


def small_model(**kw):
    """4 layers, h 256, seq 128, 4e7 parameters (1e7 per layer), 16 sequences in 4 micro-batches."""
    return models.ModelSpec(name="tiny", layers=L, hidden=256, seq_len=128, params=4e7, global_batch=16,
                            micro_batches=4, recompute=False, **kw)


def doc(rng=None, **top):
    """A valid profile of `tiny` on the RTX 3090 with fresh random times at b = 1 and b = 4."""
    rng = rng or np.random.default_rng(0)
    f1 = rng.uniform(1e-3, 2e-3, L)
    b1 = rng.uniform(2e-3, 4e-3, L)
    d = {"version": "hulk-profile/1", "model": "tiny", "gpu": "RTX 3090", "device": "NVIDIA GeForce RTX 3090",
         "layers": L, "hidden": 256, "seq_len": 128, "dtype": "float32", "optimizer_s_per_param": 3e-11,
         "measurement": {"warmup": 2, "repeats": 5, "statistic": "median", "tool": "test"},
         "entries": [{"micro_batch": 1, "forward_s": f1.tolist(), "backward_s": b1.tolist(),
                      "activation_bytes": [256 * 128 * 30.0] * L},
                     {"micro_batch": 4, "tensor_parallel": 1, "forward_s": (3 * f1).tolist(),
                      "backward_s": (3.5 * b1).tolist(), "activation_bytes": [4 * 256 * 128 * 30.0] * L}]}
    d.update(top)
    return d


def one_machine(gpu="RTX 3090", gpus=1):
    return cluster_spec.from_json({"version": "hulk-cluster/1", "machines": [
        {"name": "m0", "region": "A", "memory_gb": 24 * gpus, "gpu": gpu, "gpus": gpus}], "links": []})


def test_round_trip_through_a_file(tmp_path):
    d = doc()
    path = tmp_path / "p.json"
    path.write_text(json.dumps(d))
    p = profiles.load_profile(path)
    assert p.source == str(path) and p.model == "tiny" and p.layers == L
    assert p.measurement == {"warmup": 2, "repeats": 5, "statistic": "median", "tool": "test"}
    out = tmp_path / "q.json"
    p.save(out)
    q = profiles.load_profile(out)
    assert q.to_dict() == p.to_dict()
    assert json.loads(out.read_text())["entries"][0]["forward_s"] == d["entries"][0]["forward_s"]
    assert profiles.load_profile(p) is p
    assert [x.model for x in profiles.as_profiles([path, d])] == ["tiny", "tiny"]


def test_interpolation_matches_the_stated_rule():
    d = doc(np.random.default_rng(5))
    p = profiles.load_profile(d)
    e1, e4 = d["entries"]
    t1 = sum(e1["forward_s"]) + sum(e1["backward_s"])
    t4 = sum(e4["forward_s"]) + sum(e4["backward_s"])
    assert p.compute_s(0, L, 1) == pytest.approx(t1, rel=1e-12)
    assert p.compute_s(0, L, 2.5) == pytest.approx(t1 + (t4 - t1) * 1.5 / 3, rel=1e-12)  # linear between
    assert p.compute_s(0, L, 10) == pytest.approx(t4 * 10 / 4, rel=1e-12)                # proportional beyond
    assert p.compute_s(0, L, 0.25) == pytest.approx(t1 / 4, rel=1e-12)
    fwd1 = e1["forward_s"][1] + e1["forward_s"][2]
    assert p.compute_s(1, 3, 1, recompute=True) == pytest.approx(2 * fwd1 + e1["backward_s"][1] + e1["backward_s"][2])
    assert p.compute_s(0, L, 4, tensor_parallel=2) == pytest.approx(t4 / 2)
    assert p.activation_bytes_per_token(128) == pytest.approx(30 * 256)


@pytest.mark.parametrize("edit, field, words", [
    (lambda d: d.update(version="hulk-profile/2"), "version", "hulk-profile/1"),
    (lambda d: d.pop("gpu"), "gpu", "missing"),
    (lambda d: d.update(colour="red"), "colour", "unknown key"),
    (lambda d: d["entries"][1]["forward_s"].pop(), "entries[1].forward_s", "has 3 values, expected one per layer (4)"),
    (lambda d: d["entries"][0]["backward_s"].__setitem__(2, -1e-3), "entries[0].backward_s[2]", "-0.001"),
    (lambda d: d["entries"][0]["forward_s"].__setitem__(0, float("nan")), "entries[0].forward_s[0]", "nan"),
    (lambda d: d["entries"][0]["activation_bytes"].__setitem__(3, "big"), "entries[0].activation_bytes[3]", "'big'"),
    (lambda d: d["entries"][1].update(micro_batch=1), "entries[1].micro_batch", "measured twice"),
    (lambda d: d["entries"][1].update(micro_batch=0), "entries[1].micro_batch", "> 0"),
    (lambda d: d["entries"][1].update(tensor_parallel=0), "entries[1].tensor_parallel", ">= 1"),
    (lambda d: d.update(entries=[]), "entries", "non-empty"),
    (lambda d: d.update(layers=0), "layers", ">= 1"),
    (lambda d: d.update(optimizer_s_per_param=-1), "optimizer_s_per_param", "-1"),
    (lambda d: d["measurement"].update(repeats=0), "measurement.repeats", ">= 1"),
    (lambda d: d["measurement"].update(statistic="mode"), "measurement.statistic", "'mode'"),
    (lambda d: d["measurement"].pop("warmup"), "measurement.warmup", "missing"),
])
def test_bad_profiles_name_the_file_and_field(tmp_path, edit, field, words):
    d = copy.deepcopy(doc())
    edit(d)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d))  # NaN is written as NaN; the strict reader refuses it
    if "nan" == words:
        with pytest.raises(InputError):
            profiles.load_profile(path)
        with pytest.raises(FileFormatError) as e:
            profiles.load_profile(d)
        assert e.value.path == "<dict>" and e.value.field == field
        return
    with pytest.raises(FileFormatError) as e:
        profiles.load_profile(path)
    assert e.value.path == str(path) and e.value.field == field
    assert words in str(e.value) and str(path) in str(e.value)


def test_not_a_profile(tmp_path):
    with pytest.raises(InputTypeError, match="profile must be"):
        profiles.load_profile(3)
    path = tmp_path / "list.json"
    path.write_text('["x"]')
    with pytest.raises(FileFormatError, match="JSON object") as e:
        profiles.load_profile(path)
    assert e.value.path == str(path)


def test_plan_costs_a_profiled_machine_by_hand():
    """One RTX 3090 server of 2 GPUs, System A (the whole model on one machine): b = 16 / 4 = 4
    sequences per micro-batch, 2 per GPU; S = 1 so T_pipe = m C; T_opt = 3e-11 * 4e7 / 2."""
    d = doc(np.random.default_rng(11))
    e1, e4 = d["entries"]
    t1 = sum(e1["forward_s"]) + sum(e1["backward_s"])
    t4 = sum(e4["forward_s"]) + sum(e4["backward_s"])
    c = t1 + (t4 - t1) / 3  # b = 2: a third of the way from 1 to 4
    expect = 4 * c + 3e-11 * 4e7 / 2
    p = plan(one_machine(gpus=2), [small_model()], "a", profile=d)
    job = p.jobs[0]
    assert job["feasible"], job["reason"]
    assert job["iteration_s"] == pytest.approx(expect, rel=1e-12)
    assert job["comm_s"] == 0
    assert any(n.startswith("compute of tiny: profile <dict> on 1 GeForce RTX 3090 machine(s)") for n in p.notes), p.notes
    # The same plan without the profile: the FLOP model, 6P + 12 L h s FLOP per token.
    flop = plan(one_machine(gpus=2), [small_model()], "a")
    assert any("compute of tiny: FLOP model, the cluster's tflops" in n for n in flop.notes), flop.notes
    assert flop.jobs[0]["iteration_s"] != pytest.approx(expect)


def test_flop_curve_scales_compute_by_the_efficiency():
    """Single machine, one GPU: C_curve = C_flop * 0.35 / flop_efficiency(h, b seq)."""
    spec = one_machine()
    m = small_model()
    flat = plan(spec, [m], "a").jobs[0]
    curve = plan(spec, [m], "a", compute_model="flop-curve")
    e = 0.8995 * 256 / (256 + 732) * (4 * 128) / (4 * 128 + 2312)
    assert _core.plan.flop_efficiency(256, 512) == pytest.approx(e, rel=1e-12)
    t_opt = 12 * 4e7 / (spec.machines[0]["tflops"] * 1e12)
    assert curve.jobs[0]["iteration_s"] - t_opt == pytest.approx((flat["iteration_s"] - t_opt) * 0.35 / e, rel=1e-9)
    assert any("efficiency curve" in n for n in curve.notes)
    with pytest.raises(InputError, match="compute_model"):
        plan(spec, [m], "a", compute_model="roofline")


def test_profiles_that_do_not_fit_the_plan(tmp_path):
    spec = one_machine()
    path = tmp_path / "p.json"

    def fails(field, words, **top):
        path.write_text(json.dumps(doc(**top)))
        with pytest.raises(FileFormatError) as e:
            plan(spec, [small_model()], "a", profile=str(path))
        assert e.value.path == str(path) and e.value.field == field and words in str(e.value)

    fails("model", "not one of the jobs ['tiny']", model="gpt2")
    fails("gpu", "no machine of the cluster has", gpu="A100 80GB")
    fails("layers", "is 6, but model 'tiny' has 4 layers", layers=6,
          entries=[dict(e, forward_s=[1e-3] * 6, backward_s=[1e-3] * 6, activation_bytes=[1.0] * 6)
                   for e in doc()["entries"]])
    fails("hidden", "model 'tiny' has hidden 256", hidden=512)
    path.write_text(json.dumps(doc()))
    with pytest.raises(FileFormatError, match="also profiled by"):
        plan(spec, [small_model()], "a", profile=[str(path), doc()])


def test_profiled_and_unprofiled_gpu_types_in_one_cluster():
    """Two servers: the profiled RTX 3090 and an unprofiled V100; notes say which model each used."""
    spec = cluster_spec.from_json({"version": "hulk-cluster/1", "machines": [
        {"name": "m0", "region": "A", "memory_gb": 24, "gpu": "RTX 3090", "gpus": 1},
        {"name": "m1", "region": "A", "memory_gb": 32, "gpu": "V100 SXM2 32GB", "gpus": 1}],
        "links": [{"a": 0, "b": 1, "latency_ms": 1.0, "bandwidth_gbps": 10}]})
    p = plan(spec, [small_model()], "b", profile=doc())
    note = next(n for n in p.notes if n.startswith("compute of tiny"))
    assert "on 1 GeForce RTX 3090 machine(s)" in note and "on the other 1 machine(s)" in note
    assert p.jobs[0]["feasible"]


def test_missing_torch_says_how_to_install(monkeypatch):
    """The core package does not need PyTorch; what needs it says how to get it."""
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    with pytest.raises(InputError, match=r"pip install hulk\[torch\]"):
        torch_block.require_torch()


def test_cli_plan_with_profiles(tmp_path, capsys):
    from hulk.cli import main
    cluster = tmp_path / "cluster.json"
    cluster.write_text(json.dumps({"version": "hulk-cluster/1", "machines": [
        {"name": "m0", "region": "A", "memory_gb": 48, "gpu": "RTX 3090", "gpus": 2}], "links": []}))
    models_file = tmp_path / "models.json"
    models_file.write_text(json.dumps({"version": "hulk-models/1", "models": [
        {"name": "tiny", "layers": L, "hidden": 256, "seq_len": 128, "params": 4e7, "global_batch": 16,
         "micro_batches": 4, "recompute": False}]}))
    prof = tmp_path / "tiny-3090.json"
    d = doc(np.random.default_rng(3))
    prof.write_text(json.dumps(d))
    argv = ["plan", "--cluster", str(cluster), "--models", str(models_file), "--jobs", "tiny", "--planner", "a",
            "--profile", str(prof), "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    planned = out["plans"][0] if "plans" in out else out[0]
    assert any(n.startswith(f"compute of tiny: profile {prof}") for n in planned["notes"]), planned["notes"]
    expect = plan(cluster_spec.from_json(str(cluster)), [models.get("tiny", models.load_models(models_file))], "a",
                  profile=str(prof)).jobs[0]["iteration_s"]
    assert planned["jobs"][0]["iteration_s"] == pytest.approx(expect, rel=1e-12)
    # A second profile of the same model and GPU type, and a profile of another GPU type: errors naming the file.
    other = tmp_path / "tiny-a100.json"
    other.write_text(json.dumps(doc(gpu="A100")))
    assert main(argv[:-1] + ["--profile", str(other)]) == 2
    assert f"{other}: gpu: is 'A100', which no machine of the cluster has" in capsys.readouterr().err


def test_cpu_machines_take_a_cpu_profile_by_hand():
    """Rule e of cluster_spec: machines with gpu "cpu" (any case) match a profile with gpu "cpu"
    (what `hulk profile --device cpu` writes). GPipe over 2 CPU machines, b = 16 / 4 = 4:
    T = sum_s (C_s + X_s) + 3 max_s (C_s + X_s) + T_opt of the larger stage, C_s from the b = 4 entry,
    X_0 = 2 (latency + 4 * 128 * 256 * 2 bytes / bandwidth), X_1 = 0."""
    d = doc(np.random.default_rng(5), gpu="cpu", device="CPU: test")
    spec = cluster_spec.from_json({"version": "hulk-cluster/1", "machines": [
        {"name": "c0", "region": "A", "memory_gb": 16, "gpu": "CPU", "tflops": 0.05},
        {"name": "c1", "region": "A", "memory_gb": 16, "gpu": "cpu", "tflops": 0.05}],
        "links": [{"a": 0, "b": 1, "latency_ms": 0.5, "bandwidth_gbps": 0.2}]})
    assert [m["gpu"] for m in spec.machines] == ["cpu", "cpu"] and spec.machines[0]["gpus"] == 1
    assert spec.machines[0]["capability"] is None
    p = plan(spec, [small_model()], "b", profile=d)
    job = p.jobs[0]
    assert job["feasible"], job["reason"]
    (chain, bounds), = job["replicas"]
    assert len(chain) == 2
    e4 = d["entries"][1]
    c = [sum(e4["forward_s"][a:b]) + sum(e4["backward_s"][a:b]) for a, b in zip(bounds, bounds[1:])]
    x = [2 * (0.5e-3 + 4 * 128 * 256 * 2 / (0.2e9 / 8)), 0.0]
    t_opt = 3e-11 * 1e7 * max(b - a for a, b in zip(bounds, bounds[1:]))
    expect = sum(c) + sum(x) + 3 * max(ci + xi for ci, xi in zip(c, x)) + t_opt
    assert job["iteration_s"] == pytest.approx(expect, rel=1e-9)
    assert any("profile <dict> on 2 cpu machine(s)" in n for n in p.notes), p.notes


def test_cpu_machines_need_tflops_and_no_capability():
    def machine(**kw):
        return {"version": "hulk-cluster/1", "machines": [dict(name="c0", region="A", memory_gb=16, gpu="cpu", **kw)]}
    with pytest.raises(InputError, match="tflops is required for a CPU machine"):
        cluster_spec.from_json(machine())
    with pytest.raises(InputError, match="capability 8.6 is given, but gpu is 'cpu'"):
        cluster_spec.from_json(machine(tflops=0.1, capability=8.6))
    with pytest.raises(InputError, match="unknown gpu 'cpu'"):
        cluster_spec.gpu_info("cpu")  # not a GPU of the table
    spec = cluster_spec.from_json(machine(tflops=0.1, gpus=2))
    assert cluster_spec.from_json(spec.to_json()).machines == spec.machines
