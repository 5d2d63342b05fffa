#!/usr/bin/env python
"""Executed runs that check the ruler: plans launched on PyTorch, predicted vs measured iteration time.

On one machine (root needed), ``--processes`` N processes each get their own network namespace
(``ip netns``) with one veth into a bridge in the root namespace. Every pair of machines is a
link of the cluster description: in each namespace the veth's egress has an ``htb`` class per
destination (selected by a ``u32`` filter on the destination address) whose ``tbf`` leaf limits
the rate to that link's bandwidth. Half the machines form region A, half region B; links within
a region get ``--intra-mbit``, links between them ``--inter-mbit``. The ``netem`` qdisc is not
available on these machines, so latency is NOT shaped: the cluster description gives every link
the veth's unshaped latency (``--latency-ms``, an assumption, not measured: no ping here).

Each run:

1. profiles the block (:mod:`hulk.plan.torch_block`, the one ``hulk.launch`` trains) on this CPU:
   forward + backward of one block at each micro-batch size the layouts use, one thread, in
   ``--dtype``; the sustained FLOP/s (``3 * block_forward_flops_per_token * tokens / time``)
   becomes every machine's ``tflops`` (the mean over those sizes; the profile format of issue
   19 part 1 will replace this one number per machine);
2. plans the model on that cluster with Systems A (data parallel), B (GPipe over all machines)
   and Search, the same cost model (``csrc/plan/cost.h``) costing each;
3. exports each plan (``Plan.export``) and runs it with ``python -m hulk.launch`` in the
   namespaces for ``--iterations`` measured iterations after ``--warmup``;
4. prints predicted and measured (mean of the slowest rank's iteration times) side by side, the
   absolute error, and whether the measured ranking is the predicted one.

Caveats stated with the result: every process runs on the same CPU cores, so when processes
outnumber cores (or the machine is loaded by other work) compute is slower than profiled.

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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the hulk of this checkout

from hulk.plan import cluster_spec  # noqa: E402
from hulk.plan.models import ModelSpec  # noqa: E402
from hulk.plan.planners import plan  # noqa: E402
from hulk.plan.torch_block import block_forward_flops_per_token, block_params  # noqa: E402

NS = "hulkx{}"           # namespace of machine k
BRIDGE = "hulkxbr"
SUBNET = "10.77.0.{}"    # machine k has 10.77.0.(k + 1)
MARK_BEGIN, MARK_END = "<!-- bench_execution:begin -->", "<!-- bench_execution:end -->"


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
            burst = max(32 * 1024, rate * 1_000_000 // 8 // 100)  # >= rate / HZ for HZ up to 100
            sh(*nx, "tc", "qdisc", "add", "dev", inside, "parent", cls, "handle", f"{j + 10}:", "tbf",
               "rate", f"{rate}mbit", "burst", str(burst), "latency", "200ms")
            sh(*nx, "tc", "filter", "add", "dev", inside, "parent", "1:", "protocol", "ip", "prio", "1", "u32",
               "match", "ip", "dst", f"{address(j)}/32", "flowid", cls)


def remove_network(n):
    for k in range(n):
        sh("ip", "netns", "del", NS.format(k), check=False)
    sh("ip", "link", "del", BRIDGE, check=False)


def profile_tflops(hidden, heads, seq_len, sizes, dtype_name, repeats=5):
    """Sustained TFLOP/s of one block's forward + backward, per micro-batch size, one thread."""
    import torch
    from hulk.plan.torch_block import TransformerBlock
    torch.set_num_threads(1)
    dtype = getattr(torch, dtype_name)
    block = TransformerBlock(hidden, heads).to(dtype)
    out = {}
    for b in sizes:
        x = torch.randn(b, seq_len, hidden, dtype=dtype)
        for _ in range(2):
            block(x).float().pow(2).mean().backward()
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            block(x).float().pow(2).mean().backward()
            times.append(time.perf_counter() - t)
        flops = 3 * block_forward_flops_per_token(hidden, seq_len) * b * seq_len
        out[b] = flops / statistics.median(times) / 1e12
    return out


def cluster(n, tflops, intra, inter, latency_ms):
    machines = [dict(name=f"cpu-{k}", region="A" if k < n // 2 else "B", gpu="T4", gpus=1, memory_gb=16,
                     tflops=tflops, address=address(k)) for k in range(n)]
    links = [dict(a=a, b=b, latency_ms=latency_ms, bandwidth_gbps=bandwidth_mbit(a, b, n, intra, inter) / 1000)
             for a in range(n) for b in range(a + 1, n)]
    return cluster_spec.from_json(dict(version="hulk-cluster/1", machines=machines, links=links))


def layout(job):
    reps = job["replicas"]
    return f"{len(reps)} x {len(reps[0][0])} stages, split {reps[0][1]}"


