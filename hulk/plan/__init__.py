"""hulk.plan: plan which machines train which job, and measure it with the cost model.

Modules:

- :mod:`~hulk.plan.cluster`: the :class:`Cluster` interface every planner takes, and the
  :class:`Machines` table;
- :mod:`~hulk.plan.cluster_spec` (:class:`ClusterSpec`, explicit machines and links) and
  :mod:`~hulk.plan.generate` (:class:`RegionalCluster`, seeded synthetic clusters);
- :mod:`~hulk.plan.models`: the model catalogue (:class:`ModelSpec`);
- :mod:`~hulk.plan.inputs`: :func:`as_cluster`, :func:`as_model_specs`;
- :mod:`~hulk.plan.rules`: the greedy rule, growth, and Algorithm 1 on a classification;
- :mod:`~hulk.plan.planners`: :func:`plan`, :func:`compare`, :class:`Plan`;
- :mod:`~hulk.plan.profile`: measured per-layer profiles (``hulk-profile/1``, :class:`Profile`);
- :mod:`~hulk.plan.torch_block`: the transformer block ``hulk profile`` measures (PyTorch, optional);
- :mod:`~hulk.plan.learned`: the GNN's encoding and :class:`LearnedPlanner`;
- :mod:`~hulk.plan.training`: the teacher's data set and :func:`train`;
- :mod:`~hulk.plan.report`: tables and figures.

Imports point one way: ``hulk.cli`` -> ``hulk.plan`` -> the engine (``hulk.Graph``, ``hulk.GNN``).
"""

from . import cluster_spec, generate, models, report, rules
from .cluster import Cluster, Machines, cities
from .cluster_spec import ClusterSpec, from_json, from_networkx, from_paper_files, hulk47_spec
from .generate import RegionalCluster, generate_cluster
from .inputs import as_cluster, as_cluster_spec, as_model_specs
from .learned import LearnedPlanner, decode_groups, default_planner, encode
from .models import PAPER_JOBS_4, PAPER_JOBS_6, ModelSpec, catalogue, load_models
from .planners import PLANNER_TITLES, PLANNERS, Plan, compare, plan, table2_gnn
from .profile import Profile, load_profile
from .rules import greedy_classes, grow_bottleneck, plan_classes
from .training import make_dataset, train

__all__ = [
    "PAPER_JOBS_4",
    "PAPER_JOBS_6",
    "PLANNERS",
    "PLANNER_TITLES",
    "Cluster",
    "ClusterSpec",
    "LearnedPlanner",
    "Machines",
    "ModelSpec",
    "Profile",
    "Plan",
    "RegionalCluster",
    "as_cluster",
    "as_cluster_spec",
    "as_model_specs",
    "catalogue",
    "cities",
    "cluster_spec",
    "compare",
    "decode_groups",
    "default_planner",
    "encode",
    "from_json",
    "from_networkx",
    "from_paper_files",
    "generate",
    "generate_cluster",
    "greedy_classes",
    "grow_bottleneck",
    "hulk47_spec",
    "load_models",
    "load_profile",
    "make_dataset",
    "models",
    "plan",
    "plan_classes",
    "report",
    "rules",
    "table2_gnn",
    "train",
]
