"""The planners (hulk.plan.planners: plan, Plan, repairs).

Checks are invariants of the documented semantics (csrc/plan/cost.h, planners.h, hulk/plan/planners.py),
so they hold for any seed and any time limit of the search: machines in range and disjoint across
concurrent jobs, layer bounds 0..L strictly increasing and equal across replicas, every stage within
its machine's memory, iteration = compute + communication, makespan = max finish (concurrent) or
sum (sequential), inf / None when a job cannot run.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import networkx as nx
import pytest

import hulk
from hulk.plan import cluster_spec, generate, models, planners, report, training


PAPER4 = list(models.PAPER_JOBS_4)


SEQUENTIAL = ("a", "b", "c")


TIME_LIMIT = 0.2


REL = 1e-9


def _strict_json(text):
    """json.loads refusing NaN / Infinity (not RFC 8259 JSON)."""
    def refuse(token):
        raise ValueError(f"not valid JSON: {token}")
    return json.loads(text, parse_constant=refuse)


def _assignment(p, n):
    """Job index per machine from plan.jobs[*]['machines'] (-1 = used by no job)."""
    out = [-1] * n
    for k, j in enumerate(p.jobs):
        for m in j["machines"]:
            out[m] = k
    return out


@pytest.fixture(scope="module")
def spec47():
    return cluster_spec.hulk47_spec()


@pytest.fixture(scope="module")
def plans4(spec47):
    """planner name -> Plan of the paper's 4 jobs on the bundled cluster."""
    return {name: planners.plan(spec47, PAPER4, name, time_limit_s=TIME_LIMIT, seed=0) for name in planners.PLANNERS}


@pytest.fixture(scope="module")
def plans3(spec47):
    """The paper's jobs without OPT-175B, on which every baseline is feasible."""
    jobs = ["T5-11B", "GPT-2 1.5B", "BERT-large"]
    return {name: planners.plan(spec47, jobs, name, time_limit_s=TIME_LIMIT, seed=0)
            for name in ("a", "b", "c", "search", "hulk")}


def _small_graph(missing_links=None):
    """6 machines in 2 regions, fully linked: 2 ms inside a region, 40 ms across."""
    G = nx.Graph() if missing_links is None else nx.Graph(missing_links=missing_links)
    for i in range(6):
        G.add_node(i, region="east" if i < 3 else "west", memory_gb=80.0 if i % 2 == 0 else 48.0,
                   capability=8.0 if i % 2 == 0 else 8.6)
    for i in range(6):
        for j in range(i + 1, 6):
            G.add_edge(i, j, latency_ms=2.0 if (i < 3) == (j < 3) else 40.0)
    return G