def run_bundle(job_json, args, workdir):
    """All ranks of one bundle, each in its machine's namespace; the rank-0 result."""
    doc = json.loads(Path(job_json).read_text())
    port = 29600
    procs = []
    out = Path(workdir) / "result.json"
    for r in doc["ranks"]:
        env = dict(RANK=str(r["rank"]), LOCAL_RANK="0", WORLD_SIZE=str(doc["nnodes"]),
                   MASTER_ADDR=doc["rendezvous"]["address"], MASTER_PORT=str(port), OMP_NUM_THREADS="1",
                   GLOO_SOCKET_IFNAME=f"hxv{r['machine']}", PYTHONPATH=str(ROOT))
        cmd = ["ip", "netns", "exec", NS.format(r["machine"]), "env", *[f"{k}={v}" for k, v in env.items()],
               sys.executable, "-m", "hulk.launch", str(job_json), "--device", "cpu", "--dtype", args.dtype,
               "--iterations", str(args.iterations), "--warmup", str(args.warmup), "--out", str(out)]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
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


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--processes", type=int, default=4, choices=range(4, 9))
    p.add_argument("--intra-mbit", type=int, default=1000)
    p.add_argument("--inter-mbit", type=int, default=50)
    p.add_argument("--latency-ms", type=float, default=0.05)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--seq-len", type=int, default=64)
    p.add_argument("--global-batch", type=int, default=32)
    p.add_argument("--micro-batches", type=int, default=4)
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float32"])
    p.add_argument("--timeout", type=int, default=1800)
    p.add_argument("--results", default=str(ROOT / "benchmarks" / "RESULTS.md"))
    p.add_argument("--no-write", action="store_true", help="print only")
    args = p.parse_args(argv)
    if os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("tc") is None:
        sys.exit("bench_execution: needs root, ip and tc (network namespaces and tbf)")
    n = args.processes
    heads = max(1, args.hidden // 64)
    params = args.layers * block_params(args.hidden)
    model = ModelSpec(name="bench-lm", layers=args.layers, hidden=args.hidden, seq_len=args.seq_len, params=params,
                      global_batch=args.global_batch, micro_batches=args.micro_batches, iterations=args.iterations,
                      recompute=False)  # hulk.launch keeps every micro-batch's activations (no re-materialisation)
    sizes = sorted({args.global_batch // (d * args.micro_batches) for d in range(1, n + 1)
                    if args.global_batch // (d * args.micro_batches) >= 1})
    prof = profile_tflops(args.hidden, heads, args.seq_len, sizes, args.dtype)
    tflops = statistics.mean(prof.values())
    print("profile (TFLOP/s by micro-batch size):", {b: round(v, 5) for b, v in prof.items()}, "-> mean", round(tflops, 5))
    spec = cluster(n, tflops, args.intra_mbit, args.inter_mbit, args.latency_ms)
    plans = {name: plan(spec, [model], name, max_iterations=500) for name in ("a", "b", "search")}
    rows = []
    remove_network(n)
    make_network(n, args.intra_mbit, args.inter_mbit)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name, pl in plans.items():
                job = pl.jobs[0]
                if not job["feasible"]:
                    print(f"{name}: infeasible ({job['reason']}); skipped")
                    continue
                pl.export(Path(tmp) / name)
                res = run_bundle(Path(tmp) / name / "bench-lm" / "job.json", args, Path(tmp) / name)
                rows.append(dict(planner=pl.title, layout=layout(job), predicted=job["iteration_s"],
                                 measured=res["mean_iteration_s"], median=res["median_iteration_s"]))
                print(f"{pl.title}: {rows[-1]}")
    finally:
        remove_network(n)
    errors = [abs(r["measured"] - r["predicted"]) / r["measured"] for r in rows]
    rho = spearman([r["predicted"] for r in rows], [r["measured"] for r in rows])
    load = os.getloadavg()[0]
    lines = [MARK_BEGIN, "## Executed runs vs the cost model (bench_execution.py)", "",
             f"{n} processes in network namespaces on one machine ({os.cpu_count()} cores, load average "
             f"{load:.1f} at the end); links within a region {args.intra_mbit} Mbit/s, between regions "
             f"{args.inter_mbit} Mbit/s (tbf); latency not shaped (no netem), {args.latency_ms} ms assumed. Model: "
             f"{args.layers} blocks, hidden {args.hidden}, seq {args.seq_len}, global batch {args.global_batch}, "
             f"{args.micro_batches} micro-batches, {args.dtype}; {args.iterations} iterations after {args.warmup} "
             f"warm-up. Machine throughput from the block profile: {tflops:.4g} TFLOP/s.", "",
             "| plan | layout | predicted s | measured mean s | measured median s | error |",
             "|---|---|---:|---:|---:|---:|"]
    for r, e in zip(rows, errors):
        lines.append(f"| {r['planner']} | {r['layout']} | {r['predicted']:.4f} | {r['measured']:.4f} | "
                     f"{r['median']:.4f} | {e * 100:.0f}% |")
    lines += ["", f"Mean absolute error {statistics.mean(errors) * 100:.0f}% (target <= 15%); Spearman of "
                  f"predicted vs measured {rho:.2f} (target: the same order, 1.00).", MARK_END]
    print("\n".join(lines))
    if not args.no_write:
        from results_file import write_section
        write_section(args.results, MARK_BEGIN, MARK_END, lines)


if __name__ == "__main__":
    main()
