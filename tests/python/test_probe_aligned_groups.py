"""The aligned-groups probe (benchmarks/probe_aligned_groups.py): its group is replica-aligned
region by region and laid out feasibly, the whole plan keeps the largest job on it, and the run
reads its references from a results file and names a bad one."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from helpers import load_benchmark


@pytest.fixture(scope="module")
def probe():
    return load_benchmark("probe_aligned_groups")


@pytest.fixture(scope="module")
def cluster():
    from hulk.plan import generate
    spec = generate.generate_cluster(40, seed=3007, mode="measured", machines_per_region=(1, 8), gpus_per_machine=8,
                                     gpu_mix={"A100 80GB": 1})
    return spec, spec.to_core()


def test_candidates_take_a_multiple_of_d_from_each_region(probe, cluster):
    spec, core = cluster
    seen = Counter()
    for d, group in probe.candidates(spec, core):
        assert len(group) >= 8 and len(set(group)) == len(group)
        assert all(c % d == 0 for c in Counter(int(spec.region[i]) for i in group).values())
        seen[d] += 1
    assert all(seen[d] > 0 for d in (2, 3, 4))  # the alignment is exercised, not only D = 1


def test_the_group_is_the_fastest_candidate_and_keeps_the_largest_job(probe, cluster):
    from hulk import _core
    from hulk.plan import catalogue
    spec, core = cluster
    model = catalogue()["OPT-175B"].to_core()
    seconds, group = probe.aligned_group(spec, core, model)
    times = [p["iteration_s"] for p in (_core.plan.best_pipeline(core, model, g) for _, g in probe.candidates(spec, core))
             if p["feasible"]]
    assert group and seconds == min(times)
    plan = probe.plan_around(spec, core, ["BERT-large", "OPT-175B", "RoBERTa-large"], group)
    opt = next(j for j in plan["jobs"] if j["job"] == "OPT-175B")
    assert set(opt["machines"]) <= set(group)
    others = {i for j in plan["jobs"] if j["job"] != "OPT-175B" for i in j["machines"]}
    assert not others & set(group)


def test_run_reads_search_at_60_s_and_names_a_bad_file(probe, tmp_path, capsys):
    rows = tmp_path / "r.jsonl"
    base = {"kind": "plan", "mode": "measured", "n": 47, "instance": 7, "job_set": "OPT+RoBERTa+BERT", "seed": 0}
    rows.write_text("\n".join(json.dumps(dict(base, planner=p, budget_s=t, makespan_s=1e5))
                              for p, t in (("search", 60.0), ("hulk", 1.0))) + "\n")
    out = tmp_path / "RESULTS.md"
    assert probe.main(["--results", str(rows), "--write", str(out)]) == 0
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| measured 47 #7")]
    assert len(table) == 1 and "| 1.000 |" in table[0]  # Hulk(1 s) / Search(60 s) from the file
    assert probe.BEGIN in out.read_text()
    with pytest.raises(SystemExit):
        probe.main(["--results", str(tmp_path / "missing.jsonl")])
