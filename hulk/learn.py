"""Deprecated: use hulk.plan.learned (or hulk.plan); removed in 0.3.

A re-export of the public names, kept for one release after the planner moved into the
``hulk.plan`` package.
"""

import warnings as _warnings

from .plan.learned import (  # noqa: F401
    MAX_JOBS,
    FORMAT_VERSION,
    EDGE_FEATURES,
    THRESHOLDS,
    DEFAULT_MODEL,
    LearnedPlanner,
    classes_from_slots,
    decode_groups,
    default_planner,
    encode,
    node_feature_names,
    rule_groups,
    slot_order,
)
from .plan.training import (MAX_SAMPLES, MEMORY_HEADROOM, Sample, SampleSpec, default_cache_dir,  # noqa: F401
                             draw_jobs, label_sample, labels_from_plan, make_dataset, sample_specs, train)

_warnings.warn("hulk.learn is deprecated: use hulk.plan.learned (or hulk.plan); it is removed in 0.3",
               DeprecationWarning, stacklevel=2)
