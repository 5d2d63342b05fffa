"""Speed of one job's layout (``best_pipeline``), the unit of work of every planner's local
search: Search and Hulk evaluate thousands of groups per second, so this time bounds how far
either gets within a budget.

Times ``_core.plan.best_pipeline`` on fixed random groups of generated measured-mode clusters,
per catalogue model, and once on the whole cluster (the group of System B's start, where the
chain's nearest-neighbour walk over thousands of machines is most of the work), and
fingerprints the layouts it returns. With ``--against DIR`` the same
groups are timed, in alternating runs, with another build of hulk (DIR holds its ``hulk``
package, e.g. a copy of an older checkout's ``hulk/`` with its built ``_core``): the ratio is
the speed-up, and equal fingerprints say both builds chose the same layouts. One more row per
size times building the C++ cluster from the generated one (``to_core``, which every plan call
on a new cluster object pays before its clock starts), fingerprinted by 2,000 send times.

    python benchmarks/bench_layout.py [--sizes 47,200,1000] [--groups 300] [--repeats 3]
        [--against /tmp/old --against-label "commit abc1234"] [--write benchmarks/RESULTS.md]

With ``--search-moves N`` it times whole plans instead, where the layouts' memo across calls
(``layout_memo.h``) pays: Search with N moves and no binding time limit (so the work is fixed)
on bench_plan_anytime's clusters (``--first-instance K --instances I`` per size and mode, and
the bundled cluster), both job sets, fingerprinting each plan's jobs:

    python benchmarks/bench_layout.py --search-moves 3000 --sizes 47,200,1000 --first-instance 517 \
        --instances 2 --against /tmp/old --write benchmarks/RESULTS.md
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import random
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_plan_anytime import machine, measured_regime  # noqa: E402
from results_file import write_section  # noqa: E402

BEGIN, END = "<!-- bench_layout:begin -->", "<!-- bench_layout:end -->"
SEARCH_BEGIN, SEARCH_END = "<!-- bench_layout_search:begin -->", "<!-- bench_layout_search:end -->"
MODELS = ("OPT-175B", "T5-11B", "GPT-2 1.5B", "BERT-large")
BUILD = "building the cluster (to_core)"  # a row per size: ms per build, and a fingerprint of send times
NEARBY = ", nearby regions"  # rows of groups made of whole regions near a random one, as planners' groups are
WHOLE = ", all machines"  # a row per model: one layout of the whole cluster (System B's group; the chain's walk dominates)
CLUSTER_SEED = 3900  # generate_cluster(n, seed=3900, mode="measured", ...): not a planner benchmark's cluster


def measure(sizes: list, groups: int) -> dict:
    """{size: {model: (ms per group, fingerprint), BUILD: (ms per build, fingerprint)}} for the hulk
    importable here."""
    from hulk import _core
    from hulk.plan import catalogue, generate
    out = {}
    for n in sizes:
        # the planner benchmark's measured regime (regions of 1-8 machines of 8 GPUs; 8-16 beyond 8,000)
        spec = generate.generate_cluster(n, seed=CLUSTER_SEED, mode="measured", **measured_regime(n, 0))
        start = time.perf_counter()
        core = spec.to_core()  # the C++ cluster every plan call starts from (built once per cluster object)
        build_ms = (time.perf_counter() - start) * 1e3
        rng = random.Random(n)
        pairs = [(rng.randrange(n), rng.randrange(n)) for _ in range(2000)]
        digest = hashlib.sha256(json.dumps([core.send_time(i, j, 1e6) for i, j in pairs]).encode())
        out[n] = {BUILD: (build_ms, digest.hexdigest()[:12])}
        for name in MODELS:
            model = catalogue()[name].to_core()
            random_groups = [rng.sample(range(n), rng.randint(2, min(n, 48))) for _ in range(groups)]
            nearby_groups = [nearby_group(spec, rng) for _ in range(groups)]
            for label, chosen in ((name, random_groups), (name + NEARBY, nearby_groups)):
                start = time.perf_counter()
                plans = [_core.plan.best_pipeline(core, model, g) for g in chosen]
                ms = (time.perf_counter() - start) / groups * 1e3
                digest = hashlib.sha256(json.dumps([[p["iteration_s"], p["replicas"]] for p in plans]).encode())
                out[n][label] = (ms, digest.hexdigest()[:12])
            start = time.perf_counter()
            whole = _core.plan.best_pipeline(core, model, list(range(n)))
            digest = hashlib.sha256(json.dumps([whole["iteration_s"], whole["replicas"]]).encode())
            out[n][name + WHOLE] = ((time.perf_counter() - start) * 1e3, digest.hexdigest()[:12])
    return out


def measure_search(sizes: list, first_instance: int, instances: int, moves: int) -> dict:
    """{"mode n #k job set": (s per plan, fingerprint)} for Search with `moves` moves on the hulk
    importable here (its own clusters: bench_plan_anytime's, measured and paper modes, and the
    bundled one)."""
    import bench_plan_anytime as anytime
    import hulk.plan as hp
    which = argparse.Namespace(bundled=True, modes=["measured", "paper"], sizes=sizes, first_instance=first_instance,
                               instances=instances, measured_regime="small-regions")
    out = {}
    for mode, n, k, _, make in anytime.instances(which):
        cluster = make()
        cluster.to_core()  # built once per cluster object, before the clock starts
        for set_name in anytime.DEFAULT_JOB_SETS:
            start = time.perf_counter()
            plan = hp.plan(cluster, anytime.JOB_SETS[set_name], "search", time_limit_s=600, max_iterations=moves, seed=0)
            seconds = time.perf_counter() - start
            digest = hashlib.sha256(json.dumps([plan.makespan_s, plan.jobs], sort_keys=True, default=str).encode())
            out[f"{mode} {n} #{k} {set_name}"] = (seconds, digest.hexdigest()[:12])
    return out


def nearby_group(spec, rng: random.Random) -> list:
    """2-48 machines as a planner's group looks: the machines of a random region, then of the
    regions closest to it by latency, until the size drawn is reached."""
    size = rng.randint(2, min(len(spec.region), 48))
    home = rng.randrange(spec.n_regions)
    by_latency = sorted(range(spec.n_regions), key=lambda r: (spec.base_latency_ms[home][r], r))
    members = {}
    for i, r in enumerate(spec.region):
        members.setdefault(int(r), []).append(i)
    group = []
    for r in by_latency:
        group.extend(members.get(r, [])[: size - len(group)])
        if len(group) == size:
            break
    return group


def worker_run(path, sizes: list, groups: int, search: tuple = ()) -> dict:
    """measure() in a fresh interpreter whose ``hulk`` is the one under ``path`` (None: this one);
    measure_search() when `search` is (first instance, instances, moves)."""
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = str(Path(path).resolve())
    cmd = [sys.executable, __file__, "--worker", "--sizes", ",".join(map(str, sizes)), "--groups", str(groups)]
    if search:
        cmd += ["--first-instance", str(search[0]), "--instances", str(search[1]), "--search-moves", str(search[2])]
    done = subprocess.run(cmd, env=env, cwd="/", capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        raise SystemExit(f"bench_layout: the worker for {path or 'this build'} failed (exit {done.returncode}):\n{tail}")
    raw = json.loads(done.stdout.strip().splitlines()[-1])
    if search:
        return {name: tuple(v) for name, v in raw.items()}
    return {int(n): {m: tuple(v) for m, v in per.items()} for n, per in raw.items()}


def report_lines(runs: dict, sizes: list, against) -> list:
    """A table of median ms per group (this build, and the other one with the ratio), and per size
    the time to build the core cluster (ms per build; "same layouts" then compares send times)."""
    head = "| machines | model | this build ms/group |"
    rule = "|---:|---|---:|"
    if against:
        head += " other build ms/group | speed-up | same layouts |"
        rule += "---:|---:|---|"
    lines = [head, rule]
    for n in sizes:
        for name in (*MODELS, *(m + NEARBY for m in MODELS), *(m + WHOLE for m in MODELS), BUILD):
            ours = statistics.median(r[n][name][0] for r in runs["this"])
            row = f"| {n:,} | {name} | {ours:.3f} |"
            if against:
                theirs = statistics.median(r[n][name][0] for r in runs["other"])
                same = runs["this"][0][n][name][1] == runs["other"][0][n][name][1]
                row += f" {theirs:.3f} | {theirs / ours:.2f}x | {'yes' if same else '**no**'} |"
            lines.append(row)
    return lines


def search_lines(runs: dict, against) -> list:
    """A table of median s per plan (this build, and the other one with the ratio) per cluster
    and job set, and the geometric mean of the ratios."""
    head, rule = "| cluster and job set | this build s/plan |", "|---|---:|"
    if against:
        head += " other build s/plan | speed-up | same plan |"
        rule += "---:|---:|---|"
    lines, ratios = [head, rule], []
    for name in runs["this"][0]:
        ours = statistics.median(r[name][0] for r in runs["this"])
        row = f"| {name} | {ours:.3f} |"
        if against:
            theirs = statistics.median(r[name][0] for r in runs["other"])
            same = runs["this"][0][name][1] == runs["other"][0][name][1]
            ratios.append(theirs / ours)
            row += f" {theirs:.3f} | {theirs / ours:.2f}x | {'yes' if same else '**no**'} |"
        lines.append(row)
    if ratios:
        gm = statistics.geometric_mean(ratios)
        lines.append(f"| geometric mean (range) | | | {gm:.2f}x ({min(ratios):.2f}-{max(ratios):.2f}) | |")
    return lines


def kept_notes(path, begin: str, end: str) -> list:
    """The notes (lines starting "Note") of the section between `begin` and `end` already in
    `path`, kept on rewrite."""
    if not path or not Path(path).exists():
        return []
    text = Path(path).read_text()
    if begin not in text:
        return []
    section = text.split(begin, 1)[1].split(end, 1)[0]
    notes = [line for line in section.splitlines() if line.startswith("Note")]
    return [*notes, ""] if notes else []


def parse_sizes(text: str) -> list:
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated machine counts, got {text!r}") from None
    if not sizes or min(sizes) < 2:
        raise argparse.ArgumentTypeError(f"expected machine counts >= 2, got {text!r}")
    return sizes


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=parse_sizes, default=[47, 200, 1000], help="machines per cluster")
    ap.add_argument("--groups", type=int, default=300, help="random groups (2-48 machines) per model and size")
    ap.add_argument("--repeats", type=int, default=3, help="alternating runs per build (medians are reported)")
    ap.add_argument("--against", metavar="DIR", help="a directory holding another build's hulk package")
    ap.add_argument("--against-label", default="", help="what the other build is (a commit), for the section")
    ap.add_argument("--write", metavar="RESULTS.md", help="write the section into this file")
    ap.add_argument("--search-moves", type=int, default=0, metavar="N",
                    help="time Search with N moves per plan instead of single layouts (0: off)")
    ap.add_argument("--first-instance", type=int, default=517, help="with --search-moves: the first cluster k")
    ap.add_argument("--instances", type=int, default=2, help="with --search-moves: clusters per size and mode")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.groups < 1 or args.repeats < 1:
        ap.error(f"--groups and --repeats must be >= 1, got {args.groups} and {args.repeats}")
    if args.search_moves < 0 or args.instances < 1 or args.first_instance < 0:
        ap.error(f"--search-moves must be >= 0, --instances >= 1 and --first-instance >= 0, got "
                 f"{args.search_moves}, {args.instances} and {args.first_instance}")
    if args.against and not (Path(args.against) / "hulk" / "__init__.py").is_file():
        ap.error(f"--against {args.against}: no hulk package there (expected {args.against}/hulk/__init__.py)")
    search = (args.first_instance, args.instances, args.search_moves) if args.search_moves else ()
    if args.worker:
        print(json.dumps(measure_search(args.sizes, *search) if search else measure(args.sizes, args.groups)))
        return 0
    runs = {"this": [], "other": []}
    for _ in range(args.repeats):  # alternate, so both builds see the same machine state
        runs["this"].append(worker_run(None, args.sizes, args.groups, search))
        if args.against:
            runs["other"].append(worker_run(args.against, args.sizes, args.groups, search))
    if search:
        table = search_lines(runs, args.against)
        markers = (SEARCH_BEGIN, SEARCH_END)
        title = "Search at a fixed number of moves (`benchmarks/bench_layout.py --search-moves`)"
        what = (f"Median over {args.repeats} alternating runs of Search with {args.search_moves} moves and no time limit "
                "that binds (seed 0), so both builds do the same walk; the clusters are bench_plan_anytime's "
                f"(k = {args.first_instance}-{args.first_instance + args.instances - 1} per size, measured and paper "
                "modes; odd k: every machine an A100 80GB) and the bundled cluster. \"same plan\" compares a "
                "fingerprint of each plan's makespan and jobs.")
    else:
        table = report_lines(runs, args.sizes, args.against)
        markers = (BEGIN, END)
        title = "speed of one job's layout (`benchmarks/bench_layout.py`)"
        what = (f"Median over {args.repeats} alternating runs of {args.groups} random groups (2-48 machines) per model, "
                f"and {args.groups} groups of whole regions near a random one (\"{NEARBY[2:]}\", 2-48 machines, as "
                "planners' groups look), and one layout of the whole cluster per model (\"all machines\", ms per layout) "
                f"on `generate_cluster(n, seed={CLUSTER_SEED}, mode=\"measured\", **measured_regime(n, 0))` "
                "(bench_plan_anytime's regime: regions of 1-8 machines of 8 GPUs, 8-16 beyond 8,000 machines); \"same "
                "layouts\" compares a fingerprint of every returned layout and iteration time. The last row per size "
                "is one build of the C++ cluster (`to_core`, ms per build; same send times for 2,000 random pairs).")
    print("\n".join(table))
    if args.write:
        command = "python benchmarks/bench_layout.py " + shlex.join(argv if argv is not None else sys.argv[1:])
        write_section(args.write, *markers, [
            markers[0], f"## Planner: {title}", "",
            f"Command: `{command}` ({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; {machine()}). "
            + what + (f" The other build: {args.against_label}." if args.against_label else ""), "",
            *kept_notes(args.write, *markers), *table, "", markers[1]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
