"""Sparse node features (issue 20): a scipy.sparse matrix stays sparse in the engine; a model on
it trains as the same model on the same features dense; bad sparse input is named."""

import math

import numpy as np
import pytest

import hulk

sp = pytest.importorskip("scipy.sparse")

N, F, CLASSES = 60, 200, 3


def random_features(n=N, f=F, density=0.03, seed=0):
    rng = np.random.default_rng(seed)
    x = sp.random(n, f, density=density, format="csr", random_state=seed, dtype=np.float64)
    x.data = rng.uniform(-1.0, 1.0, x.nnz)  # negative values are ordinary features
    return x


def random_edges(n=N, m=150, seed=0):
    rng = np.random.default_rng(seed)
    pairs = {tuple(sorted(p)) for p in rng.integers(0, n, (3 * m, 2)) if p[0] != p[1]}
    return np.array(sorted(pairs)[:m])


def labels_for(n=N, seed=1):
    return np.random.default_rng(seed).integers(0, CLASSES, n)


def test_sparse_features_stay_sparse_and_read_back():
    x = random_features()
    g = hulk.Graph(N, random_edges(), node_features=x)
    assert g.sparse_features and g.num_node_features == F
    assert "sparse node features" in repr(g)
    back = g.x
    assert sp.issparse(back) and back.format == "csr" and back.nnz == x.nnz
    np.testing.assert_array_equal(back.toarray(), x.toarray().astype(np.float32))
    assert not hulk.Graph(N, random_edges(), node_features=x.toarray()).sparse_features


@pytest.mark.parametrize("fmt", ["csc", "coo"])
def test_csc_and_coo_are_converted_to_csr(fmt):
    x = random_features(seed=3)
    g = hulk.Graph(N, random_edges(), node_features=x.asformat(fmt))
    assert g.sparse_features
    np.testing.assert_array_equal(g.x.toarray(), x.toarray().astype(np.float32))


@pytest.mark.parametrize("standardize", [False, True])
def test_training_matches_the_same_features_dense(standardize):
    x, edges, y = random_features(seed=5), random_edges(seed=5), labels_for(seed=5)
    runs = {}
    for kind, feats in (("sparse", x), ("dense", x.toarray())):
        g = hulk.Graph(N, edges, node_features=feats)
        model = hulk.GNN(num_classes=CLASSES, hidden=(16, 8), edge_pool=False, dropout=0.2,
                         standardize=standardize, seed=2)
        hist = model.fit(g, y, epochs=25)
        runs[kind] = ([h["train_loss"] for h in hist], model.predict_proba(g))
    (loss_s, p_s), (loss_d, p_d) = runs["sparse"], runs["dense"]
    assert loss_s[-1] < loss_s[0]
    for epoch, (a, b) in enumerate(zip(loss_s, loss_d), 1):
        assert math.isclose(a, b, rel_tol=1e-5), f"epoch {epoch}: sparse {a}, dense {b}"
    np.testing.assert_allclose(p_s, p_d, atol=1e-5)


def test_batches_of_sparse_graphs_train_and_mixed_batches_are_refused():
    graphs = [hulk.Graph(N, random_edges(seed=s), node_features=random_features(seed=s)) for s in (7, 8)]
    batch = hulk.Graph.batch(graphs)
    assert batch.sparse_features and batch.num_nodes == 2 * N
    np.testing.assert_array_equal(batch.x.toarray(), np.vstack([g.x.toarray() for g in graphs]))
    model = hulk.GNN(num_classes=CLASSES, hidden=(8,), edge_pool=False, seed=0)
    model.fit(graphs, [labels_for(seed=7), labels_for(seed=8)], epochs=3)
    dense = hulk.Graph(N, random_edges(seed=9), node_features=random_features(seed=9).toarray())
    with pytest.raises(hulk.InputError, match="sparse node features"):
        hulk.Graph.batch([graphs[0], dense])


