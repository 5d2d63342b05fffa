"""Evaluation of the learned planner on held-out generated clusters and the bundled 47-server cluster.

For each size, fresh clusters (``hulk.generate``, seeds disjoint from the training set's) and
job sets (``hulk.learn.draw_jobs``) are planned by:

- Search (the teacher), time-bounded;
- Hulk: learned GNN -> Algorithm 1 -> partition -> short refinement (``hulk.planner.plan``);
- ablations: Hulk with the region heuristic instead of the GNN, the GNN without the
  refinement, and the greedy baseline (``hulk.greedy``: each job on the fastest machines that
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
from hulk import cluster_spec, generate, learn, models, planner
from hulk.greedy import greedy_classes
from results_file import write_section  # benchmarks/ is on sys.path when run as a script

BEGIN, END = "<!-- bench_learned:begin -->", "<!-- bench_learned:end -->"
EVAL_SEED = 1_000_003  # disjoint from training seeds (learn.sample_specs uses default_rng([seed, i]))


def search_time(n: int) -> float:
    """The teacher's budget at evaluation: 10 s up to 1,000 machines, then growing with size."""
    return 10.0 if n <= 1000 else 30.0 if n <= 5000 else 60.0


def instances(n: int, count: int):
    out = []
    for i in range(count):
        rng = np.random.default_rng([EVAL_SEED, n, i])
        c = generate.generate_cluster(n, seed=int(rng.integers(0, 2**31 - 1)))
        jobs = learn.draw_jobs(rng, c.memory_gb.sum() * 1e9)
        tries = 0
        while not jobs and tries < 20:  # a tiny cluster can miss every job; draw again
            jobs, tries = learn.draw_jobs(rng, c.memory_gb.sum() * 1e9), tries + 1
        out.append((c, jobs))
    return out