def _check_plan(p, spec, job_names):
    """Every documented invariant of a costed plan."""
    n = len(spec.machines)
    assert isinstance(p, planners.Plan)
    assert [j["job"] for j in p.jobs] == list(job_names)
    for j in p.jobs:
        assert all(isinstance(m, int) and 0 <= m < n for m in j["machines"]), (j["job"], j["machines"])
        assert len(set(j["machines"])) == len(j["machines"])
        if j["feasible"]:
            assert j["reason"] == ""
            assert j["machines"], j["job"]
            assert j["iteration_s"] == pytest.approx(j["compute_s"] + j["comm_s"], rel=REL)
            assert math.isfinite(j["iteration_s"]) and j["iteration_s"] > 0
            assert j["finish_s"] == pytest.approx(j["start_s"] + j["iterations"] * j["iteration_s"], rel=REL)
        else:
            assert isinstance(j["reason"], str) and j["reason"].strip(), j["job"]
            assert not math.isfinite(j["finish_s"])
        if j["strategy"] == "pipeline" and j["feasible"]:
            L = models.get(j["job"]).layers if j["job"] in models.catalogue() else None
            reps = j["replicas"]
            assert reps and len(j["stages"]) == len(reps)
            used = []
            for (machines, bounds), stages in zip(reps, j["stages"]):
                assert len(bounds) == len(machines) + 1
                assert bounds[0] == 0
                if L is not None:
                    assert bounds[-1] == L
                assert all(b2 > b1 for b1, b2 in zip(bounds, bounds[1:])), bounds
                assert bounds == reps[0][1], "replicas must share one layer split"
                assert len(stages) == len(machines)
                for s, st in enumerate(stages):
                    assert st["machine"] == machines[s]
                    assert tuple(st["layers"]) == (bounds[s], bounds[s + 1])
                    assert st["memory_gb"] <= st["capacity_gb"] * (1 + 1e-12), (j["job"], st)
                    assert st["capacity_gb"] == pytest.approx(spec.machines[st["machine"]]["memory_gb"])
                used += machines
            assert sorted(used) == sorted(j["machines"])
        if j["strategy"] == "tensor_parallel":
            assert sorted(j["tensor_group"]) == sorted(j["machines"])
    if p.sequential:
        prev = 0.0
        for j in p.jobs:
            if math.isfinite(prev):
                assert j["start_s"] == pytest.approx(prev, rel=REL)
            prev = j["finish_s"]
        if p.feasible:
            total = sum(j["iterations"] * j["iteration_s"] for j in p.jobs)
            assert p.makespan_s == pytest.approx(total, rel=1e-9)
    else:
        owner = {}
        for k, j in enumerate(p.jobs):
            for m in j["machines"]:
                assert m not in owner, f"machine {m} in jobs {owner[m]} and {k}"
                owner[m] = k
        if p.feasible:
            assert p.makespan_s == pytest.approx(max(j["finish_s"] for j in p.jobs), rel=REL)
            assert all(j["start_s"] >= 0 for j in p.jobs)
    assert p.feasible == all(j["feasible"] for j in p.jobs)
    if p.feasible:
        assert math.isfinite(p.makespan_s) and p.makespan_s > 0
    else:
        assert p.makespan_s == math.inf
        assert p.to_dict()["makespan_s"] is None
        assert p.notes, "an infeasible plan says why in its notes"
    assert p.planning_s >= 0
    _strict_json(json.dumps(p.to_dict(), allow_nan=False))


@pytest.mark.parametrize("name", planners.PLANNERS)
def test_plan_invariants_paper4(plans4, spec47, name):
    p = plans4[name]
    assert p.planner == name and p.title == planners.PLANNER_TITLES[name]
    assert p.sequential == (name in SEQUENTIAL)
    assert len(p.cluster.machines) == 47
    _check_plan(p, spec47, PAPER4)


@pytest.mark.parametrize("name", ["a", "b", "c", "search", "hulk"])
def test_plan_invariants_without_opt(plans3, spec47, name):
    p = plans3[name]
    assert p.feasible, p.notes
    _check_plan(p, spec47, ["T5-11B", "GPT-2 1.5B", "BERT-large"])


def test_concurrent_planners_feasible_on_paper4(plans4):
    assert plans4["search"].feasible, plans4["search"].notes
    assert plans4["hulk"].feasible, plans4["hulk"].notes


def test_search_not_worse_than_hulk_and_baselines(spec47, plans4, plans3):
    # Search is never worse than its starts, Hulk's plan (region heuristic, Algorithm 1) among
    # them. At this 0.2 s budget it is not always ahead of Hulk with its 300-move refinement
    # (a walk of its own); benchmarks/RESULTS.md compares them at 2 s and more.
    for plans in (plans4, plans3):
        s = plans["search"]
        assert s.feasible
        jobs = [j["job"] for j in s.jobs]
        own_start = planners.plan(spec47, jobs, "hulk", model="heuristic", refine_iterations=0)
        assert s.makespan_s <= own_start.makespan_s
        base = [plans[x].makespan_s for x in SEQUENTIAL if plans[x].feasible]
        if base:
            assert s.makespan_s <= min(base)
    # not a vacuous comparison: without OPT-175B every baseline runs
    assert all(plans3[x].feasible for x in SEQUENTIAL)


