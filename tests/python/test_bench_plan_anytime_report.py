"""The anytime benchmark's report (benchmarks/bench_plan_anytime.py --report), on hand-made rows:
the ratios and the by-job-set table are what the rows say, computed by hand here."""

from __future__ import annotations

import argparse

import pytest
from helpers import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bench_plan_anytime")


def _row(job_set, instance, planner, budget, makespan, mode="measured", n=47):
    return {"kind": "plan", "mode": mode, "n": n, "instance": instance, "cluster_seed": 3000 + instance,
            "job_set": job_set, "planner": planner, "budget_s": budget, "seed": 0, "wall_s": budget,
            "planning_s": budget, "feasible": makespan is not None, "makespan_s": makespan, "machines": n,
            "regions": 3}


def _rows():
    rows = []
    # paper4: two clusters; Hulk/Search at 1 s = 0.9 and 1.05; at 60 s only Search (the reference)
    for k, (h, s) in enumerate([(90.0, 100.0), (105.0, 100.0)]):
        rows += [_row("paper4", k, "hulk", 1.0, h), _row("paper4", k, "search", 1.0, s),
                 _row("paper4", k, "search", 60.0, 80.0)]
    # the second set: one cluster, Hulk/Search = 0.5 at 1 s; Hulk has no plan at 0.1 s (left out of the ratios)
    rows += [_row("OPT+RoBERTa+BERT", 0, "hulk", 1.0, 50.0), _row("OPT+RoBERTa+BERT", 0, "search", 1.0, 100.0),
             _row("OPT+RoBERTa+BERT", 0, "hulk", 0.1, None), _row("OPT+RoBERTa+BERT", 0, "search", 0.1, 100.0),
             _row("OPT+RoBERTa+BERT", 0, "search", 60.0, 100.0)]
    return rows


def test_job_set_table_gives_each_sets_mean_and_worst(bench):
    lines = bench.job_set_lines(_rows())
    table = [line for line in lines if line.startswith("| measured")]
    # a column per budget with a ratio (none at 0.1 s: Hulk had no plan there); paper4 first
    assert lines[3] == "| mode | job set | machines | 1 |"
    assert table == ["| measured | paper4 | 47 | 0.975 / 1.050 |",
                     "| measured | OPT+RoBERTa+BERT | 47 | 0.500 / 0.500 |"]


def test_job_set_table_is_left_out_for_one_job_set(bench):
    assert bench.job_set_lines([r for r in _rows() if r["job_set"] == "paper4"]) == []


def test_main_table_pools_the_job_sets_over_the_reference(bench):
    lines = bench.report_lines(_rows(), [], 60.0)
    one_second = [line for line in lines if line.startswith("| measured | 47 | 1 |")]
    # Hulk(1 s)/Search(60 s): 90/80, 105/80, 50/100; Search(1 s)/Search(60 s): 100/80 twice, 100/100
    # Hulk(1 s)/Search(1 s): 0.9, 1.05 (over the 1.02 bound), 0.5
    assert one_second == ["| measured | 47 | 1 | 3 | 0.979 / 1.312 | 1.167 / 1.250 | 0.817 / 1.050 | 1 of 3 "
                          "| 1.00 / 1.00 | 0 / 0 |"]
    tenth = [line for line in lines if line.startswith("| measured | 47 | 0.1 |")]
    assert tenth == ["| measured | 47 | 0.1 | 1 | - | 1.000 / 1.000 | - | - | 0.10 / 0.10 | 1 / 0 |"]
    # the count over every budget, per mode (a ratio exactly at the bound is within it)
    extra = [("hulk", 3.0, 102.0), ("search", 3.0, 100.0), ("search", 60.0, 100.0)]
    rows = _rows() + [_row("paper4", 0, planner, budget, makespan, mode="paper") for planner, budget, makespan in extra]
    lines = bench.report_lines(rows, [], 60.0)
    total = [line for line in lines if line.startswith("Instances (cluster, job set, budget) where Hulk(t) is over")]
    assert len(total) == 1 and total[0].endswith("all sizes and budgets: paper 0 of 1, measured 1 of 3."), total


def test_later_instances_and_their_own_section(bench):
    """--first-instance plans clusters the default run never planned (cluster seed 3000 + k),
    and another results file writes its own RESULTS.md section, not the main grid's."""
    args = argparse.Namespace(bundled=False, modes=["measured"], sizes=[47], instances=2, first_instance=30,
                              measured_regime="small-regions")
    got = [(mode, n, k, seed) for mode, n, k, seed, _ in bench.instances(args)]
    assert got == [("measured", 47, 30, 3030), ("measured", 47, 31, 3031)]
    assert bench.markers("benchmarks/plan_anytime.jsonl") == (bench.BEGIN, bench.END)
    begin, end = bench.markers("benchmarks/plan_anytime_heldout.jsonl")
    assert "plan_anytime_heldout" in begin and "plan_anytime_heldout" in end and begin != bench.BEGIN
    with pytest.raises(SystemExit):
        bench.main(["--results", "x.jsonl", "--first-instance", "-1"])


