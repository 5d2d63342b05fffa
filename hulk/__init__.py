"""Hulk: graph neural networks for planning regionally distributed training.

The heavy lifting happens in the C++ extension ``hulk._core``; this package converts
networkx graphs and numpy arrays, checks inputs with clear messages, and offers a
command line (``hulk --help``).

Quick start::

    import hulk
    G = hulk.datasets.hulk47()                       # the paper's 47-server cluster
    labels, classes = hulk.datasets.hulk47_table2_labels()
    g = hulk.Graph.from_networkx(G, node_attrs=["capability", "memory_gb"],
                                 edge_attrs=["latency_ms"])
    model = hulk.GNN(num_classes=len(classes), hidden=(64, 64), seed=0)
    model.fit(g, labels, epochs=100)
    model.predict(g)

The planner for geo-distributed training is the subpackage ``hulk.plan`` (``import hulk.plan``;
not loaded by ``import hulk``), the command line ``hulk.cli``.
"""

try:
    from . import _core
except ImportError as _exc:  # the source folder of a checkout without its compiled extension
    import os as _os

    _here = _os.path.dirname(_os.path.abspath(__file__))
    # "cannot import name '_core' from partially initialized module" says nothing useful;
    # any other failure (a library the extension needs is missing, ...) is kept.
    _detail = "" if "cannot import name '_core'" in str(_exc) else f" ({_exc})"
    raise ImportError(
        f"hulk's compiled extension hulk._core is not in {_here}{_detail}. This is the source folder of a "
        "checkout, imported instead of an installed hulk because the current directory comes first on "
        "sys.path. Either build the extension in place with `pip install -e .` in the checkout (the README's "
        "scripts do), or run Python from another directory to use a `pip install .` installation."
    ) from None

from . import datasets, nn
from .errors import (DeviceError, FileFormatError, HulkError, InputError, InputTypeError, NotFittedError,
                     OutOfMemoryError)
from ._device import cuda_available, cuda_simulated, cuda_unavailable_reason, get_num_threads, set_num_threads
from .gnn import GNN
from .graph import Graph, normalize_rows
from .sequential import Sequential

__version__ = _core.__version__

__all__ = [
    "DeviceError",
    "FileFormatError",
    "GNN",
    "HulkError",
    "InputError",
    "InputTypeError",
    "NotFittedError",
    "OutOfMemoryError",
    "Graph",
    "Sequential",
    "normalize_rows",
    "cuda_available",
    "cuda_simulated",
    "cuda_unavailable_reason",
    "datasets",
    "nn",
    "get_num_threads",
    "set_num_threads",
    "__version__",
]
