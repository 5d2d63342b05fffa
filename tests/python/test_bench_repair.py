"""The recovery benchmark (benchmarks/bench_repair.py): which machines fail, and its report's
ratios, counts and times from hand-made rows, computed by hand here."""

from __future__ import annotations

import pytest
from helpers import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bench_repair")


class _Plan:
    def __init__(self, groups):
        self.jobs = [{"machines": g} for g in groups]


def test_each_job_loses_its_lowest_machine_once(bench):
    assert bench.failures(_Plan([[5, 3, 9], [0], [], [3, 7]])) == [0, 3]


def _row(planner, kept, shortened, afresh, moved=(0, 1), secs=(0.001, 0.01)):
    return {"kind": "plan", "mode": "measured", "n": 47, "instance": 1, "job_set": "paper4", "planner": planner,
            "failed": 0, "makespan_s": 100.0, "kept_s": kept, "kept_moved": moved[0], "kept_repair_s": secs[0],
            "shortened_s": shortened, "shortened_moved": moved[1], "shortened_repair_s": secs[1], "afresh_s": afresh}


def test_the_report_gives_each_repairs_ratio_to_the_fresh_plan(bench):
    rows = [_row("hulk", 120.0, 100.0, 100.0, moved=(0, 3), secs=(0.002, 0.03)),  # kept 1.2 (over 1.05), shortened 1.0
            _row("hulk", 100.0, 100.0, 100.0),
            _row("hulk", None, None, 100.0),  # no plan after the failure: infinitely long
            _row("hulk", 100.0, 100.0, None),  # no fresh plan: left out
            _row("search", 90.0, 90.0, 100.0)]
    lines = bench.report_lines(rows, [])
    table = {line.split("|")[3].strip(): [x.strip() for x in line.split("|")[4:11]] for line in lines if line.startswith("| measured")}
    assert table["hulk"] == ["3", "inf / inf", "2", "inf / inf", "1", "0.0 / 0, 1.7 / 3", "0.001 / 0.002 s, 0.017 / 0.030 s"]
    assert table["search"] == ["1", "0.900 / 0.900", "0", "0.900 / 0.900", "0", "0.0 / 0, 1.0 / 1", "0.001 / 0.001 s, 0.010 / 0.010 s"]
