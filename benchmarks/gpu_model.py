"""A model of the GPU benchmark's expected figures (benchmarks/bench_gpu.py): for each row's
operations, the compulsory bytes, the bytes our kernels move, and the lower-bound time at a
copy bandwidth (bytes read + written per second, as ``_core.bench.copy_bandwidth`` measures).

Both counts are per op, float32 values, int64 row offsets and int32 column indices:

* compulsory: every operand read once (of X, the rows referenced at most) and every result
  written once (perfect caching of the gathered rows). No implementation of the same op sequence moves less;
* moved: what a row-split SpMM does without cache reuse: one source row of X read per nonzero
  (``F`` floats per entry), the rest as compulsory. Long-row chunk partials (about ``4 F`` bytes
  per 512 entries of a row over 512, written and read once) are left out: under 1% of the gather.

The ops are those of csrc/nn/layers.cpp (GCNConv with F_in = F_out = F, transform first):

* spmm: ``A @ X``, A [N, N] unweighted (offsets and indices), X [N, F];
* gcn (forward + backward, input gradient included), with E' = nnz + N entries of the
  normalised matrix (indices and values): forward ``T = X W`` (read X, write T), ``Â T``, bias
  add (read + write); backward: bias gradient (read dY), ``Âᵀ dY``, ``dW = Xᵀ G`` (read X and G),
  ``dX = G Wᵀ`` (read G, write dX). The weights (F x F) are left out.

EdgePool and the training epoch are not modelled.
"""

from __future__ import annotations

F32, OFFSET, INDEX = 4, 8, 4


def spmm_bytes(n: int, nnz: int, f: int, weighted: bool = False) -> dict:
    """{"compulsory": bytes, "moved": bytes} of one SpMM of an [n, n] CSR with nnz entries by X [n, f]."""
    csr = OFFSET * (n + 1) + (INDEX + (F32 if weighted else 0)) * nnz
    out = F32 * n * f
    # At most min(n, nnz) rows of X are referenced; each is read once at best.
    return {"compulsory": csr + F32 * min(n, nnz) * f + out, "moved": csr + F32 * f * nnz + out}


def gcn_bytes(n: int, nnz: int, f: int) -> dict:
    """{"compulsory", "moved"} of one GCN layer's forward and backward (see the module's text)."""
    e2 = nnz + n
    fwd_spmm = spmm_bytes(n, e2, f, weighted=True)
    dense = F32 * n * f * (2 + 2 + 1 + 2 + 2)  # X W; bias add; bias grad; dW; dX
    return {k: 2 * fwd_spmm[k] + dense for k in ("compulsory", "moved")}


def model_row(n: int, nnz: int, f: int, copy_bw: float) -> dict:
    """Model fields of a benchmark row: bytes and lower-bound seconds at copy_bw (bytes/s)."""
    out = {}
    for op, b in (("spmm", spmm_bytes(n, nnz, f)), ("gcn", gcn_bytes(n, nnz, f))):
        out[f"{op}_compulsory_bytes"] = b["compulsory"]
        out[f"{op}_moved_bytes"] = b["moved"]
        out[f"{op}_bound"] = b["compulsory"] / copy_bw        # no implementation is faster
        out[f"{op}_moved_bound"] = b["moved"] / copy_bw       # ours, at full bandwidth
    return out


def model_table(cases, copy_bw: float, measured=None) -> list[str]:
    """Markdown rows (kind, n, nnz, f) -> the model, with the measured seconds beside it when
    ``measured`` maps (kind, n, f) to a row of bench_gpu.py."""
    lines = ["| graph | N | nnz | F | op | compulsory MB | moved MB | bound ms (compulsory) | bound ms (moved) "
             "| measured ms | measured / moved bound |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for kind, n, nnz, f in cases:
        m = model_row(n, nnz, f, copy_bw)
        row = (measured or {}).get((kind, n, f), {})
        for op in ("spmm", "gcn"):
            t, bound = row.get(op), m[op + "_moved_bound"]
            got = f"{1e3 * t:.3f}" if t else "n/a"
            over = f"{t / bound:.2f}x" if t else "n/a"
            lines.append(f"| {kind} | {n:.0e} | {nnz:.2e} | {f} | {op} | {m[op + '_compulsory_bytes'] / 1e6:.1f} "
                         f"| {m[op + '_moved_bytes'] / 1e6:.1f} | {1e3 * m[op + '_bound']:.3f} "
                         f"| {1e3 * bound:.3f} | {got} | {over} |")
    return lines
