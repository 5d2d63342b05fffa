"""Hostile inputs (issue 11): crafted weight files, bounded allocations, atomic saves,
silent coercions and one-line CLI errors. Each test fails on the behaviour the issue reports."""

from __future__ import annotations

import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import hulk
from hulk import _io, cli
from hulk.plan import cluster_spec, generate, learned, training
from weightfile import parse_model_file, write_model_file

# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------


def _fitted_model(seed=0):
    rng = np.random.default_rng(seed)
    n = 30
    edges = np.array([(i, (i + 1) % n) for i in range(n)] + [(i, (i + 7) % n) for i in range(n)])
    g = hulk.Graph(n, edges, node_features=rng.normal(size=(n, 3)), edge_features=rng.normal(size=(len(edges), 2)))
    y = rng.integers(0, 3, n)
    m = hulk.GNN(3, hidden=(6, 4), seed=1)
    m.fit(g, y, epochs=3)
    return m, g


def _parse(raw: bytes):
    """(configuration text, [[name, array], ...]) of a weight file, tensors editable in place."""
    _, config, tensors = parse_model_file(raw)
    return config, [list(t) for t in tensors]


def _write(config: str, tensors) -> bytes:
    return write_model_file(1, config, tensors)


@pytest.fixture(scope="module")
def good_file(tmp_path_factory):
    m, g = _fitted_model()
    path = tmp_path_factory.mktemp("weights") / "good.gnn"
    m.save(path)
    return path.read_bytes(), g


def _load_error(tmp_path, raw: bytes) -> str:
    p = tmp_path / "crafted.gnn"
    p.write_bytes(raw)
    with pytest.raises(RuntimeError) as exc:
        hulk.GNN.load(p)
    assert str(p) in str(exc.value)
    return str(exc.value)


def _cli(argv, capsys) -> tuple[int, list[str]]:
    """Runs the CLI; returns (exit code, stderr lines but the progress lines "hulk: [ t s] step").
    argparse errors exit through SystemExit."""
    try:
        rc = cli.main(argv)
    except SystemExit as exc:
        rc = exc.code
    return rc, [ln for ln in capsys.readouterr().err.splitlines() if not ln.startswith("hulk: [")]


def _one_line_error(argv, capsys, *needles):
    rc, err = _cli(argv, capsys)
    assert rc == 2, (rc, err)
    assert len(err) == 1 and "error:" in err[0] and "Traceback" not in err[0], err
    for n in needles:
        assert n in err[0], (n, err[0])
    return err[0]


# ------------------------------------------------------------------------------------------
# weight files that crashed the process or were accepted with wrong content
# ------------------------------------------------------------------------------------------


def test_empty_scaler_arrays_are_rejected_not_a_segfault(tmp_path, good_file):
    raw, _ = good_file
    config, tensors = _parse(raw)
    for t in tensors:
        if t[0].startswith("scaler."):
            t[1] = np.zeros((0, t[1].shape[1]), np.float32)
    msg = _load_error(tmp_path, _write(config, tensors))
    assert "scaler.x_mean' has shape [0, 3], the configuration implies [1, 3]" in msg


def test_scaler_of_the_wrong_shape_is_rejected(tmp_path, good_file):
    raw, _ = good_file
    config, tensors = _parse(raw)
    for t in tensors:
        if t[0] == "scaler.e_std":
            t[1] = np.ones((1, 5), np.float32)
    assert "scaler.e_std' has shape [1, 5]" in _load_error(tmp_path, _write(config, tensors))


def test_plan_with_a_crafted_model_is_one_line_error(tmp_path, good_file, capsys):
    raw, _ = good_file
    config, tensors = _parse(raw)
    for t in tensors:
        if t[0].startswith("scaler."):
            t[1] = np.zeros((0, t[1].shape[1]), np.float32)
    model = tmp_path / "bad.gnn"
    model.write_bytes(_write(config, tensors))
    meta = json.loads(learned.DEFAULT_MODEL.with_suffix(".gnn.json").read_text())
    meta.pop("weights_sha256")
    (tmp_path / "bad.gnn.json").write_text(json.dumps(meta))
    _one_line_error(["plan", "--model", str(model), "--planner", "hulk"], capsys, str(model))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_weights_are_rejected(tmp_path, good_file, bad):
    raw, _ = good_file
    config, tensors = _parse(raw)
    tensors[2][1][0, 0] = bad
    assert f"tensor '{tensors[2][0]}' holds a non-finite value" in _load_error(tmp_path, _write(config, tensors))


