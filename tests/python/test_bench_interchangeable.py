"""The interchangeable-machines benchmark (benchmarks/bench_interchangeable.py): its twin tells
every machine apart and barely moves a send time, and its report's ratios are what hand-made rows
say, computed by hand here."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import load_benchmark

from hulk.plan import generate


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bench_interchangeable")


def test_the_twin_tells_every_machine_apart_and_moves_send_times_by_tenths_of_a_microsecond(bench):
    c = generate.generate_cluster(30, seed=5, mode="measured", machines_per_region=(3, 6), gpu_mix={"A100 80GB": 1})
    twin = bench.distinct_twin(c)
    assert len(set(c.access_ms.tolist())) == 1  # measured: no access latency of its own, all alike
    assert len(set(twin.access_ms.tolist())) == len(c)
    assert np.all(twin.access_ms - c.access_ms >= bench.TWIN_MS) and np.all(twin.access_ms - c.access_ms < 2 * bench.TWIN_MS)
    np.testing.assert_array_equal(twin.region, c.region)
    np.testing.assert_array_equal(twin.tflops, c.tflops)


def _row(k, job_set, variant, run, capped_s, moves, makespan, network=None):
    row = {"kind": "plan", "mode": "measured", "n": 47, "instance": k, "cluster_seed": 3000 + k, "job_set": job_set,
           "variant": variant, "run": run, "all_a100": bool(k % 2), "capped_moves": 100, "capped_s": capped_s,
           "capped_makespan_s": makespan, "budget_moves": moves, "budget_makespan_s": makespan}
    if network:  # rows written before --explicit have no network: regional
        row["network"] = network
    return row


def test_the_report_gives_each_kinds_speed_moves_and_makespan_ratios(bench):
    rows = []
    # k = 1 (all A100): twin twice as slow (2 s against 1 s), the cluster 4x the moves, 0.9x the makespan
    for run in ("first", "second"):
        rows += [_row(1, "paper4", "cluster", run, 1.0, 400, 90.0), _row(1, "paper4", "twin", run, 2.0, 100, 100.0)]
    # k = 2 (mixed): the two runs of each side averaged: twin (1 + 3) / 2 = 2 s against 1 s, moves 1x, makespan 1x
    rows += [_row(2, "paper4", "cluster", "first", 1.0, 50, 10.0), _row(2, "paper4", "cluster", "second", 1.0, 50, 10.0),
             _row(2, "paper4", "twin", "first", 1.0, 50, 10.0), _row(2, "paper4", "twin", "second", 3.0, 50, 10.0)]
    # k = 3 has no twin run yet: left out
    rows += [_row(3, "paper4", "cluster", "first", 1.0, 50, 10.0)]
    # k = 1 again, explicit: a cell of its own (twin 3x as slow, 2x the moves, 0.8x the makespan)
    for run in ("first", "second"):
        rows += [_row(1, "paper4", "cluster", run, 1.0, 200, 80.0, "explicit"),
                 _row(1, "paper4", "twin", run, 3.0, 100, 100.0, "explicit")]
    lines = bench.report_lines(rows, [])
    table = {tuple(x.strip() for x in line.split("|")[2:4]): [x.strip() for x in line.split("|")[4:8]]
             for line in lines if line.startswith("| 47")}
    assert table == {("regional", "all A100"): ["1", "2.00 (2.00-2.00)", "4.00 (4.00-4.00)", "0.90 (0.90-0.90)"],
                     ("regional", "mixed"): ["1", "2.00 (2.00-2.00)", "1.00 (1.00-1.00)", "1.00 (1.00-1.00)"],
                     ("explicit", "all A100"): ["1", "3.00 (3.00-3.00)", "2.00 (2.00-2.00)", "0.80 (0.80-0.80)"]}
