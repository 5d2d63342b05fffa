"""The two-thread benchmark (benchmarks/bench_plan_thread.py): its report on hand-made rows (the
ratios computed by hand here), and Search x2 keeping the shorter of its two seeds' plans."""

from __future__ import annotations

import types

import pytest
from helpers import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bench_plan_thread")


def _row(planner, makespan, instance=0, job_set="paper4", budget=1.0, returned=None):
    return {"kind": "plan", "mode": "measured", "n": 200, "instance": instance, "cluster_seed": 3000 + instance,
            "job_set": job_set, "planner": planner, "budget_s": budget, "seed": 0, "wall_s": budget,
            "planning_s": budget, "feasible": makespan is not None, "makespan_s": makespan, "machines": 200,
            "thread_plan_returned": returned}


def _rows():
    # instance 0: Hulk 1.10x Search (over the bound), the thread's Search wins (1.00x), Search x2 0.95x
    # instance 1: Hulk 0.90x, Hulk + thread 0.90x, Search x2 1.00x; instance 2: Hulk has no plan
    return [_row("search", 100.0, 0), _row("hulk", 110.0, 0), _row("hulk+search", 100.0, 0, returned="search"),
            _row("search x2", 95.0, 0),
            _row("search", 100.0, 1), _row("hulk", 90.0, 1), _row("hulk+search", 90.0, 1), _row("search x2", 100.0, 1),
            _row("search", 100.0, 2), _row("hulk", None, 2)]


def test_report_gives_each_planner_over_search_and_the_two_thread_planners_over_each_other(bench):
    lines = bench.report_lines(_rows(), [])
    cell = [line for line in lines if line.startswith("| measured | 200 | 1 |")]
    # geometric means: sqrt(1.1 * 0.9) = 0.995, sqrt(1.0 * 0.9) = 0.949, sqrt(0.95 * 1.0) = 0.975,
    # hulk+search / search x2: sqrt(100/95 * 90/100) = 0.973, worst 1.053 (over the bound)
    assert cell == ["| measured | 200 | 1 | 2 | 0.995 / 1.100 / 1 | 0.949 / 1.000 / 0 | 0.975 / 1.000 / 0 "
                    "| 0.973 / 1.053 / 1 |"]
    assert "Search's plan (from the second thread) was returned in 1 of 2 hulk+search plans." in lines


def test_search_x2_keeps_the_shorter_of_two_seeds(bench, monkeypatch):
    made = {0: types.SimpleNamespace(feasible=True, makespan_s=5.0),
            1: types.SimpleNamespace(feasible=True, makespan_s=4.0)}
    seen = []

    def fake_plan(cluster, jobs, planner, time_limit_s, seed):
        seen.append((planner, time_limit_s, seed))
        return made[seed - 7]

    monkeypatch.setattr(bench.hp, "plan", fake_plan)
    assert bench.best_of_two_searches("c", ["j"], 0.5, 7) is made[1]
    assert sorted(seen) == [("search", 0.5, 7), ("search", 0.5, 8)]
    made[1] = types.SimpleNamespace(feasible=False, makespan_s=float("inf"))  # a feasible plan first
    assert bench.best_of_two_searches("c", ["j"], 0.5, 7) is made[0]


def test_a_results_file_holds_one_measured_regime(bench, tmp_path):
    results = tmp_path / "t.jsonl"
    results.write_text('{"kind": "meta", "measured_regime": "small-regions"}\n')
    with pytest.raises(SystemExit, match="holds runs of --measured-regime small-regions"):
        bench.main(["--results", str(results), "--measured-regime", "large-regions", "--sizes", "47"])
