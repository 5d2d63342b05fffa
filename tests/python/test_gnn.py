"""hulk.GNN: validation, training, early stopping, determinism, persistence, reference paths."""

import math
import struct

import networkx as nx
import numpy as np
import pytest

import hulk
from helpers import fitted_model, load_error, parse_weights, run_limited, write_weights
from hulk import _core
from weightfile import parse_model_file, write_model_file


# ---------------------------------------------------------------------------------------------
# fixtures and helpers


def random_graph(seed, n=40, m=100, f=3, fe=2, directed=False, weights=False):
    rng = np.random.default_rng(seed)
    pairs, seen = [], set()
    # A ring first so that no node is isolated, then random chords.
    for i in range(n):
        u, v = i, (i + 1) % n
        pairs.append((u, v))
        seen.add((u, v) if directed else (min(u, v), max(u, v)))
    while len(pairs) < m:
        u, v = (int(a) for a in rng.integers(0, n, 2))
        key = (u, v) if directed else (min(u, v), max(u, v))
        if u == v or key in seen:
            continue
        seen.add(key)
        pairs.append((u, v))
    edges = np.array(pairs, dtype=np.int64)
    x = rng.normal(2.0, 3.0, (n, f))
    e = rng.normal(-1.0, 5.0, (len(edges), fe))
    w = rng.uniform(0.5, 2.0, len(edges)) if weights else None
    return hulk.Graph(n, edges, node_features=x, edge_features=e, edge_weight=w, directed=directed)


@pytest.fixture
def graph():
    return random_graph(0)


@pytest.fixture
def labels(graph):
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, graph.num_nodes)
    y[::7] = -1  # some unlabelled nodes
    return y


def core_model(g, num_classes=3, hidden=(8, 6), pooling="sum", edge_pool=True, per_edge_reference=False,
               gcn_edge_weights=False, standardize=True, dropout=0.0, seed=0):
    return _core.engine.Model(in_features=g.num_node_features, edge_features=g.num_edge_features, num_classes=num_classes,
                       hidden=list(hidden), pooling=pooling, edge_pool=edge_pool,
                       per_edge_reference=per_edge_reference, gcn_edge_weights=gcn_edge_weights,
                       standardize=standardize, dropout=dropout, seed=seed)


def no_time(history):
    return [{k: v for k, v in h.items() if k != "seconds"} for h in history]


def same_history(h1, h2):
    """Histories equal bit for bit (NaN == NaN), ignoring wall-clock time."""
    assert len(h1) == len(h2)
    for a, b in zip(no_time(h1), no_time(h2)):
        assert a.keys() == b.keys()
        for k in a:
            assert a[k] == b[k] or (math.isnan(a[k]) and math.isnan(b[k])), (k, a, b)


def cross_entropy(logits, labels, mask):
    """Mean softmax cross-entropy over masked labelled nodes, float64."""
    z = np.asarray(logits, np.float64)
    sel = np.asarray(mask, bool) & (labels >= 0)
    z = z[sel]
    y = labels[sel]
    zmax = z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z - zmax).sum(axis=1)) + zmax[:, 0]
    return float(np.mean(lse - z[np.arange(len(y)), y]))


def standardize(a):
    a = np.asarray(a, np.float64)
    if a.shape[1] == 0:
        return a
    mu = a.mean(axis=0)
    sd = a.std(axis=0)
    sd = np.where(sd > 1e-12 * (1 + np.abs(mu)), sd, 1.0)
    return (a - mu) / sd


def reference_logits(params, g, hidden, pooling="sum", edge_pool=True, std=True):
    """Float64 forward pass written from the paper's equations (per edge, no algebraic tricks)."""
    p = {k: np.asarray(v, np.float64) for k, v in params.items()}
    n = g.num_nodes
    x = standardize(g.x) if std else np.asarray(g.x, np.float64)
    e = standardize(g.e) if std else np.asarray(g.e, np.float64)
    msgs = []  # (target v, source u, edge k): messages flow along each edge (both ways if undirected)
    for k, (u, v) in enumerate(g.edges):
        msgs.append((v, u, k))
        if not g.directed:
            msgs.append((u, v, k))
    a = np.zeros((n, n))
    for v, u, _ in msgs:
        a[v, u] += 1.0
    a_hat = a + np.eye(n)
    d = a_hat.sum(axis=1)
    norm = a_hat / np.sqrt(np.outer(d, d))

    h = x
    names = []
    if edge_pool:
        w, b = p["edge_pool.weight"], p["edge_pool.bias"][0]
        z = np.zeros((n, w.shape[1]))
        deg = np.zeros(n)
        for v, u, k in msgs:
            z[v] += np.concatenate([h[v], h[u], e[k]]) @ w + b  # W [h_v || h_u || e_vu] + b
            deg[v] += 1
        if pooling == "mean":
            z[deg > 0] /= deg[deg > 0, None]
        h = np.maximum(z, 0.0)
        names = [f"gcn{i}" for i in range(1, len(hidden))]
    else:
        names = [f"gcn{i}" for i in range(1, len(hidden) + 1)]
    for name in names:
        h = np.maximum(norm @ h @ p[name + ".weight"] + p[name + ".bias"][0], 0.0)
    return h @ p["classifier.weight"] + p["classifier.bias"][0]


# ---------------------------------------------------------------------------------------------
# constructor validation