def test_sequential_makespan_is_sum_and_concurrent_is_max(plans3):
    for x in SEQUENTIAL:
        p = plans3[x]
        assert p.makespan_s == pytest.approx(sum(j["iterations"] * j["iteration_s"] for j in p.jobs), rel=1e-9)
        assert p.jobs[0]["start_s"] == 0
        assert p.jobs[-1]["finish_s"] == pytest.approx(p.makespan_s, rel=1e-9)
    for x in ("search", "hulk"):
        p = plans3[x]
        assert p.makespan_s == pytest.approx(max(j["finish_s"] for j in p.jobs), rel=1e-9)
        assert p.makespan_s < sum(j["iterations"] * j["iteration_s"] for j in p.jobs)


def test_opt175b_infeasible_under_system_a_with_reason(plans4):
    p = plans4["a"]
    opt = p.jobs[0]
    assert opt["job"] == "OPT-175B"
    assert opt["feasible"] is False
    assert "no machine fits the whole model" in opt["reason"]
    assert not p.feasible and p.makespan_s == math.inf
    assert any("OPT-175B" in n and "infeasible" in n for n in p.notes)
    # the other jobs are still planned, not hidden
    assert all(j["feasible"] for j in p.jobs[1:])
    d = p.to_dict()
    assert d["makespan_s"] is None and d["feasible"] is False
    assert d["jobs"][0]["reason"] == opt["reason"]
    table = report.plan_table(p)
    assert "infeasible" in table and "no machine fits the whole model" in table


def test_infeasible_job_finish_is_none_in_dict(plans4):
    d = plans4["table2"].to_dict()
    for j, raw in zip(d["jobs"], plans4["table2"].jobs):
        if not raw["feasible"]:
            assert j["finish_s"] is None


def test_hulk_plan_with_a_move_cap_is_deterministic(spec47):
    # Within a time budget Hulk refines until the clock says stop; a move cap (max_iterations,
    # or refine_iterations) makes it reproducible for a seed whatever the machine's speed.
    first, again = (planners.plan(spec47, PAPER4, "hulk", time_limit_s=60, max_iterations=60, seed=3) for _ in range(2))
    assert [j["machines"] for j in again.jobs] == [j["machines"] for j in first.jobs]
    assert again.makespan_s == first.makespan_s


def test_hulk_with_explicit_classes(spec47):
    classes = [k % 4 for k in range(47)]
    p = planners.plan(spec47, PAPER4, "hulk", classes=classes)
    _check_plan(p, spec47, PAPER4)


def test_assignment_marks_idle(plans4):
    p = plans4["search"]
    a = p.assignment()
    assert len(a) == 47
    for k, j in enumerate(p.jobs):
        assert all(a[m] == k for m in j["machines"])
    used = {m for j in p.jobs for m in j["machines"]}
    assert all(a[m] == -1 for m in range(47) if m not in used)


def test_without_smallest_hulk_job(plans4, spec47):
    p = plans4["hulk"]
    sizes = [len(j["machines"]) for j in p.jobs]
    k = sizes.index(min(sizes))
    m = p.jobs[k]["machines"][0]
    q = p.without(m, shorten=False)  # only the hit job changes (shortening: the test below)
    assert isinstance(q, planners.Plan) and q.planner == "hulk"
    assert len(q.cluster.machines) == 46 and len(spec47.machines) == 47
    assert q.feasible, q.notes
    assert isinstance(q.repair_s, float) and q.repair_s >= 0
    assert isinstance(q.moved, list) and all(0 <= x < 46 for x in q.moved)
    _check_plan(q, q.cluster, PAPER4)
    shift = lambda x: x - 1 if x > m else x  # noqa: E731
    for old, new in zip(p.jobs, q.jobs):
        if m not in old["machines"]:
            assert new["machines"] == [shift(x) for x in old["machines"]], old["job"]
    assert len(q.jobs[k]["machines"]) <= len(p.jobs[k]["machines"]) - 1 + len(q.moved)
    d = q.to_dict()
    assert d["moved"] == q.moved and d["repair_s"] == q.repair_s
    _strict_json(json.dumps(d, allow_nan=False))
    assert "repair_s" not in p.to_dict()
    # the original plan is untouched
    assert len(p.cluster.machines) == 47 and p.repair_s is None


