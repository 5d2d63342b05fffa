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


def test_input_dropout_on_sparse_features_is_refused_by_name():
    g = hulk.Graph(N, random_edges(), node_features=random_features())
    model = hulk.Sequential([hulk.nn.Dropout(0.5), hulk.nn.GCNConv(8), hulk.nn.ReLU(), hulk.nn.GCNConv(CLASSES)])
    with pytest.raises(hulk.InputError, match=r"sparse node features.*input Dropout"):
        model.fit(g, labels_for(), epochs=1)
    # A Linear first layer takes them (the same sparse products as GCNConv's).
    linear = hulk.Sequential([hulk.nn.Linear(8), hulk.nn.ReLU(), hulk.nn.GCNConv(CLASSES)], seed=1)
    history = linear.fit(g, labels_for(), epochs=5)
    dense = hulk.Sequential([hulk.nn.Linear(8), hulk.nn.ReLU(), hulk.nn.GCNConv(CLASSES)], seed=1)
    dense_history = dense.fit(hulk.Graph(N, random_edges(), node_features=random_features().toarray()), labels_for(),
                              epochs=5)
    np.testing.assert_allclose([h["train_loss"] for h in history], [h["train_loss"] for h in dense_history],
                               rtol=1e-5)