def test_edge_pool_first_layer_is_refused_by_name():
    g = hulk.Graph(N, random_edges(), node_features=random_features())
    with pytest.raises(hulk.InputError, match=r"sparse node features.*edge_pool=False"):
        hulk.GNN(num_classes=CLASSES, hidden=(8,)).fit(g, labels_for(), epochs=1)


# -- bad input ----------------------------------------------------------------------------------

def test_wrong_shape_is_named():
    with pytest.raises(hulk.InputError, match=r"node_features: expected 60 rows, got shape \(59, 200\)"):
        hulk.Graph(N, random_edges(), node_features=random_features(n=59))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_value_is_named_with_its_row_and_column(bad):
    x = random_features()
    x.data[4] = bad
    row = int(np.searchsorted(x.indptr, 4, side="right")) - 1
    with pytest.raises(hulk.InputError, match=rf"node_features: value {bad} at row {row}, column {x.indices[4]} "
                                              r"is not finite"):
        hulk.Graph(N, random_edges(), node_features=x)


def test_value_past_float32_is_named():
    x = random_features()
    x.data[0] = 1e300
    with pytest.raises(hulk.InputError, match=r"node_features: value 1e\+300 at row \d+, column \d+ is outside the "
                                              r"float32 range"):
        hulk.Graph(N, random_edges(), node_features=x)


def test_negative_values_are_features():
    x = random_features()
    x.data[:] = -np.abs(x.data) - 0.1
    assert hulk.Graph(N, random_edges(), node_features=x).x.min() < 0


@pytest.mark.filterwarnings("ignore::scipy.sparse.SparseEfficiencyWarning")  # building the DIA example
@pytest.mark.parametrize("fmt", ["lil", "dok", "bsr", "dia"])
def test_other_sparse_formats_are_refused_by_type(fmt):
    with pytest.raises(hulk.InputTypeError, match=rf"node_features: scipy.sparse \w+ \(format '{fmt}'\) is not taken"
                                                  r".*tocsr\(\)"):
        hulk.Graph(N, random_edges(), node_features=random_features().asformat(fmt))


def test_complex_values_are_refused():
    with pytest.raises(hulk.InputError, match=r"node_features: expected real numbers, got dtype complex128"):
        hulk.Graph(N, random_edges(), node_features=random_features().astype(np.complex128))


def test_column_index_out_of_range_is_named_before_any_int32_cast():
    # an int64 index past 2**31 would wrap to a small (valid looking) int32 one if cast first
    x = random_features()
    x.indices = x.indices.astype(np.int64)
    x.indices[2] = 2**32 + 1
    row = int(np.searchsorted(x.indptr, 2, side="right")) - 1
    with pytest.raises(hulk.InputError, match=rf"node_features: column index 4294967297 at row {row}, column "
                                              r"4294967297 is out of range \[0, 200\)"):
        hulk.Graph(N, random_edges(), node_features=x)


def test_more_columns_than_int32_indices_is_named():
    x = sp.csr_matrix((np.ones(1), np.array([5], np.int64), np.array([0, 1] + [1] * (N - 1), np.int64)),
                      shape=(N, 2**31 + 7))
    with pytest.raises(hulk.InputError, match=r"node_features: 2147483655 columns is more than the 2147483647"):
        hulk.Graph(N, random_edges(), node_features=x)


def test_broken_indptr_is_named():
    x = random_features()
    x.indptr = x.indptr.copy()
    x.indptr[-1] += 3
    with pytest.raises(hulk.InputError, match=r"node_features: indptr is not a CSR's row offsets"):
        hulk.Graph(N, random_edges(), node_features=x)


def test_normalize_rows_gives_unit_l1_rows_and_keeps_sparse_sparse():
    x = random_features(seed=11).tolil()
    x[5] = 0  # an empty row stays empty
    x = x.tocsr()
    out = hulk.normalize_rows(x)
    assert sp.issparse(out) and out.format == "csr" and out.nnz == x.nnz
    dense = x.toarray()
    want = np.zeros_like(dense)
    for i, row in enumerate(dense):
        total = sum(abs(v) for v in row)
        if total:
            want[i] = row / total
    np.testing.assert_allclose(out.toarray(), want, rtol=1e-12)
    np.testing.assert_allclose(hulk.normalize_rows(dense), want, rtol=1e-12)
    assert not out[5].nnz


