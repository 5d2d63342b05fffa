"""hulk.Sequential and hulk.nn (issue 20, composable models): stacks against a float64
re-implementation (forward, backward, 50 Adam epochs), finite differences, the GNN shortcut
against main's recorded behaviour, weight files of both versions, and bad stacks."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

import hulk
from hulk import _core, nn
from stack_reference import dropout_masks, gcn_matrix, input_shapes, loss_and_grads, train
from weightfile import parse_model_file, write_model_file

DATA = Path(__file__).parent / "data"


def citation_like(seed, n=60, f=12, classes=4, extra_edges=90):
    """A small undirected graph without self-loops or repeated edges, dense features, labels on
    a third of the nodes (a training mask as Kipf and Welling's)."""
    rng = np.random.default_rng(seed)
    seen = {(i, i + 1) for i in range(n - 1)}
    while len(seen) < n - 1 + extra_edges:
        u, v = sorted(int(a) for a in rng.integers(0, n, 2))
        if u != v:
            seen.add((u, v))
    edges = np.array(sorted(seen), np.int64)
    x = rng.normal(0.0, 1.0, (n, f)).astype(np.float32)
    labels = rng.integers(0, classes, n)
    train_mask = np.zeros(n, bool)
    train_mask[rng.choice(n, n // 3, replace=False)] = True
    return hulk.Graph(n, edges, node_features=x), edges, x, labels, train_mask


def kipf(classes, rate=0.5, decay=5e-4):
    """Kipf and Welling's GCN (input dropout, GCNConv(16) with L2 on it only, ReLU, dropout, GCNConv(C))."""
    return [nn.Dropout(rate), nn.GCNConv(16, weight_decay=decay), nn.ReLU(), nn.Dropout(rate), nn.GCNConv(classes)]


def dicts(layers):
    return [layer.to_dict() for layer in layers]


# ---------------------------------------------------------------------------------------------
# the float64 reference


STACKS = {
    "kipf": kipf(4),
    "gcn_linear_gcn": [nn.GCNConv(7), nn.ReLU(), nn.Linear(5, weight_decay=0.1), nn.ReLU(), nn.Dropout(0.3),
                       nn.GCNConv(4)],
    "input_dropout_linear": [nn.Dropout(0.2), nn.Linear(6), nn.ReLU(), nn.GCNConv(5), nn.ReLU(), nn.Linear(4)],
}


@pytest.mark.parametrize("name", sorted(STACKS))
@pytest.mark.parametrize("training", [False, True])
def test_gradients_match_float64_reference(name, training):
    g, edges, x, labels, train_mask = citation_like(1)
    layers = STACKS[name]
    model = _core.engine.Model(in_features=12, edge_features=0, num_classes=4, layers=dicts(layers),
                               standardize=False, seed=3)
    rng = np.random.default_rng(2)
    # Random biases: no unit sits on a ReLU kink.
    model.set_parameters({k: rng.normal(0, 0.3, v.shape).astype(np.float32)
                          for k, v in model.parameters().items() if k.endswith(".bias")})
    for _ in range(2):  # a few steps: the masks below are not the first step's
        model.train_step(g.core, labels, train_mask.astype(np.uint8), 0.01, 0.0)
    loss, grads = model.gradients(g.core, labels, train_mask.astype(np.uint8), training)
    params = model.parameters()
    spec = dicts(layers)
    masks = dropout_masks(spec, input_shapes(spec, 60, 12), 3, 2, training)
    a_hat = gcn_matrix(60, edges)
    want_loss, want = loss_and_grads(spec, params, a_hat, x, labels, train_mask, masks)
    assert loss == pytest.approx(want_loss, rel=1e-5)
    assert grads.keys() == want.keys()
    for k in want:
        np.testing.assert_allclose(grads[k], want[k], rtol=1e-3, atol=1e-6, err_msg=k)
    # The reference's own gradients against central differences in float64.
    for k in want:
        flat = params[k].astype(np.float64).ravel()
        for i in rng.choice(flat.size, min(6, flat.size), replace=False):
            def at(delta):
                p = {**params, k: (flat + delta * (np.arange(flat.size) == i)).reshape(params[k].shape)}
                return loss_and_grads(spec, p, a_hat, x, labels, train_mask, masks)[0]
            numeric = (at(1e-6) - at(-1e-6)) / 2e-6
            assert numeric == pytest.approx(want[k].ravel()[i], rel=1e-5, abs=1e-9), (k, i)


@pytest.mark.parametrize("dropout, decay, global_decay", [(True, 5e-4, 0.0), (False, 5e-4, 0.0),
                                                         (True, 0.05, 0.02)])
def test_kipf_model_trains_as_the_float64_reference(dropout, decay, global_decay):
    """Issue 20, part 4: 50 Adam epochs of Kipf and Welling's shape, dropout on (the reference
    draws the core's masks) or off, per-layer weight decay; the loss curves agree to 1e-5."""
    g, edges, x, labels, train_mask = citation_like(5, n=80, f=20, classes=5, extra_edges=150)
    layers = kipf(5, rate=0.5 if dropout else 0.0, decay=decay)
    model = hulk.Sequential(layers, standardize=False, seed=11)
    model._build(g)
    start = model.parameters()
    history = model.fit(g, labels, train_mask=train_mask, epochs=50, lr=0.01, weight_decay=global_decay)
    got = np.array([h["train_loss"] for h in history])
    want = np.array(train(dicts(layers), start, gcn_matrix(80, edges), x, labels, train_mask, 11, 50, 0.01,
                          global_decay, dropout=dropout))
    rel = np.abs(got - want) / np.abs(want)
    assert rel.max() < 1e-5, (rel.max(), int(rel.argmax()))
    assert want[-1] < 0.9 * want[0]  # it learned something: the curves compared are not flat


# ---------------------------------------------------------------------------------------------
# the GNN shortcut


MAIN_CASES = {  # as recorded from main (30387ef) into data/gnn_main_losses.json
    "edge_pool_sum_dropout": dict(hidden=(8, 6), dropout=0.3),
    "edge_pool_mean": dict(hidden=(8, 6, 5), pooling="mean"),
    "gcn_dropout": dict(hidden=(8, 6), edge_pool=False, dropout=0.5),
    "gcn_edge_weights": dict(hidden=(7,), edge_pool=False, gcn_edge_weights=True),
    "no_standardize": dict(hidden=(4, 4), dropout=0.2, standardize=False, seed=7),
}


def _main_run(cls_kwargs, weights, make):
    from test_gnn import random_graph
    g = random_graph(0, weights=weights)
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, g.num_nodes)
    y[::7] = -1
    m = make(cls_kwargs)
    h = m.fit(g, y, epochs=15, lr=0.02, weight_decay=5e-4)
    step = m.partial_fit(g, y, lr=0.01, weight_decay=1e-3)
    return [r["train_loss"] for r in h] + [step["loss"], float(np.asarray(m.logits(g), np.float64).sum())]


@pytest.mark.parametrize("case", sorted(MAIN_CASES))
def test_gnn_shortcut_reproduces_main(case):
    """The shortcut trains as main's fixed-shape GNN did (recorded there; bit for bit on the
    machine that recorded them, to 1e-5 elsewhere, where BLAS kernels may round differently), and
    a Sequential of its stack trains bit for bit as the shortcut."""
    kw = dict(MAIN_CASES[case])
    seed = kw.pop("seed", 3)
    recorded = json.loads((DATA / "gnn_main_losses.json").read_text())[case]
    want = [float.fromhex(v) for v in recorded["train_loss"]] + [float.fromhex(recorded["partial_fit_loss"]),
                                                                 float.fromhex(recorded["logits_sum"])]
    weights = kw.get("gcn_edge_weights", False)
    got = _main_run(kw, weights, lambda k: hulk.GNN(3, seed=seed, **k))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    layers = hulk.gnn.gnn_layers(3, list(kw["hidden"]), kw.get("edge_pool", True), kw.get("dropout", 0.0))
    same = _main_run(kw, weights, lambda k: hulk.Sequential(
        layers, pooling=k.get("pooling", "sum"), gcn_edge_weights=weights, standardize=k.get("standardize", True),
        seed=seed))
    assert same == got


@pytest.mark.parametrize("hidden, edge_pool, dropout", [((5,), True, 0.0), ((5, 4, 3), False, 0.25),
                                                        ((2, 2), True, 0.5)])
def test_gnn_layers_is_the_cores_shortcut(hidden, edge_pool, dropout):
    core = _core.engine.Model(in_features=3, edge_features=1, num_classes=4, hidden=list(hidden),
                              edge_pool=edge_pool, dropout=dropout)
    layers = hulk.gnn.gnn_layers(4, list(hidden), edge_pool, dropout)
    assert [nn.from_dict(d) for d in core.config["layers"]] == layers
    assert hulk.gnn.gnn_options(layers) == dict(hidden=list(hidden), edge_pool=edge_pool, dropout=dropout)


# ---------------------------------------------------------------------------------------------
# weight files


def test_version_1_file_still_loads(tmp_path):
    """A file main wrote (format version 1, GNN(3, hidden=(5, 4), dropout=0.1, seed=11), 5 epochs)
    loads as that GNN, predicts as it did, and saves again as version 2."""
    from test_gnn import random_graph
    raw = (DATA / "gnn_v1.hulk").read_bytes()
    assert parse_model_file(raw)[0] == 1
    m = hulk.GNN.load(DATA / "gnn_v1.hulk")
    assert type(m) is hulk.GNN
    assert m.config["hidden"] == [5, 4] and m.config["dropout"] == 0.1 and m.config["edge_pool"]
    g = random_graph(0)
    np.testing.assert_allclose(m.logits(g), np.load(DATA / "gnn_v1_logits.npy"), rtol=1e-6, atol=1e-6)
    m.save(tmp_path / "v2.hulk")
    version, config, _ = parse_model_file((tmp_path / "v2.hulk").read_bytes())
    assert version == 2
    assert "layers=edge_pool:5,relu,dropout:0.100000001,gcn:4,relu,dropout:0.100000001,linear:3\n" in config
    again = hulk.GNN.load(tmp_path / "v2.hulk")
    assert type(again) is hulk.GNN and again.config == m.config
    np.testing.assert_array_equal(again.logits(g), m.logits(g))


def test_sequential_save_load_round_trip(tmp_path):
    g, _, _, labels, train_mask = citation_like(3)
    m = hulk.Sequential(kipf(4) + [], seed=2)
    m.fit(g, labels, train_mask=train_mask, epochs=5)
    m.save(tmp_path / "kipf.hulk")
    version, config, tensors = parse_model_file((tmp_path / "kipf.hulk").read_bytes())
    assert version == 2
    assert "layers=dropout:0.5,gcn:16:0.000500000024,relu,dropout:0.5,gcn:4\n" in config
    assert [name for name, _ in tensors][:4] == ["gcn1.weight", "gcn1.bias", "gcn2.weight", "gcn2.bias"]
    for loader in (hulk.Sequential.load, hulk.GNN.load):  # not a GNN's stack: a Sequential either way
        loaded = loader(tmp_path / "kipf.hulk")
        assert type(loaded) is hulk.Sequential
        assert loaded.layers == m.layers and loaded.config == m.config
        np.testing.assert_array_equal(loaded.predict_proba(g), m.predict_proba(g))
    # The configuration rebuilds the model.
    cfg = m.config
    rebuilt = hulk.Sequential(cfg["layers"], pooling=cfg["pooling"], seed=cfg["seed"])
    assert rebuilt.layers == m.layers


def test_sequential_api_matches_gnn(tmp_path):
    """fit / partial_fit / evaluate / predict on a stack ending in a Linear after an EdgePool."""
    from test_gnn import random_graph
    g = random_graph(4)
    y = np.random.default_rng(0).integers(0, 3, g.num_nodes)
    m = hulk.Sequential([nn.EdgePool(6), nn.ReLU(), nn.Linear(3)], pooling="mean", seed=1)
    assert len(m.fit(g, y, epochs=3)) == 3
    assert set(m.partial_fit(g, y)) == {"loss", "acc"}
    assert m.evaluate(g, y)["count"] == g.num_nodes
    assert m.predict(g).shape == (g.num_nodes,) and m.predict_proba(g).shape == (g.num_nodes, 3)
    assert m.num_parameters == (2 * 3 + 2 + 1) * 6 + 7 * 3
    assert "EdgePool(width=6" in repr(m) and "pooling='mean'" in repr(m)


# ---------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("make, error, needle", [
    (lambda: nn.GCNConv(0), hulk.InputError, "GCNConv: width must be an integer in [1, 1048576], got 0"),
    (lambda: nn.Linear(2.5), hulk.InputError, "Linear: width must be an integer in [1, 1048576], got 2.5"),
    (lambda: nn.GCNConv(4, weight_decay=-1e-3), hulk.InputError, "weight_decay must be a finite number >= 0 or "
                                                                  "None, got -0.001"),
    (lambda: nn.GCNConv(4, weight_decay=math.nan), hulk.InputError, "got nan"),
    (lambda: nn.Dropout(1.0), hulk.InputError, "Dropout: rate must be a number in [0, 1), got 1.0"),
    (lambda: nn.Dropout("0.5"), hulk.InputError, "got '0.5'"),
    (lambda: hulk.Sequential([]), hulk.InputError, "layers is empty"),
    (lambda: hulk.Sequential("gcn"), hulk.InputTypeError, "layers must be a list of hulk.nn layers, got 'gcn'"),
    (lambda: hulk.Sequential([nn.GCNConv(4), 3]), hulk.InputTypeError, "layers[1] must be a hulk.nn layer"),
    (lambda: hulk.Sequential([{"kind": "conv", "width": 3}]), hulk.InputError,
     "layers[0]: unknown layer kind 'conv'; expected one of gcn, linear, edge_pool, relu, dropout"),
    (lambda: hulk.Sequential([{"kind": "relu", "width": 3}, nn.Linear(3)]), hulk.InputError,
     "layers[0]: a relu layer takes no settings, got 'width'"),
    (lambda: hulk.Sequential([{"kind": "gcn"}]), hulk.InputError, "layers[0]:"),
    (lambda: hulk.Sequential([nn.GCNConv(4), nn.ReLU()]), hulk.InputError,
     "layers[1] = ReLU(): the last layer must be a GCNConv, Linear or EdgePool"),
    (lambda: hulk.Sequential([nn.Dropout(0.5)]), hulk.InputError, "layers[0] = Dropout(rate=0.5): the last layer"),
    (lambda: hulk.Sequential([nn.GCNConv(4), nn.ReLU(), nn.Linear(1)]), hulk.InputError,
     "the last layer's width is the number of classes, which must be >= 2"),
    (lambda: hulk.Sequential([nn.GCNConv(4), nn.ReLU(), nn.EdgePool(3)]), hulk.InputError,
     "layers[2] = EdgePool(width=3): EdgePool must be the first layer"),
    (lambda: hulk.Sequential([nn.ReLU()] * 300 + [nn.Linear(2)]), hulk.InputError, "layers has 301 entries"),
    (lambda: hulk.Sequential([nn.Linear(2)], pooling="max"), hulk.InputError, "pooling must be 'sum' or 'mean', "
                                                                              "got 'max'"),
    (lambda: hulk.Sequential([nn.Linear(2)], seed=-1), hulk.InputError, "seed"),
])
def test_bad_stacks_name_the_argument_and_value(make, error, needle):
    with pytest.raises(error) as exc:
        make()
    assert needle in str(exc.value)


