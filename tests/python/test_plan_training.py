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


# -- unclear inputs: truncated caches, cache paths that are files, seeds --------------------------

def _dataset(cache, **kw):
    return training.make_dataset(2, seed=5, sizes=(16, 20), time_limit_s=0.05, iterations=20, cache_dir=cache,
                                 workers=1, progress=False, **kw)


def test_truncated_label_cache_is_a_file_format_error(tmp_path):
    # before: a raw zipfile.BadZipFile "File is not a zip file", naming no file
    import hulk
    cache = tmp_path / "cache"
    _dataset(cache)
    target = sorted(cache.glob("*.npz"))[0]
    raw = target.read_bytes()
    for cut in (len(raw) // 2, len(raw) - 10):
        target.write_bytes(raw[:cut])
        with pytest.raises(hulk.FileFormatError) as exc:
            _dataset(cache)
        msg = str(exc.value)
        assert msg.startswith(f"label cache file {str(target)!r}: unreadable (BadZipFile") and \
            msg.endswith("delete it to relabel the sample"), msg
        assert exc.value.path == str(target)
    target.unlink()  # as the message says: the sample is labelled again
    assert len(_dataset(cache)) == 2 and target.is_file()


def test_label_cache_content_errors_name_the_field(tmp_path):
    import hulk
    cache = tmp_path / "cache"
    _dataset(cache)
    target = sorted(cache.glob("*.npz"))[0]
    with np.load(target) as f:
        n = f["labels"].size
    np.savez(target, labels=np.zeros(3, np.int64), search_makespan_s=1.0, search_s=1.0)
    with pytest.raises(hulk.FileFormatError, match="label cache file .*shape") as exc:
        _dataset(cache)
    assert exc.value.field == "labels"
    np.savez(target, labels=np.zeros(n, np.int64), search_makespan_s="fast", search_s=1.0)
    with pytest.raises(hulk.FileFormatError, match="must be finite scalars") as exc:  # before: numpy's TypeError
        _dataset(cache)
    assert exc.value.field == "search_makespan_s"
    np.savez(target, labels=np.zeros(3, np.int64))
    with pytest.raises(hulk.FileFormatError, match=r"missing \['search_makespan_s', 'search_s'\]") as exc:
        _dataset(cache)
    assert exc.value.field == "search_makespan_s"


def test_cache_dir_that_is_a_file(tmp_path, monkeypatch):
    # before: a raw FileExistsError / NotADirectoryError from mkdir
    import hulk
    f = tmp_path / "afile"
    f.write_text("keep me")
    with pytest.raises(hulk.InputError, match=rf"^cache_dir: the label cache folder '{f}' is a file, not a folder"):
        _dataset(f)
    with pytest.raises(hulk.InputError, match=rf"^cache_dir: the label cache folder '{f}/sub' runs through '{f}', "
                                              rf"which is a file"):
        _dataset(f / "sub")
    monkeypatch.setenv("HULK_CACHE", str(f))
    with pytest.raises(hulk.InputError, match=rf"^HULK_CACHE='{f}': the label cache folder '{f}/labels' runs through"):
        _dataset(None)
    assert f.read_text() == "keep me"


@pytest.mark.parametrize("seed", [2**64, -1, True, 1.5])
def test_seeds_outside_uint64_are_refused(seed, tmp_path):
    # before: sample_specs(seed=2**64) was accepted, -1 and 1.5 gave numpy's unnamed errors
    match = r"seed must be an integer in \[0, 2\*\*64 - 1\]"
    with pytest.raises(ValueError, match=match):
        training.sample_specs(1, seed=seed)
    with pytest.raises(ValueError, match=match):
        training.make_dataset(1, seed=seed, cache_dir=tmp_path, workers=1, progress=False)
    with pytest.raises(ValueError, match=match):
        training.train([], seed=seed)
    assert not list(tmp_path.iterdir())  # refused before any label file is written