def test_write_keeps_the_hand_written_notes(bench, tmp_path):
    """--report --write renders the section anew but keeps the text between the notes markers
    (after the "Rendered with" paragraph); a section without them gets none."""
    import json
    results = tmp_path / "plan_anytime.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    out = tmp_path / "RESULTS.md"
    argv = ["--results", str(results), "--report", "--write", str(out)]
    assert bench.main(argv) in (0, None)
    first = out.read_text()
    assert bench.NOTES_BEGIN not in first and "| measured | 47 | 1 | 3 |" in first
    note = "Every Hulk row is from a run of the same code (hand-written)."
    out.write_text(first.replace("\n| mode | machines |", f"\n{bench.NOTES_BEGIN}\n{note}\n{bench.NOTES_END}\n\n"
                                                         "| mode | machines |", 1) + "\nAfter the section.\n")
    assert bench.main(argv) in (0, None)
    again = out.read_text()
    assert again.count(note) == 1 and again.endswith("After the section.\n")
    assert again.index("Rendered with") < again.index(note) < again.index("| mode | machines |")


def _speed_rows(hulk_outside, search_outside, n=5000):
    rows = []
    for k in range(3):
        for planner, outside in (("hulk", hulk_outside), ("search", search_outside)):
            r = _row("paper4", k, planner, 1.0, 100.0, n=n)
            r["wall_s"] = r["planning_s"] + outside * (1 + 0.01 * k)   # medians: outside * 1.01
            rows.append(r)
    return rows


def test_speed_check_warns_when_hulk_and_search_ran_at_different_speeds(bench):
    same = bench.speed_lines(_speed_rows(0.48, 0.47))
    assert same[-1] == "| measured | 5,000 | 0.48 | 0.47 | 1.02 | same speed |"
    slower = bench.speed_lines(_speed_rows(0.70, 0.47))
    assert slower[-1].startswith("| measured | 5,000 | 0.71 | 0.47 | 1.49 | **different machine speeds")
    faster = bench.speed_lines(_speed_rows(0.30, 0.47))
    assert "different machine speeds" in faster[-1]
    assert any("different machine speeds" in line for line in bench.report_lines(_speed_rows(0.70, 0.47), [], 60.0))


def test_speed_check_leaves_milliseconds_alone(bench):
    # 0.8 ms against 4 ms outside the budget (paper-fitted 1,000 machines): a ratio of 0.2, no warning
    assert bench.speed_lines(_speed_rows(0.0008, 0.004))[-1].endswith("| same speed |")
    assert "different machine speeds" in bench.speed_lines(_speed_rows(0.001, 0.04))[-1]  # 39 ms apart


def test_speed_check_judges_the_rows_the_tables_use(bench):
    # slow Hulk rows, then the same instances rerun at Search's speed: the later rows replace them
    rows = _speed_rows(0.70, 0.47) + [r for r in _speed_rows(0.47, 0.47) if r["planner"] == "hulk"]
    assert bench.speed_lines(rows)[-1] == "| measured | 5,000 | 0.47 | 0.47 | 1.00 | same speed |"


def test_speed_check_skips_small_clusters_and_lone_planners(bench):
    assert bench.speed_lines(_speed_rows(0.70, 0.47, n=200)) == []
    assert bench.speed_lines([r for r in _speed_rows(0.70, 0.47) if r["planner"] == "hulk"]) == []


def test_report_takes_the_reference_budget_the_runs_used(bench, tmp_path, capsys):
    """Without --reference the report uses the metas' reference_s (a file planned with --reference 1
    renders its ratios over Search(1 s), not an empty table over 60 s); a reference no Search row
    has, or runs that disagree, stop with a message naming the budgets."""
    import json
    rows = [r for r in _rows() if r["budget_s"] != 60.0]
    results = tmp_path / "fresh.jsonl"
    meta = {"kind": "meta", "command": "x", "reference_s": 1.0}
    results.write_text("".join(json.dumps(r) + "\n" for r in [meta] + rows))
    assert bench.main(["--results", str(results), "--report"]) in (0, None)
    out = capsys.readouterr().out
    assert "Search(1 s)" in out and "| measured | 47 | 0.1 | 1 |" in out
    with pytest.raises(SystemExit, match=r"--reference 60: no Search plan has that budget \(Search's budgets: 0.1, 1\)"):
        bench.main(["--results", str(results), "--report", "--reference", "60"])
    results.write_text("".join(json.dumps(r) + "\n" for r in [meta, dict(meta, reference_s=3.0)] + rows))
    with pytest.raises(SystemExit, match=r"different reference budgets \(1 s, 3 s\)"):
        bench.main(["--results", str(results), "--report"])
    assert bench.main(["--results", str(results), "--report", "--reference", "1"]) in (0, None)


