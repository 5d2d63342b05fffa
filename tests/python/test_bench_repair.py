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


def test_a_failed_machine_joins_again_with_its_own_fields_and_links(bench):
    from hulk.plan import cluster_spec

    spec = cluster_spec.hulk47_spec()
    machine, links = bench.machine_and_links(spec, 3)
    assert machine["name"] == spec.machines[3]["name"] and machine["memory_gb"] == spec.machines[3]["memory_gb"]
    back = spec.without(3).with_machine(machine, links)
    assert len(back.links) == len(spec.links)
    pairs = {tuple(sorted((l["a"], l["b"]))): l["latency_ms"] for l in spec.links}
    order = [i for i in range(len(spec.machines)) if i != 3] + [3]  # the rejoined machine comes last
    for l in back.links:
        a, b = order[l["a"]], order[l["b"]]
        assert pairs[tuple(sorted((a, b)))] == l["latency_ms"]


def test_the_report_gives_each_joins_ratio_to_the_whole_clusters_plan(bench):
    rows = [dict(_row("hulk", 100.0, 100.0, 100.0), makespan_s=100.0, joined_kept_s=120.0, joined_s=110.0,
                 joined_moved=1, joined_repair_s=0.002),
            dict(_row("hulk", 100.0, 100.0, 120.0), makespan_s=100.0, joined_kept_s=100.0, joined_s=100.0,
                 joined_moved=3, joined_repair_s=0.004)]
    lines = bench.report_lines(rows, [])
    joins = [line for line in lines if line.startswith("| measured") and len(line.split("|")) == 13]
    assert [x.strip() for x in joins[0].split("|")[4:12]] == ["2", "1.100 / 1.200", "1", "1.050 / 1.100", "1", "1",
                                                              "2.0 / 3", "0.003 / 0.004 s"]
    # Rows written before the kept join was recorded: "-" there.
    for r in rows:
        del r["joined_kept_s"]
    joins = [line for line in bench.report_lines(rows, []) if line.startswith("| measured") and len(line.split("|")) == 13]
    assert [x.strip() for x in joins[0].split("|")[5:7]] == ["-", "-"]