def test_repeated_tensor_keys_and_trailing_bytes_are_rejected(tmp_path, good_file):
    raw, _ = good_file
    config, tensors = _parse(raw)
    assert "appears twice" in _load_error(tmp_path, _write(config, tensors + [tensors[1]]))
    assert "configuration key 'seed' appears twice" in _load_error(tmp_path, _write(config + "seed=1\n", tensors))
    assert "unknown configuration key 'colour'" in _load_error(tmp_path, _write(config + "colour=red\n", tensors))
    assert "7 trailing bytes" in _load_error(tmp_path, raw + b"garbage")


def test_negative_seed_does_not_wrap(tmp_path, good_file):
    raw, _ = good_file
    config, tensors = _parse(raw)
    cfg = "\n".join("seed=-1" if line.startswith("seed=") else line for line in config.splitlines()) + "\n"
    assert "'seed' = '-1'" in _load_error(tmp_path, _write(cfg, tensors))


def test_save_refuses_non_finite_weights(tmp_path):
    m, _ = _fitted_model()
    blob = training._snapshot(m)
    config, tensors = _parse(blob)
    # A GNN whose weights diverged cannot be written: the load path refuses such a file too.
    tensors[0][1][0, 0] = np.inf
    assert "non-finite" in _load_error(tmp_path, _write(config, tensors))


# ------------------------------------------------------------------------------------------
# small inputs that allocated gigabytes or never ended
# ------------------------------------------------------------------------------------------

_LIMITED = textwrap.dedent("""
    import resource, sys
    limit = 1536 * 2**20  # 1.5 GB of address space: the reported cases allocated 4-7 GB
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import hulk
    try:
        {call}
    except (ValueError, RuntimeError) as exc:
        print("ERROR", exc)
        sys.exit(0)
    print("NO ERROR")
    sys.exit(1)
""")


def _same_hulk_env(**extra) -> dict:
    """Environment for a child Python that imports the same hulk as this test process."""
    home = os.path.dirname(os.path.dirname(os.path.abspath(hulk.__file__)))
    return dict(os.environ, PYTHONPATH=home, **extra)