def test_rerun_table_counts_each_planner_against_itself(bench):
    """--rerun: the same planner, budget and instance in two runs, both directions; the
    Hulk(t) / Search(t) of each run beside it. By hand: Search 100 -> 110 (1.10 and 0.909),
    Hulk 90 -> 90 (1.0 twice); Hulk/Search run 1 0.9, run 2 90/110."""
    first = [_row("paper4", 0, "hulk", 1.0, 90.0), _row("paper4", 0, "search", 1.0, 100.0)]
    second = [_row("paper4", 0, "hulk", 1.0, 90.0), _row("paper4", 0, "search", 1.0, 110.0)]
    lines = bench.rerun_lines(first, second)
    row = [line for line in lines if line.startswith("| measured | 47 | 1 |")]
    assert row == ["| measured | 47 | 1 | 1.005 / 1.100 | 1 of 2 | 1.000 / 1.000 | 0 of 2 | 0.900, 0 of 1 | 0.818, 0 of 1 |"]
    assert lines[-1] == ("In all: Search against itself 1 of 2 ratios over 1.02x, Hulk against itself 0 of 2; "
                         "Hulk(t) / Search(t) 0 of 1 (run 1) and 0 of 1 (run 2).")
    assert bench.rerun_lines(first, []) == []
    with pytest.raises(SystemExit):
        bench.main(["--results", "x.jsonl", "--rerun", "y.jsonl"])  # --rerun goes with --report


def test_rerun_table_compares_each_planner_with_itself_on_the_seed_means(bench):
    """With several seeds per instance, the rerun table adds the ratio of each instance's
    geometric mean over its seeds between the runs. By hand: Search seeds 100, 100 -> 100, 121
    (gmean 100 -> 110: 1.10 and 1/1.10; the plans 1.0 twice, 1.21, 1/1.21: mean 1.009); Hulk only in
    the first run (a Search-only rerun, as --planners search gives): no ratio against itself ("-"),
    but run 1's Hulk(t) / Search(t), 0.95 and 0.99."""
    def seeded(planner, seed, makespan):
        return dict(_row("paper4", 0, planner, 1.0, makespan), seed=seed)
    first = [seeded("search", 0, 100.0), seeded("search", 1, 100.0), seeded("hulk", 0, 95.0), seeded("hulk", 1, 99.0)]
    second = [seeded("search", 0, 100.0), seeded("search", 1, 121.0)]
    lines = bench.rerun_lines(first, second)
    row = [line for line in lines if line.startswith("| measured | 47 | 1 |")]
    assert row == ["| measured | 47 | 1 | 1.009 / 1.210 | 1 of 4 | - | - | 0.990, 0 of 2 | - |"]
    assert lines[-1] == ("On each instance's geometric mean over its seeds (instances with two or more seeds in both "
                         "runs, both directions): Search against itself 1 of 2 over 1.02x (worst 1.100).")
    # one seed per instance: no such line
    assert not bench.rerun_lines(first[:1], second[:1])[-1].startswith("On each instance's")


def test_planners_option_runs_only_the_planners_named(bench, monkeypatch, tmp_path):
    """--planners search: Search at each budget and at the reference, no Hulk row."""
    planned = []

    class Plan:
        feasible, makespan_s, planning_s, notes = True, 3600.0, 0.01, []

    def fake_plan(cluster, jobs, planner, time_limit_s, seed, **kw):
        planned.append((planner, time_limit_s))
        return Plan()
    monkeypatch.setattr(bench.hp, "plan", fake_plan)
    monkeypatch.setattr(bench.hp, "default_planner", lambda: None)
    out = tmp_path / "r.jsonl"
    bench.main(["--results", str(out), "--no-bundled", "--instances", "1", "--budgets", "0.1,0.3", "--reference", "2",
                "--modes", "measured", "--sizes", "47", "--job-sets", "paper4", "--planners", "search"])
    assert planned == [("search", 2.0), ("search", 0.1), ("search", 0.3)]
    with pytest.raises(SystemExit):
        bench.main(["--results", str(out), "--planners", "greedy"])


