"""The command line as a whole (hulk.cli: main, build_parser, ``python -m hulk``): argument errors
and exit codes; each command has its own test_cli_<command>.py."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import hulk
from helpers import hulk_home, one_line_error
from hulk import cli


@pytest.mark.parametrize("argv", [
    [], ["frobnicate"], ["classify", "--hidden", "0"], ["classify", "--hidden", "64,-1"],
    ["classify", "--hidden", "abc"], ["classify", "--hidden", ""], ["classify", "--epochs", "ten"],
    ["classify", "--pooling", "max"], ["classify", "--lr", "fast"], ["classify", "--no-such-flag"],
])
def test_bad_arguments_exit_with_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("hulk") and "error:" in err[0] and "--help" in err[0], err


@pytest.mark.parametrize("argv, needle", [
    (["classify", "--epochs", "0"], "--epochs: 0"),
    (["classify", "--dropout", "1.5"], "--dropout: 1.5"),
    (["classify", "--lr", "-1"], "--lr: -1"),
    (["classify", "--seed", "-3"], "--seed: -3"),
])
def test_bad_values_report_error_and_return_2(argv, needle, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err_lines = capsys.readouterr().err.splitlines()
    assert len(err_lines) == 1 and err_lines[0].startswith("hulk classify: error:") and needle in err_lines[0]


def test_module_entry_point(tmp_path):
    # `python -m hulk info` runs the same main, from a neutral directory, with the package this
    # process imported: the installed one, or the PYTHONPATH folder it came from (an uninstalled
    # build, as on the GPU machine); any other PYTHONPATH is dropped.
    env = dict(os.environ)
    package_root = hulk_home()
    if not any(p and Path(p).resolve() == package_root for p in env.get("PYTHONPATH", "").split(os.pathsep)):
        env.pop("PYTHONPATH", None)
    proc = subprocess.run([sys.executable, "-m", "hulk", "info"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"hulk {hulk.__version__}" in proc.stdout


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
    one_line_error(argv, capsys, needle)


@pytest.mark.parametrize("exc, needle", [
    (hulk.OutOfMemoryError("GNN.fit: out of memory (nodes 3, edges 1); use a smaller graph"), "GNN.fit: out of memory"),
    (MemoryError(), "MemoryError"),
])
def test_out_of_memory_is_a_one_line_error(monkeypatch, capsys, exc, needle):
    # before: a traceback (MemoryError was not among the errors main() reports)
    from hulk.cli import classify

    def run(args):
        raise exc
    monkeypatch.setattr(classify, "run", run)
    one_line_error(["classify"], capsys, "hulk classify: error: " + needle)
