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
"""

from . import _core, datasets
from ._device import cuda_available, cuda_simulated, cuda_unavailable_reason, get_num_threads, set_num_threads
from .gnn import GNN
from .graph import Graph

__version__ = _core.__version__

__all__ = [
    "GNN",
    "Graph",
    "cuda_available",
    "cuda_simulated",
    "cuda_unavailable_reason",
    "datasets",
    "get_num_threads",
    "set_num_threads",
    "__version__",
]