def test_non_canonical_csr_means_what_scipy_means():
    # unsorted columns and a repeated entry (summed by scipy's toarray) in row 0, then empty rows
    indptr = np.array([0, 3] + [3] * (N - 1))
    x = sp.csr_matrix((np.array([0.5, 2.0, 0.25]), np.array([7, 3, 7]), indptr), shape=(N, F))
    assert not x.has_canonical_format
    y = labels_for(seed=12)
    losses = []
    for feats in (x, x.toarray()):
        model = hulk.GNN(num_classes=CLASSES, hidden=(4,), edge_pool=False, seed=1)
        losses.append([h["train_loss"] for h in model.fit(hulk.Graph(N, random_edges(), node_features=feats), y,
                                                           epochs=5)])
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-5)


def kipf_layers(rate=0.5):
    return [hulk.nn.Dropout(rate), hulk.nn.GCNConv(8, weight_decay=5e-4), hulk.nn.ReLU(), hulk.nn.Dropout(0.3),
            hulk.nn.GCNConv(CLASSES)]


def test_input_dropout_on_sparse_features_trains_as_on_the_same_features_dense():
    """The CSR's values get the dense path's masks (the same stream and keep rule at the same
    positions), so the two runs differ only by the products' rounding."""
    x, edges, y = random_features(seed=9), random_edges(seed=9), labels_for(seed=9)
    runs = {}
    for kind, feats in (("sparse", x), ("dense", x.toarray())):
        model = hulk.Sequential(kipf_layers(), standardize=False, seed=6)
        hist = model.fit(hulk.Graph(N, edges, node_features=feats), y, epochs=30, lr=0.02)
        runs[kind] = [h["train_loss"] for h in hist]
    assert runs["sparse"][-1] < 0.9 * runs["sparse"][0]
    np.testing.assert_allclose(runs["sparse"], runs["dense"], rtol=1e-5)
    # Not the run without input dropout: the masks do something.
    no_drop = hulk.Sequential(kipf_layers(rate=0.0), standardize=False, seed=6)
    plain = [h["train_loss"] for h in no_drop.fit(hulk.Graph(N, edges, node_features=x), y, epochs=30, lr=0.02)]
    assert abs(plain[0] - runs["sparse"][0]) > 1e-4


