"""The README's Python examples run as written (docs that run).

The tour, "Building models" and "Planning" blocks run here as they stand (about 7 s). The
"Generated clusters and the learned planner" block is left out: it searches for 30 s and labels
200 clusters for training (minutes); its calls are tested one by one in test_plan_generate.py,
test_plan_anytime.py and test_plan_learned.py.
"""

import pathlib
import re
import warnings

import numpy as np
import pytest

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def _blocks() -> dict:
    """The README's ```python blocks keyed by the section heading above each."""
    text = README.read_text(encoding="utf-8")
    out = {}
    for m in re.finditer(r"```python\n(.*?)```", text, re.S):
        heading = re.findall(r"^#+ (.+)$", text[:m.start()], re.M)[-1]
        out.setdefault(heading, []).append(m.group(1))
    return out


def test_the_readme_still_has_the_blocks_this_test_runs():
    blocks = _blocks()
    for heading in ("Python tour", "Building models", "Planning"):
        assert heading in blocks, f"README section {heading!r} lost its python example"


def _run(code: str, namespace: dict) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the bundled data's cleaning warnings
        exec(compile(code, str(README), "exec"), namespace)
    return namespace


def test_the_python_tour_and_building_models_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the tour saves hulk47.model in the working directory
    ns = _run(_blocks()["Python tour"][0], {})
    g, labels, classes = ns["g"], ns["labels"], ns["classes"]
    assert ns["pred"].shape == (47,) and ns["proba"].shape == (47, len(classes))
    assert (tmp_path / "hulk47.model").exists()
    labelled = np.asarray(labels) >= 0
    assert (ns["model"].predict(g)[labelled] == np.asarray(labels)[labelled]).mean() > 0.8
    # "Building models" continues the tour: its names come from there (train: the labelled machines)
    ns.update(train=labelled, num_classes=len(classes))
    ns = _run(_blocks()["Building models"][0], ns)
    assert ns["model"].predict(g).shape == (47,)
    capsys.readouterr()


def test_the_planning_example_runs(capsys):
    ns = _run(_blocks()["Planning"][0], {})
    p, q, r = ns["p"], ns["q"], ns["r"]
    assert p.feasible and p.makespan_s > 0
    assert len(q.cluster) == 46 and len(r.cluster) == 48
    assert "OPT-175B" in capsys.readouterr().out  # the comparison table was printed
