"""The GPU benchmark's report (benchmarks/bench_gpu.py --from-rows), on hand-made rows: the
GPU-vs-CPU epoch ratio is given only for rows whose CPU BLAS ran on one thread inside hulk's
OpenMP threads (the first H200 run's did not, and its CPU epochs were 40x too slow)."""

from __future__ import annotations

import argparse

import pytest
from helpers import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bench_gpu")


def _row(blas, epoch_cpu=0.05, epoch_cuda=0.002, n=10_000, f=64):
    meta = {"gpu": "test GPU", "copy_bw": 3.0e12, "cmd": "python benchmarks/bench_gpu.py", "date": "2026-11-26",
            "args": {"repeats": 3, "warmup": 1}}
    if blas is not None:
        meta["blas"] = blas
    return {"kind": "uniform", "n": n, "nnz": 16 * n, "f": f, "spmm": 1.0e-4, "spmm_cusparse": 1.1e-4,
            "spmm_bw_fraction": 0.7, "spmm_min_bw_fraction": 0.1, "gcn": 5.0e-4, "edge_pool": 8.0e-4,
            "edge_pool_bytes": 1 << 24, "epoch_cuda": epoch_cuda, "epoch_cpu": epoch_cpu, "meta": meta}


def _table(bench, rows):
    lines = bench.report(rows, "test GPU", 3.0e12, argparse.Namespace(repeats=3, warmup=1), "cmd")
    return lines, [line for line in lines if line.startswith("| uniform") and len(line.split("|")) == 17]


def test_the_epoch_ratio_needs_a_single_threaded_blas(bench):
    pinned = {"vendor": "openblas", "parallel": 1, "threads": 1}
    lines, table = _table(bench, [_row(pinned, epoch_cpu=0.05, epoch_cuda=0.002)])
    assert table[0].split("|")[-2].strip() == "25.00x"  # 0.05 s / 0.002 s
    assert not any(line.startswith("GPU vs CPU epoch: not given") for line in lines)


@pytest.mark.parametrize("blas", [None, {"vendor": "other", "parallel": 0, "threads": 0},
                                  {"vendor": "openblas", "parallel": 1, "threads": 16}])
def test_the_epoch_ratio_is_withheld_when_the_blas_was_not_pinned(bench, blas):
    lines, table = _table(bench, [_row(blas, epoch_cpu=0.4, epoch_cuda=0.002, n=10_000, f=256)])
    assert table[0].split("|")[-2].strip() == "n/a"
    assert table[0].split("|")[-3].strip() == "2.00"  # the GPU epoch itself is still given (ms)
    note = [line for line in lines if line.startswith("GPU vs CPU epoch: not given")]
    assert len(note) == 1 and "N=1e+04 F=256" in note[0] and "0.40 s" in note[0]