def evaluate(cluster, jobs, model, t_search: float, seed: int, with_search: bool = True) -> dict:
    r = {}
    if not with_search:  # Hulk and Systems A/B/C only
        t0 = time.perf_counter()
        h = planner.plan(cluster, jobs, "hulk", model=model, time_limit_s=t_search, seed=seed)
        r["hulk_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        model.predict_slots(cluster, jobs)
        r["gnn_s"] = time.perf_counter() - t0
        r["hulk_makespan"] = h.makespan_s
        r["abc_best"] = min(planner.plan(cluster, jobs, x).makespan_s for x in ("a", "b", "c"))
        r["jobs"] = len(jobs)
        return r
    s = planner.plan(cluster, jobs, "search", time_limit_s=t_search, seed=seed)
    t0 = time.perf_counter()
    h = planner.plan(cluster, jobs, "hulk", model=model, time_limit_s=t_search, seed=seed)
    r["hulk_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    slots = model.predict_slots(cluster, jobs)
    r["gnn_s"] = time.perf_counter() - t0
    hh = planner.plan(cluster, jobs, "hulk", model="heuristic", time_limit_s=t_search, seed=seed)
    raw = planner.plan(cluster, jobs, "hulk", model=model, seed=seed, refine_iterations=0)
    greedy = planner.plan(cluster, jobs, "hulk", classes=greedy_classes(cluster, jobs), seed=seed,
                          refine_iterations=0)
    abc = [planner.plan(cluster, jobs, x) for x in ("a", "b", "c")]
    teacher = learn.labels_from_plan(s, jobs)
    labelled = teacher >= 0
    r["acc"] = float((slots[labelled] == teacher[labelled]).mean()) if labelled.any() else float("nan")
    r["search_makespan"], r["hulk_makespan"], r["heur_makespan"] = s.makespan_s, h.makespan_s, hh.makespan_s
    r["raw_makespan"], r["greedy_makespan"] = raw.makespan_s, greedy.makespan_s
    r["abc_best"] = min(p.makespan_s for p in abc)
    r["search_s"], r["heur_s"] = s.planning_s, hh.planning_s
    r["jobs"] = len(jobs)
    return r


def fmt_ratio(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"{x:.3f}"


def summarise(label: str, n: int, rs: list) -> tuple:
    def ratios(key, ref):
        return [r[key] / r[ref] for r in rs if math.isfinite(r[key]) and math.isfinite(r[ref]) and r[ref] > 0]
    hs, hh = ratios("hulk_makespan", "search_makespan"), ratios("heur_makespan", "search_makespan")
    raw, greedy = ratios("raw_makespan", "search_makespan"), ratios("greedy_makespan", "search_makespan")
    vs_abc = [1 - r["hulk_makespan"] / r["abc_best"] for r in rs if math.isfinite(r["abc_best"])]
    infeasible_abc = sum(1 for r in rs if not math.isfinite(r["abc_best"]))
    acc = [r["acc"] for r in rs if math.isfinite(r["acc"])]
    speed = [r["search_s"] / r["hulk_s"] for r in rs]
    row = (f"| {label} | {len(rs)} | {np.mean([r['jobs'] for r in rs]):.1f} | "
           f"{np.mean(acc):.3f} | {fmt_ratio(np.mean(hs)) if hs else 'n/a'} "
           f"({fmt_ratio(max(hs)) if hs else 'n/a'}) | "
           f"{fmt_ratio(np.mean(hh)) if hh else 'n/a'} | {fmt_ratio(np.mean(raw)) if raw else 'n/a'} | "
           f"{fmt_ratio(np.mean(greedy)) if greedy else 'n/a'} ({fmt_ratio(max(greedy)) if greedy else 'n/a'}) | "
           + (f"{100 * np.mean(vs_abc):.0f}% (min {100 * min(vs_abc):.0f}%)" if vs_abc else "none feasible")
           + (f", {infeasible_abc} with none feasible" if vs_abc and infeasible_abc else "")
           + f" | {np.mean([r['search_s'] for r in rs]):.2f} | {np.mean([r['hulk_s'] for r in rs]):.3f} "
           f"({np.mean([r['gnn_s'] for r in rs]):.3f}) | {np.mean(speed):.0f}x |")
    return row, dict(label=label, n=n, hulk_vs_search=hs, vs_abc=vs_abc, acc=acc, speed=speed)


def inference_figures(model, n: int) -> str:
    """Encoding and forward-pass times of the learned planner on a generated n-machine cluster
    (the paper's 6 jobs): on the CPU, and on the GPU when one is usable (the SIMT build's
    simulator is no GPU and is left out). Each forward pass is timed after one warm-up."""
    big = generate.generate_cluster(n, seed=EVAL_SEED)
    jobs = list(models.PAPER_JOBS_6)
    t0 = time.perf_counter()
    g = model.encode(big, jobs)
    t_enc = time.perf_counter() - t0
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
    return (f"GNN inference on a generated {n:,}-machine cluster ({g.num_edges:,} directed edges, the paper's 6 "
            f"jobs): encoding {t_enc:.2f} s (CPU); forward pass CPU ({hulk.get_num_threads()} threads) "
            f"{times['cpu']:.3f} s{gpu}.")


def _gpu_name() -> str:
    try:
        import torch
        return torch.cuda.get_device_name(0)
    except Exception:  # torch is optional: only the name is lost
        return "CUDA device"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="47,200,1000,5000")
    ap.add_argument("--instances", type=int, default=3)
    ap.add_argument("--model", default=None, help="learned planner (default: the shipped one)")
    ap.add_argument("--inference-n", type=int, default=100_000)
    ap.add_argument("--inference-only", action="store_true",
                    help="only time GNN inference (CPU, and the GPU when one is usable) and print it")
    ap.add_argument("--search-max", type=int, default=1000,
                    help="largest size planned by Search and the heuristic ablation (their start phase does "
                         "not scale past a few thousand machines yet)")
    ap.add_argument("--out", default=str(Path(__file__).with_name("RESULTS.md")))
    args = ap.parse_args(argv)
    model = learn.LearnedPlanner.load(args.model) if args.model else learn.default_planner()
    if args.inference_only:
        print(inference_figures(model, args.inference_n))
        return 0
    t_all = time.perf_counter()
    rows, summary = [], []
    for n in [int(v) for v in args.sizes.split(",")]:
        rs = []
        if n > args.search_max:
            for k, (c, jobs) in enumerate(instances(n, args.instances)):
                r = evaluate(c, jobs, model, search_time(n), seed=k, with_search=False)
                rs.append(r)
                print(f"n={n} #{k}: jobs {len(jobs)} hulk {r['hulk_makespan'] / 3600:.1f} h best ABC "
                      f"{r['abc_best'] / 3600:.1f} h hulk {r['hulk_s']:.3f} s (gnn {r['gnn_s']:.3f})", flush=True)
            vs = [1 - r["hulk_makespan"] / r["abc_best"] for r in rs if math.isfinite(r["abc_best"])]
            feasible = sum(math.isfinite(r["hulk_makespan"]) for r in rs)
            rows.append(f"| generated, {n:,} machines (no Search, see below) | {len(rs)} | "
                        f"{np.mean([r['jobs'] for r in rs]):.1f} | - | - | - | - | - | "
                        + (f"{100 * np.mean(vs):.0f}% (min {100 * min(vs):.0f}%)" if vs else "none feasible")
                        + f"; Hulk feasible on {feasible} of {len(rs)} | - | {np.mean([r['hulk_s'] for r in rs]):.3f} "
                        f"({np.mean([r['gnn_s'] for r in rs]):.3f}) | - |")
            continue
        for k, (c, jobs) in enumerate(instances(n, args.instances)):
            r = evaluate(c, jobs, model, search_time(n), seed=k)
            rs.append(r)
            print(f"n={n} #{k}: jobs {len(jobs)} acc {r['acc']:.3f} hulk/search {r['hulk_makespan'] / r['search_makespan']:.3f} "
                  f"heur/search {r['heur_makespan'] / r['search_makespan']:.3f} best ABC {r['abc_best'] / 3600:.1f} h "
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

    inference = inference_figures(model, args.inference_n)
    print(inference, flush=True)

    cmd = "cd /tmp && python " + " ".join([str(Path(sys.argv[0]).resolve())] + (argv or sys.argv[1:]))
    info = model.info
    text = [BEGIN, "## Learned planner: held-out clusters (`benchmarks/bench_learned.py`)", "",
            f"Command: `{cmd}`", "",
            f"Date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; whole run {time.perf_counter() - t_all:.0f} s. "
            f"Machine: {platform.processor() or platform.machine()} (CPU only), hulk {hulk.__version__}, "
            f"{hulk.get_num_threads()} threads.", "",
            f"Model: `{args.model or 'the shipped model'}` ({info.get('command', 'command unknown')}; "
            f"{info.get('train', '?')} training clusters of {info.get('sizes', '?')} machines, best validation "
            f"accuracy {info.get('best_val_acc', float('nan')):.3f}).", "",
            "Each generated row: fresh clusters and job sets (1-6 catalogue models), seeds disjoint from "
            "training. Search (the teacher) gets 10 s up to 1,000 machines, 30 s at 5,000 and 60 s at 20,000. "
            "Hulk = GNN, Algorithm 1, partition, then at most 300 refinement moves (stopped after max(1 s, search "
            "budget / 100)). Node accuracy: GNN slot vs the teacher's label on the same instance. Makespan ratio: "
            "Hulk / Search, mean (worst); below 1 means Hulk is better. 'vs best A/B/C': makespan reduction "
            "against the best feasible of Systems A/B/C. Hulk time includes encoding and GNN inference "
            "(in brackets).", "",
            "| clusters | instances | jobs (mean) | node accuracy | Hulk / Search makespan | heuristic Hulk / Search | "
            "GNN without refinement / Search | greedy / Search | Hulk vs best A/B/C | Search s | Hulk s (GNN s) | "
            "Search time / Hulk time |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|", *rows, "",
            inference, "",
            f"Above {args.search_max:,} machines Search is not run: its start phase (greedy growth, "
            "contiguous blocks, whole-model machines, the heuristic Hulk plan) costs best_pipeline calls on "
            "groups of thousands of machines, O(G^2) each, and is not bounded by its time limit; on the first "
            "5,000-machine instance it ran 188 s against a 30 s budget and returned an infeasible plan. The "
            "heuristic Hulk ablation is left out there for the same reason.", "", END]
    write_section(args.out, BEGIN, END, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
