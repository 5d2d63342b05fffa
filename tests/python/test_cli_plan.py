"""``hulk plan`` (hulk.cli.plan): tables, JSON, repairs, figures and its errors."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest

from helpers import one_line_error, parse_weights, write_weights
from hulk import cli
from hulk.plan import cluster_spec, generate, learned, models, planners


PAPER4 = list(models.PAPER_JOBS_4)


def _strict_json(text):
    """json.loads refusing NaN / Infinity (not RFC 8259 JSON)."""
    def refuse(token):
        raise ValueError(f"not valid JSON: {token}")
    return json.loads(text, parse_constant=refuse)


def test_cli_negative_seed_no_traceback(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["plan", "--planner", "search", "--jobs", "BERT-large", "--time-limit", "0.05", "--seed", "-1"])
    assert exc.value.code == 2
    assert "--seed: -1" in capsys.readouterr().err


def test_cli_json_with_forbidden_links(tmp_path, capsys):
    G = nx.Graph(missing_links="forbid")
    for i in range(4):
        G.add_node(i, region=f"r{i // 2}", memory_gb=80.0, capability=8.0)
    G.add_edge(0, 1, latency_ms=1.0)
    G.add_edge(2, 3, latency_ms=1.0)
    path = tmp_path / "forbid.json"
    cluster_spec.from_networkx(G).to_json(path)
    rc = cli.main(["plan", "--cluster", str(path), "--jobs", "GPT-2 1.5B", "--planner", "b", "--json"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    d = _strict_json(cap.out)
    assert d["plans"][0]["feasible"] is False


def test_cli_plans_a_users_own_models(tmp_path, capsys):
    """--models FILE (schema of hulk.plan.models.load_models): --jobs names resolve there first."""
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"version": "hulk-models/1", "models": [
        {"name": "Tiny-LM", "aliases": ["tiny"], "layers": 8, "hidden": 512, "seq_len": 256, "params": 3e7,
         "global_batch": 64, "micro_batches": 4, "iterations": 10, "source": "made up for the test"}]}))
    rc = cli.main(["plan", "--models", str(path), "--jobs", "tiny,BERT-large", "--planner", "search",
                   "--time-limit", "0.1", "--json"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    d = _strict_json(cap.out)
    assert d["jobs"] == ["Tiny-LM", "BERT-large"]
    assert [j["job"] for j in d["plans"][0]["jobs"]] == ["Tiny-LM", "BERT-large"]
    assert d["plans"][0]["feasible"] is True
    # Without the file the name is unknown; a bad file names the field and the value.
    assert cli.main(["plan", "--jobs", "tiny", "--planner", "b"]) == 2
    assert "unknown model 'tiny'" in capsys.readouterr().err
    path.write_text(json.dumps([{"name": "x", "layers": -1, "hidden": 8, "seq_len": 8, "params": 1e3,
                                 "global_batch": 8}]))
    assert cli.main(["plan", "--models", str(path), "--jobs", "x", "--planner", "b"]) == 2
    assert "layers" in capsys.readouterr().err


def test_cli_plan_hulk_table(capsys):
    assert cli.main(["plan", "--planner", "hulk"]) == 0
    out = capsys.readouterr().out
    assert "47 machines" in out
    assert f"== {planners.PLANNER_TITLES['hulk']} ==" in out
    for name in PAPER4:
        assert name in out
    assert "all jobs finish after" in out


def test_cli_plan_json(capsys):
    assert cli.main(["plan", "--json", "--planner", "search", "--time-limit", "0.2"]) == 0
    d = _strict_json(capsys.readouterr().out)
    assert d["jobs"] == PAPER4
    assert len(d["plans"]) == 1
    p = d["plans"][0]
    assert p["planner"] == "search" and p["feasible"] is True
    assert isinstance(p["makespan_s"], float) and p["makespan_s"] > 0
    assert [j["job"] for j in p["jobs"]] == PAPER4
    assert d["repaired"] == []


def test_cli_plan_json_all_planners_strict(capsys):
    """Default planners include infeasible baselines: their inf must come out as null."""
    assert cli.main(["plan", "--json", "--time-limit", "0.1"]) == 0
    d = _strict_json(capsys.readouterr().out)
    names = [p["planner"] for p in d["plans"]]
    assert names == ["a", "b", "c", "search", "hulk", "table2"]
    assert d["plans"][0]["makespan_s"] is None


def test_cli_plan_fail(capsys):
    assert cli.main(["plan", "--planner", "hulk", "--fail", "3"]) == 0
    out = capsys.readouterr().out
    assert "machine 3 failed" in out
    assert "repaired in" in out
    assert out.count("== Hulk ==") == 2


def test_cli_plan_fail_json(capsys):
    assert cli.main(["plan", "--planner", "hulk", "--fail", "3", "--json"]) == 0
    d = _strict_json(capsys.readouterr().out)
    assert len(d["repaired"]) == 1
    r = d["repaired"][0]["plan"]
    assert r["repair_s"] >= 0 and isinstance(r["moved"], list)
    assert max(m for j in r["jobs"] for m in j["machines"]) <= 45


def test_cli_plan_fail_out_of_range(capsys):
    assert cli.main(["plan", "--planner", "hulk", "--fail", "47"]) == 2
    assert "47" in capsys.readouterr().err


def test_cli_plan_add(capsys, tmp_path):
    add = {"machine": {"region": "Beijing", "memory_gb": 640, "capability": 8.0},
           "links": [{"to": 0, "latency_ms": 1.0}, {"to": 5, "latency_ms": 3.0}]}
    assert cli.main(["plan", "--planner", "hulk", "--add", json.dumps(add)]) == 0
    out = capsys.readouterr().out
    assert "a machine joined" in out
    # the newcomer, and machines the taker's new layout leaves without a stage, are listed
    moved = out.split("moved machines ", 1)[1].split("\n", 1)[0]
    assert moved == "none" or "47" in moved, moved
    f = tmp_path / "add.json"
    f.write_text(json.dumps(add))
    assert cli.main(["plan", "--planner", "hulk", "--add", str(f), "--json"]) == 0
    d = _strict_json(capsys.readouterr().out)
    r = d["repaired"][0]["plan"]
    assert any(47 in j["machines"] for j in r["jobs"]) == (47 in r["moved"])


def test_cli_plan_add_bad_json(capsys):
    assert cli.main(["plan", "--planner", "hulk", "--add", "{not json"]) == 2
    assert "--add" in capsys.readouterr().err


def test_cli_plan_png(tmp_path, capsys):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        pytest.skip("matplotlib is not installed: --png cannot draw")
    path = tmp_path / "f.png"
    assert cli.main(["plan", "--png", str(path), "--planner", "hulk"]) == 0
    assert path.stat().st_size > 1000
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(path) in capsys.readouterr().out


def test_cli_plan_paper6(capsys):
    assert cli.main(["plan", "--jobs", "paper6", "--planner", "hulk"]) == 0
    out = capsys.readouterr().out
    six = list(models.PAPER_JOBS_6)
    assert len(six) == 6
    for name in six:
        assert name in out
    assert "iterations per job: " + ", ".join(["1000"] * 6) in out


def test_cli_plan_unknown_job(capsys):
    assert cli.main(["plan", "--jobs", "nope"]) == 2
    cap = capsys.readouterr()
    assert "error" in cap.err and "nope" in cap.err


def test_cli_plan_gnn(capsys):
    assert cli.main(["plan", "--gnn", "--planner", "hulk"]) == 0
    out = capsys.readouterr().out
    for name in PAPER4:
        assert name in out
    assert "all jobs finish after" in out


def test_cli_gnn_needs_paper_jobs(capsys):
    assert cli.main(["plan", "--gnn", "--planner", "hulk", "--jobs", "BERT-large"]) == 2
    assert "--gnn" in capsys.readouterr().err


def test_cli_plan_on_a_regional_json_file(tmp_path, capsys):
    path = tmp_path / "c.json"
    generate.generate_cluster(40, seed=1).to_json(path)
    assert cli.main(["plan", "--cluster", str(path), "--jobs", "BERT-large", "--planner", "search",
                     "--time-limit", "0.2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert "40 machines" in d["cluster"]
    assert cli.main(["plan", "--cluster", str(path), "--generate", "40"]) == 2
    assert "not both" in capsys.readouterr().err


def test_plan_with_a_crafted_model_is_one_line_error(tmp_path, good_file, capsys):
    raw, _ = good_file
    config, tensors = parse_weights(raw)
    for t in tensors:
        if t[0].startswith("scaler."):
            t[1] = np.zeros((0, t[1].shape[1]), np.float32)
    model = tmp_path / "bad.gnn"
    model.write_bytes(write_weights(config, tensors))
    meta = json.loads(learned.DEFAULT_MODEL.with_suffix(".gnn.json").read_text())
    meta.pop("weights_sha256")
    (tmp_path / "bad.gnn.json").write_text(json.dumps(meta))
    one_line_error(["plan", "--model", str(model), "--planner", "hulk"], capsys, str(model))


def test_ignored_or_conflicting_plan_arguments_are_errors(tmp_path, capsys):
    one_line_error(["plan", "--fail", "999"], capsys, "--fail 999", "47 machines")
    one_line_error(["plan", "--classifier", "heuristic", "--model", "x.gnn"], capsys, "--model 'x.gnn'",
                    "heuristic")
    one_line_error(["plan", "--planner", "a", "--fail", "3"], capsys, "--planner a")


@pytest.mark.parametrize("add, needle", [
    ("5", "neither a file nor a JSON object"),
    ("[]", "neither a file nor a JSON object"),
    ('{"machine": 5}', "'machine' must be an object"),
    ('{"machine": {"region": "Rome", "memory_gb": 80, "capability": 8}, "links": 3}', "'links' must be a list"),
    ('{"region": "Rome", ', "not valid JSON"),
])
def test_malformed_add_is_one_line_error(add, needle, capsys):
    one_line_error(["plan", "--planner", "hulk", "--classifier", "heuristic", "--add", add], capsys, "--add", needle)


def test_add_with_generate_is_one_line_error(capsys):
    one_line_error(["plan", "--generate", "50", "--add", '{"region": "Rome", "memory_gb": 80, "capability": 8}'],
                    capsys, "--add", "generated cluster")


def test_cluster_path_beginning_with_a_brace_is_a_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = "{cluster}.json"
    cluster_spec.hulk47_spec().to_json(name)
    assert len(cluster_spec.from_json(name)) == 47
    generate.generate_cluster(20, seed=1).to_json("{regional}.json")
    assert len(generate.RegionalCluster.from_json("{regional}.json")) == 20


def test_missing_model_file_is_one_line_error(tmp_path, capsys):
    one_line_error(["plan", "--model", str(tmp_path / "nope.gnn")], capsys, "nope.gnn")


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
