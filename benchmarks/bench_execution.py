#!/usr/bin/env python
"""Executed runs that check the ruler: plans launched on PyTorch, predicted vs measured iteration time.

Machines. On one host (root needed), ``--processes`` N processes stand for N machines:

* network: each process gets its own network namespace (``ip netns``) with one veth into a
  bridge in the root namespace. Every pair of machines is a link of the cluster description: in
  each namespace the veth's egress has an ``htb`` class per destination (a ``u32`` filter on the
  destination address) whose ``tbf`` leaf limits the rate to that link's bandwidth, with a
  small bucket (1 ms at the rate, at least 16 KB) so a link does not run faster than its rate
  after an idle spell. Half the machines form region A, half region B; links within a region
  get ``--intra-mbit``, links between them ``--inter-mbit``. The ``netem`` qdisc is not
  available on these hosts, so latency is NOT shaped;
* compute: each process gets a cgroup with a fixed CPU quota (``--cpus-each`` of a core per
  ``--period-ms``), pinned to one core, with a weight that makes other work on the host yield
  (:mod:`machine_limits`), and one thread (``OMP_NUM_THREADS=1``, ``torch.set_num_threads(1)``).
  A machine then computes at the same speed whether its neighbours are busy or idle.

Each run, with no input fitted to the runs it predicts:

1. profiles the block (:mod:`hulk.plan.profiling`, the block ``hulk.launch`` trains) inside
   machine 0's cgroup, one thread, at every micro-batch size the layouts can use; the figure is
   the mean of the timed passes (under a quota, passes alternate between full speed and
   throttled; the mean is the rate). The result is a ``hulk-profile/1`` profile with
   ``"gpu": "cpu"``;
2. measures each kind of link once with gloo, between two of the machines in their namespaces and
   cgroups: the one-way time of a 4-byte message (half the median round trip) and the
   throughput of a large send (0.5 s at the declared rate); reported beside the declared rates;
3. plans the model on the cluster description (machines ``"gpu": "cpu"``, cluster_spec rule e;
   links at the declared tbf rates and ``--latency-ms``) with the profile
   (``plan(..., profile=...)``), with Systems A (data parallel), B (GPipe over all machines),
   Search and Hulk, and Hulk's Algorithm 1 on half and on three of the machines (classes
   given), keeping distinct layouts; and again on the cluster with the
   measured link figures (second prediction, same layouts where the planner picks the same);
4. exports each plan (``Plan.export``) and runs it with ``python -m hulk.launch`` in the
   namespaces and cgroups for ``--iterations`` measured iterations after ``--warmup``;
5. prints predicted and measured (mean of the slowest rank's iteration times) side by side, the
   absolute error, and whether the measured ranking is the predicted one.

    sudo /work/torchenv/bin/python benchmarks/bench_execution.py            # 4 processes
    sudo /work/torchenv/bin/python benchmarks/bench_execution.py --processes 8 --iterations 30
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the hulk of this checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine_limits import CpuLimits  # noqa: E402

from hulk.plan import cluster_spec  # noqa: E402
from hulk.plan.models import ModelSpec  # noqa: E402
from hulk.plan.planners import plan  # noqa: E402
from hulk.plan.profile import load_profile  # noqa: E402
from hulk.plan.torch_block import block_forward_flops_per_token, block_params  # noqa: E402

NS = "hulkx{}"           # namespace of machine k
BRIDGE = "hulkxbr"
SUBNET = "10.77.0.{}"    # machine k has 10.77.0.(k + 1)
MARK_BEGIN, MARK_END = "<!-- bench_execution:begin -->", "<!-- bench_execution:end -->"
PLANNERS = ("a", "b", "search", "hulk")


def fixed_subsets(n):
    """Extra layouts on part of the cluster: Hulk's Algorithm 1 on a given classification
    (machines with job 0 take part; no refinement, no growth), so the table also holds
    pipelines over 2 and 3 machines. ``(title, plan keyword arguments)``."""
    half = [0] * (n // 2) + [-1] * (n - n // 2)
    three = [0] * 3 + [-1] * (n - 3)
    return [(f"Hulk on machines {', '.join(str(i) for i, c in enumerate(cls) if c == 0)} (given)",
             dict(classes=cls, refine_iterations=0, grow_rounds=0)) for cls in (half, three)]


def sh(*cmd, check=True):
    out = subprocess.run(list(map(str, cmd)), capture_output=True, text=True)
    if check and out.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))}: {out.stderr.strip()}")
    return out


def address(k):
    return SUBNET.format(k + 1)


def bandwidth_mbit(a, b, n, intra, inter):
    return intra if (a < n // 2) == (b < n // 2) else inter


def make_network(n, intra, inter):
    """Namespaces hulkx0..n-1 on a bridge; per-destination tbf rates on each namespace's egress."""
    sh("ip", "link", "add", BRIDGE, "type", "bridge")
    sh("ip", "link", "set", BRIDGE, "up")
    for k in range(n):
        ns, inside, outside = NS.format(k), f"hxv{k}", f"hxb{k}"
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", inside, "type", "veth", "peer", "name", outside)
        sh("ip", "link", "set", outside, "master", BRIDGE)
        sh("ip", "link", "set", outside, "up")
        sh("ip", "link", "set", inside, "netns", ns)
        nx = ["ip", "netns", "exec", ns]
        sh(*nx, "ip", "link", "set", "lo", "up")
        sh(*nx, "ip", "addr", "add", f"{address(k)}/24", "dev", inside)
        sh(*nx, "ip", "link", "set", inside, "up")
        sh(*nx, "tc", "qdisc", "add", "dev", inside, "root", "handle", "1:", "htb", "default", "999", "r2q", "100000")
        for j in range(n):
            if j == k:
                continue
            rate = bandwidth_mbit(k, j, n, intra, inter)
            cls = f"1:{j + 10}"
            sh(*nx, "tc", "class", "add", "dev", inside, "parent", "1:", "classid", cls, "htb", "rate", "10gbit")
            burst = max(16 * 1024, rate * 1_000_000 // 8 // 1000)  # 1 ms at the rate: no long bursts after idling
            sh(*nx, "tc", "qdisc", "add", "dev", inside, "parent", cls, "handle", f"{j + 10}:", "tbf",
               "rate", f"{rate}mbit", "burst", str(burst), "latency", "400ms")
            sh(*nx, "tc", "filter", "add", "dev", inside, "parent", "1:", "protocol", "ip", "prio", "1", "u32",
               "match", "ip", "dst", f"{address(j)}/32", "flowid", cls)


def remove_network(n):
    for k in range(n):
        sh("ip", "netns", "del", NS.format(k), check=False)
    sh("ip", "link", "del", BRIDGE, check=False)


def model_spec(args):
    params = args.layers * block_params(args.hidden)
    return ModelSpec(name="bench-lm", layers=args.layers, hidden=args.hidden, seq_len=args.seq_len, params=params,
                     global_batch=args.global_batch, micro_batches=args.micro_batches, iterations=args.iterations,
                     recompute=False)  # hulk.launch keeps every micro-batch's activations (no re-materialisation)


def micro_batch_sizes(args):
    """Sequences per micro-batch for every replica count 1..N that divides the batch evenly."""
    per = args.global_batch // args.micro_batches
    return sorted({per // d for d in range(1, args.processes + 1) if per % d == 0})


def machine_env(k, master, port, world, rank):
    """torchrun's variables for machine k's process, one thread, gloo on its veth."""
    return dict(RANK=str(rank), LOCAL_RANK="0", WORLD_SIZE=str(world), MASTER_ADDR=master, MASTER_PORT=str(port),
                OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", GLOO_SOCKET_IFNAME=f"hxv{k}", PYTHONPATH=str(ROOT))


def in_machine(limits, k, env, argv):
    """``argv`` run as machine k: in its cgroups, its namespace, with ``env``."""
    return limits.wrap(k, ["ip", "netns", "exec", NS.format(k), "env", *[f"{a}={b}" for a, b in env.items()],
                           *argv])


# ---------------------------------------------------------------------------------------------
# 1. Profile, inside machine 0's cgroup
# ---------------------------------------------------------------------------------------------

def measure_profile(args):
    """(subprocess, in the cgroup) Writes the profile to ``args.measure_profile``."""
    from hulk.plan.profiling import measure
    prof = measure(model_spec(args), micro_batch_sizes(args), device="cpu", dtype=args.dtype, warmup=args.profile_warmup,
                   repeats=args.profile_repeats, threads=1, statistic="mean",
                   progress=lambda line: print(line, flush=True))
    prof.save(args.measure_profile)


def profile_in_cgroup(args, limits, path):
    argv = [sys.executable, __file__, "--measure-profile", str(path), *forwarded(args)]
    env = dict(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    cmd = limits.wrap(0, ["env", *[f"{a}={b}" for a, b in env.items()], *argv])
    subprocess.run(cmd, check=True)
    return load_profile(str(path))


def forwarded(args):
    return ["--layers", str(args.layers), "--hidden", str(args.hidden), "--seq-len", str(args.seq_len),
            "--global-batch", str(args.global_batch), "--micro-batches", str(args.micro_batches),
            "--processes", str(args.processes), "--dtype", args.dtype,
            "--profile-warmup", str(args.profile_warmup), "--profile-repeats", str(args.profile_repeats)]


# ---------------------------------------------------------------------------------------------
# 2. Link probe: gloo between two machines
# ---------------------------------------------------------------------------------------------

def probe_link(args):
    """(subprocess, one of 2 ranks) One-way small-message time and large-send throughput."""
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, peer = dist.get_rank(), 1 - dist.get_rank()
    tiny = torch.zeros(1)

    def exchange(payload):
        """Rank 0 sends ``payload``, rank 1 answers with ``tiny``: seconds for the round."""
        t0 = time.perf_counter()
        if rank == 0:
            dist.send(payload, peer)
            dist.recv(tiny, peer)
        else:
            dist.recv(payload, peer)
            dist.send(tiny, peer)
        return time.perf_counter() - t0

    rtt = [exchange(tiny) for _ in range(40)]
    one_way = statistics.median(rtt[5:]) / 2
    big = torch.zeros(int(args.probe_mb * 1e6) // 2, dtype=torch.bfloat16)
    rates = []
    for _ in range(3):
        dist.barrier()
        elapsed = exchange(big)
        rates.append(big.numel() * 2 * 8 / max(elapsed - 2 * one_way, 1e-9))
    if rank == 0:
        Path(args.probe_link).write_text(json.dumps(dict(one_way_s=one_way, bits_per_s=statistics.median(rates),
                                                         rates=rates)))
    dist.destroy_process_group()


def measure_link(args, limits, a, b, out, mbit):
    """The probe between machines a and b; its large send lasts about 0.5 s at the declared rate."""
    probe_mb = max(1.0, mbit / 8 * 0.5)
    procs = []
    for rank, k in enumerate((a, b)):
        env = machine_env(k, address(a), 29500, 2, rank)
        argv = [sys.executable, __file__, "--probe-link", str(out), "--probe-mb", str(probe_mb)]
        procs.append(subprocess.Popen(in_machine(limits, k, env, argv)))
    for p in procs:
        if p.wait(timeout=600):
            raise RuntimeError(f"link probe {a}-{b} failed")
    return json.loads(Path(out).read_text())


# ---------------------------------------------------------------------------------------------
# 3-5. Plans, runs, table
# ---------------------------------------------------------------------------------------------

def cluster(n, tflops, intra_gbps, inter_gbps, intra_ms, inter_ms):
    """Machines ``"gpu": "cpu"`` (their tflops only matter where no profile applies: none here)."""
    machines = [dict(name=f"cpu-{k}", region="A" if k < n // 2 else "B", gpu="cpu", gpus=1, memory_gb=16,
                     tflops=tflops, address=address(k)) for k in range(n)]
    links = []
    for a in range(n):
        for b in range(a + 1, n):
            intra = (a < n // 2) == (b < n // 2)
            links.append(dict(a=a, b=b, latency_ms=intra_ms if intra else inter_ms,
                              bandwidth_gbps=intra_gbps if intra else inter_gbps))
    return cluster_spec.from_json(dict(version="hulk-cluster/1", machines=machines, links=links))


def layout(job):
    reps = job["replicas"]
    return f"{len(reps)} x {len(reps[0][0])} stages, split {reps[0][1]}"


def layout_key(job):
    return tuple((tuple(m), tuple(b)) for m, b in job["replicas"])


def run_bundle(job_json, args, limits, workdir):
    """All ranks of one bundle, each in its machine's namespace and cgroup; the rank-0 result."""
    doc = json.loads(Path(job_json).read_text())
    out = Path(workdir) / "result.json"
    procs = []
    for r in doc["ranks"]:
        env = machine_env(r["machine"], doc["rendezvous"]["address"], 29600, doc["nnodes"], r["rank"])
        argv = [sys.executable, "-m", "hulk.launch", str(job_json), "--device", "cpu", "--dtype", args.dtype,
                "--iterations", str(args.iterations), "--warmup", str(args.warmup), "--out", str(out)]
        procs.append(subprocess.Popen(in_machine(limits, r["machine"], env, argv), stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    logs = [p.communicate(timeout=args.timeout)[0] for p in procs]
    if any(p.returncode for p in procs):
        raise RuntimeError("a rank failed:\n" + "\n---\n".join(l[-2000:] for l in logs))
    return json.loads(out.read_text())


def spearman(x, y):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        for k, i in enumerate(order):
            r[i] = k
        return r
    rx, ry = ranks(x), ranks(y)
    n = len(x)
    return 1 - 6 * sum((a - b) ** 2 for a, b in zip(rx, ry)) / (n * (n * n - 1)) if n > 1 else 1.0


def profile_tflops(prof, args):
    """The profile's sustained FLOP/s at its largest size, as TFLOP/s (the machines' stated
    throughput; unused by the cost model where the profile applies)."""
    e = max(prof.entries, key=lambda e: e.micro_batch)
    flops = 3 * block_forward_flops_per_token(args.hidden, args.seq_len) * e.micro_batch * args.seq_len
    return flops / (e.forward_s[0] + e.backward_s[0]) / 1e12


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--processes", type=int, default=4, choices=range(4, 9))
    p.add_argument("--intra-mbit", type=int, default=1000)
    p.add_argument("--inter-mbit", type=int, default=100)
    p.add_argument("--latency-ms", type=float, default=0.05,
                   help="latency the cluster description declares for every link (not shaped: no netem)")
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--seq-len", type=int, default=64)
    p.add_argument("--global-batch", type=int, default=32)
    p.add_argument("--micro-batches", type=int, default=4)
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float32"])
    p.add_argument("--cpus-each", type=float, default=None,
                   help="CPU quota of each machine in cores (default 0.9 x cores / processes)")
    p.add_argument("--period-ms", type=float, default=5.0, help="CFS quota period (default 5 ms)")
    p.add_argument("--profile-warmup", type=int, default=3)
    p.add_argument("--profile-repeats", type=int, default=60)
    p.add_argument("--probe-mb", type=float, default=8.0, help=argparse.SUPPRESS)  # set per link by measure_link
    p.add_argument("--timeout", type=int, default=1800)
    p.add_argument("--results", default=str(ROOT / "benchmarks" / "RESULTS.md"))
    p.add_argument("--no-write", action="store_true", help="print only (RESULTS.md and the saved profile untouched)")
    p.add_argument("--measure-profile", help=argparse.SUPPRESS)  # internal: the profiling subprocess
    p.add_argument("--probe-link", help=argparse.SUPPRESS)       # internal: a link-probe rank
    return p.parse_args(argv)


def main(argv=None):
    args = parse(argv)
    if args.measure_profile:
        return measure_profile(args)
    if args.probe_link:
        return probe_link(args)
    if os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("tc") is None:
        sys.exit("bench_execution: needs root, ip and tc (network namespaces and tbf)")
    n = args.processes
    cores = os.cpu_count() or 1
    cpus_each = args.cpus_each or round(0.9 * cores / n, 3)
    started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load_start = os.getloadavg()
    model = model_spec(args)
    limits = CpuLimits(n, min(cpus_each, 1.0), int(args.period_ms * 1000)).setup()
    rows, links = [], {}
    remove_network(n)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            prof = profile_in_cgroup(args, limits, Path(tmp) / "profile.json")
            if not args.no_write:
                prof.save(ROOT / "benchmarks" / "bench_execution.profile.json")
            make_network(n, args.intra_mbit, args.inter_mbit)
            links["intra"] = measure_link(args, limits, 0, 1, Path(tmp) / "intra.json", args.intra_mbit)
            links["inter"] = measure_link(args, limits, 0, n - 1, Path(tmp) / "inter.json", args.inter_mbit)
            for kind, r in links.items():
                declared = args.intra_mbit if kind == "intra" else args.inter_mbit
                print(f"link {kind}: declared {declared} Mbit/s, {args.latency_ms} ms; measured (gloo) "
                      f"{r['bits_per_s'] / 1e6:.1f} Mbit/s, one-way small message {r['one_way_s'] * 1e3:.3f} ms")
            tflops = profile_tflops(prof, args)
            declared = cluster(n, tflops, args.intra_mbit / 1000, args.inter_mbit / 1000, args.latency_ms,
                               args.latency_ms)
            measured = cluster(n, tflops, links["intra"]["bits_per_s"] / 1e9, links["inter"]["bits_per_s"] / 1e9,
                               links["intra"]["one_way_s"] * 1e3, links["inter"]["one_way_s"] * 1e3)
            seen = set()
            runs = [(None, name, dict(max_iterations=500)) for name in PLANNERS]
            runs += [(title, "hulk", kw) for title, kw in fixed_subsets(n)]
            for title, name, kw in runs:
                pl = plan(declared, [model], name, profile=prof, **kw)
                job = pl.jobs[0]
                if not job["feasible"]:
                    print(f"{name}: infeasible ({job['reason']}); skipped")
                    continue
                if layout_key(job) in seen:
                    print(f"{title or pl.title}: the same layout as an earlier plan; skipped")
                    continue
                seen.add(layout_key(job))
                again = plan(measured, [model], name, profile=prof, **kw).jobs[0]
                where = Path(tmp) / f"plan{len(rows)}"
                pl.export(where)
                res = run_bundle(where / "bench-lm" / "job.json", args, limits, where)
                rows.append(dict(planner=title or pl.title, layout=layout(job), predicted=job["iteration_s"],
                                 predicted_comm=job["comm_s"],
                                 predicted_measured_links=again["iteration_s"] if layout_key(again) == layout_key(job)
                                 else None,
                                 measured=res["mean_iteration_s"], median=res["median_iteration_s"],
                                 stdev=statistics.pstdev(res["iteration_s"])))
                print(f"{rows[-1]['planner']}: {rows[-1]}", flush=True)
            throttle = limits.throttled()
    finally:
        remove_network(n)
        limits.remove()
    load_end = os.getloadavg()
    print(json.dumps(rows, indent=1))
    write_table(args, rows, links, prof, limits, throttle, started, load_start, load_end, cpus_each)


def write_table(args, rows, links, prof, limits, throttle, started, load_start, load_end, cpus_each):
    n = args.processes
    errors = [abs(r["measured"] - r["predicted"]) / r["measured"] for r in rows]
    rho = spearman([r["predicted"] for r in rows], [r["measured"] for r in rows])
    with_links = [r for r in rows if r["predicted_measured_links"] is not None]
    err_links = [abs(r["measured"] - r["predicted_measured_links"]) / r["measured"] for r in with_links]
    sizes = ", ".join(f"b={e.micro_batch:g}: {e.forward_s[0] * 1e3:.1f} + {e.backward_s[0] * 1e3:.1f} ms"
                      for e in prof.entries)
    cmd = "sudo /work/torchenv/bin/python benchmarks/bench_execution.py" + (" " + " ".join(sys.argv[1:])
                                                                            if sys.argv[1:] else "")
    link_text = "; ".join(
        f"{kind} declared {args.intra_mbit if kind == 'intra' else args.inter_mbit} Mbit/s, measured "
        f"{r['bits_per_s'] / 1e6:.1f} Mbit/s (gloo send of 0.5 s worth), small-message one-way "
        f"{r['one_way_s'] * 1e3:.2f} ms" for kind, r in links.items())
    lines = [MARK_BEGIN, "## Executed runs vs the cost model (bench_execution.py)", "",
             f"`{cmd}`, {started}, on this host: {os.cpu_count()} cores ({prof.device.split(' (')[0]}), load "
             f"average (1/5/15 min) {'/'.join(f'{x:.2f}' for x in load_start)} at the start, "
             f"{'/'.join(f'{x:.2f}' for x in load_end)} at the end.", "",
             f"Machines: {n} processes. Compute: {limits.describe()}. Throttled periods over the whole run, "
             f"per machine: {', '.join(f'{t}/{p}' for p, t in throttle)}. Network: one namespace each, veth + "
             f"htb/tbf per destination; regions A (machines 0-{n // 2 - 1}) and B; latency not shaped (no "
             f"netem), {args.latency_ms} ms declared. Links: {link_text}.", "",
             f"Model: {args.layers} blocks, hidden {args.hidden}, seq {args.seq_len}, global batch "
             f"{args.global_batch}, {args.micro_batches} micro-batches, {args.dtype}; {args.iterations} iterations "
             f"after {args.warmup} warm-up. Profile (`hulk-profile/1`, measured in machine 0's cgroup before the "
             f"runs, mean of {args.profile_repeats} passes after {args.profile_warmup}; per block forward + "
             f"backward): {sizes}; Adam {prof.optimizer_s_per_param * 1e9:.2f} ns per parameter. Saved as "
             f"benchmarks/bench_execution.profile.json. The planner is given this profile (`plan(..., "
             f"profile=...)`, machines `\"gpu\": \"cpu\"`); nothing is fitted to the runs.", "",
             "| plan | layout | predicted s (declared links) | of it comm s | predicted s (measured links) | "
             "measured mean s | median s | stdev s | error (declared) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r, e in zip(rows, errors):
        pm = f"{r['predicted_measured_links']:.3f}" if r["predicted_measured_links"] is not None else "other layout"
        lines.append(f"| {r['planner']} | {r['layout']} | {r['predicted']:.3f} | {r['predicted_comm']:.3f} | {pm} | "
                     f"{r['measured']:.3f} | {r['median']:.3f} | {r['stdev']:.3f} | {e * 100:.0f}% |")
    lines += ["", f"Mean absolute error {statistics.mean(errors) * 100:.1f}% with the declared links (target <= 15%, "
                  f"goal 10%)" + (f", {statistics.mean(err_links) * 100:.1f}% with the measured links"
                                  if err_links else "") +
              f"; Spearman of predicted vs measured {rho:.2f} (target: the same order, 1.00).", MARK_END]
    print("\n".join(lines))
    if not args.no_write:
        from results_file import write_section
        write_section(args.results, MARK_BEGIN, MARK_END, lines)


if __name__ == "__main__":
    main()