@pytest.mark.parametrize("name", ["hulk", "table2"])  # deterministic planners
def test_without_moved_matches_assignment_change_bundled(plans4, name):
    p = plans4[name]
    for m in (0, 30, 46):
        q = p.without(m)
        old = _assignment(p, 47)
        del old[m]
        new = _assignment(q, 46)
        changed = [i for i in range(46) if old[i] != new[i]]
        assert sorted(q.moved) == changed, (m, q.moved, changed)


def _regions_graph():
    """A user's cluster: 4 regions x 6 identical 8-GPU A100 servers, links from region-level
    one-way latencies (half the RTT) at 5 Gbit/s between regions, 100 Gbit/s within."""
    rtt = {("Frankfurt", "Virginia"): 45, ("Frankfurt", "Tokyo"): 115, ("Frankfurt", "Sydney"): 140,
           ("Virginia", "Tokyo"): 75, ("Virginia", "Sydney"): 100, ("Tokyo", "Sydney"): 55}
    G = nx.Graph()
    for r in ("Frankfurt", "Virginia", "Tokyo", "Sydney"):
        for i in range(6):
            G.add_node(f"{r}-{i}", region=r, gpu="A100 80GB", gpus=8, memory_gb=640)
    nodes = list(G.nodes(data="region"))
    for a, (u, ru) in enumerate(nodes):
        for v, rv in nodes[a + 1:]:
            lat = 0.05 if ru == rv else rtt.get((ru, rv), rtt.get((rv, ru))) / 2
            G.add_edge(u, v, latency_ms=lat, bandwidth_gbps=100 if ru == rv else 5)
    return G


def test_without_shortens_a_repair_that_left_the_makespan_longer():
    spec = cluster_spec.from_networkx(_regions_graph())
    p = planners.plan(spec, PAPER4, "search", time_limit_s=600, max_iterations=1500, seed=0)
    assert p.feasible, p.notes
    shortened = 0
    for m in sorted({min(j["machines"]) for j in p.jobs}):  # each job loses one machine
        kept, q = p.without(m, shorten=False), p.without(m)
        assert kept.feasible and q.feasible
        _check_plan(q, q.cluster, PAPER4)
        assert q.makespan_s <= kept.makespan_s
        new = _assignment(q, 23)
        old = _assignment(p, 24)
        del old[m]
        assert sorted(q.moved) == [i for i in range(23) if old[i] != new[i]]
        if kept.makespan_s <= p.makespan_s:  # the repair did not lengthen the plan: nothing more moves
            assert q.moved == kept.moved and q.makespan_s == kept.makespan_s
        elif q.makespan_s < kept.makespan_s:
            shortened += 1
            assert any("of the job that finished last shortened the makespan" in n for n in q.notes)
    assert shortened >= 1  # T5-11B or a small job left on one server finishes last by far
    with pytest.raises(ValueError, match="shorten"):
        p.without(0, shorten="yes")


