"""``hulk profile`` (hulk/plan/profiling.py, hulk/cli/profile.py): a measured profile of the shared
transformer block is a valid hulk-profile/1 file a plan can use. Skipped without PyTorch."""

import json

import pytest

from hulk.errors import InputError
from hulk.plan import cluster_spec, models, plan
from hulk.plan import profile as profiles


torch = pytest.importorskip("torch", reason="PyTorch is not installed (optional extra hulk[torch])")

from hulk.cli import main  # noqa: E402
from hulk.plan import profiling  # noqa: E402


def tiny():
    return models.ModelSpec(name="tiny", layers=3, hidden=128, seq_len=16, params=3 * 200_000, global_batch=8,
                            micro_batches=2, recompute=False)


def test_measure_writes_every_layer_and_scales_activations():
    lines = []
    p = profiling.measure(tiny(), (3, 1), warmup=1, repeats=2, progress=lines.append)
    assert p.model == "tiny" and p.gpu == "cpu" and p.device.startswith("CPU: ")
    assert p.measurement == {"warmup": 1, "repeats": 2, "statistic": "median", "tool": p.measurement["tool"]}
    assert [e.micro_batch for e in p.entries] == [1, 3]
    for e in p.entries:
        assert len(e.forward_s) == len(e.backward_s) == len(e.activation_bytes) == 3
        assert all(t > 0 for t in e.forward_s + e.backward_s)
    a1, a3 = p.entries[0].activation_bytes[0], p.entries[1].activation_bytes[0]
    assert a3 == 3 * a1  # the saved tensors grow with the batch, parameters excluded
    # Reference: Korthikanti et al. 2022 (arXiv 2205.05198, section 4.1) count 34 h fp16 bytes per
    # token per layer, 2 h of them dropout masks this block does not have: 32 h bytes = 16 h
    # values, here fp32 (4 bytes). Attention adds per token a logsumexp per head (fused SDPA) or
    # the s attention probabilities per head (the unfused path), LayerNorm its mean and rstd.
    h, s, heads = 128, 16, 2
    assert 4 * s * 16 * h <= a1 <= 4 * s * (16 * h + heads * s + heads + 4)
    assert p.optimizer_s_per_param > 0
    assert len(lines) == 4
    assert "1 warm-up + 2 timed passes per size" in lines[0]
    assert "micro-batch 1 (1/2)" in lines[1] and "micro-batch 3 (2/2)" in lines[2] and "optimiser" in lines[3]


def test_measure_rejects_bad_arguments():
    with pytest.raises(InputError, match="dtype"):
        profiling.measure(tiny(), (1,), dtype="int8", progress=None)
    with pytest.raises(InputError, match="distinct"):
        profiling.measure(tiny(), (1, 1), progress=None)
    with pytest.raises(InputError, match="repeats"):
        profiling.measure(tiny(), (1,), repeats=0, progress=None)


def test_cli_profile_then_plan(tmp_path, capsys):
    models_file = tmp_path / "models.json"
    models_file.write_text(json.dumps({"version": "hulk-models/1", "models": [
        {"name": "tiny", "layers": 3, "hidden": 128, "seq_len": 16, "params": 600000, "global_batch": 8,
         "micro_batches": 2, "recompute": False}]}))
    out = tmp_path / "tiny.json"
    rc = main(["profile", "--model", "tiny", "--models", str(models_file), "--out", str(out), "--micro-batch", "1", "2",
               "--warmup", "1", "--repeats", "2", "--gpu", "RTX 3090"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "1 warm-up + 2 timed passes" in text and f"written to {out}" in text
    p = profiles.load_profile(out)
    assert p.gpu == "RTX 3090" and p.layers == 3
    spec = cluster_spec.from_json({"version": "hulk-cluster/1", "machines": [
        {"name": "m0", "region": "A", "memory_gb": 24, "gpu": "RTX 3090", "gpus": 1}], "links": []})
    job = models.get("tiny", models.load_models(models_file))
    planned = plan(spec, [job], "a", profile=str(out))
    # b = 8 / 2 = 4 sequences per micro-batch: 2 x the measured b = 2 time; S = 1 so T = m C + T_opt.
    e2 = p.entries[1]
    expect = 2 * (4 / 2) * (sum(e2.forward_s) + sum(e2.backward_s)) + p.optimizer_s_per_param * 600000
    assert planned.jobs[0]["iteration_s"] == pytest.approx(expect, rel=1e-9)
    assert any(str(out) in n for n in planned.notes)


def test_mean_statistic_and_threads(monkeypatch):
    """statistic="mean" writes the mean of the timed passes (checked against the clock readings
    the measurement took); threads sets PyTorch's intra-op threads, which the device name states."""
    before = torch.get_num_threads()
    readings = []
    real = profiling._time_pass

    def recorded(*a, **kw):
        readings.append(real(*a, **kw))
        return readings[-1]

    monkeypatch.setattr(profiling, "_time_pass", recorded)
    try:
        p = profiling.measure(tiny(), (2,), warmup=1, repeats=3, threads=1, statistic="mean", progress=None)
    finally:
        torch.set_num_threads(before)
    timed = readings[1:]  # the first is the warm-up pass
    assert len(timed) == 3
    assert p.entries[0].forward_s[0] == pytest.approx(sum(t[0] for t in timed) / 3, rel=1e-12)
    assert p.entries[0].backward_s[0] == pytest.approx(sum(t[1] for t in timed) / 3, rel=1e-12)
    assert p.measurement["statistic"] == "mean" and "(1 threads)" in p.device
    with pytest.raises(InputError, match="statistic"):
        profiling.measure(tiny(), (1,), statistic="max", progress=None)
    with pytest.raises(InputError, match="threads"):
        profiling.measure(tiny(), (1,), threads=0, progress=None)


def test_timed_passes_of_the_sizes_are_interleaved(monkeypatch):
    """Warm-up per size, then one timed pass of each size in turn (a drift touches every size alike)."""
    order = []
    real = profiling._time_pass

    def recorded(torch_, device=None, block=None, x=None, grad=None):
        order.append(x.shape[0])
        return real(torch_, device, block, x, grad)

    monkeypatch.setattr(profiling, "_time_pass", recorded)
    profiling.measure(tiny(), (3, 1), warmup=1, repeats=2, progress=None)
    assert order == [1, 3, 1, 3, 1, 3]
