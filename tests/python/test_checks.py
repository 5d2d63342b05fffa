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


def test_check_int_and_check_seed_bounds():
    from hulk._checks import check_int, check_seed
    assert check_seed(0) == 0 and check_seed(np.uint64(2**64 - 1)) == 2**64 - 1
    for bad in (2**64, -1, True, 1.0, "3", None):
        with pytest.raises(hulk.InputError, match=r"^seed must be an integer in \[0, 2\*\*64 - 1\], got "):
            check_seed(bad)
    assert check_int(2**63 - 1, "epochs", 1) == 2**63 - 1
    with pytest.raises(hulk.InputError, match=r"^epochs must be an integer in \[1, 2\*\*63 - 1\], got 9223372036854775808"):
        check_int(2**63, "epochs", 1)


def test_check_hashable():
    from hulk._checks import check_hashable
    check_hashable((1, "a"), "id")
    with pytest.raises(hulk.InputTypeError, match=r"^labels key = \[1, 2\] is of type list, which is not hashable"):
        check_hashable([1, 2], "labels key")


def test_naming_out_of_memory_chains_and_passes_named_errors_through():
    from hulk._checks import naming_out_of_memory
    with pytest.raises(hulk.OutOfMemoryError) as exc:
        with naming_out_of_memory("outer", {"a": 1}):
            with naming_out_of_memory("inner", lambda: {"nodes": 5}, lambda: 3 * 2**30):
                raise MemoryError("numpy")
    assert str(exc.value).startswith("inner: out of memory (nodes 5; needs about 3.0 GiB)")
    assert str(exc.value.__cause__) == "numpy"
    with pytest.raises(hulk.OutOfMemoryError, match=r"^f: out of memory \(sizes unknown\)"):
        with naming_out_of_memory("f", lambda: 1 / 0):
            raise MemoryError()
    with pytest.raises(ValueError):  # other errors pass untouched
        with naming_out_of_memory("f", {}):
            raise ValueError("x")
