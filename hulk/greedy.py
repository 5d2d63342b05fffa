"""Deprecated: use hulk.plan.rules (or hulk.plan); removed in 0.3.

A re-export of the public names, kept for one release after the planner moved into the
``hulk.plan`` package.
"""

import warnings as _warnings

from .plan.rules import (  # noqa: F401
    greedy_classes,
)

_warnings.warn("hulk.greedy is deprecated: use hulk.plan.rules (or hulk.plan); it is removed in 0.3",
               DeprecationWarning, stacklevel=2)
