"""Argument checks shared by the API (hulk._checks): no silent coercion of labels or features, numpy
scalars accepted wherever Python numbers are."""

from __future__ import annotations

import numpy as np
import pytest

import hulk
from helpers import fitted_model
from hulk.plan import cluster_spec, planners


def test_uint64_label_does_not_wrap_to_unlabelled():
    m, g = fitted_model()
    y = np.zeros(g.num_nodes, np.uint64)
    y[4] = np.uint64(2**64 - 1)
    with pytest.raises(ValueError, match=r"labels\[4\] = 18446744073709551615"):
        m.fit(g, y, epochs=1)


def test_complex_features_are_refused():
    with pytest.raises(ValueError, match="complex"):
        hulk.Graph(2, [[0, 1]], node_features=np.array([[1 + 2j], [3 + 0j]]))


def test_numpy_scalars_are_valid_arguments():
    m, g = fitted_model()
    m.fit(g, np.zeros(g.num_nodes, np.int64), epochs=np.int32(1), lr=np.float32(0.01),
          weight_decay=np.float32(0.0))
    assert hulk.GNN(3, dropout=np.float32(0.1), seed=np.uint8(3)).config["dropout"] == pytest.approx(0.1)
    from hulk.plan import planners
    p = planners.plan(cluster_spec.hulk47_spec(), ["BERT-large"], "search", time_limit_s=np.float32(0.05),
                     seed=np.int64(1), max_iterations=np.int64(50))
    assert p.without(np.int64(3)).feasible
