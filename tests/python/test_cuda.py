"""device="cuda" end to end from Python, against the same model on the CPU.

These run where a CUDA device is usable, or in the SIMT build (``HULK_CUDA=SIMT``, which
scripts/run_cuda_tests.sh installs beside the normal build), where the CUDA kernels run on the
CPU simulator: that is how CI exercises the Python device path without a GPU. Elsewhere they
are skipped with that reason.

Tolerance: each epoch's training loss within 1e-4 relative of the CPU run's (the backends
round sums in different orders; a wrong kernel changes the loss in its first digits).
"""

import argparse
import math

import numpy as np
import pytest

import hulk

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not (hulk.cuda_available() or hulk.cuda_simulated()),
                       reason="no CUDA device here and not the SIMT build: "
                              "scripts/run_cuda_tests.sh runs these on the simulator"),
]

LOSS_RTOL = 1e-4


@pytest.fixture(scope="module")
def hulk47():
    G = hulk.datasets.hulk47(clean="quiet")
    labels, classes = hulk.datasets.hulk47_table2_labels()
    g = hulk.Graph.from_networkx(G, node_attrs=["capability", "memory_gb"], edge_attrs=["latency_ms"])
    return g, labels, classes


def test_build_reports_itself(hulk47):
    assert hulk._core.engine.built_with_cuda
    if hulk.cuda_simulated():
        assert not hulk.cuda_available()  # the simulator is never reported as a GPU


@pytest.mark.parametrize("pooling,dropout", [("sum", 0.0), ("mean", 0.2)])
def test_training_on_cuda_matches_cpu(hulk47, pooling, dropout):
    g, labels, classes = hulk47
    runs = {}
    for device in ("cpu", "cuda"):
        model = hulk.GNN(num_classes=len(classes), hidden=(32, 32), pooling=pooling, dropout=dropout, seed=4,
                         device=device)
        hist = model.fit(g, labels, epochs=40, lr=0.01)
        runs[device] = (model, [h["train_loss"] for h in hist])
    cpu_loss, cuda_loss = runs["cpu"][1], runs["cuda"][1]
    assert cuda_loss[-1] < cuda_loss[0]
    for epoch, (a, b) in enumerate(zip(cpu_loss, cuda_loss), 1):
        assert math.isclose(b, a, rel_tol=LOSS_RTOL), f"epoch {epoch}: cuda {b}, cpu {a}"
    p_cpu = runs["cpu"][0].predict_proba(g)
    p_cuda = runs["cuda"][0].predict_proba(g)
    assert p_cuda.dtype == np.float32 and p_cuda.shape == p_cpu.shape
    np.testing.assert_allclose(p_cuda, p_cpu, atol=1e-3)
    assert runs["cuda"][0].device == "cuda"


def test_sequential_stack_on_cuda_matches_cpu(hulk47, tmp_path):
    """A stack the shortcut cannot build: input dropout, per-layer decay, a Linear in the middle,
    GCNConv last (issue 20's composable models)."""
    g, labels, classes = hulk47
    layers = [hulk.nn.Dropout(0.3), hulk.nn.GCNConv(16, weight_decay=5e-3), hulk.nn.ReLU(), hulk.nn.Linear(12),
              hulk.nn.ReLU(), hulk.nn.Dropout(0.5), hulk.nn.GCNConv(len(classes))]
    runs = {}
    for device in ("cpu", "cuda"):
        model = hulk.Sequential(layers, seed=2, device=device)
        runs[device] = (model, [h["train_loss"] for h in model.fit(g, labels, epochs=30, lr=0.01, weight_decay=0.0)])
    cpu_loss, cuda_loss = runs["cpu"][1], runs["cuda"][1]
    assert cuda_loss[-1] < cuda_loss[0]
    for epoch, (a, b) in enumerate(zip(cpu_loss, cuda_loss), 1):
        assert math.isclose(b, a, rel_tol=LOSS_RTOL), f"epoch {epoch}: cuda {b}, cpu {a}"
    np.testing.assert_allclose(runs["cuda"][0].predict_proba(g), runs["cpu"][0].predict_proba(g), atol=1e-3)
    runs["cuda"][0].save(tmp_path / "stack.model")
    np.testing.assert_allclose(hulk.Sequential.load(tmp_path / "stack.model").logits(g), runs["cuda"][0].logits(g),
                               atol=1e-4)


def test_sparse_features_on_cuda_match_cpu():
    # issue 20: the first layer's X W and X^T G as SpMMs with the feature CSR and its transpose
    sp = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(3)
    n, f = 200, 500
    x = sp.random(n, f, density=0.02, format="csr", random_state=3)
    edges = np.unique(np.sort(rng.integers(0, n, (400, 2)), axis=1), axis=0)
    edges = edges[edges[:, 0] != edges[:, 1]]
    g = hulk.Graph(n, edges, node_features=x)
    labels = rng.integers(0, 3, n)
    losses = {}
    for device in ("cpu", "cuda"):
        model = hulk.GNN(num_classes=3, hidden=(16,), edge_pool=False, dropout=0.3, seed=1, device=device)
        losses[device] = [h["train_loss"] for h in model.fit(g, labels, epochs=15)]
    for epoch, (a, b) in enumerate(zip(losses["cpu"], losses["cuda"]), 1):
        assert math.isclose(b, a, rel_tol=LOSS_RTOL), f"epoch {epoch}: cuda {b}, cpu {a}"


