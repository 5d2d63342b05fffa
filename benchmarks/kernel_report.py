#!/usr/bin/env python3
"""The CUDA kernels' static resource report, without a GPU.

Compiles every cuda/kernels/*.cu to a cubin for sm_90 (H100/H200) and sm_80 (A100) with
``nvcc -Xptxas -v`` and reads, per kernel: registers per thread, spill stores and loads, stack
frame, static shared memory and barriers; for sm_90 it adds the theoretical occupancy at the
kernel's block size (all our kernels launch kBlock = 256 threads, cuda/runtime/context.h), from the limits of compute capability 9.0:
65,536 registers, 2,048 threads, 32 blocks and 228 KiB of shared memory per multiprocessor
(1 KiB of it reserved per block), registers allocated per warp in units of 256.

    python3 benchmarks/kernel_report.py            # writes benchmarks/KERNELS.md
    python3 benchmarks/kernel_report.py --check    # CI: prints the table, exit 1 if a kernel spills

Exit status 1 when any kernel spills (registers to local memory) for either architecture;
2 when nvcc is missing or a compilation fails.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import datetime as _dt
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "KERNELS.md"
ARCHS = ("sm_90", "sm_80")

# Compute capability 9.0 (and 8.0: same figures except shared memory, 164 KiB per SM).
REGS_PER_SM = 65536
THREADS_PER_SM = 2048
BLOCKS_PER_SM = 32
WARPS_PER_SM = 64
SMEM_PER_SM = {"sm_90": 228 * 1024, "sm_80": 164 * 1024}
SMEM_RESERVED_PER_BLOCK = 1024


def block_size() -> int:
    """Threads per block of every kernel: kBlock."""
    return int(re.search(r"kBlock\s*=\s*(\d+)", (ROOT / "cuda/runtime/context.h").read_text()).group(1))


def compile_one(cu: Path, arch: str, tmp: str) -> tuple[Path, str, str]:
    cmd = ["nvcc", "-std=c++17", f"-arch={arch}", "-cubin", "-Xptxas", "-v", f"-I{ROOT}",
           "-DHULK_WITH_CUDA=1", "-o", os.path.join(tmp, f"{cu.stem}.{arch}.cubin"), str(cu)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
    return cu, arch, p.stdout + p.stderr


def demangle(names: list) -> dict:
    if not names or not shutil.which("c++filt"):
        return {n: n for n in names}
    p = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
    return dict(zip(names, p.stdout.splitlines()))


def short_name(pretty: str) -> str:
    """hulk::cuda::(anonymous namespace)::adam_kernel(float*, ...) -> adam_kernel; keeps <...> args."""
    s = pretty.replace("(anonymous namespace)::", "")
    s = s.split("(")[0]
    s = re.sub(r"^(void )?(hulk::cuda::)?", "", s)
    return s


def parse(log: str) -> dict:
    """{mangled kernel: {regs, spill_st, spill_ld, stack, smem, barriers}} from ptxas -v output."""
    info, cur = {}, None
    for line in log.splitlines():
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            cur = info.setdefault(m.group(1), {})
            continue
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            cur = info.setdefault(m.group(1), {})
            cur["entry"] = True
            continue
        if cur is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            cur.update(stack=int(m.group(1)), spill_st=int(m.group(2)), spill_ld=int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            cur["regs"] = int(m.group(1))
            b = re.search(r"used (\d+) barriers", line)
            cur["barriers"] = int(b.group(1)) if b else 0
            s = re.search(r"(\d+) bytes smem", line)
            cur["smem"] = int(s.group(1)) if s else 0
    return {k: v for k, v in info.items() if v.get("entry")}


def occupancy(regs: int, smem: int, threads: int, arch: str) -> tuple[float, str]:
    """(theoretical occupancy, the limiting resource) of one kernel at `threads` per block."""
    warps = -(-threads // 32)
    regs_per_warp = -(-max(regs, 1) * 32 // 256) * 256
    limits = {"threads": min(THREADS_PER_SM // threads, BLOCKS_PER_SM),
              "registers": (REGS_PER_SM // regs_per_warp) // warps}
    if smem:
        limits["shared memory"] = SMEM_PER_SM[arch] // (smem + SMEM_RESERVED_PER_BLOCK)
    blocks = min(limits.values())
    limiter = min(limits, key=limits.get)
    return min(blocks * warps, WARPS_PER_SM) / WARPS_PER_SM, limiter


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="print only (no KERNELS.md); exit 1 on any spill")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    args = ap.parse_args(argv)
    if not shutil.which("nvcc"):
        print("kernel_report: nvcc not found; no report", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    sources = sorted((ROOT / "cuda" / "kernels").glob("*.cu"))
    block_threads = block_size()
    results = {}  # (file, arch) -> parsed
    with tempfile.TemporaryDirectory() as tmp, cf.ThreadPoolExecutor(args.jobs) as pool:
        futs = [pool.submit(compile_one, cu, arch, tmp) for cu in sources for arch in ARCHS]
        try:
            for f in cf.as_completed(futs):
                cu, arch, log = f.result()
                results[(cu.name, arch)] = parse(log)
        except RuntimeError as e:
            print(f"kernel_report: {e}", file=sys.stderr)
            return 2
    nvcc_version = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
    nvcc_version = "nvcc " + (re.search(r"release [\d.]+", nvcc_version) or re.search(".*", "?")).group(0)
    names = demangle(sorted({k for v in results.values() for k in v}))

    rows, spills = [], []
    for cu in sources:
        for mangled in sorted(results[(cu.name, "sm_90")], key=lambda k: names[k]):
            r90 = results[(cu.name, "sm_90")][mangled]
            r80 = results[(cu.name, "sm_80")].get(mangled, {})
            name = short_name(names[mangled])
            threads = block_threads
            occ, limiter = occupancy(r90["regs"], r90["smem"], threads, "sm_90")
            for arch, r in (("sm_90", r90), ("sm_80", r80)):
                if r.get("spill_st", 0) or r.get("spill_ld", 0):
                    spills.append(f"{cu.name}: {name} ({arch}): {r['spill_st']} B spill stores, "
                                  f"{r['spill_ld']} B spill loads")
            rows.append(f"| `{cu.name}` | `{name}` | {threads} | {r90['regs']} | {r80.get('regs', 'n/a')} "
                        f"| {r90['spill_st']}/{r90['spill_ld']} | {r80.get('spill_st', 'n/a')}/{r80.get('spill_ld', 'n/a')} "
                        f"| {r90['stack']} | {r90['smem']} | {r90['barriers']} | {100 * occ:.0f}% ({limiter}) |")
    lines = ["# CUDA kernels: registers, spills, shared memory, occupancy", "",
             f"Written by `python3 benchmarks/kernel_report.py` on {_dt.date.today().isoformat()} with {nvcc_version}: "
             "each `cuda/kernels/*.cu` compiled to a cubin for sm_90 and sm_80 with `nvcc -Xptxas -v` "
             "(static figures, no GPU needed). Spills are bytes of spill stores/loads (0/0: none); stack "
             "is the sm_90 stack frame in bytes; shared memory is static, in bytes (no kernel uses dynamic shared "
             "memory). Occupancy is the theoretical share of the 64 warp slots of an sm_90 multiprocessor at "
             "the block size shown, with the resource that limits it. CI (`.ci/run`) fails if any kernel spills.",
             "",
             "| file | kernel | threads/block | regs sm_90 | regs sm_80 | spills sm_90 (st/ld B) "
             "| spills sm_80 | stack sm_90 B | smem B | barriers | occupancy sm_90 |",
             "|---|---|---|---|---|---|---|---|---|---|---|", *rows, "",
             f"{len(rows)} kernels; " + ("spills: " + "; ".join(spills) if spills else "no kernel spills on sm_90 or sm_80.")]
    print("\n".join(lines))
    if not args.check:
        Path(args.out).write_text("\n".join(lines) + "\n")
        print(f"\nwrote {args.out}")
    print(f"kernel_report: {len(rows)} kernels, {len(spills)} spilling, {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    for s in spills:
        print(f"kernel_report: SPILL {s}", file=sys.stderr)
    return 1 if spills else 0


if __name__ == "__main__":
    sys.exit(main())
