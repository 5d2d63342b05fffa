"""Deprecated: use hulk.plan.report (or hulk.plan); removed in 0.3.

A re-export of the public names, kept for one release after the planner moved into the
``hulk.plan`` package.
"""

import warnings as _warnings

from .plan.report import (  # noqa: F401
    comparison_table,
    job_comparison_table,
    machine_locations,
    plan_table,
    ranges,
    save_figure,
)

_warnings.warn("hulk.report is deprecated: use hulk.plan.report (or hulk.plan); it is removed in 0.3",
               DeprecationWarning, stacklevel=2)
