"""Deprecated: use hulk.plan.planners (or hulk.plan); removed in 0.3.

A re-export of the public names, kept for one release after the planner moved into the
``hulk.plan`` package.
"""

import warnings as _warnings

from .plan.planners import (  # noqa: F401
    PLANNERS,
    PLANNER_TITLES,
    MAX_TIME_LIMIT_S,
    DEFAULT_REFINE_ITERATIONS,
    HEURISTIC_CANDIDATE_MAX_MACHINES,
    Plan,
    plan,
    compare,
)
from .plan.inputs import as_cluster, as_cluster_spec, as_model_specs  # noqa: F401
from .plan.rules import DEFAULT_GROW_ROUNDS, GROWTH_STEPS, grow_bottleneck  # noqa: F401

_warnings.warn("hulk.planner is deprecated: use hulk.plan.planners (or hulk.plan); it is removed in 0.3",
               DeprecationWarning, stacklevel=2)
