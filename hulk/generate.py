"""Deprecated: use hulk.plan.generate (or hulk.plan); removed in 0.3.

A re-export of the public names, kept for one release after the planner moved into the
``hulk.plan`` package.
"""

import warnings as _warnings

from .plan.generate import *  # noqa: F401,F403
from .plan.generate import __all__  # noqa: F401

_warnings.warn("hulk.generate is deprecated: use hulk.plan.generate (or hulk.plan); it is removed in 0.3",
               DeprecationWarning, stacklevel=2)