def test_measured_regime_reaches_the_generator_and_one_file_holds_one_regime(bench, monkeypatch, tmp_path):
    """--measured-regime large-regions generates 4-GPU machines with throughput independent of
    RTT; the file's meta row names the regime, the report says it, and a run of the other
    regime into the same file is refused before planning."""
    import json
    generated, planned = [], []

    class Plan:
        feasible, makespan_s, planning_s, notes = True, 3600.0, 0.01, []

    def fake_plan(cluster, jobs, planner, time_limit_s, seed, **kw):
        planned.append(planner)
        return Plan()
    monkeypatch.setattr(bench.hp, "plan", fake_plan)
    monkeypatch.setattr(bench.hp, "default_planner", lambda: None)
    monkeypatch.setattr(bench.generate, "generate_cluster", lambda n, seed, mode, **kw: generated.append(kw) or [0] * n)
    out = tmp_path / "r.jsonl"
    common = ["--results", str(out), "--no-bundled", "--instances", "1", "--budgets", "0.1", "--reference", "2",
              "--modes", "measured", "--sizes", "47", "--job-sets", "Llama-2"]
    bench.main(common + ["--measured-regime", "large-regions"])
    assert generated == [{"gpus_per_machine": 4, "rtt_coupling": 0.0}] and len(planned) == 3
    meta = [json.loads(line) for line in out.read_text().splitlines() if '"meta"' in line]
    assert [m["measured_regime"] for m in meta] == ["large-regions"]
    with pytest.raises(SystemExit, match="holds runs of --measured-regime large-regions"):
        bench.main(common)  # the default regime, small-regions
    assert len(planned) == 3
    md = tmp_path / "RESULTS.md"
    bench.main(["--results", str(out), "--report", "--write", str(md)])
    text = md.read_text()
    assert "in the regime `large-regions` (the generator's Dirichlet region sizes" in text
    assert "Job sets: Llama-2 (Llama-2-70B, Llama-2-13B, Llama-2-7B)." in text


def test_plan_story_reads_the_source_and_the_moves_from_the_notes(bench):
    search = ["search: local search from the best of 8 starts, the each job on the fewest machines start and "
              "from Hulk's, 324 local-search moves", "compute of OPT-175B: FLOP model"]
    assert bench.plan_story(search) == {"source": "each job on the fewest machines", "moves": 324}
    one_walk = ["search: local search from the best of 7 starts (no time left for 1 more), the Hulk start, "
                "0 local-search moves"]
    assert bench.plan_story(one_walk) == {"source": "Hulk", "moves": 0}
    as_is = ["search: Hulk's plan (a start, with jobs waiting for others) beat every concurrent assignment found; "
             "returned as is"] + one_walk
    assert bench.plan_story(as_is) == {"source": "Hulk's plan (returned as is)", "moves": 0}
    hulk = ["hulk: best candidate before refinement: the closest machines by send time (Search's greedy start, "
            "bandwidth-aware) (16.65 h); others: the greedy rule's groups (Algorithm 1, growth) 46.28 h",
            "hulk: refinement (107 local-search moves from Search's best start, \"each job on the fewest machines\", "
            "...) found nothing shorter"]
    assert bench.plan_story(hulk) == {"source": "the closest machines by send time (Search's greedy start, "
                                                "bandwidth-aware)", "moves": 107, "refined": False}
    assert bench.plan_story(["system a: data parallel"]) == {}


def test_seed_table_compares_the_planners_on_each_instances_mean_over_seeds(bench):
    """Two seeds of one instance. By hand: Search 100 (seed 0) and 121 (seed 1): across seeds
    1.21; Hulk 110 and 100: 1.1; per seed Hulk/Search 1.1 (over 1.02) and 100/121 = 0.826;
    Search seed to seed 121/100 (over) and 100/121;
    on the geometric means sqrt(110 * 100) / sqrt(100 * 121) = 0.953 (not over)."""
    rows = []
    for seed, (h, s) in enumerate([(110.0, 100.0), (100.0, 121.0)]):
        rows += [dict(_row("paper4", 0, "hulk", 1.0, h), seed=seed), dict(_row("paper4", 0, "search", 1.0, s), seed=seed)]
    lines = bench.seed_lines(rows)
    row = [line for line in lines if line.startswith("| measured | 47 | 1 |")]
    assert row == ["| measured | 47 | 1 | 2 | 1 | 1.210 / 1.210 | 1 of 1 | 1.100 / 1.100 | 1 of 1 | 1 of 2 | 1 of 2 | "
                   "0.953 / 0.953 | 0 of 1 |"]
    assert lines[-1] == ("In all: Hulk(t) over 1.02x Search(t) in 1 of 2 plans seed by seed, in 0 of 1 instances "
                         "on the means over the seeds; Search over 1.02x its own plan of another seed in 1 of 2 "
                         "ordered pairs of seeds.")
    # one seed per instance, or a seed without a plan for one planner: no table
    assert bench.seed_lines([r for r in rows if r["seed"] == 0]) == []
    assert bench.seed_lines(rows[:3] + [dict(rows[3], feasible=False, makespan_s=None)]) == []
    # the report renders it
    assert any(line.startswith("Seed spread") for line in bench.report_lines(rows, [], 1.0))