@pytest.mark.parametrize("kwargs, needle", [
    (dict(num_classes=1), "num_classes"),
    (dict(num_classes=0), "num_classes"),
    (dict(num_classes=True), "num_classes"),
    (dict(num_classes=2.5), "num_classes"),
    (dict(num_classes=3, hidden=()), "hidden"),
    (dict(num_classes=3, hidden=0), "hidden"),
    (dict(num_classes=3, hidden=(64, 0)), "hidden"),
    (dict(num_classes=3, hidden=(64, -2)), "hidden"),
    (dict(num_classes=3, hidden=(64.0,)), "hidden"),
    (dict(num_classes=3, hidden=(True,)), "hidden"),
    (dict(num_classes=3, pooling="max"), "pooling"),
    (dict(num_classes=3, pooling=None), "pooling"),
    (dict(num_classes=3, dropout=-0.1), "dropout"),
    (dict(num_classes=3, dropout=1.0), "dropout"),
    (dict(num_classes=3, dropout="0.5"), "dropout"),
    (dict(num_classes=3, seed=-1), "seed"),
    (dict(num_classes=3, seed=1.5), "seed"),
    (dict(num_classes=3, device="gpu"), "device"),
    (dict(num_classes=3, device=0), "device"),
])
def test_constructor_validation(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        hulk.GNN(**kwargs)


def test_device_cuda_clear_error_without_a_gpu():
    # Where no GPU is usable (and this is not the SIMT build), device="cuda" is a RuntimeError
    # that carries the reason; tests/python/test_cuda.py covers the device path itself.
    if hulk.cuda_available() or hulk.cuda_simulated():
        pytest.skip("a CUDA device (or the SIMT simulator) is usable here: device='cuda' works")
    with pytest.raises(RuntimeError) as exc:
        hulk.GNN(num_classes=3, device="cuda")
    msg = str(exc.value)
    assert "cuda" in msg.lower()
    reason = hulk.cuda_unavailable_reason()
    assert reason and reason in msg


def test_device_cpu_and_repr():
    m = hulk.GNN(num_classes=4, hidden=16, device="CPU")
    assert m.device == "cpu"
    assert "num_classes=4" in repr(m) and "(16,)" in repr(m)
    assert m.config["hidden"] == [16]


# ---------------------------------------------------------------------------------------------
# fit / predict basics


def test_fit_predict_shapes_and_dtypes(graph, labels):
    m = hulk.GNN(num_classes=3, hidden=(8, 6), seed=0)
    history = m.fit(graph, labels, epochs=5)
    assert len(history) == 5
    n = graph.num_nodes
    proba = m.predict_proba(graph)
    pred = m.predict(graph)
    logits = m.logits(graph)
    assert proba.shape == (n, 3) and proba.dtype == np.float32
    assert logits.shape == (n, 3) and logits.dtype == np.float32
    assert pred.shape == (n,) and pred.dtype == np.int64
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-5)
    assert (proba >= 0).all()
    np.testing.assert_array_equal(pred, logits.argmax(axis=1))
    ez = np.exp(logits.astype(np.float64) - logits.max(axis=1, keepdims=True))
    np.testing.assert_allclose(proba, ez / ez.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    # A different graph with the same feature widths (inductive use).
    other = random_graph(7, n=15, m=30)
    assert m.predict(other).shape == (15,)


def test_not_fitted_errors(graph):
    m = hulk.GNN(num_classes=3)
    for call in (m.predict, m.predict_proba, m.logits):
        with pytest.raises(RuntimeError, match="fit"):
            call(graph)
    with pytest.raises(RuntimeError):
        m.save("never-written.bin")
    with pytest.raises(RuntimeError):
        m.num_parameters
    with pytest.raises(RuntimeError):
        m.parameters()


def test_wrong_feature_widths_at_predict(graph, labels):
    m = hulk.GNN(num_classes=3, hidden=(8,))
    m.fit(graph, labels, epochs=2)
    for other in (random_graph(1, f=4), random_graph(1, fe=1), random_graph(1, f=0, fe=0)):
        with pytest.raises(ValueError, match="features"):
            m.predict(other)
        with pytest.raises(ValueError, match="features"):
            m.fit(other, np.zeros(other.num_nodes, np.int64), epochs=1)
    with pytest.raises(TypeError):
        m.predict(graph._g)


@pytest.mark.parametrize("bad", [
    lambda y: np.where(np.arange(len(y)) == 3, 3, y),        # == num_classes
    lambda y: np.where(np.arange(len(y)) == 3, 99, y),
    lambda y: np.where(np.arange(len(y)) == 3, -2, y),        # < -1
    lambda y: y[:-1],                                         # wrong length
    lambda y: np.concatenate([y, [0]]),
    lambda y: y.reshape(-1, 1),
    lambda y: np.where(np.arange(len(y)) == 3, 0.5, y),      # float non-integer
    lambda y: np.where(np.arange(len(y)) == 3, np.nan, y),
    lambda y: y.astype(str),
    lambda y: y > 0,                                          # booleans are not class ids
    lambda y: np.full(len(y), -1),                            # nothing labelled
])
def test_labels_validation(graph, labels, bad):
    m = hulk.GNN(num_classes=3, hidden=(4,))
    with pytest.raises(ValueError, match="label"):
        m.fit(graph, bad(labels), epochs=1)


def test_integer_valued_float_labels_accepted(graph, labels):
    h1 = hulk.GNN(num_classes=3, hidden=(4,)).fit(graph, labels.astype(np.float64), epochs=3)
    h2 = hulk.GNN(num_classes=3, hidden=(4,)).fit(graph, labels, epochs=3)
    same_history(h1, h2)


@pytest.mark.parametrize("which", ["train_mask", "val_mask"])
@pytest.mark.parametrize("bad", [
    lambda n: np.ones(n - 1, bool),
    lambda n: np.ones((n, 1), bool),
    lambda n: np.full(n, 0.5),
    lambda n: np.full(n, 1.0),
    lambda n: np.full(n, 2),
    lambda n: np.array(["yes"] * n),
])
def test_mask_validation(graph, labels, which, bad):
    m = hulk.GNN(num_classes=3, hidden=(4,))
    with pytest.raises(ValueError, match=which):
        m.fit(graph, labels, epochs=1, **{which: bad(graph.num_nodes)})


def test_train_mask_without_labelled_nodes(graph, labels):
    mask = labels < 0
    with pytest.raises(ValueError, match="no labelled node"):
        hulk.GNN(num_classes=3).fit(graph, labels, train_mask=mask, epochs=1)


def test_integer_masks_equal_boolean_masks(graph, labels):
    rng = np.random.default_rng(3)
    train = rng.random(graph.num_nodes) < 0.6
    h1 = hulk.GNN(3, hidden=(4,)).fit(graph, labels, train_mask=train, val_mask=~train, epochs=3)
    h2 = hulk.GNN(3, hidden=(4,)).fit(graph, labels, train_mask=train.astype(np.int32),
                                      val_mask=(~train).astype(np.uint8), epochs=3)
    same_history(h1, h2)


@pytest.mark.parametrize("kwargs, needle", [
    (dict(epochs=0), "epochs"), (dict(epochs=2.0), "epochs"), (dict(epochs=True), "epochs"),
    (dict(patience=-1), "patience"), (dict(lr=0.0), "lr"), (dict(lr=-0.1), "lr"), (dict(lr=float("nan")), "lr"),
    (dict(weight_decay=-1e-4), "weight_decay"), (dict(weight_decay=float("inf")), "weight_decay"),
])
def test_fit_argument_validation(graph, labels, kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        hulk.GNN(num_classes=3, hidden=(4,)).fit(graph, labels, **kwargs)


def test_fit_rejects_non_graph(labels):
    with pytest.raises(TypeError):
        hulk.GNN(num_classes=3).fit(np.eye(3), labels[:3])


# ---------------------------------------------------------------------------------------------
# labels as a dict, lists of graphs


def _string_id_cluster():
    G = nx.Graph()
    rng = np.random.default_rng(11)
    names = [f"m{i:02d}" for i in range(30)][::-1]  # ids in non-sorted insertion order
    for name in names:
        G.add_node(name, capability=float(rng.uniform(6, 9)), memory_gb=float(rng.choice([16, 24, 80])))
    for i, a in enumerate(names):
        for b in names[i + 1:i + 4]:
            G.add_edge(a, b, latency_ms=float(rng.uniform(1, 100)))
    return G


def test_labels_as_dict_equal_array_labels():
    G = _string_id_cluster()
    g = hulk.Graph.from_networkx(G, node_attrs=["capability", "memory_gb"], edge_attrs=["latency_ms"])
    mapping = {f"m{i:02d}": i % 3 for i in range(0, 30, 2)}  # every other node labelled
    arr = np.array([mapping.get(v, -1) for v in g.node_ids])
    h_dict = hulk.GNN(3, hidden=(8,), seed=2).fit(g, mapping, epochs=4)
    h_arr = hulk.GNN(3, hidden=(8,), seed=2).fit(g, arr, epochs=4)
    same_history(h_dict, h_arr)
    with pytest.raises(ValueError, match="not in the graph"):
        hulk.GNN(3).fit(g, {"m00": 1, "nope": 0}, epochs=1)
    with pytest.raises(ValueError, match="label"):
        hulk.GNN(3).fit(g, {"m00": 3}, epochs=1)


@pytest.mark.parametrize("bad_class", [1.5, "1", None])
def test_labels_dict_rejects_non_integer_classes(bad_class):
    # The array path rejects 0.5 or strings as class ids; the dict path must not silently
    # truncate 1.5 to class 1 or parse "1" (DESIGN section 8: never a silent change).
    g = hulk.Graph(3, [[0, 1], [1, 2]], node_features=np.eye(3), node_ids=["a", "b", "c"])
    with pytest.raises(ValueError, match="label"):
        hulk.GNN(2, hidden=(4,)).fit(g, {"a": bad_class, "b": 0}, epochs=1)


def test_fit_on_list_of_graphs_equals_batch():
    graphs = [random_graph(s, n=n, m=2 * n) for s, n in ((1, 12), (2, 20), (3, 9))]
    rng = np.random.default_rng(4)
    per_graph_labels = [rng.integers(-1, 3, g.num_nodes) for g in graphs]
    per_graph_train = [rng.random(g.num_nodes) < 0.7 for g in graphs]
    per_graph_val = [~t for t in per_graph_train]
    m_list = hulk.GNN(3, hidden=(8, 4), seed=5)
    h_list = m_list.fit(graphs, per_graph_labels, train_mask=per_graph_train, val_mask=per_graph_val, epochs=6)
    batch = hulk.Graph.batch(graphs)
    m_batch = hulk.GNN(3, hidden=(8, 4), seed=5)
    h_batch = m_batch.fit(batch, np.concatenate(per_graph_labels), train_mask=np.concatenate(per_graph_train),
                          val_mask=np.concatenate(per_graph_val), epochs=6)
    same_history(h_list, h_batch)
    assert all(math.isfinite(h["val_loss"]) for h in h_list)
    assert m_list.predict(batch).shape == (41,)
    np.testing.assert_array_equal(m_list.predict_proba(batch), m_batch.predict_proba(batch))
    # Per-graph predictions equal the corresponding rows of the batch (no leakage between graphs).
    np.testing.assert_allclose(m_list.predict_proba(graphs[1]), m_list.predict_proba(batch)[12:32], rtol=1e-5,
                               atol=1e-6)
    # Concatenated labels for a list of graphs work too.
    h_concat = hulk.GNN(3, hidden=(8, 4), seed=5).fit(graphs, np.concatenate(per_graph_labels),
                                                      train_mask=np.concatenate(per_graph_train),
                                                      val_mask=np.concatenate(per_graph_val), epochs=6)
    same_history(h_concat, h_batch)


# ---------------------------------------------------------------------------------------------
# history, validation, early stopping, callbacks


def test_history_keys_and_validation_metrics(graph, labels):
    m = hulk.GNN(3, hidden=(8,))
    h = m.fit(graph, labels, epochs=7)
    assert len(h) == 7 and m.history_ == h
    assert [s["epoch"] for s in h] == list(range(1, 8))
    for s in h:
        assert set(s) == {"epoch", "train_loss", "train_acc", "val_loss", "val_acc", "seconds"}
        assert math.isnan(s["val_loss"]) and math.isnan(s["val_acc"])
        assert math.isfinite(s["train_loss"]) and s["train_loss"] > 0
        assert 0.0 <= s["train_acc"] <= 1.0 and s["seconds"] >= 0
    # Continued training appends to history_.
    m.fit(graph, labels, epochs=3)
    assert len(m.history_) == 10
    rng = np.random.default_rng(0)
    train = rng.random(graph.num_nodes) < 0.5
    h2 = hulk.GNN(3, hidden=(8,)).fit(graph, labels, train_mask=train, val_mask=~train, epochs=5)
    for s in h2:
        assert math.isfinite(s["val_loss"]) and s["val_loss"] > 0 and 0 <= s["val_acc"] <= 1


def test_history_metrics_match_model_outputs(graph, labels):
    rng = np.random.default_rng(8)
    train = rng.random(graph.num_nodes) < 0.5
    m = hulk.GNN(3, hidden=(8, 8), seed=1)
    h = m.fit(graph, labels, train_mask=train, val_mask=~train, epochs=4)
    logits = m.logits(graph)
    pred = logits.argmax(axis=1)
    sel_val = ~train & (labels >= 0)
    sel_tr = train & (labels >= 0)
    # val metrics and train accuracy are those of the weights after the last update.
    assert h[-1]["val_loss"] == pytest.approx(cross_entropy(logits, labels, ~train), rel=1e-5)
    assert h[-1]["val_acc"] == pytest.approx((pred[sel_val] == labels[sel_val]).mean())
    assert h[-1]["train_acc"] == pytest.approx((pred[sel_tr] == labels[sel_tr]).mean())


@pytest.fixture
def overfit_case():
    """Tiny noisy problem: random labels, so validation loss rises once the model memorises."""
    g = random_graph(21, n=60, m=150, f=6, fe=2)
    rng = np.random.default_rng(22)
    y = rng.integers(0, 3, g.num_nodes)
    train = np.zeros(g.num_nodes, bool)
    train[rng.permutation(g.num_nodes)[:30]] = True
    return g, y, train


def test_early_stopping_and_restore_best(overfit_case):
    g, y, train = overfit_case
    epochs, patience = 400, 10
    m = hulk.GNN(3, hidden=(32, 32), seed=0)
    h = m.fit(g, y, train_mask=train, val_mask=~train, epochs=epochs, lr=0.05, weight_decay=0.0,
              patience=patience)
    val = np.array([s["val_loss"] for s in h])
    best = int(np.argmin(val))  # first minimum, 0-based
    print(f"early stopping: stopped after {len(h)} epochs, best epoch {best + 1}, best val loss {val[best]:.4f}, "
          f"last {val[-1]:.4f}")
    assert len(h) < epochs
    assert val[-1] > val[best]                       # validation loss went up
    assert len(h) == best + 1 + patience             # stopped exactly `patience` epochs after the best
    assert h[-1]["train_loss"] < h[best]["train_loss"]  # while training loss kept falling
    restored = cross_entropy(m.logits(g), y, ~train)
    assert restored == pytest.approx(val[best], rel=1e-6)


def test_early_stopping_without_restore(overfit_case):
    g, y, train = overfit_case
    m = hulk.GNN(3, hidden=(32, 32), seed=0)
    h = m.fit(g, y, train_mask=train, val_mask=~train, epochs=400, lr=0.05, weight_decay=0.0, patience=10,
              restore_best=False)
    val = np.array([s["val_loss"] for s in h])
    assert len(h) < 400
    final = cross_entropy(m.logits(g), y, ~train)
    assert final == pytest.approx(val[-1], rel=1e-6)
    assert final > val.min() * (1 + 1e-6)


def test_patience_without_validation_never_stops(overfit_case):
    g, y, train = overfit_case
    h = hulk.GNN(3, hidden=(8,)).fit(g, y, train_mask=train, epochs=30, lr=0.05, patience=2)
    assert len(h) == 30


def test_callback_returning_false_stops(graph, labels):
    seen = []

    def cb(stats):
        seen.append(stats)
        return stats["epoch"] < 3

    h = hulk.GNN(3, hidden=(4,)).fit(graph, labels, epochs=50, callback=cb)
    assert len(h) == 3 and [s["epoch"] for s in seen] == [1, 2, 3]
    assert seen[0].keys() == h[0].keys()
    # None (the usual return value of a logging function) does not stop training.
    h2 = hulk.GNN(3, hidden=(4,)).fit(graph, labels, epochs=6, callback=lambda s: None)
    assert len(h2) == 6


def test_verbose_prints_one_line_per_epoch(graph, labels, capsys):
    hulk.GNN(3, hidden=(4,)).fit(graph, labels, epochs=4, verbose=True)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    assert len(lines) == 1 + 4 and "epoch" in lines[0]
    assert lines[-1].split()[0] == "4"


# ---------------------------------------------------------------------------------------------
# determinism


def test_same_seed_same_result(graph, labels):
    runs = []
    for _ in range(2):
        m = hulk.GNN(3, hidden=(16, 8), seed=123)
        runs.append((m, m.fit(graph, labels, epochs=15)))
    (m1, h1), (m2, h2) = runs
    same_history(h1, h2)
    p1, p2 = m1.parameters(), m2.parameters()
    assert p1.keys() == p2.keys()
    for k in p1:
        np.testing.assert_array_equal(p1[k], p2[k])
    np.testing.assert_array_equal(m1.predict_proba(graph), m2.predict_proba(graph))


def test_different_seeds_differ(graph, labels):
    m1, m2 = hulk.GNN(3, hidden=(16,), seed=1), hulk.GNN(3, hidden=(16,), seed=2)
    h1, h2 = m1.fit(graph, labels, epochs=5), m2.fit(graph, labels, epochs=5)
    assert h1[0]["train_loss"] != h2[0]["train_loss"]
    for k in m1.parameters():
        if k.endswith("weight"):
            assert not np.array_equal(m1.parameters()[k], m2.parameters()[k]), k


def test_dropout_deterministic_per_seed(graph, labels):
    def run(dropout, seed):
        m = hulk.GNN(3, hidden=(16, 16), dropout=dropout, seed=seed)
        return m, m.fit(graph, labels, epochs=10)

    (m1, h1), (m2, h2) = run(0.4, 7), run(0.4, 7)
    same_history(h1, h2)
    np.testing.assert_array_equal(m1.predict_proba(graph), m2.predict_proba(graph))
    # Dropout changes training (same initial weights, different trajectory) ...
    _, h0 = run(0.0, 7)
    assert [s["train_loss"] for s in h1] != [s["train_loss"] for s in h0]
    # ... and its masks follow the seed.
    _, h3 = run(0.4, 8)
    assert [s["train_loss"] for s in h1] != [s["train_loss"] for s in h3]
    # Inference is deterministic (no dropout at predict time).
    np.testing.assert_array_equal(m1.predict_proba(graph), m1.predict_proba(graph))


def test_blas_runs_single_threaded_in_our_pool(graph, labels):
    """Issue 20: one thread pool. The BLAS (OpenBLAS's own pthreads pool, when that is what the
    core links) runs on one thread; set_num_threads alone sets how many threads work, GEMMs
    included, and leaves the BLAS at one."""
    from hulk import _core

    info = _core.engine.blas_info()
    assert info["vendor"] in ("openblas", "other")
    if info["vendor"] != "openblas":
        pytest.skip("the core does not link OpenBLAS")
    before = hulk.get_num_threads()
    try:
        for threads in (2, 1, 3):
            hulk.set_num_threads(threads)
            hulk.GNN(3, hidden=(16,), edge_pool=False, seed=0).fit(graph, labels, epochs=1)
            assert hulk.get_num_threads() == threads
            assert _core.engine.blas_info()["threads"] == 1
    finally:
        hulk.set_num_threads(before)


def test_deterministic_across_thread_counts(graph, labels):
    before = hulk.get_num_threads()
    try:
        results = []
        for threads in (1, 2):
            hulk.set_num_threads(threads)
            m = hulk.GNN(3, hidden=(16, 8), seed=3)
            h = m.fit(graph, labels, epochs=5)
            results.append((h, m.predict_proba(graph)))
        for (h_a, p_a), (h_b, p_b) in zip(results, results[1:]):
            np.testing.assert_allclose([s["train_loss"] for s in h_a], [s["train_loss"] for s in h_b], rtol=1e-5)
            np.testing.assert_allclose(p_a, p_b, rtol=1e-4, atol=1e-6)
    finally:
        hulk.set_num_threads(before)
    with pytest.raises(ValueError):
        hulk.set_num_threads(0)


# ---------------------------------------------------------------------------------------------
# parameters, forward and backward against numpy references


def test_num_parameters_hand_count():
    g = random_graph(0, f=3, fe=2)
    y = np.arange(g.num_nodes) % 3
    f, fe, c = 3, 2, 3
    hidden = (8, 5, 4)
    m = hulk.GNN(c, hidden=hidden)
    m.fit(g, y, epochs=1)
    expected = ((2 * f + fe) * 8 + 8) + (8 * 5 + 5) + (5 * 4 + 4) + (4 * c + c)
    assert expected == 72 + 45 + 24 + 15
    assert m.num_parameters == expected
    shapes = {k: v.shape for k, v in m.parameters().items()}
    assert shapes == {"edge_pool.weight": (8, 8), "edge_pool.bias": (1, 8), "gcn1.weight": (8, 5),
                      "gcn1.bias": (1, 5), "gcn2.weight": (5, 4), "gcn2.bias": (1, 4),
                      "classifier.weight": (4, 3), "classifier.bias": (1, 3)}
    assert sum(v.size for v in m.parameters().values()) == expected
    # Ablation: the first layer is a GCNConv on node features only.
    m2 = hulk.GNN(c, hidden=(8, 5), edge_pool=False)
    m2.fit(g, y, epochs=1)
    assert m2.num_parameters == (f * 8 + 8) + (8 * 5 + 5) + (5 * c + c)
    # Biases start at zero, weights are Glorot-uniform within their bound.
    init = core_model(g, hidden=(8, 5, 4)).parameters()
    assert not init["edge_pool.bias"].any() and not init["classifier.bias"].any()
    bound = math.sqrt(6.0 / (8 + 8))
    assert np.abs(init["edge_pool.weight"]).max() <= bound and np.abs(init["edge_pool.weight"]).max() > bound / 2


@pytest.mark.parametrize("edge_pool, pooling, standardize, directed", [
    (True, "sum", True, False), (True, "mean", True, False), (True, "sum", False, True),
    (True, "mean", True, True), (False, "sum", True, False),
])
def test_forward_matches_numpy_reference(edge_pool, pooling, standardize, directed):
    g = random_graph(30, n=25, m=60, f=3, fe=2, directed=directed)
    rng = np.random.default_rng(31)
    y = rng.integers(0, 3, g.num_nodes)
    hidden = (6, 5)
    m = hulk.GNN(3, hidden=hidden, pooling=pooling, edge_pool=edge_pool, standardize=standardize, seed=4)
    h = m.fit(g, y, epochs=3, lr=0.05)
    ref = reference_logits(m.parameters(), g, hidden, pooling, edge_pool, standardize)
    got = m.logits(g)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
    assert h[-1]["train_acc"] == pytest.approx((ref.argmax(1) == y).mean())


@pytest.mark.parametrize("edge_pool, pooling", [(True, "sum"), (True, "mean"), (False, "sum")])
def test_first_adam_step_follows_finite_difference_gradient(edge_pool, pooling):
    # Adam's first step moves every parameter by lr * g / (|g| + eps): so the sign of each
    # parameter change after one epoch gives the sign of the gradient, which we compare with
    # central finite differences of the float64 reference loss.
    g = random_graph(40, n=18, m=40, f=2, fe=1)
    rng = np.random.default_rng(41)
    y = rng.integers(0, 3, g.num_nodes)
    hidden = (5, 4)
    lr = 1e-3
    init = core_model(g, hidden=hidden, pooling=pooling, edge_pool=edge_pool, seed=9).parameters()
    m = hulk.GNN(3, hidden=hidden, pooling=pooling, edge_pool=edge_pool, seed=9)
    hist = m.fit(g, y, epochs=1, lr=lr, weight_decay=0.0)
    after = m.parameters()
    params = {k: v.astype(np.float64) for k, v in init.items()}
    loss0 = cross_entropy(reference_logits(params, g, hidden, pooling, edge_pool), y, np.ones(len(y), bool))
    assert hist[0]["train_loss"] == pytest.approx(loss0, rel=1e-5)
    checked = 0
    step = 1e-6
    for name, value in params.items():
        delta = after[name].astype(np.float64) - init[name]
        for idx in np.ndindex(value.shape):
            plus = {k: v.copy() for k, v in params.items()}
            minus = {k: v.copy() for k, v in params.items()}
            plus[name][idx] += step
            minus[name][idx] -= step
            fd = (cross_entropy(reference_logits(plus, g, hidden, pooling, edge_pool), y, np.ones(len(y), bool)) -
                  cross_entropy(reference_logits(minus, g, hidden, pooling, edge_pool), y, np.ones(len(y), bool))) \
                / (2 * step)
            if abs(fd) < 1e-4:
                continue
            checked += 1
            assert np.sign(delta[idx]) == -np.sign(fd), (name, idx, fd, delta[idx])
            assert abs(delta[idx]) == pytest.approx(lr, rel=1e-2), (name, idx, delta[idx])
    assert checked > 30


@pytest.mark.parametrize("pooling, directed", [("sum", False), ("mean", False), ("sum", True), ("mean", True)])
def test_per_edge_reference_path_matches_fast_path(pooling, directed):
    g = random_graph(50, n=35, m=90, f=3, fe=2, directed=directed)
    rng = np.random.default_rng(51)
    y = rng.integers(-1, 3, g.num_nodes)
    empty = np.zeros(0, np.uint8)
    logits, hist = [], []
    for per_edge in (False, True):
        mdl = core_model(g, hidden=(8, 6), pooling=pooling, per_edge_reference=per_edge, seed=3)
        assert mdl.config["per_edge_reference"] is per_edge
        h = mdl.fit(g._g, y.astype(np.int64), empty, empty, 6, 0.01, 5e-4, 0, True)
        hist.append([s["train_loss"] for s in h])
        logits.append(mdl.logits(g._g))
    np.testing.assert_allclose(hist[0], hist[1], rtol=1e-5)
    np.testing.assert_allclose(logits[1], logits[0], rtol=1e-4, atol=1e-5 * np.abs(logits[0]).max())
    with pytest.raises(ValueError, match="per_edge_reference"):
        core_model(g, edge_pool=False, per_edge_reference=True)


def test_gcn_edge_weights(graph, labels):
    with pytest.raises(ValueError, match="edge weights"):
        hulk.GNN(3, hidden=(8, 8), gcn_edge_weights=True).fit(graph, labels, epochs=1)
    gw = random_graph(0, weights=True)
    h_w = hulk.GNN(3, hidden=(8, 8), gcn_edge_weights=True, seed=1).fit(gw, labels, epochs=3)
    h_u = hulk.GNN(3, hidden=(8, 8), gcn_edge_weights=False, seed=1).fit(gw, labels, epochs=3)
    assert h_w[0]["train_loss"] != h_u[0]["train_loss"]


# ---------------------------------------------------------------------------------------------
# save / load


@pytest.mark.parametrize("kwargs", [dict(), dict(hidden=(12,), pooling="mean", dropout=0.25, seed=5),
                                    dict(hidden=(6, 6, 6), edge_pool=False, standardize=False)])
def test_save_load_round_trip(tmp_path, graph, labels, kwargs):
    m = hulk.GNN(3, **kwargs)
    m.fit(graph, labels, epochs=5)
    path = tmp_path / "model.hulk"
    m.save(path)
    loaded = hulk.GNN.load(path)
    assert loaded.config == m.config
    assert loaded.num_parameters == m.num_parameters
    p1, p2 = m.parameters(), loaded.parameters()
    assert p1.keys() == p2.keys()
    for k in p1:
        np.testing.assert_array_equal(p1[k], p2[k])
    np.testing.assert_array_equal(loaded.predict_proba(graph), m.predict_proba(graph))
    np.testing.assert_array_equal(loaded.predict(graph), m.predict(graph))
    # The feature statistics travel with the weights: a fresh graph predicts identically too.
    other = random_graph(99, n=20, m=40)
    np.testing.assert_array_equal(loaded.predict_proba(other), m.predict_proba(other))
    # A loaded model can be trained further.
    assert len(loaded.fit(graph, labels, epochs=2)) == 2
    # str paths work as well as PathLike.
    m.save(str(tmp_path / "again.hulk"))
    assert hulk.GNN.load(str(tmp_path / "again.hulk")).num_parameters == m.num_parameters


def test_load_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        hulk.GNN.load(tmp_path / "nope.hulk")
    with pytest.raises(FileNotFoundError):
        hulk.GNN.load(tmp_path)  # a directory is not a model file


@pytest.fixture
def saved_model(tmp_path, graph, labels):
    m = hulk.GNN(3, hidden=(6, 4), seed=1)
    m.fit(graph, labels, epochs=3)
    path = tmp_path / "good.hulk"
    m.save(path)
    return m, path.read_bytes()


def test_documented_format_matches_the_file(tmp_path, graph, saved_model):
    m, raw = saved_model
    version, config, tensors = parse_model_file(raw)
    assert version == 2
    kv = dict(line.split("=", 1) for line in config.splitlines())
    assert kv["layers"] == "edge_pool:6,relu,gcn:4,relu,linear:3" and kv["num_classes"] == "3"
    assert kv["pooling"] == "sum"
    names = [n for n, _ in tensors]
    assert names[:6] == ["edge_pool.weight", "edge_pool.bias", "gcn1.weight", "gcn1.bias", "classifier.weight",
                         "classifier.bias"]
    assert names[6:] == ["scaler.x_mean", "scaler.x_std", "scaler.e_mean", "scaler.e_std"]
    params = m.parameters()
    for name, data in tensors[:6]:
        np.testing.assert_array_equal(data, params[name])
    np.testing.assert_allclose(dict(tensors)["scaler.x_mean"][0], graph.x.astype(np.float64).mean(0), rtol=1e-5)
    # Re-writing the parsed content gives a file that loads to the same model.
    path = tmp_path / "rewritten.hulk"
    path.write_bytes(write_model_file(version, config, tensors))
    np.testing.assert_array_equal(hulk.GNN.load(path).predict_proba(graph), m.predict_proba(graph))


def _expect_load_error(tmp_path, data, needle=None):
    path = tmp_path / "bad.hulk"
    path.write_bytes(data)
    with pytest.raises(RuntimeError) as exc:
        hulk.GNN.load(path)
    msg = str(exc.value)
    assert "cannot load model" in msg and str(path) in msg
    if needle:
        assert needle in msg, msg
    return msg


@pytest.mark.parametrize("cut", [0, 3, 8, 11, 14, 20, 60, -200, -5, -1])
def test_load_truncated_file(tmp_path, saved_model, cut):
    _, raw = saved_model
    _expect_load_error(tmp_path, raw[:cut], "ends inside")


def test_load_wrong_magic(tmp_path, saved_model):
    _, raw = saved_model
    _expect_load_error(tmp_path, b"HULKGNX\0" + raw[8:], "magic")
    _expect_load_error(tmp_path, b"\x89PNG\r\n\x1a\n" + raw[8:], "magic")


@pytest.mark.parametrize("version", [0, 3, 0xFFFFFFFF])
def test_load_wrong_version(tmp_path, saved_model, version):
    _, raw = saved_model
    msg = _expect_load_error(tmp_path, raw[:8] + struct.pack("<I", version) + raw[12:], "version")
    assert str(version) in msg


def test_load_bad_contents(tmp_path, saved_model):
    _, raw = saved_model
    version, config, tensors = parse_model_file(raw)
    # configuration problems
    no_seed = "".join(line + "\n" for line in config.splitlines() if not line.startswith("seed="))
    _expect_load_error(tmp_path, write_model_file(version, no_seed, tensors), "seed")
    _expect_load_error(tmp_path, write_model_file(version, config.replace("layers=edge_pool:6,relu,gcn:4,relu,linear:3", "layers=edge_pool:6,relu,gcn:x,relu,linear:3"), tensors),
                       "malformed")
    _expect_load_error(tmp_path, write_model_file(version, config.replace("pooling=sum", "pooling=max"), tensors),
                       "pooling")
    _expect_load_error(tmp_path, write_model_file(version, config.replace("num_classes=3", "num_classes=1"),
                                                  tensors), "num_classes")
    _expect_load_error(tmp_path, write_model_file(version, config + "garbage line\n", tensors), "malformed")
    # tensor problems
    missing = [t for t in tensors if t[0] != "gcn1.bias"]
    _expect_load_error(tmp_path, write_model_file(version, config, missing), "gcn1.bias")
    wrong_shape = [(n, d.T.copy() if n == "gcn1.weight" else d) for n, d in tensors]
    _expect_load_error(tmp_path, write_model_file(version, config, wrong_shape), "gcn1.weight")
    extra = tensors + [("mystery", np.zeros((1, 2), np.float32))]
    _expect_load_error(tmp_path, write_model_file(version, config, extra), "mystery")
    # a config that implies other shapes than the stored tensors
    _expect_load_error(tmp_path, write_model_file(version, config.replace("layers=edge_pool:6,relu,gcn:4,relu,linear:3", "layers=edge_pool:6,relu,gcn:5,relu,linear:3"), tensors),
                       "shape")
    # absurd lengths and shapes are refused before any allocation
    off = 16 + len(config.encode())
    _expect_load_error(tmp_path, raw[:12] + struct.pack("<I", 2**31) + raw[16:], "configuration")
    name_len_at = off + 4
    _expect_load_error(tmp_path, raw[:name_len_at] + struct.pack("<I", 10**9) + raw[name_len_at + 4:], "name")
    shape_at = name_len_at + 4 + len(tensors[0][0])
    _expect_load_error(tmp_path, raw[:shape_at] + struct.pack("<qq", -1, 4) + raw[shape_at + 16:], "shape")
    _expect_load_error(tmp_path, raw[:shape_at] + struct.pack("<qq", 2**40, 2**10) + raw[shape_at + 16:], "shape")


def latency_only_problem(seed=0, n=450, intra_degree=7.0, inter_degree=1.5, noise=0.15):
    """A cluster whose node classes can be read off the latencies of each node's links only.

    Three hidden classes of equal size. Links form a stochastic block model (mean degree
    ``intra_degree`` within a class, ``inter_degree`` across; like machines in regions), so the
    degree of a node says nothing about its class. The latency of link (u, v) is
    ``base[class_u] + base[class_v] + noise`` with base = (1, 2, 3): a node's mean incident
    latency sits near 2 * base[own class], while every node has the same constant feature.
    Nodes with fewer than 2 links get extra random links so that every node has some evidence.
    """
    rng = np.random.default_rng(seed)
    cls = rng.permutation(np.arange(n) % 3)
    same = cls[:, None] == cls[None, :]
    p = np.where(same, intra_degree / (n / 3 - 1), inter_degree / (2 * n / 3))
    iu, ju = np.triu_indices(n, 1)
    keep = rng.random(len(iu)) < p[iu, ju]
    pairs = {(int(a), int(b)) for a, b in zip(iu[keep], ju[keep])}
    deg = np.bincount(np.array(list(pairs)).ravel(), minlength=n)
    for v in np.flatnonzero(deg < 2):
        while deg[v] < 2:
            u = int(rng.integers(n))
            key = (min(u, int(v)), max(u, int(v)))
            if u != v and key not in pairs:
                pairs.add(key)
                deg[u] += 1
                deg[v] += 1
    edges = np.array(sorted(pairs), dtype=np.int64)
    base = np.array([1.0, 2.0, 3.0])
    latency = base[cls[edges[:, 0]]] + base[cls[edges[:, 1]]] + noise * rng.standard_normal(len(edges))
    g = hulk.Graph(n, edges, node_features=np.ones((n, 1)), edge_features=latency[:, None])
    train = np.zeros(n, bool)
    train[rng.permutation(n)[: int(0.6 * n)]] = True
    return g, cls, train


@pytest.fixture(scope="module")
def latency_problem():
    return latency_only_problem()


def test_latency_problem_is_well_posed(latency_problem):
    g, cls, train = latency_problem
    deg = np.bincount(g.edges.ravel(), minlength=g.num_nodes)
    assert deg.min() >= 2 and 7 <= deg.mean() <= 10
    assert np.ptp(g.x) == 0  # node features carry nothing
    # Degree is (almost) independent of the class: mean degree per class within 10 %.
    per_class = np.array([deg[cls == c].mean() for c in range(3)])
    assert per_class.max() / per_class.min() < 1.1
    # The mean incident latency identifies the class (thresholds at 3 and 5 ms, i.e. halfway
    # between 2 * base), which is what makes the EdgePool target reachable.
    s = np.bincount(g.edges[:, 0], g.e[:, 0], g.num_nodes) + np.bincount(g.edges[:, 1], g.e[:, 0], g.num_nodes)
    oracle = np.digitize(s / deg, [3.0, 5.0])
    assert (oracle == cls).mean() >= 0.97


def test_edge_pool_learns_latency_classes_gcn_cannot(latency_problem):
    g, cls, train = latency_problem
    test = ~train
    chance = np.bincount(cls[test]).max() / test.sum()

    edge_model = hulk.GNN(num_classes=3, hidden=(64, 64), seed=0)
    edge_model.fit(g, cls, train_mask=train, epochs=200, lr=0.01)
    edge_acc = float((edge_model.predict(g)[test] == cls[test]).mean())

    # The ablation: GCNConv first (no edge features). With standardisation the constant feature
    # becomes 0; without it the GCN still sees the graph structure (degrees), which is
    # independent of the class here. Either way it should be no better than chance.
    gcn_acc = {}
    for standardize in (True, False):
        gcn_model = hulk.GNN(num_classes=3, hidden=(64, 64), edge_pool=False, standardize=standardize, seed=0)
        gcn_model.fit(g, cls, train_mask=train, epochs=200, lr=0.01)
        gcn_acc[standardize] = float((gcn_model.predict(g)[test] == cls[test]).mean())

    print(f"\nlatency-only classes, {g.num_nodes} nodes, {g.num_edges} links, {test.sum()} held out: "
          f"EdgePool accuracy {edge_acc:.3f}; GCN-only accuracy {gcn_acc[True]:.3f} (standardized), "
          f"{gcn_acc[False]:.3f} (raw features); chance {chance:.3f}")
    assert edge_acc >= 0.95
    assert gcn_acc[True] <= chance + 0.15
    assert gcn_acc[False] <= chance + 0.15


def test_empty_scaler_arrays_are_rejected_not_a_segfault(tmp_path, good_file):
    raw, _ = good_file
    config, tensors = parse_weights(raw)
    for t in tensors:
        if t[0].startswith("scaler."):
            t[1] = np.zeros((0, t[1].shape[1]), np.float32)
    msg = load_error(tmp_path, write_weights(config, tensors))
    assert "scaler.x_mean' has shape [0, 3], the configuration implies [1, 3]" in msg


def test_scaler_of_the_wrong_shape_is_rejected(tmp_path, good_file):
    raw, _ = good_file
    config, tensors = parse_weights(raw)
    for t in tensors:
        if t[0] == "scaler.e_std":
            t[1] = np.ones((1, 5), np.float32)
    assert "scaler.e_std' has shape [1, 5]" in load_error(tmp_path, write_weights(config, tensors))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_weights_are_rejected(tmp_path, good_file, bad):
    raw, _ = good_file
    config, tensors = parse_weights(raw)
    tensors[2][1][0, 0] = bad
    assert f"tensor '{tensors[2][0]}' holds a non-finite value" in load_error(tmp_path, write_weights(config, tensors))


def test_repeated_tensor_keys_and_trailing_bytes_are_rejected(tmp_path, good_file):
    raw, _ = good_file
    config, tensors = parse_weights(raw)
    assert "appears twice" in load_error(tmp_path, write_weights(config, tensors + [tensors[1]]))
    assert "configuration key 'seed' appears twice" in load_error(tmp_path, write_weights(config + "seed=1\n", tensors))
    assert "unknown configuration key 'colour'" in load_error(tmp_path, write_weights(config + "colour=red\n", tensors))
    assert "7 trailing bytes" in load_error(tmp_path, raw + b"garbage")


def test_negative_seed_does_not_wrap(tmp_path, good_file):
    raw, _ = good_file
    config, tensors = parse_weights(raw)
    cfg = "\n".join("seed=-1" if line.startswith("seed=") else line for line in config.splitlines()) + "\n"
    assert "'seed' = '-1'" in load_error(tmp_path, write_weights(cfg, tensors))


def test_save_refuses_non_finite_weights(tmp_path):
    m, _ = fitted_model()
    m.save(tmp_path / "m.gnn")
    blob = (tmp_path / "m.gnn").read_bytes()
    config, tensors = parse_weights(blob)
    # A GNN whose weights diverged cannot be written: the load path refuses such a file too.
    tensors[0][1][0, 0] = np.inf
    assert "non-finite" in load_error(tmp_path, write_weights(config, tensors))


def test_huge_shapes_in_a_small_header_fail_within_bounded_memory(tmp_path, good_file):
    raw, _ = good_file
    config, _ = parse_weights(raw)
    cfg = config.replace("in_features=3", "in_features=1000000").replace("edge_pool:6", "edge_pool:1000000")
    path = tmp_path / "huge.gnn"
    path.write_bytes(write_weights(cfg, []))
    assert path.stat().st_size < 400
    out = run_limited(f"hulk.GNN.load({str(path)!r})", tmp_path)
    assert "file ends inside the parameters" in out


def test_huge_class_count_fails_within_bounded_memory(tmp_path, good_file):
    raw, _ = good_file
    config, _ = parse_weights(raw)
    path = tmp_path / "classes.gnn"
    path.write_bytes(write_weights(config.replace("num_classes=3", "num_classes=1000000").replace("linear:3", "linear:1000000"), []))
    assert "file ends inside the parameters" in run_limited(f"hulk.GNN.load({str(path)!r})", tmp_path)


# -- unclear inputs: seeds and integers past the C++ types, out of memory -------------------------

@pytest.mark.parametrize("kwargs, message", [
    # before: accepted here, then fit() failed with pybind's "incompatible constructor arguments"
    (dict(num_classes=3, seed=2**64), "seed must be an integer in [0, 2**64 - 1], got 18446744073709551616"),
    (dict(num_classes=3, seed=True), "seed must be a non-negative integer, got True"),
    (dict(num_classes=2**64), "num_classes = 18446744073709551616 is more than the 1048576 classes"),
    (dict(num_classes=3, hidden=(8, 2**64)), "hidden[1] = 18446744073709551616 is wider than the 1048576"),
    (dict(num_classes=3, hidden=2**40), "hidden[0] = 1099511627776 is wider than the 1048576"),
    (dict(num_classes=3, hidden=(4,) * 65), "hidden lists 65 layers, more than the 64"),
])
def test_constructor_integers_past_the_engine_types(kwargs, message):
    with pytest.raises(hulk.InputError) as exc:
        hulk.GNN(**kwargs)
    assert message in str(exc.value)


def test_largest_seed_is_accepted(graph, labels):
    m = hulk.GNN(3, hidden=(4,), seed=2**64 - 1)
    m.fit(graph, labels, epochs=1)
    assert m.config["seed"] == 2**64 - 1


@pytest.mark.parametrize("kwargs, message", [
    # before: pybind's TypeError "fit(): incompatible function arguments"
    (dict(epochs=2**64), "epochs must be an integer in [1, 2**63 - 1], got 18446744073709551616"),
    (dict(epochs=1, patience=2**63), "patience must be an integer in [0, 2**63 - 1], got 9223372036854775808"),
])
def test_fit_integers_past_int64(graph, labels, kwargs, message):
    with pytest.raises(hulk.InputError) as exc:
        hulk.GNN(3, hidden=(4,)).fit(graph, labels, **kwargs)
    assert message in str(exc.value)


class _OutOfMemoryModel:
    """Stands in for the C++ model: every call fails as a std::bad_alloc arrives."""
    config = {"in_features": 3, "edge_features": 2}

    def __getattr__(self, name):
        def fail(*args, **kwargs):
            raise hulk.OutOfMemoryError("out of memory: the C++ core could not allocate what this call needs")
        return fail


@pytest.mark.parametrize("call", ["fit", "partial_fit", "predict", "predict_proba", "evaluate", "logits"])
def test_out_of_memory_names_the_call_and_the_sizes(graph, labels, call):
    m = hulk.GNN(3, hidden=(8, 6))
    m._model = _OutOfMemoryModel()
    args = {"fit": (graph, labels), "partial_fit": (graph, labels), "evaluate": (graph, labels)}.get(call, (graph,))
    with pytest.raises(hulk.OutOfMemoryError) as exc:
        getattr(m, call)(*args)
    msg = str(exc.value)
    assert msg.startswith(f"GNN.{call}: out of memory (nodes {graph.num_nodes}, edges {graph.num_edges}, "
                          f"node features 3, edge features 2, hidden (8, 6), classes 3; needs about "), msg
    assert isinstance(exc.value.__cause__, hulk.OutOfMemoryError)  # the core's generic error, chained


def test_out_of_memory_in_a_limited_child(tmp_path):
    # the real std::bad_alloc of a too wide model, in a child capped at 1.5 GB
    out = run_limited("g = hulk.Graph(3, [[0, 1]], node_features=[[1.0], [2.0], [3.0]])\n"
                      "    hulk.GNN(3, hidden=(100_000, 100_000)).fit(g, [0, 1, 2], epochs=1)\n"
                      "except MemoryError as exc:\n    print('ERROR', type(exc).__name__, exc)\n    sys.exit(0)",
                      tmp_path)
    assert out.startswith("ERROR OutOfMemoryError GNN.fit: out of memory (nodes 3, edges 1, node features 1, "
                          "edge features 0, hidden (100000, 100000), classes 3; needs about 149.0 GiB)"), out


@pytest.mark.parametrize("cls", [2**64, -2**63 - 1])
def test_label_mapping_class_past_int64(cls):
    # before: OverflowError "Python int too large to convert to C long"
    g = hulk.Graph(2, [[0, 1]], node_ids=["a", "b"])
    with pytest.raises(hulk.InputError, match=rf"labels\['a'\] = {cls}: labels must be class ids >= 0"):
        hulk.GNN(2).fit(g, {"a": cls, "b": 0}, epochs=1)


@pytest.mark.parametrize("n", [2**31, 2**64, 2.5, "4", True, 0])
def test_set_num_threads_takes_a_c_int(n):
    # before: 2**31 gave pybind's "incompatible function arguments", 2.5 and "4" were truncated / parsed
    before = hulk.get_num_threads()
    with pytest.raises(hulk.InputError, match=r"num_threads must be an integer in \[1, 2147483647\], got "):
        hulk.set_num_threads(n)
    assert hulk.get_num_threads() == before