@pytest.mark.parametrize("rates", [(0.5,), (0.4, 0.3)])
def test_input_dropout_on_sparse_features_matches_float64_reference_and_finite_differences(rates):
    """Gradients of a training pass (the masks of the next step) against the float64 stack with
    the core's masks recomputed on the dense features, whose own gradients are checked by
    central differences; two input Dropouts mask the CSR's values twice."""
    from stack_reference import dropout_masks, gcn_matrix, input_shapes, loss_and_grads
    from hulk import _core
    x, edges, y = random_features(seed=11), random_edges(seed=11), labels_for(seed=11)
    mask = np.ones(N, np.uint8)
    layers = [hulk.nn.Dropout(r) for r in rates] + [hulk.nn.GCNConv(6), hulk.nn.ReLU(), hulk.nn.Dropout(0.2),
                                                    hulk.nn.Linear(CLASSES)]
    spec = [layer.to_dict() for layer in layers]
    g = hulk.Graph(N, edges, node_features=x)
    model = _core.engine.Model(in_features=F, edge_features=0, num_classes=CLASSES, layers=spec,
                               standardize=False, seed=8)
    rng = np.random.default_rng(3)
    model.set_parameters({k: rng.normal(0, 0.3, v.shape).astype(np.float32)
                          for k, v in model.parameters().items() if k.endswith(".bias")})
    for _ in range(2):  # the masks below are step 2's
        model.train_step(g.core, y, mask, 0.01, 0.0)
    loss, grads = model.gradients(g.core, y, mask, True)
    params = model.parameters()
    xd = x.toarray().astype(np.float32).astype(np.float64)
    masks = dropout_masks(spec, input_shapes(spec, N, F), 8, 2)
    assert all(m is not None and 0 < m.mean() < 1 for m in masks[:len(rates)])
    a_hat = gcn_matrix(N, edges)
    want_loss, want = loss_and_grads(spec, params, a_hat, xd, y, mask, masks)
    assert loss == pytest.approx(want_loss, rel=1e-5)
    for k in want:
        np.testing.assert_allclose(grads[k], want[k], rtol=1e-3, atol=1e-6, err_msg=k)
    for k in ("gcn1.weight", "classifier.weight"):
        flat = params[k].astype(np.float64).ravel()
        for i in rng.choice(flat.size, 6, replace=False):
            def at(delta):
                p = {**params, k: (flat + delta * (np.arange(flat.size) == i)).reshape(params[k].shape)}
                return loss_and_grads(spec, p, a_hat, xd, y, mask, masks)[0]
            numeric = (at(1e-6) - at(-1e-6)) / 2e-6
            assert numeric == pytest.approx(want[k].ravel()[i], rel=1e-5, abs=1e-9), (k, i)
    # And the core's loss itself against central differences in its float32 weights.
    k, i = "gcn1.weight", int(np.flatnonzero(np.abs(grads["gcn1.weight"]).ravel() > 1e-3)[0])
    flat = params[k].ravel()
    losses = []
    for delta in (1e-2, -1e-2):
        model.set_parameters({k: (flat + np.float32(delta) * (np.arange(flat.size) == i)).reshape(params[k].shape)
                              .astype(np.float32)})
        losses.append(model.gradients(g.core, y, mask, True)[0])
    model.set_parameters({k: params[k]})
    assert (losses[0] - losses[1]) / 2e-2 == pytest.approx(grads[k].ravel()[i], rel=2e-2)


def test_input_dropout_on_standardised_sparse_features_is_refused_by_name():
    g = hulk.Graph(N, random_edges(), node_features=random_features())
    model = hulk.Sequential([hulk.nn.Dropout(0.5), hulk.nn.GCNConv(8), hulk.nn.ReLU(), hulk.nn.GCNConv(CLASSES)])
    with pytest.raises(hulk.InputError, match=r"sparse node features and layers\[0\] \(dropout\).*standardize=False"):
        model.fit(g, labels_for(), epochs=1)
    # Evaluation drops nothing: a model trained on the dense features predicts on sparse ones.
    dense = hulk.Graph(N, random_edges(), node_features=random_features().toarray())
    model.fit(dense, labels_for(), epochs=3)
    np.testing.assert_allclose(model.predict_proba(g), model.predict_proba(dense), atol=1e-5)


def test_relu_before_the_first_weights_on_sparse_features_is_refused_by_name():
    g = hulk.Graph(N, random_edges(), node_features=random_features())
    model = hulk.Sequential([hulk.nn.ReLU(), hulk.nn.GCNConv(CLASSES)], standardize=False)
    with pytest.raises(hulk.InputError, match=r"sparse node features, which layers\[0\] \(relu\)"):
        model.fit(g, labels_for(), epochs=1)


def test_linear_first_layer_takes_sparse_features():
    g = hulk.Graph(N, random_edges(), node_features=random_features())
    linear = hulk.Sequential([hulk.nn.Linear(8), hulk.nn.ReLU(), hulk.nn.GCNConv(CLASSES)], seed=1)
    history = linear.fit(g, labels_for(), epochs=5)
    dense = hulk.Sequential([hulk.nn.Linear(8), hulk.nn.ReLU(), hulk.nn.GCNConv(CLASSES)], seed=1)
    dense_history = dense.fit(hulk.Graph(N, random_edges(), node_features=random_features().toarray()), labels_for(),
                              epochs=5)
    np.testing.assert_allclose([h["train_loss"] for h in history], [h["train_loss"] for h in dense_history],
                               rtol=1e-5)
