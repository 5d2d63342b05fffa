"""hulk.errors: one hierarchy, each class also the built-in that callers caught before it."""

import resource
import subprocess
import sys

import numpy as np
import pytest

import hulk
from hulk import _core, errors


@pytest.mark.parametrize("cls, builtin", [
    (errors.InputError, ValueError), (errors.InputTypeError, TypeError), (errors.InputTypeError, ValueError),
    (errors.FileFormatError, ValueError), (errors.DeviceError, RuntimeError),
    (errors.NotFittedError, RuntimeError), (errors.OutOfMemoryError, MemoryError)])
def test_each_error_is_a_hulk_error_and_its_builtin(cls, builtin):
    assert issubclass(cls, errors.HulkError) and issubclass(cls, builtin)
    assert getattr(hulk, cls.__name__) is cls


def test_file_format_error_names_the_file_and_the_field():
    e = errors.FileFormatError("/tmp/c.json", "machines[3].memory_gb", "must be > 0, got -1")
    assert str(e) == "/tmp/c.json: machines[3].memory_gb: must be > 0, got -1"
    assert (e.path, e.field) == ("/tmp/c.json", "machines[3].memory_gb")


def test_cpp_invalid_argument_arrives_as_input_error():
    with pytest.raises(errors.InputError, match="layers must be >= 1, got -1"):
        _core.plan.ModelSpec("x", -1, 1, 1, 1, 1, 1, 1, 1, 1, 1, False)


def test_python_checks_raise_input_errors():
    with pytest.raises(errors.InputError, match="num_nodes"):
        hulk.Graph(-1, np.zeros((0, 2), dtype=np.int64))
    with pytest.raises(errors.NotFittedError):
        hulk.GNN(num_classes=2).predict(hulk.Graph(2, [[0, 1]], node_features=np.ones((2, 1))))


def test_cpp_bad_alloc_arrives_as_out_of_memory_error():
    # In a child with its address space capped, so the allocation fails instead of the machine swapping.
    code = """
import resource
resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))
import numpy as np, hulk
g = hulk.Graph(3, [[0, 1]], node_features=np.ones((3, 2)))
try:
    hulk.GNN(num_classes=3, hidden=(100_000, 100_000)).fit(g, [0, 1, 2], epochs=1)
except hulk.OutOfMemoryError as e:
    print("OOM", isinstance(e, MemoryError), e)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("OOM True"), proc.stdout + proc.stderr