def test_with_machine_hulk(plans4):
    p = plans4["hulk"]
    machine = {"region": "Beijing", "memory_gb": 640, "capability": 8.0}
    links = [{"to": 0, "latency_ms": 1.0}, {"to": 1, "latency_ms": 2.0}, {"to": 20, "latency_ms": 50.0}]
    q = p.with_machine(machine, links=links, shorten=False)  # only the joining job changes
    assert len(q.cluster.machines) == 48
    new = q.cluster.machines[47]
    assert new["region"] == "Beijing" and new["memory_gb"] == 640 and new["capability"] == 8.0
    assert q.repair_s is not None and q.repair_s >= 0
    _check_plan(q, q.cluster, PAPER4)
    users = [k for k, j in enumerate(q.jobs) if 47 in j["machines"]]
    assert len(users) <= 1
    if users:
        assert 47 in q.moved
    else:
        assert 47 not in q.moved
    assert q.feasible
    # Not <= exactly: on this routed cluster the newcomer can become the lowest-latency relay of
    # a missing link with a narrower bandwidth, and repair_with recosts every job on the new
    # cluster, so a job whose machines did not change can get slower (OPT-175B by 0.015% with
    # Hulk's plan at 0.2 s). A known limit of routing by latency alone, left to its own issue.
    assert q.makespan_s <= p.makespan_s * (1 + 1e-3)
    for old, nj in zip(p.jobs, q.jobs):
        if 47 not in nj["machines"]:
            assert nj["machines"] == old["machines"]
    # With shortening (the default) machines may move on: never a longer plan, groups disjoint.
    r = p.with_machine(machine, links=links)
    assert r.makespan_s <= q.makespan_s
    _check_plan(r, r.cluster, PAPER4)
    with pytest.raises(ValueError, match="shorten"):
        p.with_machine(machine, links=links, shorten=1)


def test_with_machine_that_helps_nobody_stays_idle(plans4):
    p = plans4["hulk"]
    q = p.with_machine({"region": "Nowhere", "memory_gb": 8, "capability": 6.1}, [{"to": 0, "latency_ms": 900.0}])
    assert len(q.cluster.machines) == 48
    assert all(47 not in j["machines"] for j in q.jobs)
    assert q.moved == []
    assert [j["machines"] for j in q.jobs] == [j["machines"] for j in p.jobs]
    assert any("idle" in n for n in q.notes)


def test_with_machine_bad_link_is_an_error(plans4):
    p = plans4["hulk"]
    with pytest.raises(ValueError, match="99"):
        p.with_machine({"region": "X", "memory_gb": 80, "capability": 8.0}, [{"to": 99, "latency_ms": 1.0}])
    with pytest.raises(ValueError, match="latency_ms"):
        p.with_machine({"region": "X", "memory_gb": 80, "capability": 8.0}, [{"to": 0, "latency_ms": -1.0}])


def test_without_moved_lists_machines_a_repair_drops():
    """BUG: repair_without drops machines to idle without listing them in ``moved``.

    BERT-large alone on the 6-machine cluster: Hulk plans 2 replicas [0,1,2] and [3,4,5]. After
    machine 3 fails the repaired plan uses only [0,1,2]; old machines 4 and 5 (new 3 and 4) left
    the job for idle, yet ``moved`` is [] and the notes only say "machine 3 failed". ``moved`` is
    documented as the machines whose job changed (Plan.without docstring, planners.h Repair)."""
    p = planners.plan(_small_graph(), ["BERT-large"], "hulk", model="heuristic", refine_iterations=0)
    for failed in range(6):  # whichever machines the layout uses (it may leave some idle)
        q = p.without(failed)
        old = _assignment(p, 6)
        del old[failed]
        new = _assignment(q, 5)
        changed = [i for i in range(5) if old[i] != new[i]]
        assert sorted(q.moved) == changed, f"moved {q.moved}, but machines {changed} changed job ({q.notes})"


def test_with_machine_moved_lists_machines_a_repair_drops():
    """BUG: repair_with drops machines to idle without listing them in ``moved``.

    BERT-large alone on the 6-machine cluster (2 replicas over all 6 machines). A new A100 machine
    linked to machine 0 joins; the new plan uses [0, 1, 2, 6]: machines 3, 4, 5 became idle, yet
    ``moved`` is [6] and the notes say only "machine 6 joined job 0"."""
    p = planners.plan(_small_graph(), ["BERT-large"], "hulk", model="heuristic", refine_iterations=0)
    q = p.with_machine({"region": "east", "memory_gb": 80, "capability": 8.0}, [{"to": 0, "latency_ms": 0.5}])
    old = _assignment(p, 6) + [-1]
    new = _assignment(q, 7)
    changed = [i for i in range(7) if old[i] != new[i]]
    assert sorted(q.moved) == changed, f"moved {q.moved}, but machines {changed} changed job ({q.notes})"


def test_unknown_planner(spec47):
    with pytest.raises(ValueError, match="zzz"):
        planners.plan(spec47, PAPER4, "zzz")


def test_unknown_job_lists_known_names(spec47):
    with pytest.raises(ValueError) as e:
        planners.plan(spec47, ["nope"], "hulk")
    msg = str(e.value)
    assert "nope" in msg
    for name in models.catalogue():
        assert name in msg


@pytest.mark.parametrize("jobs", [["BERT-large", "BERT-large"], ["BERT-large", "bert large"]])
def test_duplicate_jobs(spec47, jobs):
    with pytest.raises(ValueError, match="once"):
        planners.plan(spec47, jobs, "hulk")


def test_no_jobs(spec47):
    with pytest.raises(ValueError):
        planners.plan(spec47, [], "hulk")


def test_job_of_wrong_type(spec47):
    with pytest.raises(TypeError):
        planners.plan(spec47, [3], "hulk")


@pytest.mark.parametrize("t", [0, -1, -0.5, float("nan"), "1", None])
def test_bad_time_limit(spec47, t):
    with pytest.raises(ValueError, match="time_limit_s"):
        planners.plan(spec47, ["BERT-large"], "search", time_limit_s=t)


@pytest.mark.parametrize("planner", ["search", "hulk"])
def test_a_budget_too_small_to_plan_still_gives_a_feasible_plan(planner):
    # A search start cut short by the clock used to report "infeasible: no machines assigned"
    # on large clusters with small budgets; the first start now always runs to its end.
    c = generate.generate_cluster(3000, seed=1)
    p = planners.plan(c, models.PAPER_JOBS_4, planner, time_limit_s=1e-9)
    assert p.feasible, [j.get("reason") for j in p.jobs]
    if planner == "search":
        assert "the time limit (1e-09 s) was shorter than the first start" in p.notes[0]


def test_infinite_time_limit_is_rejected_not_a_hang(tmp_path):
    """BUG: time_limit_s=inf passes the ``> 0`` check and the search never stops (so does
    ``hulk plan --time-limit inf``). Run in a child process so that the hang cannot stall the suite."""
    code = ("from hulk.plan import planners, cluster_spec\n"
            "try:\n"
            "    planners.plan(cluster_spec.hulk47_spec(), ['BERT-large'], 'search', time_limit_s=float('inf'))\n"
            "    print('RETURNED')\n"
            "except ValueError as e:\n"
            "    print('VALUEERROR', e)\n")
    import os
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(hulk.__file__))))  # this hulk
    try:
        r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=8,
                           env=env)
    except subprocess.TimeoutExpired:
        pytest.fail("plan(..., 'search', time_limit_s=inf) did not return within 8 s (search runs forever)")
    assert "VALUEERROR" in r.stdout and "time_limit_s" in r.stdout, r.stdout + r.stderr


def test_negative_seed_is_a_clean_error_or_works(spec47):
    """BUG: seed=-1 reaches the binding (uint64) and raises pybind11's 'incompatible function
    arguments' TypeError; ``hulk plan --seed -1`` dies with a traceback."""
    try:
        p = planners.plan(spec47, ["BERT-large"], "search", time_limit_s=0.05, seed=-1)
    except ValueError as e:
        assert "seed" in str(e)
    else:
        assert p.feasible


def test_table2_needs_the_47_server_cluster(spec47):
    with pytest.raises(ValueError, match="47"):
        planners.plan(spec47.without(0), PAPER4, "table2")
    with pytest.raises(ValueError, match="table2"):
        planners.plan(_small_graph(), ["BERT-large"], "table2")
    with pytest.raises(ValueError, match="missing"):
        planners.plan(spec47, ["BERT-large"], "table2")


@pytest.mark.parametrize("bad", [42, [1, 2], None, 3.5])
def test_cluster_of_wrong_type(bad):
    with pytest.raises(TypeError, match="cluster"):
        planners.plan(bad, PAPER4, "hulk")


@pytest.mark.parametrize("m", [-1, 47, 100, 1.0, True, None, "3"])
def test_without_bad_index(plans4, m):
    with pytest.raises(ValueError, match="47"):
        plans4["hulk"].without(m)


@pytest.mark.parametrize("classes", [[0] * 46, [0] * 48, [5] * 47, [-2] + [0] * 46, []])
def test_classes_bad(spec47, classes):
    with pytest.raises(ValueError, match="classes"):
        planners.plan(spec47, PAPER4, "hulk", classes=classes)


def test_fractional_classes_are_rejected(spec47):
    """BUG (minor): classes are passed through int(), so 0.5 silently becomes job 0 and 1.9 job 1
    instead of raising, unlike every other input check of the package."""
    with pytest.raises(ValueError, match="classes"):
        planners.plan(spec47, PAPER4, "hulk", classes=[0.5] * 47)


@pytest.mark.parametrize("name", ["a", "b", "c", "search", "hulk"])
def test_networkx_cluster(name):
    G = _small_graph()
    p = planners.plan(G, ["BERT-large"], name, time_limit_s=TIME_LIMIT)
    spec = cluster_spec.from_networkx(G)
    assert len(p.cluster.machines) == 6
    assert p.feasible, p.notes
    _check_plan(p, spec, ["BERT-large"])


def test_custom_model_spec_as_job():
    tiny = models.from_dict(dict(name="tiny-lm", layers=4, hidden=256, seq_len=128, params=5e6, global_batch=32,
                                 micro_batches=4, iterations=10))
    G = _small_graph()
    spec = cluster_spec.from_networkx(G)
    for name in ("b", "search", "hulk"):
        p = planners.plan(G, [tiny, "BERT-large"], name, time_limit_s=TIME_LIMIT)
        assert [j["job"] for j in p.jobs] == ["tiny-lm", "BERT-large"]
        assert p.jobs[0]["iterations"] == 10
        assert p.feasible, p.notes
        _check_plan(p, spec, ["tiny-lm", "BERT-large"])
        for j in p.jobs[0]["replicas"]:
            assert j[1][-1] == 4


def test_cluster_from_json_path(tmp_path):
    path = tmp_path / "c.json"
    cluster_spec.from_networkx(_small_graph()).to_json(path)
    a = planners.plan(path, ["BERT-large"], "hulk")
    b = planners.plan(str(path), ["BERT-large"], "hulk")
    c = planners.plan(_small_graph(), ["BERT-large"], "hulk")
    assert a.makespan_s == b.makespan_s == pytest.approx(c.makespan_s, rel=1e-12)


def test_to_dict_is_strict_json_when_a_link_is_missing():
    """BUG: Plan.to_dict() maps inf to None only at the top level of a job; a stage's ``send_s`` is
    inf when two stages cannot talk (missing_links='forbid'), so json.dumps(allow_nan=False) fails,
    and ``hulk plan --json`` prints a truncated document, then 'Out of range float values'."""
    G = nx.Graph(missing_links="forbid")
    for i in range(4):
        G.add_node(i, region=f"r{i // 2}", memory_gb=80.0, capability=8.0)
    G.add_edge(0, 1, latency_ms=1.0)
    G.add_edge(2, 3, latency_ms=1.0)
    p = planners.plan(G, ["GPT-2 1.5B"], "b")
    assert not p.feasible and "cannot communicate" in p.jobs[0]["reason"]
    _strict_json(json.dumps(p.to_dict(), allow_nan=False))


JOBS3 = ["GPT-2 1.5B", "BERT-large", "T5-11B"]


@pytest.fixture(scope="module")
def small_cluster():
    return generate.generate_cluster(60, seed=4)


def test_hulk_keeps_the_shortest_of_its_candidates(small_cluster):
    from hulk.plan.rules import greedy_classes
    p = planners.plan(small_cluster, JOBS3, "hulk", refine_iterations=0)  # the shipped model
    assert p.notes[0].startswith("hulk: ") and "region heuristic's groups" in p.notes[0]
    for other in (planners.plan(small_cluster, JOBS3, "hulk", classes=greedy_classes(small_cluster, JOBS3),
                               refine_iterations=0),
                  planners.plan(small_cluster, JOBS3, "hulk", model="heuristic", refine_iterations=0)):
        assert p.makespan_s <= other.makespan_s
    without = planners.plan(small_cluster, JOBS3, "hulk", model="greedy", refine_iterations=0)
    assert "GNN" not in without.notes[0] and "region heuristic's groups" in without.notes[0]
    assert p.makespan_s <= without.makespan_s
    big = generate.generate_cluster(planners.HEURISTIC_CANDIDATE_MAX_MACHINES + 1, seed=4)
    notes = planners.plan(big, JOBS3, "hulk", refine_iterations=0).notes
    assert not any("region heuristic's groups" in n for n in notes)


def test_model_argument_validation(small_cluster):
    with pytest.raises(ValueError, match="model must be"):
        planners.plan(small_cluster, JOBS3, "hulk", model="bogus")
    with pytest.raises(TypeError, match="model must be"):
        planners.plan(small_cluster, JOBS3, "hulk", model=3.5)
    h = planners.plan(small_cluster, JOBS3, "hulk", model="heuristic")
    assert h.planner == "hulk"


def test_regional_and_explicit_clusters_plan_alike():
    # With every region pair linked, the explicit spec lists exactly the regional pair values.
    c = generate.generate_cluster(30, seed=9, missing_fraction=0.0)
    spec = c.to_spec()
    for name in ("a", "b", "c"):
        assert planners.plan(c, JOBS3, name).makespan_s == pytest.approx(planners.plan(spec, JOBS3, name).makespan_s,
                                                                         rel=1e-12)
    s1 = planners.plan(c, JOBS3, "search", time_limit_s=30, max_iterations=200)
    s2 = planners.plan(spec, JOBS3, "search", time_limit_s=30, max_iterations=200)
    assert s1.makespan_s == pytest.approx(s2.makespan_s, rel=1e-12)
    assert [j["machines"] for j in s1.jobs] == [j["machines"] for j in s2.jobs]


def test_plan_repair_on_a_regional_cluster(small_cluster):
    p = planners.plan(small_cluster, JOBS3, "search", time_limit_s=5, max_iterations=100)
    victim = p.jobs[0]["machines"][0]
    q = p.without(victim)
    assert len(q.cluster) == len(small_cluster) - 1
    assert q.feasible


def test_search_max_iterations_is_reproducible(small_cluster):
    a = planners.plan(small_cluster, JOBS3, "search", time_limit_s=30, max_iterations=150, seed=2)
    b = planners.plan(small_cluster, JOBS3, "search", time_limit_s=30, max_iterations=150, seed=2)
    assert a.makespan_s == b.makespan_s and "150 local-search moves" in a.notes[0]
    with pytest.raises(ValueError, match="max_iterations"):
        planners.plan(small_cluster, JOBS3, "search", max_iterations=-1)


def test_api_bounds_time_limit_and_seed():
    from hulk.plan import planners
    with pytest.raises(ValueError, match="time_limit_s"):
        planners.plan(cluster_spec.hulk47_spec(), ["BERT-large"], "search", time_limit_s=1e308)
    with pytest.raises(ValueError, match="seed"):
        planners.plan(cluster_spec.hulk47_spec(), ["BERT-large"], "search", seed=2**64)
    with pytest.raises(ValueError, match="count"):
        training.make_dataset(10**9)