def test_core_rejects_bad_stacks_by_name():
    """The C++ checks behind the Python ones (a stack handed to the core directly)."""
    def core(layers):
        return _core.engine.Model(in_features=3, edge_features=0, num_classes=3, layers=layers)
    for layers, needle in [([{"kind": "conv", "width": 3}], "layers[0]: unknown layer 'conv'"),
                           ([{"kind": "gcn", "width": 3, "size": 1}], "layers[0]: unknown key 'size'"),
                           ([{"kind": "gcn", "width": 4}], "the last layer gives 4 outputs but num_classes is 3"),
                           ([{"kind": "dropout", "rate": 1.5}, {"kind": "linear", "width": 3}], "rate must be in "
                                                                                                  "[0, 1), got 1.5"),
                           ([{"kind": "linear", "width": 3}, {"kind": "relu"}, {"kind": "edge_pool", "width": 3}],
                            "layers[2] (edge_pool): EdgePool must be the first layer")]:
        with pytest.raises(hulk.InputError) as exc:
            core(layers)
        assert needle in str(exc.value)


@pytest.mark.parametrize("old, new, needle", [
    ("gcn:16:0.000500000024", "gcn:16:abc", "'layers[1] weight_decay' = 'abc' is not a finite number"),
    ("gcn:16:0.000500000024", "gcn:16:-1", "layers[1] (gcn): weight_decay must be a finite number >= 0, got -1"),
    ("gcn:16:0.000500000024", "conv:16", "configuration 'layers[1]': unknown layer 'conv'"),
    ("relu", "relu:3", "'layers[2]' = 'relu:3' has 1 fields, relu takes 0"),
    ("gcn:16:0.000500000024", "gcn:16:1:2", "'layers[1]' = 'gcn:16:1:2' has 3 fields, gcn takes 1 or 2"),
    ("dropout:0.5,gcn:16", "dropout:1.5,gcn:16", "layers[0] (dropout): rate must be in [0, 1), got 1.5"),
    ("gcn:4\n", "gcn:5\n", "the last layer gives 5 outputs but num_classes is 4"),
    ("gcn:4\n", "gcn:4,relu\n", "layers[5] (relu): the last layer must be"),
    ("relu,dropout:0.5,gcn:4", "relu,edge_pool:4", "layers[3] (edge_pool): EdgePool must be the first layer"),
    ("layers=", "hidden=16,4\nlayers=", "unknown configuration key 'hidden'"),
    ("dropout:0.5,", "relu," * 300, "lists more than 256 layers"),
])
def test_bad_stacks_in_a_file_name_the_entry(tmp_path, old, new, needle):
    g, _, _, labels, train_mask = citation_like(3)
    m = hulk.Sequential(kipf(4), seed=2)
    m.fit(g, labels, train_mask=train_mask, epochs=1)
    m.save(tmp_path / "kipf.hulk")
    version, config, tensors = parse_model_file((tmp_path / "kipf.hulk").read_bytes())
    assert old in config
    bad = tmp_path / "bad.hulk"
    bad.write_bytes(write_model_file(version, config.replace(old, new, 1), tensors))
    with pytest.raises(RuntimeError) as exc:
        hulk.Sequential.load(bad)
    assert str(bad) in str(exc.value) and needle in str(exc.value), str(exc.value)


def test_version_1_keys_only_in_version_1_files(tmp_path):
    version, config, tensors = parse_model_file((DATA / "gnn_v1.hulk").read_bytes())
    bad = tmp_path / "v2_with_v1_keys.hulk"
    bad.write_bytes(write_model_file(2, config, tensors))
    with pytest.raises(RuntimeError, match="unknown configuration key '(hidden|edge_pool|dropout)'"):
        hulk.GNN.load(bad)