def _run_limited(call: str, cwd) -> str:
    env = _same_hulk_env(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", _LIMITED.format(call=call)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_huge_shapes_in_a_small_header_fail_within_bounded_memory(tmp_path, good_file):
    raw, _ = good_file
    config, _ = _parse(raw)
    cfg = config.replace("in_features=3", "in_features=1000000").replace("hidden=6,4", "hidden=1000000,4")
    path = tmp_path / "huge.gnn"
    path.write_bytes(_write(cfg, []))
    assert path.stat().st_size < 400
    out = _run_limited(f"hulk.GNN.load({str(path)!r})", tmp_path)
    assert "file ends inside the parameters" in out


def test_huge_class_count_fails_within_bounded_memory(tmp_path, good_file):
    raw, _ = good_file
    config, _ = _parse(raw)
    path = tmp_path / "classes.gnn"
    path.write_bytes(_write(config.replace("num_classes=3", "num_classes=1000000"), []))
    assert "file ends inside the parameters" in _run_limited(f"hulk.GNN.load({str(path)!r})", tmp_path)


def test_graph_with_2_28_nodes_is_refused_within_bounded_memory(tmp_path):
    out = _run_limited("hulk.Graph(2**28, [])", tmp_path)
    assert "num_nodes = 268435456 is more than" in out


@pytest.mark.parametrize("key, value", [("max_jobs", 10**9), ("k_local", 10**9), ("k_remote", -1)])
def test_encoding_with_huge_sizes_is_refused(tmp_path, key, value):
    shutil.copy(learned.DEFAULT_MODEL, tmp_path / "m.gnn")
    meta = json.loads(learned.DEFAULT_MODEL.with_suffix(".gnn.json").read_text())
    meta[key] = value
    (tmp_path / "m.gnn.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=f"{key} = {value} is out of range"):
        learned.LearnedPlanner.load(tmp_path / "m.gnn")


def test_cluster_from_dev_zero_is_refused(capsys):
    _one_line_error(["plan", "--cluster", "/dev/zero"], capsys, "--cluster", "/dev/zero", "not a regular file")
    with pytest.raises(ValueError, match="not a regular file"):
        cluster_spec.from_json("/dev/zero")
    with pytest.raises(ValueError, match="not a regular file"):
        generate.RegionalCluster.from_json("/dev/zero")
    from hulk.plan import planners
    with pytest.raises(ValueError, match="not a regular file"):
        planners.plan("/dev/zero", ["BERT-large"], "a")


@pytest.mark.parametrize("argv, needle", [
    (["plan", "--time-limit", "1e308"], "--time-limit: 1e308 is out of range"),
    (["plan", "--time-limit", "inf"], "--time-limit: inf"),
    (["train", "--samples", "1000000000"], "--samples: 1000000000 is out of range"),
    (["plan", "--seed", str(2**64)], "--seed: 18446744073709551616 is out of range"),
    (["plan", "--max-iterations", str(10**30)], "--max-iterations"),
    (["plan", "--generate", "0"], "--generate: 0 is out of range"),
    (["train", "--workers", "0"], "--workers: 0 is out of range"),
    (["train", "--lr", "1e30"], "--lr: 1e30 is out of range"),
    (["classify", "--lr", "1e30"], "--lr: 1e30 is out of range"),
    (["plan", "--cluster", ""], "--cluster: the path is empty"),
    (["classify", "--save", ""], "--save: the path is empty"),
])
def test_out_of_range_arguments_are_one_line_errors(argv, needle, capsys):
    _one_line_error(argv, capsys, needle)


def test_api_bounds_time_limit_and_seed():
    from hulk.plan import planners
    with pytest.raises(ValueError, match="time_limit_s"):
        planners.plan(cluster_spec.hulk47_spec(), ["BERT-large"], "search", time_limit_s=1e308)
    with pytest.raises(ValueError, match="seed"):
        planners.plan(cluster_spec.hulk47_spec(), ["BERT-large"], "search", seed=2**64)
    with pytest.raises(ValueError, match="count"):
        training.make_dataset(10**9)


# ------------------------------------------------------------------------------------------
# atomic saves
# ------------------------------------------------------------------------------------------

_FSIZE = textwrap.dedent("""
    import resource, sys
    import hulk
    from hulk.plan import learned, generate, cluster_spec
    {setup}
    resource.setrlimit(resource.RLIMIT_FSIZE, (2048, resource.RLIM_INFINITY))  # Python ignores SIGXFSZ
    try:
        {call}
    except OSError as exc:
        print("ERROR", exc)
        sys.exit(0)
    except RuntimeError as exc:
        print("ERROR", exc)
        sys.exit(0)
    print("NO ERROR")
    sys.exit(1)
""")


@pytest.mark.parametrize("setup, call", [
    ("m = learned.default_planner().gnn", "m.save(sys.argv[1])"),
    ("c = generate.generate_cluster(300, seed=1)", "c.to_json(sys.argv[1])"),
    ("c = cluster_spec.hulk47_spec()", "c.to_json(sys.argv[1])"),
])
def test_a_save_over_the_file_size_limit_keeps_the_old_file(tmp_path, setup, call):
    target = tmp_path / "target"
    target.write_bytes(b"the good old file")
    proc = subprocess.run([sys.executable, "-c", _FSIZE.format(setup=setup, call=call), str(target)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env=_same_hulk_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "unchanged" in proc.stdout
    assert target.read_bytes() == b"the good old file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["target"]  # no temporary file left


def test_atomic_write_interrupted_before_the_rename_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "cluster.json"
    target.write_text("old")

    def killed(fd):  # what SIGKILL between writing and renaming amounts to for the target
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", killed)
    with pytest.raises(KeyboardInterrupt):
        cluster_spec.hulk47_spec().to_json(target)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["cluster.json"]


def test_empty_save_paths_are_refused(tmp_path):
    m, _ = _fitted_model()
    with pytest.raises(ValueError, match="the path is empty"):
        m.save("")
    with pytest.raises(ValueError, match="the path is empty"):
        learned.default_planner().save("")
    with pytest.raises(ValueError, match="the path is empty"):
        _io.atomic_write("", "x")


def test_atomic_write_gives_the_mode_of_a_plain_open(tmp_path):
    p = tmp_path / "x.json"
    _io.atomic_write(p, "{}")
    umask = os.umask(0)
    os.umask(umask)
    assert (p.stat().st_mode & 0o777) == 0o666 & ~umask


def test_learned_planner_pairs_weights_and_encoding(tmp_path, monkeypatch):
    a = learned.default_planner()
    path = tmp_path / "p.gnn"
    a.save(path)
    encoding = json.loads((tmp_path / "p.gnn.json").read_text())
    assert len(encoding["weights_sha256"]) == 64
    assert learned.LearnedPlanner.load(path).max_jobs == a.max_jobs
    # Killed between the two renames: new (valid) weights beside the old encoding.
    config, tensors = _parse((tmp_path / "p.gnn").read_bytes())
    tensors[0][1][0, 0] += 1.0
    (tmp_path / "p.gnn").write_bytes(_write(config, tensors))
    with pytest.raises(ValueError, match="not the ones .* was saved with"):
        learned.LearnedPlanner.load(path)
    # A save whose encoding write fails: no temporary file stays, and the pair on disk is
    # refused by name rather than loaded as new weights with an old encoding.
    a.save(path)

    def no_space(*args, **kwargs):
        raise OSError(28, "No space left on device")

    changed = learned.LearnedPlanner(learned.default_planner().gnn, k_local=4)
    changed.gnn._model = hulk.GNN.load(tmp_path / "p.gnn")._model
    changed.gnn._model.fit_scaler(learned.encode(generate.generate_cluster(30, seed=2), ["BERT-large"])._g)
    monkeypatch.setattr(learned, "atomic_write", no_space)
    with pytest.raises(OSError):
        changed.save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.gnn", "p.gnn.json"]
    with pytest.raises(ValueError, match="not the ones .* was saved with"):
        learned.LearnedPlanner.load(path)


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


# ------------------------------------------------------------------------------------------
# silent coercions
# ------------------------------------------------------------------------------------------


def test_uint64_label_does_not_wrap_to_unlabelled():
    m, g = _fitted_model()
    y = np.zeros(g.num_nodes, np.uint64)
    y[4] = np.uint64(2**64 - 1)
    with pytest.raises(ValueError, match=r"labels\[4\] = 18446744073709551615"):
        m.fit(g, y, epochs=1)


def test_complex_features_are_refused():
    with pytest.raises(ValueError, match="complex"):
        hulk.Graph(2, [[0, 1]], node_features=np.array([[1 + 2j], [3 + 0j]]))


def test_machine_names_must_be_strings_and_printable():
    doc = json.loads(cluster_spec.hulk47_spec().to_json())
    doc["machines"][0]["name"] = 17
    with pytest.raises(ValueError, match="name must be a string"):
        cluster_spec.from_json(doc)
    doc["machines"][0]["name"] = "a"
    doc["machines"][1]["region"] = "Paris\x1b[31m"
    with pytest.raises(ValueError, match="control character"):
        cluster_spec.from_json(doc)


def test_duplicate_json_keys_are_refused(tmp_path, capsys):
    text = cluster_spec.hulk47_spec().to_json()
    dup = text.replace('"version"', '"missing_links": "route", "version"', 1)
    p = tmp_path / "dup.json"
    p.write_text(dup)
    _one_line_error(["plan", "--cluster", str(p)], capsys, "--cluster", str(p), "'missing_links' appears twice")


def test_ignored_or_conflicting_plan_arguments_are_errors(tmp_path, capsys):
    _one_line_error(["plan", "--fail", "999"], capsys, "--fail 999", "47 machines")
    _one_line_error(["plan", "--classifier", "heuristic", "--model", "x.gnn"], capsys, "--model 'x.gnn'",
                    "heuristic")
    _one_line_error(["plan", "--planner", "a", "--fail", "3"], capsys, "--planner a")


def test_numpy_scalars_are_valid_arguments():
    m, g = _fitted_model()
    m.fit(g, np.zeros(g.num_nodes, np.int64), epochs=np.int32(1), lr=np.float32(0.01),
          weight_decay=np.float32(0.0))
    assert hulk.GNN(3, dropout=np.float32(0.1), seed=np.uint8(3)).config["dropout"] == pytest.approx(0.1)
    from hulk.plan import planners
    p = planners.plan(cluster_spec.hulk47_spec(), ["BERT-large"], "search", time_limit_s=np.float32(0.05),
                     seed=np.int64(1), max_iterations=np.int64(50))
    assert p.without(np.int64(3)).feasible


# ------------------------------------------------------------------------------------------
# raw tracebacks
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("add, needle", [
    ("5", "neither a file nor a JSON object"),
    ("[]", "neither a file nor a JSON object"),
    ('{"machine": 5}', "'machine' must be an object"),
    ('{"machine": {"region": "Rome", "memory_gb": 80, "capability": 8}, "links": 3}', "'links' must be a list"),
    ('{"region": "Rome", ', "not valid JSON"),
])
def test_malformed_add_is_one_line_error(add, needle, capsys):
    _one_line_error(["plan", "--planner", "hulk", "--classifier", "heuristic", "--add", add], capsys, "--add", needle)


def test_add_with_generate_is_one_line_error(capsys):
    _one_line_error(["plan", "--generate", "50", "--add", '{"region": "Rome", "memory_gb": 80, "capability": 8}'],
                    capsys, "--add", "generated cluster")


def test_cluster_path_beginning_with_a_brace_is_a_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = "{cluster}.json"
    cluster_spec.hulk47_spec().to_json(name)
    assert len(cluster_spec.from_json(name)) == 47
    generate.generate_cluster(20, seed=1).to_json("{regional}.json")
    assert len(generate.RegionalCluster.from_json("{regional}.json")) == 20


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


def test_missing_model_file_is_one_line_error(tmp_path, capsys):
    _one_line_error(["plan", "--model", str(tmp_path / "nope.gnn")], capsys, "nope.gnn")


# ------------------------------------------------------------------------------------------
# the import trap
# ------------------------------------------------------------------------------------------


def test_importing_a_checkout_without_its_extension_says_what_to_run(tmp_path):
    """A copy of the source package without the compiled extension, imported from its folder
    (what `python -c "import hulk"` in a checkout did after `pip install .`)."""
    src = os.path.dirname(hulk.__file__)
    shutil.copytree(src, tmp_path / "hulk", ignore=shutil.ignore_patterns("_core*", "__pycache__"))
    # -S: no site-packages, so no installed or editable hulk can supply the extension.
    proc = subprocess.run([sys.executable, "-S", "-c", "import hulk"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert "partially initialized" not in proc.stderr
    assert "compiled extension hulk._core is not in" in last and "pip install -e ." in last, proc.stderr


def test_import_from_the_checkout_root_after_the_readme_install():
    """The README's install (scripts/setup.sh: pip install -e .) builds the extension in place,
    so `import hulk` works in the checkout root."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if os.path.dirname(os.path.abspath(hulk.__file__)) != os.path.join(root, "hulk"):
        pytest.skip("hulk is not installed editable from this checkout (pip install -e .)")
    proc = subprocess.run([sys.executable, "-c", "import hulk, sys; print(hulk._core.__file__)"], cwd=root,
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=""))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().startswith(os.path.join(root, "hulk", "_core"))


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


# ------------------------------------------------------------------------------------------
# progress on long work
# ------------------------------------------------------------------------------------------


def test_status_lines_and_heartbeat_while_a_step_runs():
    import io
    import threading
    from hulk._progress import Status

    class Stream(io.StringIO):
        def __init__(self):
            super().__init__()
            self.beat = threading.Event()

        def write(self, text):
            if "still planning" in text:
                self.beat.set()
            return super().write(text)

    out = Stream()
    status = Status(stream=out, every=0.01)
    status("loading cluster x.json")
    status("planning with search (4/5)")
    assert out.beat.wait(60), out.getvalue()  # the heartbeat names the running step
    status.done()
    lines = out.getvalue().splitlines()
    steps = [ln for ln in lines if "] still " not in ln]  # the heartbeat may interleave anywhere
    assert steps[0].startswith("hulk: [") and steps[0].endswith("loading cluster x.json")
    assert steps[1].endswith("planning with search (4/5)") and len(steps) == 2
    assert any("still planning with search (4/5)" in ln for ln in lines)
    n = len(out.getvalue())
    status("after done")  # done() stopped the heartbeat thread: only this line is added
    assert out.getvalue()[n:].count("\n") == 1


def test_plan_prints_progress_and_the_comparison_before_the_plan_tables(capsys):
    rc = cli.main(["plan", "--planner", "search", "--jobs", "BERT-large", "--time-limit", "0.05",
                   "--max-iterations", "20"])
    assert rc == 0
    captured = capsys.readouterr()
    assert "planning with search (1/1); search time limit 0.05 s" in captured.err
    out = captured.out
    assert "note: rule" not in out and "notes on how the cluster's attributes were derived (--verbose" in out
    assert out.index("planner ") < out.index("job (s/iteration)") < out.index("== Search ==")
    cli.main(["plan", "--planner", "search", "--jobs", "BERT-large", "--time-limit", "0.05", "--max-iterations", "20",
              "--verbose"])
    assert "note: rule a:" in capsys.readouterr().out
    cli.main(["plan", "--planner", "search", "--jobs", "BERT-large", "--time-limit", "0.05", "--max-iterations", "20",
              "--json"])
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert any(n.startswith("rule a:") for n in doc["cluster_notes"]) and captured.err == ""


# ------------------------------------------------------------------------------------------
# the figure
# ------------------------------------------------------------------------------------------


def test_machine_locations_of_the_bundled_and_a_generated_cluster():
    from hulk.plan import report
    names, lat, lon = report.machine_locations(cluster_spec.hulk47_spec())
    assert len(names) == 47 and np.isfinite(lat).all() and np.isfinite(lon).all()
    city = {c["name"]: (c["lat"], c["lon"]) for c in generate.cities()}
    assert (lat[0], lon[0]) == city[names[0]]
    c = generate.generate_cluster(40, seed=3)
    names, lat, lon = report.machine_locations(c)
    assert names == [c.region_names[r] for r in c.region.tolist()]
    np.testing.assert_array_equal(lat, c.region_lat[c.region])


def test_png_map_with_hulk_and_search_side_by_side(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "plan.png"
    assert cli.main(["plan", "--jobs", "BERT-large,GPT-2 1.5B", "--time-limit", "0.05", "--max-iterations", "20",
                     "--png", str(path)]) == 0
    raw = path.read_bytes()
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", raw[16:24])
    assert width > 1.5 * height  # two maps side by side above the bars
    # A machine without coordinates is drawn too (below the map), not dropped.
    doc = json.loads(cluster_spec.hulk47_spec().to_json())
    doc["machines"][0]["region"] = "Atlantis"
    (tmp_path / "c.json").write_text(json.dumps(doc))
    assert cli.main(["plan", "--cluster", str(tmp_path / "c.json"), "--jobs", "BERT-large", "--time-limit", "0.05",
                     "--max-iterations", "20", "--png", str(tmp_path / "c.png")]) == 0
    assert (tmp_path / "c.png").stat().st_size > 10_000


_SAVE_FOREVER = textwrap.dedent("""
    import sys
    from hulk.plan import generate, learned
    what, path = sys.argv[1], sys.argv[2]
    if what == "cluster":
        obj = generate.generate_cluster(3000, seed=9)
        save = lambda: obj.to_json(path)
    else:
        obj = learned.default_planner().gnn
        save = lambda: obj.save(path)
    save()
    print("saved once", flush=True)
    while True:
        save()
""")


@pytest.mark.parametrize("what", ["cluster", "weights"])
def test_sigkill_during_repeated_saves_leaves_a_complete_file(tmp_path, what):
    """Whenever SIGKILL lands (here: while the child rewrites the file in a loop), the file is
    a complete old or new version, never a truncated one. (Without atomic saves this fails
    when the kill lands between truncating and finishing the write: often, not always.)"""
    import signal
    path = tmp_path / "target"
    child = subprocess.Popen([sys.executable, "-c", _SAVE_FOREVER, what, str(path)], stdout=subprocess.PIPE,
                             text=True, env=_same_hulk_env(OMP_NUM_THREADS="1"))
    try:
        assert child.stdout.readline().strip() == "saved once"
        good = path.read_bytes()
        child.send_signal(signal.SIGKILL)  # lands somewhere in a later save of the loop
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert path.read_bytes() == good  # every save writes the same bytes; a partial one would differ
    if what == "cluster":
        assert len(generate.RegionalCluster.from_json(path)) == 3000
    else:
        hulk.GNN.load(path)
