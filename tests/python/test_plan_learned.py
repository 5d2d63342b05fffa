"""The learned planner (hulk.plan.learned): encoding, decoding, save/load, the shipped model, and
planning with it."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hulk
import reference_rules
from helpers import parse_weights, write_weights
from hulk import _core
from hulk.plan import generate, inputs, learned, models, planners, rules


JOBS3 = ["GPT-2 1.5B", "BERT-large", "T5-11B"]


@pytest.fixture(scope="module")
def small_cluster():
    return generate.generate_cluster(60, seed=4)


def test_encode_shapes_and_job_slots(small_cluster):
    g = learned.encode(small_cluster, JOBS3)
    names = learned.node_feature_names()
    assert isinstance(g, hulk.Graph)
    assert g.num_nodes == len(small_cluster) and g.num_node_features == len(names)
    assert g.num_edge_features == len(learned.EDGE_FEATURES)
    # Slots are ordered by memory need: T5-11B (largest) first, then GPT-2, then BERT.
    order = learned.slot_order(inputs.as_model_specs(JOBS3))
    assert [JOBS3[j] for j in order] == ["T5-11B", "GPT-2 1.5B", "BERT-large"]


def test_encode_features_follow_the_documented_rules(small_cluster):
    from hulk import _core
    jobs = inputs.as_model_specs(JOBS3)
    g = learned.encode(small_cluster, jobs)
    x = np.asarray(g._g.x)
    col = {n: k for k, n in enumerate(learned.node_feature_names())}
    np.testing.assert_allclose(x[:, col["log2_memory_gb"]], np.log2(small_cluster.memory_gb), rtol=1e-6)
    assert x[:, col["tflops_rank"]].max() == pytest.approx(1.0) and x[:, col["tflops_rank"]].min() == 0.0
    assert (x[:, col["job0_present"]] == 1).all() and (x[:, col["job3_present"]] == 0).all()
    need_t5 = _core.plan.ModelSpec(**models.get("T5-11B").core_dict()).memory_need_bytes
    assert x[0, col["job0_log10_need_bytes"]] == pytest.approx(math.log10(need_t5), rel=1e-6)
    np.testing.assert_allclose(x[:, col["job0_log2_machine_memory_over_need"]],
                               np.log2(small_cluster.memory_gb * 1e9 / need_t5), rtol=1e-5)


def test_encode_greedy_and_region_features(small_cluster):
    from hulk.plan.rules import greedy_classes
    jobs = inputs.as_model_specs(JOBS3)
    x = np.asarray(learned.encode(small_cluster, jobs)._g.x)
    col = {n: k for k, n in enumerate(learned.node_feature_names())}
    greedy = np.array(greedy_classes(small_cluster, jobs))
    region = np.asarray(small_cluster.region)
    for slot, j in enumerate(learned.slot_order(jobs)):
        takes = x[:, col[f"job{slot}_greedy_takes"]]
        np.testing.assert_array_equal(takes, (greedy == j).astype(np.float32))
        assert takes.sum() >= 1
        np.testing.assert_array_equal(x[:, col[f"job{slot}_in_greedy_region"]],
                                      np.isin(region, region[greedy == j]).astype(np.float32))
    assert (x[:, col["job3_greedy_takes"]] == 0).all() and (x[:, col["job3_in_greedy_region"]] == 0).all()
    # Rank within the region: 1 for its fastest machine, 0 for its slowest, increasing with throughput.
    rank = x[:, col["tflops_rank_in_region"]]
    for r in np.unique(region):
        t = small_cluster.tflops[region == r]
        if t.size > 1:  # ties broken by machine index
            rr = rank[region == r]
            assert rr[t == t.max()].max() == 1.0 and rr[t == t.min()].min() == 0.0
            assert (np.diff(rr[np.argsort(t, kind="stable")]) > 0).all()


def test_first_proposal_of_a_process_does_not_import_numpy_ma():
    # np.unique / np.isin import numpy.ma on their first call in a process (~25 ms): a quarter of
    # a 0.1 s budget for the first plan in a notebook or a CLI call. The proposal path avoids them.
    code = ("import sys\nfrom hulk.plan import generate, learned\n"
            "c = generate.generate_cluster(60, seed=4)\n"
            "before = 'numpy.ma' in sys.modules\n"
            "learned.default_planner().proposals(c, learned.as_model_specs(['GPT-2 1.5B', 'BERT-large']))\n"
            "print(before, 'numpy.ma' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    before, after = proc.stdout.split()
    if before == "True":
        pytest.skip("numpy.ma was already imported with hulk (by a dependency): the proposal's own cost cannot show")
    assert after == "False"


def test_rank_within_groups_by_hand():
    v = np.array([3.0, 1.0, 2.0, 5.0, 4.0, 0.0])
    g = np.array([0, 0, 0, 1, 1, 2])
    np.testing.assert_allclose(learned._rank01_within(v, g), [1.0, 0.0, 0.5, 1.0, 0.0, 1.0])


def test_encode_rejects_too_many_jobs(small_cluster):
    with pytest.raises(ValueError, match="2 job slots, got 3 jobs"):
        learned.encode(small_cluster, JOBS3, max_jobs=2)


def test_encode_explicit_cluster_uses_its_links():
    spec = hulk.plan.cluster_spec.hulk47_spec()
    g = learned.encode(spec, models.PAPER_JOBS_4)
    assert g.num_nodes == 47 and g.num_edges == len(spec.links)  # undirected: one edge per link


def test_decode_groups_adds_to_the_rules_groups_and_fills_short_jobs():
    jobs = inputs.as_model_specs(["GPT-2 1.5B", "BERT-large"])
    need = rules.job_need_bytes(jobs)
    order = learned.slot_order(jobs)  # GPT-2 (slot 0), BERT (slot 1)
    n, C = 7, learned.MAX_JOBS + 1
    proba = np.full((n, C), 0.01)
    proba[:, C - 1] = 0.9            # idle wins everywhere...
    proba[4, 1] = 0.95               # ...except machine 4 (BERT's) and machine 5 (GPT-2's)
    proba[5, 0] = 0.95
    proba[6, 1] = 0.99               # the rule gave machine 6 to GPT-2: the model may not take it away
    proba[:4, 0] = [0.05, 0.3, 0.2, 0.1]
    memory = np.full(n, need[order[0]] * 0.3)
    rule = np.array([-1, -1, -1, -1, -1, -1, order[0]])  # the rule placed GPT-2 on 6 only; BERT nowhere
    classes = learned.decode_groups(proba, memory, jobs, rule)
    assert classes[6] == order[0] and classes[5] == order[0]   # kept, then added
    # GPT-2 still short (needs ~3.3 machines' memory): its most probable free machines, 1 then 2
    assert [i for i, c in enumerate(classes) if c == order[0]] == [1, 2, 5, 6]
    assert classes[4] == order[1]     # BERT: its arg-max machine
    assert classes[0] == classes[3] == -1


def test_decode_groups_is_the_rule_when_the_model_predicts_idle():
    jobs = inputs.as_model_specs(JOBS3)
    c = generate.generate_cluster(40, seed=2)
    memory, tflops, region, need = reference_rules.rule_inputs(c, jobs)
    rule = reference_rules.assign_fastest_in_one_region(memory, tflops, region, need)
    proba = np.zeros((40, learned.MAX_JOBS + 1))
    proba[:, -1] = 1.0
    assert learned.decode_groups(proba, memory, jobs, rule) == rule.tolist()


def test_load_errors(tiny_planner, tmp_path):
    pl, _ = tiny_planner
    path = tmp_path / "m.gnn"
    pl.save(path)
    os.remove(str(path) + ".json")
    with pytest.raises(FileNotFoundError, match="no encoding file"):
        learned.LearnedPlanner.load(path)
    pl.save(path)
    meta = json.loads((tmp_path / "m.gnn.json").read_text())
    (tmp_path / "m.gnn.json").write_text(json.dumps(dict(meta, version="other/9")))
    with pytest.raises(ValueError, match="version must be"):
        learned.LearnedPlanner.load(path)
    (tmp_path / "m.gnn.json").write_text(json.dumps(dict(meta, max_jobs=3)))
    with pytest.raises(ValueError, match="trained on other features"):
        learned.LearnedPlanner.load(path)
    meta3 = dict(meta, max_jobs=3, node_features=learned.node_feature_names(3))
    (tmp_path / "m.gnn.json").write_text(json.dumps(meta3))
    with pytest.raises(ValueError, match="7 classes"):
        learned.LearnedPlanner.load(path)


def test_shipped_model_loads_and_plans(small_cluster):
    pl = learned.default_planner()
    assert pl.max_jobs == learned.MAX_JOBS and pl.info.get("command", "").startswith("hulk train")
    p = planners.plan(small_cluster, JOBS3, "hulk")  # the shipped model by default
    assert p.feasible and not p.sequential
    used = [m for j in p.jobs for m in j["machines"]]
    assert len(used) == len(set(used))
    assert p.planning_s > 0


def test_inference_runs_on_one_thread_and_restores_the_callers_count(small_cluster, monkeypatch):
    pl = learned.default_planner()
    jobs = list(models.PAPER_JOBS_4)
    expected = pl.proposals(small_cluster, jobs)
    seen = []
    real = pl.gnn.predict_proba

    def spy(graph):
        seen.append(hulk.get_num_threads())
        return real(graph)

    before = hulk.get_num_threads()
    try:
        hulk.set_num_threads(3)
        monkeypatch.setattr(pl.gnn, "predict_proba", spy)
        got = pl.proposals(small_cluster, jobs)
        assert seen == [1]  # inside the planner's inference
        assert hulk.get_num_threads() == 3  # the caller's count, restored
        assert [a.tolist() for a in got] == [a.tolist() for a in expected]
        monkeypatch.setattr(pl.gnn, "predict_proba", lambda graph: (_ for _ in ()).throw(RuntimeError("boom")))
        with pytest.raises(RuntimeError, match="boom"):
            pl.proposals(small_cluster, jobs)
        assert hulk.get_num_threads() == 3  # restored after an error too
    finally:
        hulk.set_num_threads(before)


def test_refinement_never_worsens_hulk(small_cluster, tiny_planner):
    pl, _ = tiny_planner
    raw = planners.plan(small_cluster, JOBS3, "hulk", model=pl, refine_iterations=0)
    refined = planners.plan(small_cluster, JOBS3, "hulk", model=pl)
    assert refined.makespan_s <= raw.makespan_s
    assert any("refinement" in n for n in refined.notes)


def test_learned_groups_never_plan_longer_than_the_rules(tiny_planner):
    from hulk.plan.rules import greedy_classes
    pl, _ = tiny_planner
    for seed in range(4):
        c = generate.generate_cluster(50, seed=10 + seed)
        jobs = JOBS3[: 1 + seed % 3]
        rule = planners.plan(c, jobs, "hulk", classes=greedy_classes(c, jobs), refine_iterations=0).makespan_s
        own = planners.plan(c, jobs, "hulk", classes=pl.classify(c, jobs, keep_better_of_rule=False),
                           refine_iterations=0).makespan_s
        kept = planners.plan(c, jobs, "hulk", classes=pl.classify(c, jobs), refine_iterations=0).makespan_s
        assert kept <= min(rule, own)


@pytest.mark.parametrize("key, value", [("max_jobs", 10**9), ("k_local", 10**9), ("k_remote", -1)])
def test_encoding_with_huge_sizes_is_refused(tmp_path, key, value):
    shutil.copy(learned.DEFAULT_MODEL, tmp_path / "m.gnn")
    meta = json.loads(learned.DEFAULT_MODEL.with_suffix(".gnn.json").read_text())
    meta[key] = value
    (tmp_path / "m.gnn.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=f"{key} = {value} is out of range"):
        learned.LearnedPlanner.load(tmp_path / "m.gnn")


def test_learned_planner_pairs_weights_and_encoding(tmp_path, monkeypatch):
    a = learned.default_planner()
    path = tmp_path / "p.gnn"
    a.save(path)
    encoding = json.loads((tmp_path / "p.gnn.json").read_text())
    assert len(encoding["weights_sha256"]) == 64
    assert learned.LearnedPlanner.load(path).max_jobs == a.max_jobs
    # Killed between the two renames: new (valid) weights beside the old encoding.
    config, tensors = parse_weights((tmp_path / "p.gnn").read_bytes())
    tensors[0][1][0, 0] += 1.0
    (tmp_path / "p.gnn").write_bytes(write_weights(config, tensors))
    with pytest.raises(ValueError, match="not the ones .* was saved with"):
        learned.LearnedPlanner.load(path)
    # A save whose encoding write fails: no temporary file stays, and the old pair is kept as it
    # was (before: the new weights replaced the old ones, and the pair was refused on load).
    a.save(path)
    old = _pair_bytes(path)

    def no_space(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(learned, "write_temp", no_space)
    with pytest.raises(OSError):
        _changed_planner(path).save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.gnn", "p.gnn.json"]
    assert _pair_bytes(path) == old
    assert learned.LearnedPlanner.load(path).k_local == a.k_local


def _pair_bytes(path) -> tuple:
    return Path(path).read_bytes(), Path(str(path) + ".json").read_bytes()


def _changed_planner(path):
    """A planner whose weights and encoding both differ from those saved at ``path``."""
    changed = learned.LearnedPlanner(learned.default_planner().gnn, k_local=4)
    changed.gnn._model = hulk.GNN.load(path)._model
    changed.gnn._model.fit_scaler(learned.encode(generate.generate_cluster(30, seed=2), ["BERT-large"])._g)
    return changed


def _second_replace_fails(monkeypatch) -> list:
    """os.replace fails on its second call (the encoding's, after the weights'); returns the
    list of destinations it was called with."""
    real, calls = os.replace, []

    def second_fails(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(src, dst)
    monkeypatch.setattr(os, "replace", second_fails)
    return calls


def test_failed_encoding_replace_keeps_the_old_pair(tmp_path, monkeypatch):
    # The second os.replace (the encoding's) fails after the first put the new weights in place:
    # the old weights come back from the backup (before: the old pair was lost).
    path = tmp_path / "p.gnn"
    learned.default_planner().save(path)
    old = _pair_bytes(path)
    changed = _changed_planner(path)
    calls = _second_replace_fails(monkeypatch)
    with pytest.raises(OSError, match=r"cannot replace .*p\.gnn\.json.*previous weights and encoding are unchanged"):
        changed.save(path)
    monkeypatch.undo()
    assert [os.fspath(c) for c in calls[:2]] == [str(path), str(path) + ".json"]
    assert _pair_bytes(path) == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.gnn", "p.gnn.json"]  # no temporary or backup file
    assert learned.LearnedPlanner.load(path).k_local == 8
    changed.save(path)  # and a save that works replaces both
    assert learned.LearnedPlanner.load(path).k_local == 4


def test_encoding_path_that_cannot_be_written_keeps_the_old_weights(tmp_path):
    # path + ".json" is a folder: the encoding cannot take its place, so the weights stay the old ones
    path = tmp_path / "p.gnn"
    learned.default_planner().save(path)
    old = _pair_bytes(path)
    os.rename(str(path) + ".json", tmp_path / "saved.json")
    (tmp_path / "p.gnn.json").mkdir()
    (tmp_path / "p.gnn.json" / "inside").write_text("x")
    with pytest.raises(OSError, match=r"p\.gnn\.json"):
        _changed_planner(path).save(path)
    assert path.read_bytes() == old[0]
    assert (tmp_path / "p.gnn.json" / "inside").read_text() == "x"
    assert (tmp_path / "saved.json").read_bytes() == old[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.gnn", "p.gnn.json", "saved.json"]


def test_failed_weights_replace_keeps_the_old_pair(tmp_path, monkeypatch):
    path = tmp_path / "p.gnn"
    learned.default_planner().save(path)
    old = _pair_bytes(path)

    def fails(src, dst):
        raise OSError(13, "Permission denied")
    monkeypatch.setattr(os, "replace", fails)
    with pytest.raises(OSError, match="previous weights and encoding are unchanged"):
        _changed_planner(path).save(path)
    monkeypatch.undo()
    assert _pair_bytes(path) == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.gnn", "p.gnn.json"]


def test_first_save_that_fails_leaves_nothing(tmp_path, monkeypatch):
    path = tmp_path / "new.gnn"
    calls = _second_replace_fails(monkeypatch)
    with pytest.raises(OSError):
        learned.default_planner().save(path)
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_encoding_file_errors_name_the_file_and_key(tmp_path):
    shutil.copy(learned.DEFAULT_MODEL, tmp_path / "m.gnn")
    meta = json.loads(learned.DEFAULT_MODEL.with_suffix(".gnn.json").read_text())
    for change, needle in [(lambda d: d.pop("k_local"), "key 'k_local' is missing"),
                           (lambda d: d.update(max_jobs="6"), "max_jobs must be of type int"),
                           (lambda d: d.update(extra=1), "unknown keys ['extra']")]:
        d = json.loads(json.dumps(meta))
        change(d)
        (tmp_path / "m.gnn.json").write_text(json.dumps(d))
        with pytest.raises(ValueError, match=r"m\.gnn\.json") as exc:
            learned.LearnedPlanner.load(tmp_path / "m.gnn")
        assert needle in str(exc.value)
    (tmp_path / "m.gnn.json").write_text('{"version": "a", "version": "b"}')
    with pytest.raises(ValueError, match="key 'version' appears twice"):
        learned.LearnedPlanner.load(tmp_path / "m.gnn")


def test_encoding_file_errors_are_file_format_errors(tmp_path):
    shutil.copy(learned.DEFAULT_MODEL, tmp_path / "m.gnn")
    meta = json.loads(learned.DEFAULT_MODEL.with_suffix(".gnn.json").read_text())
    for change, field in [(lambda d: d.pop("k_local"), "k_local"), (lambda d: d.update(max_jobs="6"), "max_jobs"),
                          (lambda d: d.update(k_remote=-1), "k_remote"), (lambda d: d.update(version="x"), "version"),
                          (lambda d: d.update(weights_sha256="0" * 64), "weights_sha256")]:
        d = json.loads(json.dumps(meta))
        change(d)
        (tmp_path / "m.gnn.json").write_text(json.dumps(d))
        with pytest.raises(hulk.FileFormatError) as exc:
            learned.LearnedPlanner.load(tmp_path / "m.gnn")
        assert exc.value.field == field and exc.value.path.startswith(str(tmp_path / "m.gnn"))


@pytest.mark.parametrize("seed", [2**64, -1, True, 1.5])
def test_encode_seed_outside_uint64(seed):
    # before: 2**64 was accepted (and True taken as 1)
    with pytest.raises(hulk.InputError, match=r"seed must be an integer in \[0, 2\*\*64 - 1\]"):
        learned.encode(generate.generate_cluster(10, seed=0), ["BERT-large"], seed=seed)


@pytest.mark.parametrize("kwargs, message", [
    # before: max_jobs=2**64 built feature columns without end (memory grew until the process was killed)
    (dict(max_jobs=2**64), "max_jobs must be an integer in [1, 64], got 18446744073709551616"),
    (dict(max_jobs=0), "max_jobs must be an integer in [1, 64], got 0"),
    (dict(k_local=2**64), "k_local must be an integer in [0, 256], got 18446744073709551616"),
    (dict(k_remote=1.5), "k_remote must be an integer in [0, 256], got 1.5"),
])
def test_encoding_sizes_within_the_file_bounds(kwargs, message):
    with pytest.raises(hulk.InputError) as exc:
        learned.encode(generate.generate_cluster(10, seed=0), ["BERT-large"], **kwargs)
    assert message in str(exc.value)
    with pytest.raises(hulk.InputError) as exc:
        learned.LearnedPlanner(learned.default_planner().gnn, **kwargs)
    assert message in str(exc.value)


def test_learned_planner_needs_a_gnn():
    with pytest.raises(hulk.InputTypeError, match="gnn must be a hulk.GNN, got str"):
        learned.LearnedPlanner("model.gnn")
