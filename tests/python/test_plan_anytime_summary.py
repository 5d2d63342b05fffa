"""benchmarks/plan_anytime_summary.py: one row per results file and mode, on hand-made rows whose
ratios are worked out here."""

from __future__ import annotations

import json

import pytest
from helpers import load_benchmark


@pytest.fixture(scope="module")
def summary():
    return load_benchmark("plan_anytime_summary")


def _row(planner, makespan, instance=0, seed=0, budget=1.0, n=47, mode="measured", job_set="paper4"):
    return {"kind": "plan", "mode": mode, "n": n, "instance": instance, "cluster_seed": 3000 + instance,
            "job_set": job_set, "planner": planner, "budget_s": budget, "seed": seed, "wall_s": budget,
            "planning_s": budget, "feasible": makespan is not None, "makespan_s": makespan}


def _rows():
    rows = []
    # instance 0: Hulk/Search per seed 1.05 and 0.95; on the seed means sqrt(105*95)/100 = 0.99875
    rows += [_row("hulk", 105.0, seed=0), _row("search", 100.0, seed=0),
             _row("hulk", 95.0, seed=1), _row("search", 100.0, seed=1)]
    # instance 1: 1.10 on both seeds (over the bound on the means too)
    rows += [_row("hulk", 110.0, 1, seed=s) for s in (0, 1)] + [_row("search", 100.0, 1, seed=s) for s in (0, 1)]
    # a second size with one plan Hulk lacks (left out) and one at 0.5
    rows += [_row("hulk", None, 2, n=200), _row("search", 100.0, 2, n=200),
             _row("hulk", 50.0, 3, n=200), _row("search", 100.0, 3, n=200)]
    # a Search plan with no Hulk plan beside it counts nowhere
    rows += [_row("search", 100.0, 4, budget=0.1)]
    return rows


def test_one_row_per_mode_with_the_bound_counted_by_plan_and_by_seed_mean(summary):
    meta = [{"kind": "meta", "date": "2026-11-26 11:25 UTC"}, {"kind": "meta", "date": "2026-11-26 13:31 UTC"}]
    rows = _rows() + [_row("hulk", 99.0, mode="paper"), _row("search", 100.0, mode="paper")]
    out = summary.file_rows(rows, meta)
    assert [f["mode"] for f in out] == ["paper", "measured"]
    m = out[1]
    assert m["plans"] == 5 and m["sizes"] == [47, 200] and m["budgets"] == [1.0] and m["seeds"] == 2
    assert m["mean"] == pytest.approx((1.05 + 0.95 + 1.10 + 1.10 + 0.5) / 5)
    # cells: 47 machines at 1 s (mean 1.05, over 1.00) and 200 at 1 s (0.5)
    assert (m["cells"], m["cells_over_1"], m["worst_cell"]) == (2, 1, pytest.approx(1.05))
    assert (m["over"], m["worst"]) == (3, pytest.approx(1.10))
    # seed means: instance 0 (0.99875) and instance 1 (1.10); the 200-machine one has a single seed
    assert (m["seed_means"], m["seed_means_over"], m["worst_seed_mean"]) == (2, 1, pytest.approx(1.10))
    assert m["k"] == "0-1, 3" and m["dates"] == ("2026-11-26 11:25 UTC", "2026-11-26 13:31 UTC")
    assert out[0]["seed_means"] == 0 and out[0]["worst_seed_mean"] is None
    # each planner against itself: instance 0's two Hulk plans 105 and 95 (105/95 over 1.02x, one
    # of its two ordered pairs); Search's 100 and 100 never
    assert (m["seed_pairs"], m["search_pairs_over"], m["hulk_pairs_over"]) == (4, 0, 1)
    assert out[0]["seed_pairs"] == 0


def test_seed_pairs_count_each_ordered_pair_once(summary):
    # one instance, three seeds: Search 100, 101, 104; Hulk 100 on each. Ordered pairs over 1.02x:
    # 104/100 and 104/101 (101/100 is within it, and a shorter plan is never over)
    rows = [_row("search", m, seed=s) for s, m in enumerate((100.0, 101.0, 104.0))]
    rows += [_row("hulk", 100.0, seed=s) for s in range(3)]
    (m,) = summary.file_rows(rows, [])
    assert (m["seed_pairs"], m["search_pairs_over"], m["hulk_pairs_over"]) == (6, 2, 0)


def test_the_table_renders_each_file(summary, tmp_path):
    path = tmp_path / "plan_anytime_x.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [{"kind": "meta", "date": "2026-11-26 11:25 UTC"}]
                            + _rows()))
    lines = summary.table_lines([str(path)])
    assert lines[2] == ("| `plan_anytime_x.jsonl` | measured | 47, 200 | 1 | 0-1, 3 | 2 | 2026-11-26 11:25 UTC | 5 | "
                        "0.940 | 1 of 2 (1.050) | 3 of 5 (1.100) | 1 of 2 (1.100) | 0 / 1 of 4 |")


def test_a_missing_file_is_named(summary, tmp_path, capsys):
    with pytest.raises(SystemExit):
        summary.main([str(tmp_path / "nope.jsonl")])
    assert "nope.jsonl" in capsys.readouterr().err
