"""Helpers shared by several test modules: a small fitted model, the CLI's one-line errors,
weight-file editing, and child processes that import the hulk under test."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import hulk
from hulk import cli
from weightfile import parse_model_file, write_model_file


BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load_benchmark(name: str):
    """benchmarks/NAME.py as a module (the scripts are not a package; their folder is on the path
    while it loads, for the helpers they import)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCHMARKS))


def fitted_model(seed=0):
    """(GNN fitted for 3 epochs, its 30-node Graph)."""
    rng = np.random.default_rng(seed)
    n = 30
    edges = np.array([(i, (i + 1) % n) for i in range(n)] + [(i, (i + 7) % n) for i in range(n)])
    g = hulk.Graph(n, edges, node_features=rng.normal(size=(n, 3)), edge_features=rng.normal(size=(len(edges), 2)))
    y = rng.integers(0, 3, n)
    m = hulk.GNN(3, hidden=(6, 4), seed=1)
    m.fit(g, y, epochs=3)
    return m, g


def parse_weights(raw: bytes):
    """(configuration text, [[name, array], ...]) of a weight file, tensors editable in place."""
    _, config, tensors = parse_model_file(raw)
    return config, [list(t) for t in tensors]


def write_weights(config: str, tensors, version: int = 2) -> bytes:
    return write_model_file(version, config, tensors)


def load_error(tmp_path, raw: bytes) -> str:
    """The RuntimeError of GNN.load on a file of ``raw`` bytes (it must name the file)."""
    p = tmp_path / "crafted.gnn"
    p.write_bytes(raw)
    with pytest.raises(RuntimeError) as exc:
        hulk.GNN.load(p)
    assert str(p) in str(exc.value)
    return str(exc.value)


def run_cli(argv, capsys) -> tuple[int, list[str]]:
    """Runs the CLI; returns (exit code, stderr lines but the progress lines "hulk: [ t s] step").
    argparse errors exit through SystemExit."""
    try:
        rc = cli.main(argv)
    except SystemExit as exc:
        rc = exc.code
    return rc, [ln for ln in capsys.readouterr().err.splitlines() if not ln.startswith("hulk: [")]


def one_line_error(argv, capsys, *needles):
    """The CLI fails with exit code 2 and one line on stderr holding every needle."""
    rc, err = run_cli(argv, capsys)
    assert rc == 2, (rc, err)
    assert len(err) == 1 and "error:" in err[0] and "Traceback" not in err[0], err
    for n in needles:
        assert n in err[0], (n, err[0])
    return err[0]


def hulk_home() -> Path:
    """The folder holding the package this process imported: the checkout under an editable
    install, or the PYTHONPATH folder of an uninstalled build (as on the GPU machine)."""
    return Path(hulk.__file__).resolve().parents[1]


def same_hulk_env(**extra) -> dict:
    """Environment for a child Python that imports the same hulk as this test process."""
    return dict(os.environ, PYTHONPATH=str(hulk_home()), **extra)


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


def run_limited(call: str, cwd) -> str:
    """Runs ``call`` in a child Python limited to 1.5 GB of address space; its stdout."""
    env = same_hulk_env(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", _LIMITED.format(call=call)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout
