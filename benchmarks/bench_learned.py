"""Evaluation of the learned planner on held-out generated clusters and the bundled 47-server cluster.

For each size, fresh clusters (``hulk.plan.generate``, seeds disjoint from the training set's) and
job sets (``hulk.training.draw_jobs``) are planned by:

- Search (the teacher), time-bounded;
- Hulk: learned GNN -> Algorithm 1 -> partition -> short refinement (``hulk.plan.plan``);
- ablations: Hulk with the region heuristic instead of the GNN, the GNN without the
  refinement, and the greedy baseline (``hulk.plan.rules.greedy_classes``: each job on the fastest machines that
  cover its memory, in one region where possible) through the same Algorithm 1 and partition;
- Systems A, B and C.

It reports node accuracy of the GNN against the teacher's labels on the same instance, the
makespan of Hulk relative to Search and to the best feasible of A/B/C, and planning wall times.
Then it times GNN inference (encoding + forward pass) on a 100,000-machine cluster on the CPU.

    cd /tmp && python /path/to/hulk/benchmarks/bench_learned.py [--sizes 47,200,1000,5000]
        [--instances 3] [--model PATH] [--out RESULTS.md]
"""

from __future__ import annotations

import argparse
import datetime
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np

import hulk
from hulk.plan import cluster_spec, generate, learned, models, planners, training
from hulk.plan.rules import greedy_classes
from results_file import write_section  # benchmarks/ is on sys.path when run as a script

BEGIN, END = "<!-- bench_learned:begin -->", "<!-- bench_learned:end -->"
EVAL_SEED = 1_000_003  # disjoint from training seeds (training.sample_specs uses default_rng([seed, i]))


def search_time(n: int) -> float:
    """The teacher's budget at evaluation: 10 s up to 1,000 machines, then growing with size."""
    return 10.0 if n <= 1000 else 30.0 if n <= 5000 else 60.0


def instances(n: int, count: int):
    out = []
    for i in range(count):
        rng = np.random.default_rng([EVAL_SEED, n, i])
        c = generate.generate_cluster(n, seed=int(rng.integers(0, 2**31 - 1)))
        jobs = training.draw_jobs(rng, c.memory_gb.sum() * 1e9)
        tries = 0
        while not jobs and tries < 20:  # a tiny cluster can miss every job; draw again
            jobs, tries = training.draw_jobs(rng, c.memory_gb.sum() * 1e9), tries + 1
        out.append((c, jobs))
    return out


def evaluate(cluster, jobs, model, t_search: float, seed: int) -> dict:
    """Every planner and ablation on one instance: makespans (inf when infeasible) and wall times."""
    r = {"jobs": len(jobs)}
    s = planners.plan(cluster, jobs, "search", time_limit_s=t_search, seed=seed)
    t0 = time.perf_counter()
    h = planners.plan(cluster, jobs, "hulk", model=model, time_limit_s=t_search, seed=seed)
    r["hulk_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    slots = model.predict_slots(cluster, jobs)
    r["gnn_s"] = time.perf_counter() - t0
    hh = planners.plan(cluster, jobs, "hulk", model="heuristic", time_limit_s=t_search, seed=seed)
    raw = planners.plan(cluster, jobs, "hulk", classes=model.classify(cluster, jobs, keep_better_of_rule=False),
                       seed=seed, refine_iterations=0, grow_rounds=0)
    greedy = greedy_classes(cluster, jobs)
    g = planners.plan(cluster, jobs, "hulk", classes=greedy, seed=seed, refine_iterations=0, grow_rounds=0)
    gg = planners.plan(cluster, jobs, "hulk", classes=greedy, seed=seed, refine_iterations=0)
    t0 = time.perf_counter()
    gr = planners.plan(cluster, jobs, "hulk", classes=greedy, time_limit_s=t_search, seed=seed)
    r["greedy_ref_s"] = time.perf_counter() - t0
    nognn = planners.plan(cluster, jobs, "hulk", model="greedy", time_limit_s=t_search, seed=seed)
    abc = [planners.plan(cluster, jobs, x) for x in ("a", "b", "c")]
    teacher = training.labels_from_plan(s, jobs)
    labelled = teacher >= 0
    r["acc"] = float((slots[labelled] == teacher[labelled]).mean()) if labelled.any() else float("nan")
    for key, p in (("search", s), ("hulk", h), ("heur", hh), ("raw", raw), ("greedy", g), ("greedy_grow", gg),
                   ("greedy_ref", gr), ("nognn", nognn)):
        r[key + "_makespan"] = p.makespan_s if p.feasible and not p.sequential else math.inf
    r["abc_best"] = min(p.makespan_s for p in abc)
    r["search_s"], r["heur_s"] = s.planning_s, hh.planning_s
    return r


def fmt_ratio(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"{x:.3f}"


def summarise(label: str, n: int, rs: list) -> tuple:
    def ratios(key, ref="search_makespan"):
        return [r[key] / r[ref] for r in rs if math.isfinite(r[key]) and math.isfinite(r[ref]) and r[ref] > 0]

    def mean_worst(key):
        v = ratios(key)
        return f"{np.mean(v):.3f} ({max(v):.3f})" if v else "n/a"
    vs_abc = [1 - r["hulk_makespan"] / r["abc_best"] for r in rs if math.isfinite(r["abc_best"])]
    abc_none = sum(1 for r in rs if not math.isfinite(r["abc_best"]))
    acc = [r["acc"] for r in rs if math.isfinite(r["acc"])]
    speed = [r["search_s"] / r["hulk_s"] for r in rs]
    infeasible = {k: sum(1 for r in rs if not math.isfinite(r[k + "_makespan"])) for k in ("hulk", "search")}
    better = sum(1 for r in rs if r["raw_makespan"] < r["greedy_makespan"] * (1 - 1e-3))
    worse = sum(1 for r in rs if r["raw_makespan"] > r["greedy_makespan"] * (1 + 1e-3))
    gnn_won = sum(1 for r in rs if r["hulk_makespan"] < r["nognn_makespan"] * (1 - 1e-3))
    gnn_lost = sum(1 for r in rs if r["hulk_makespan"] > r["nognn_makespan"] * (1 + 1e-3))
    row = (f"| {label} | {len(rs)} | {np.mean([r['jobs'] for r in rs]):.1f} | "
           f"{np.mean(acc):.3f} | **{mean_worst('hulk_makespan')}** | {mean_worst('nognn_makespan')} | "
           f"{gnn_won} / {gnn_lost} | {mean_worst('raw_makespan')} | "
           f"{mean_worst('greedy_makespan')} | {better} / {worse} | {mean_worst('greedy_grow_makespan')} | "
           f"{mean_worst('greedy_ref_makespan')} | "
           f"{mean_worst('heur_makespan')} | "
           + (f"{100 * np.mean(vs_abc):.0f}% (min {100 * min(vs_abc):.0f}%)" if vs_abc else "none can run")
           + (f"; none can run on {abc_none}" if vs_abc and abc_none else "")
           + f" | {infeasible['hulk']} / {infeasible['search']} | {np.mean([r['search_s'] for r in rs]):.1f} | "
           f"{np.mean([r['hulk_s'] for r in rs]):.3f} ({np.mean([r['gnn_s'] for r in rs]):.3f}) | "
           f"{np.mean(speed):.0f}x (min {min(speed):.0f}x) |")
    return row, dict(label=label, n=n, hulk_vs_search=ratios("hulk_makespan"), vs_abc=vs_abc, acc=acc, speed=speed)


def inference_figures(model, n: int, mode: str = "paper") -> str:
    """Encoding and forward-pass times of the learned planner on a generated n-machine cluster
    (the paper's 6 jobs; ``mode`` "measured" uses bench_plan_anytime's measured regime): on
    the CPU, and on the GPU when one is usable (the SIMT build's simulator is no GPU and is left
    out). The encoding is timed on a new cluster object and again on the same one (what a plan
    after the first pays); each forward pass after one warm-up."""
    from bench_plan_anytime import measured_regime  # benchmarks/ is on sys.path when run as a script
    kw = measured_regime(n, 0) if mode == "measured" else {}
    big = generate.generate_cluster(n, seed=EVAL_SEED, mode=mode, **kw)
    jobs = list(models.PAPER_JOBS_6)
    t0 = time.perf_counter()
    g = model.encode(big, jobs)
    t_enc = time.perf_counter() - t0
    t0 = time.perf_counter()
    model.encode(big, jobs)
    t_again = time.perf_counter() - t0
    times = {}
    for device in ["cpu"] + (["cuda"] if hulk.cuda_available() else []):
        model.gnn.to(device)
        model.gnn.predict(g)  # warm: uploads the graph's structure once
        t0 = time.perf_counter()
        model.gnn.predict(g)
        times[device] = time.perf_counter() - t0
    model.gnn.to("cpu")
    gpu = (f", GPU ({_gpu_name()}) {times['cuda']:.3f} s" if "cuda" in times else
           ". No GPU figure: no GPU was usable in this run (benchmarks/gpu_check.sh runs this on one)")
    where = "" if mode == "paper" else f", {mode} mode"
    return (f"GNN inference on a generated {n:,}-machine cluster{where} ({g.num_edges:,} directed edges, the paper's 6 "
            f"jobs): encoding {t_enc:.3f} s (CPU; {t_again:.3f} s again on the same cluster object); forward pass CPU "
            f"({hulk.get_num_threads()} threads) {times['cpu']:.3f} s{gpu}.")


def _gpu_name() -> str:
    try:
        import torch
        return torch.cuda.get_device_name(0)
    except Exception:  # torch is optional: only the name is lost
        return "CUDA device"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="47,200,1000,5000,20000")
    ap.add_argument("--instances", type=int, default=5)
    ap.add_argument("--model", default=None, help="learned planner (default: the shipped one)")
    ap.add_argument("--inference-n", type=int, default=100_000)
    ap.add_argument("--inference-only", action="store_true",
                    help="only time GNN inference (CPU, and the GPU when one is usable) and print it")
    ap.add_argument("--inference-mode", choices=("paper", "measured"), default="paper",
                    help="the generator's mode for the inference cluster (default paper)")
    ap.add_argument("--out", default=str(Path(__file__).with_name("RESULTS.md")))
    args = ap.parse_args(argv)
    model = learned.LearnedPlanner.load(args.model) if args.model else learned.default_planner()
    if args.inference_only:
        print(inference_figures(model, args.inference_n, args.inference_mode))
        return 0
    t_all = time.perf_counter()
    rows, summary = [], []
    for n in [int(v) for v in args.sizes.split(",")]:
        rs = []
        for k, (c, jobs) in enumerate(instances(n, args.instances)):
            r = evaluate(c, jobs, model, search_time(n), seed=k)
            rs.append(r)
            print(f"n={n} #{k}: jobs {len(jobs)} acc {r['acc']:.3f} Search {r['search_makespan'] / 3600:.1f} h, "
                  f"over Search: hulk {r['hulk_makespan'] / r['search_makespan']:.3f} raw "
                  f"{r['raw_makespan'] / r['search_makespan']:.3f} greedy {r['greedy_makespan'] / r['search_makespan']:.3f} "
                  f"greedy+grow {r['greedy_grow_makespan'] / r['search_makespan']:.3f} greedy+grow+ref {r['greedy_ref_makespan'] / r['search_makespan']:.3f} nognn {r['nognn_makespan'] / r['search_makespan']:.3f} heur "
                  f"{r['heur_makespan'] / r['search_makespan']:.3f}; best ABC {r['abc_best'] / 3600:.1f} h; "
                  f"search {r['search_s']:.1f} s hulk {r['hulk_s']:.3f} s (gnn {r['gnn_s']:.3f})", flush=True)
        row, s = summarise(f"generated, {n:,} machines", n, rs)
        rows.append(row)
        summary.append(s)
    spec = cluster_spec.hulk47_spec()
    r = evaluate(spec, list(models.PAPER_JOBS_4), model, 10.0, seed=0)
    print(f"hulk47 paper4: acc {r['acc']:.3f} hulk/search {r['hulk_makespan'] / r['search_makespan']:.3f}", flush=True)
    row, s = summarise("bundled 47-server cluster, paper's 4 jobs", 47, [r])
    rows.append(row)
    summary.append(s)

    inference = inference_figures(model, args.inference_n, args.inference_mode)
    print(inference, flush=True)

    cmd = "cd /tmp && python " + " ".join([str(Path(sys.argv[0]).resolve())] + (argv or sys.argv[1:]))
    info = model.info
    text = [BEGIN, "## Learned planner: held-out clusters (`benchmarks/bench_learned.py`)", "",
            f"Command: `{cmd}`", "",
            f"Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; whole run {time.perf_counter() - t_all:.0f} s. "
            f"Machine: {platform.processor() or platform.machine()} (CPU only), hulk {hulk.__version__}, "
            f"{hulk.get_num_threads()} threads.", "",
            f"Model: `{args.model or 'the shipped model'}` (`{info.get('command', 'command unknown')}`; "
            f"{info.get('samples', '?')} labelled clusters of {info.get('sizes', '?')} machines, "
            f"{info.get('val', '?')} of them for validation, {info.get('train', '?')} training graphs per epoch "
            f"with the boost; validation plans {info.get('best_val_plan_ratio', float('nan')):.3f}x the "
            f"teacher's makespan, the greedy rule's {info.get('greedy_val_plan_ratio', float('nan')):.3f}x).", "",
            "Each generated row: fresh clusters and job sets (1-6 catalogue models, OPT-175B among them where it "
            "fits), seeds disjoint from training. Search (the teacher) gets 10 s up to 1,000 machines, 30 s at "
            "5,000 and 60 s at 20,000. Hulk = candidates planned and grown, the shortest kept: the greedy rule's groups, the GNN's best "
            "proposal (the rule's groups plus the machines the GNN adds, best of 4 probability thresholds), and "
            "up to 300 machines the region heuristic's groups; growth (`hulk.plan.rules.grow_bottleneck`: up to 8 rounds giving the job that finishes last 1-16 "
            "more of its regions' fastest idle machines while that shortens the plan); then at most 300 "
            "refinement moves (stopped after max(1 s, Search's budget / 100)). Ablations, each through the same "
            "Algorithm 1 and partition: Hulk without the GNN (`model=\"greedy\"`: the same candidates but the "
            "GNN's, the same growth and refinement); the GNN's groups alone (threshold 0, no choice, growth or refinement); the "
            "greedy rule (`hulk.plan.rules.greedy_classes`: each job on the fastest machines of one region that cover its memory) "
            "alone, with growth, and with growth and refinement; the region "
            "heuristic (`model=\"heuristic\"`) with growth and refinement. Ratios are makespan over Search's on the same instance, "
            "mean (worst), over instances where both are feasible; below 1 is better than Search. Node accuracy: "
            "the GNN's slot against the teacher's label. 'vs best A/B/C': makespan reduction against the best "
            "of Systems A/B/C that can run. 'No plan': instances where Hulk / Search found no feasible plan. "
            "Hulk's time includes encoding and GNN inference (in brackets).", "",
            "| clusters | instances | jobs (mean) | node accuracy | **Hulk / Search** | Hulk without the GNN | "
            "Hulk better / worse than without the GNN | GNN's groups alone | greedy alone | GNN's groups better / "
            "worse than greedy | greedy + growth | greedy + growth + refinement | region heuristic + growth + "
            "refinement | Hulk vs best A/B/C | no plan: Hulk / Search | Search s | Hulk s (GNN s) | "
            "Search time / Hulk time |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|", *rows, "",
            inference, "", END]
    write_section(args.out, BEGIN, END, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
