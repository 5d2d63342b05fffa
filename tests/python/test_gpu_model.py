"""benchmarks/gpu_model.py, the model of the GPU benchmark's expected figures, against byte
counts written out by hand for random sizes, and bench_gpu.py --model-only."""

import random

from helpers import load_benchmark as load


def test_bytes_match_a_count_by_hand():
    model = load("gpu_model")
    rng = random.Random()
    for _ in range(20):
        n, nnz, f = rng.randint(1, 10**6), rng.randint(0, 10**7), rng.randint(1, 512)
        csr = 8 * (n + 1) + 4 * nnz
        assert model.spmm_bytes(n, nnz, f) == {"compulsory": csr + 4 * min(n, nnz) * f + 4 * n * f, "moved": csr + 4 * f * nnz + 4 * n * f}
        e2 = nnz + n
        wcsr = 8 * (n + 1) + 8 * e2  # indices and values of the normalised matrix
        # two weighted SpMMs (forward, transposed backward) and 9 dense [n, f] passes
        assert model.gcn_bytes(n, nnz, f) == {"compulsory": 2 * (wcsr + 8 * n * f) + 36 * n * f,
                                              "moved": 2 * (wcsr + 4 * f * e2 + 4 * n * f) + 36 * n * f}
        bw = rng.uniform(1e11, 4e12)
        row = model.model_row(n, nnz, f, bw)
        assert row["spmm_bound"] == model.spmm_bytes(n, nnz, f)["compulsory"] / bw
        assert row["gcn_moved_bound"] == model.gcn_bytes(n, nnz, f)["moved"] / bw
        assert row["spmm_bound"] <= row["spmm_moved_bound"]


def test_model_only_prints_a_row_per_case_and_op(capsys):
    bench = load("bench_gpu")
    assert bench.main(["--model-only", "--sizes", "1e4,1e6", "--widths", "64", "--kinds", "uniform",
                       "--copy-gbps", "1000"]) == 0
    rows = [line.split("|") for line in capsys.readouterr().out.splitlines() if line.startswith("| uniform")]
    assert [(r[2].strip(), r[5].strip()) for r in rows] == [("1e+04", "spmm"), ("1e+04", "gcn"),
                                                            ("1e+06", "spmm"), ("1e+06", "gcn")]
    # SpMM at N = 1e6, nnz = 16e6, F = 64, 1000 GB/s: (8 (N+1) + 4 nnz + 2 * 4 N F) bytes
    assert abs(float(rows[2][8]) - 1e3 * (8 * (10**6 + 1) + 4 * 16 * 10**6 + 8 * 64 * 10**6) / 1e12) < 1e-3
    assert all(r[10].strip() == "n/a" for r in rows)  # nothing measured
