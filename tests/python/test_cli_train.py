"""``hulk train`` (hulk.cli.train), and planning with the model it writes."""

from __future__ import annotations

import json

from hulk import cli
from hulk.plan import learned


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


def test_cli_train_rejects_bad_sizes(capsys):
    assert cli.main(["train", "--sizes", "abc", "--quiet"]) == 2
    assert "--sizes" in capsys.readouterr().err