def test_save_on_cuda_load_on_cpu_and_back(hulk47, tmp_path):
    g, labels, classes = hulk47
    model = hulk.GNN(num_classes=len(classes), hidden=(16,), seed=1, device="cuda")
    model.fit(g, labels, epochs=10)
    logits = model.logits(g)
    path = tmp_path / "gpu.model"
    model.save(path)
    on_cpu = hulk.GNN.load(path)
    assert on_cpu.device == "cpu"
    np.testing.assert_allclose(on_cpu.logits(g), logits, atol=1e-4)
    back = hulk.GNN.load(path, device="cuda")
    assert back.device == "cuda"
    np.testing.assert_allclose(back.logits(g), logits, atol=1e-4)
    for name, value in back.parameters().items():  # parameters come back to the host
        np.testing.assert_array_equal(value, on_cpu.parameters()[name], err_msg=name)


def test_model_moves_between_devices(hulk47):
    g, labels, classes = hulk47
    model = hulk.GNN(num_classes=len(classes), hidden=(16, 8), seed=2)
    model.fit(g, labels, epochs=5)
    before = model.predict_proba(g)
    assert model.to("cuda") is model and model.device == "cuda"
    np.testing.assert_allclose(model.predict_proba(g), before, atol=1e-5)
    model.fit(g, labels, epochs=5)  # training continues on the device, Adam state included
    after_cuda = model.predict_proba(g)
    model.to("cpu")
    np.testing.assert_allclose(model.predict_proba(g), after_cuda, atol=1e-5)


def test_spmm_paths_agree(hulk47):
    g, _, _ = hulk47
    assert hulk._core.engine.spmm_path() == "custom"
    model = hulk.GNN(num_classes=4, hidden=(16,), seed=3, device="cuda")
    labels = np.arange(g.num_nodes) % 4
    model.fit(g, labels, epochs=3)
    custom = model.logits(g)
    hulk._core.engine.set_spmm_path("cusparse")
    try:
        np.testing.assert_allclose(model.logits(g), custom, atol=1e-4)
    finally:
        hulk._core.engine.set_spmm_path("custom")
    with pytest.raises(ValueError, match="'magic'"):
        hulk._core.engine.set_spmm_path("magic")


def test_batched_training_on_cuda(hulk47):
    g, labels, classes = hulk47
    model = hulk.GNN(num_classes=len(classes), hidden=(16,), seed=5, device="cuda")
    hist = model.fit([g, g], [labels, labels], epochs=5)
    assert len(hist) == 5 and all(math.isfinite(h["train_loss"]) for h in hist)


def test_bench_gpu_smoke(capsys, tmp_path):
    # The benchmark script itself, on tiny graphs: every column it fills must come out, and the
    # table it prints is the one --from-rows renders from the rows it wrote (the H200 run of
    # 2026-11-27 printed every GPU-vs-CPU epoch ratio as n/a, its BLAS "not recorded", while the
    # rows it wrote recorded a single-threaded OpenBLAS). On a GPU benchmarks/gpu_check.sh runs it
    # in full instead.
    if hulk.cuda_available():
        pytest.skip("a GPU is here: benchmarks/gpu_check.sh runs the full benchmark")
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_gpu.py"
    spec = importlib.util.spec_from_file_location("bench_gpu", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows_file = tmp_path / "rows.jsonl"
    assert bench.main(["--quick", "--rows", str(rows_file)]) == 0
    out = capsys.readouterr().out
    written = bench.read_rows(str(rows_file))
    assert len(written) == 2 and all("blas" in r["meta"] for r in written)
    meta = written[0]["meta"]
    replayed = bench.report(written, meta["gpu"], meta["copy_bw"], argparse.Namespace(**meta["args"]), meta["cmd"])
    live_table = [line for line in out.splitlines() if line.startswith("| ")]
    assert live_table == [line for line in replayed if line.startswith("| ")]
    assert ("GPU vs CPU epoch: not given" in out) == (not all(bench.cpu_baseline_fair(r) for r in written))
    graph_rows = [line for line in out.splitlines() if line.startswith("| uniform") or line.startswith("| powerlaw")]
    rows = [row for row in graph_rows if len(row.split("|")) == 17]  # the results table
    assert len(rows) == 2
    assert all(float(row.split("|")[5]) > 0 for row in rows)  # SpMM ms
    model = [row.split("|") for row in graph_rows if len(row.split("|")) == 13]  # the model, measured beside it
    assert [m[5].strip() for m in model] == ["spmm", "gcn", "spmm", "gcn"]
    assert all(float(m[9]) > 0 and float(m[10]) > 0 for m in model)  # bound ms (moved), measured ms
