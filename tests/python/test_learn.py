"""The learned planner (hulk.learn): encoding, teacher labels, decoding, the cached data set,
mini-batch training, save/load, planning with it on generated and explicit clusters, ``hulk train``."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

import hulk
import reference_rules
from hulk import cli
from hulk.plan import generate, inputs, learned, models, planners, rules, training

JOBS3 = ["GPT-2 1.5B", "BERT-large", "T5-11B"]


@pytest.fixture(scope="module")
def small_cluster():
    return generate.generate_cluster(60, seed=4)


@pytest.fixture(scope="module")
def tiny_dataset(tmp_path_factory):
    cache = tmp_path_factory.mktemp("labels")
    return training.make_dataset(8, seed=3, sizes=(16, 40), time_limit_s=0.5, iterations=150, cache_dir=cache,
                              workers=1, progress=False), cache


@pytest.fixture(scope="module")
def tiny_planner(tiny_dataset):
    samples, _ = tiny_dataset
    pl, history = training.train(samples, hidden=(16, 16), epochs=3, batch_graphs=3, progress=False, log=lambda *a: None)
    return pl, history


# ---------------------------------------------------------------------------------- encoding

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


# ---------------------------------------------------------------------------------- labels and decoding

def test_labels_from_plan_concurrent_and_sequential(small_cluster):
    p = planners.plan(small_cluster, JOBS3, "search", time_limit_s=5, max_iterations=100)
    y = training.labels_from_plan(p, JOBS3)
    order = learned.slot_order(inputs.as_model_specs(JOBS3))
    assert not p.sequential
    for s, j in enumerate(order):
        assert sorted(np.flatnonzero(y == s).tolist()) == sorted(p.jobs[j]["machines"])
    assert ((y >= 0) & (y <= learned.MAX_JOBS)).all()
    b = planners.plan(small_cluster, JOBS3, "b")
    assert (training.labels_from_plan(b, JOBS3) == -1).all()


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


# ---------------------------------------------------------------------------------- data set and training

def test_dataset_is_cached_and_deterministic(tiny_dataset):
    samples, cache = tiny_dataset
    files = sorted(os.listdir(cache))
    assert len(files) == len(samples) > 0
    stamps = {f: os.stat(cache / f).st_mtime_ns for f in files}
    again = training.make_dataset(8, seed=3, sizes=(16, 40), time_limit_s=0.5, iterations=150, cache_dir=cache,
                               workers=1, progress=False)
    assert {f: os.stat(cache / f).st_mtime_ns for f in files} == stamps  # nothing relabelled
    for a, b in zip(samples, again):
        assert a.spec == b.spec
        np.testing.assert_array_equal(a.labels, b.labels)
        assert 16 <= a.spec.n <= 40 and 1 <= len(a.spec.jobs) <= learned.MAX_JOBS


def test_sample_specs_validation():
    with pytest.raises(ValueError, match="sizes"):
        training.sample_specs(3, sizes=(40, 16))
    with pytest.raises(ValueError, match="count"):
        training.make_dataset(0)


def test_training_history_and_save_load(tiny_planner, tmp_path, small_cluster):
    pl, history = tiny_planner
    assert len(history) == 3 and all(math.isfinite(h["train_loss"]) for h in history)
    assert 0 <= pl.info["best_val_acc"] <= 1
    path = tmp_path / "m.gnn"
    pl.save(path)
    meta = json.loads((tmp_path / "m.gnn.json").read_text())
    assert meta["version"] == learned.FORMAT_VERSION and meta["node_features"] == learned.node_feature_names()
    back = learned.LearnedPlanner.load(path)
    np.testing.assert_array_equal(back.predict_slots(small_cluster, JOBS3), pl.predict_slots(small_cluster, JOBS3))
    assert back.classify(small_cluster, JOBS3) == pl.classify(small_cluster, JOBS3)


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


def test_train_needs_labelled_samples(tiny_dataset):
    samples, _ = tiny_dataset
    with pytest.raises(ValueError, match="at least 2 samples"):
        training.train(samples[:1], epochs=1, progress=False, log=lambda *a: None)


# ---------------------------------------------------------------------------------- planning with it

def test_shipped_model_loads_and_plans(small_cluster):
    pl = learned.default_planner()
    assert pl.max_jobs == learned.MAX_JOBS and pl.info.get("command", "").startswith("hulk train")
    p = planners.plan(small_cluster, JOBS3, "hulk")  # the shipped model by default
    assert p.feasible and not p.sequential
    used = [m for j in p.jobs for m in j["machines"]]
    assert len(used) == len(set(used))
    assert p.planning_s > 0


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


def test_hulk_keeps_the_shortest_of_its_candidates(small_cluster):
    from hulk.plan.rules import greedy_classes
    p = planners.plan(small_cluster, JOBS3, "hulk", refine_iterations=0)  # the shipped model
    assert p.notes[0].startswith("hulk: ") and "region heuristic's groups" in p.notes[0]
    for other in (planners.plan(small_cluster, JOBS3, "hulk", classes=greedy_classes(small_cluster, JOBS3),
                               refine_iterations=0),
                  planners.plan(small_cluster, JOBS3, "hulk", model="heuristic", refine_iterations=0)):
        assert p.makespan_s <= other.makespan_s
    without = planners.plan(small_cluster, JOBS3, "hulk", model="greedy", refine_iterations=0)
    assert "GNN" not in without.notes[0] and "region heuristic's groups" in without.notes[0]
    assert p.makespan_s <= without.makespan_s
    big = generate.generate_cluster(planners.HEURISTIC_CANDIDATE_MAX_MACHINES + 1, seed=4)
    notes = planners.plan(big, JOBS3, "hulk", refine_iterations=0).notes
    assert not any("region heuristic's groups" in n for n in notes)


def test_model_argument_validation(small_cluster):
    with pytest.raises(ValueError, match="model must be"):
        planners.plan(small_cluster, JOBS3, "hulk", model="bogus")
    with pytest.raises(TypeError, match="model must be"):
        planners.plan(small_cluster, JOBS3, "hulk", model=3.5)
    h = planners.plan(small_cluster, JOBS3, "hulk", model="heuristic")
    assert h.planner == "hulk"


def test_regional_and_explicit_clusters_plan_alike():
    # With every region pair linked, the explicit spec lists exactly the regional pair values.
    c = generate.generate_cluster(30, seed=9, missing_fraction=0.0)
    spec = c.to_spec()
    for name in ("a", "b", "c"):
        assert planners.plan(c, JOBS3, name).makespan_s == pytest.approx(planners.plan(spec, JOBS3, name).makespan_s,
                                                                         rel=1e-12)
    s1 = planners.plan(c, JOBS3, "search", time_limit_s=30, max_iterations=200)
    s2 = planners.plan(spec, JOBS3, "search", time_limit_s=30, max_iterations=200)
    assert s1.makespan_s == pytest.approx(s2.makespan_s, rel=1e-12)
    assert [j["machines"] for j in s1.jobs] == [j["machines"] for j in s2.jobs]


def test_plan_repair_on_a_regional_cluster(small_cluster):
    p = planners.plan(small_cluster, JOBS3, "search", time_limit_s=5, max_iterations=100)
    victim = p.jobs[0]["machines"][0]
    q = p.without(victim)
    assert len(q.cluster) == len(small_cluster) - 1
    assert q.feasible


def test_search_max_iterations_is_reproducible(small_cluster):
    a = planners.plan(small_cluster, JOBS3, "search", time_limit_s=30, max_iterations=150, seed=2)
    b = planners.plan(small_cluster, JOBS3, "search", time_limit_s=30, max_iterations=150, seed=2)
    assert a.makespan_s == b.makespan_s and "150 local-search moves" in a.notes[0]
    with pytest.raises(ValueError, match="max_iterations"):
        planners.plan(small_cluster, JOBS3, "search", max_iterations=-1)


# ---------------------------------------------------------------------------------- command line

def test_cli_train_then_plan_with_the_model(tmp_path, capsys):
    out = tmp_path / "p.gnn"
    assert cli.main(["train", "--samples", "6", "--sizes", "16,30", "--label-time", "0.3", "--label-iterations",
                     "50", "--epochs", "2", "--batch", "2", "--hidden", "8,8", "--workers", "1", "--cache",
                     str(tmp_path / "cache"), "--out", str(out), "--quiet"]) == 0
    assert out.exists() and (tmp_path / "p.gnn.json").exists()
    assert learned.LearnedPlanner.load(out).info["command"].startswith("hulk train --samples 6")
    capsys.readouterr()
    assert cli.main(["plan", "--generate", "50", "--jobs", "BERT-large,GPT-2 1.5B", "--planner", "hulk",
                     "--model", str(out), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["plans"][0]["planner"] == "hulk" and d["plans"][0]["feasible"]


def test_cli_plan_on_a_regional_json_file(tmp_path, capsys):
    path = tmp_path / "c.json"
    generate.generate_cluster(40, seed=1).to_json(path)
    assert cli.main(["plan", "--cluster", str(path), "--jobs", "BERT-large", "--planner", "search",
                     "--time-limit", "0.2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert "40 machines" in d["cluster"]
    assert cli.main(["plan", "--cluster", str(path), "--generate", "40"]) == 2
    assert "not both" in capsys.readouterr().err


def test_cli_train_rejects_bad_sizes(capsys):
    assert cli.main(["train", "--sizes", "abc", "--quiet"]) == 2
    assert "--sizes" in capsys.readouterr().err
