"""Safe file input and output (hulk._io): bounded strict reads, atomic saves that a full disk,
a file-size limit or SIGKILL cannot truncate."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import hulk
from helpers import fitted_model, one_line_error, same_hulk_env
from hulk import _io
from hulk.plan import cluster_spec, generate, learned, planners


def test_cluster_from_dev_zero_is_refused(capsys):
    one_line_error(["plan", "--cluster", "/dev/zero"], capsys, "--cluster", "/dev/zero", "not a regular file")
    with pytest.raises(ValueError, match="not a regular file"):
        cluster_spec.from_json("/dev/zero")
    with pytest.raises(ValueError, match="not a regular file"):
        generate.RegionalCluster.from_json("/dev/zero")
    from hulk.plan import planners
    with pytest.raises(ValueError, match="not a regular file"):
        planners.plan("/dev/zero", ["BERT-large"], "a")


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
                          capture_output=True, text=True, timeout=300, env=same_hulk_env())
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
    m, _ = fitted_model()
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


def test_duplicate_json_keys_are_refused(tmp_path, capsys):
    text = cluster_spec.hulk47_spec().to_json()
    dup = text.replace('"version"', '"missing_links": "route", "version"', 1)
    p = tmp_path / "dup.json"
    p.write_text(dup)
    one_line_error(["plan", "--cluster", str(p)], capsys, "--cluster", str(p), "'missing_links' appears twice")


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
                             text=True, env=same_hulk_env(OMP_NUM_THREADS="1"))
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
