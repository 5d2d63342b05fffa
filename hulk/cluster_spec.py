"""Deprecated: use hulk.plan.cluster_spec (or hulk.plan); removed in 0.3.

A re-export of the public names, kept for one release after the planner moved into the
``hulk.plan`` package.
"""

import warnings as _warnings

from .plan.cluster_spec import *  # noqa: F401,F403
from .plan.cluster_spec import __all__  # noqa: F401

_warnings.warn("hulk.cluster_spec is deprecated: use hulk.plan.cluster_spec (or hulk.plan); it is removed in 0.3",
               DeprecationWarning, stacklevel=2)
