"""The learned planner's teacher and training (hulk.plan.training): labels from plans, the cached
data set, mini-batch training."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from hulk.plan import generate, inputs, learned, planners, training


JOBS3 = ["GPT-2 1.5B", "BERT-large", "T5-11B"]


@pytest.fixture(scope="module")
def small_cluster():
    return generate.generate_cluster(60, seed=4)


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


def test_train_needs_labelled_samples(tiny_dataset):
    samples, _ = tiny_dataset
    with pytest.raises(ValueError, match="at least 2 samples"):
        training.train(samples[:1], epochs=1, progress=False, log=lambda *a: None)


def test_corrupt_label_cache_names_the_file(tmp_path):
    cache = tmp_path / "cache"
    samples = training.make_dataset(2, seed=5, sizes=(16, 20), time_limit_s=0.05, iterations=20, cache_dir=cache,
                                 workers=1, progress=False)
    files = sorted(cache.glob("*.npz"))
    assert len(files) == len(samples)
    files[0].write_bytes(b"not an npz file")
    with pytest.raises(ValueError, match="label cache file .*" + files[0].name):
        training.make_dataset(2, seed=5, sizes=(16, 20), time_limit_s=0.05, iterations=20, cache_dir=cache, workers=1,
                           progress=False)
    np.savez(files[0], labels=np.zeros(3, np.int64), search_makespan_s=1.0, search_s=1.0)
    with pytest.raises(ValueError, match="shape"):
        training.make_dataset(2, seed=5, sizes=(16, 20), time_limit_s=0.05, iterations=20, cache_dir=cache, workers=1,
                           progress=False)
