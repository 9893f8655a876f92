"""Why did it fail: config lint, simulation flags, failure clusters.

:func:`lint` finds the spec's silent failures and ignored knobs in a config;
:func:`simulation_flags` says which conversations the simulated caller, not the assistant,
makes suspect; :func:`failure_clusters` groups failing conversations by what failed.
"""

from __future__ import annotations

from .._util import publish
from ._clusters import ClusterOptions, cluster_members, failure_clusters
from ._flags import FLAG_RULES, flag_rules, simulation_flags
from ._lint import ConfigLike, lint, lint_rules
from ._recorded import FLAGS_KEY, record_flags, recorded_flags
from ._why import WhyItFailed, moved_rules, why_it_failed

__all__ = [
    "FLAGS_KEY",
    "FLAG_RULES",
    "ClusterOptions",
    "ConfigLike",
    "WhyItFailed",
    "cluster_members",
    "failure_clusters",
    "flag_rules",
    "lint",
    "lint_rules",
    "moved_rules",
    "record_flags",
    "recorded_flags",
    "simulation_flags",
    "why_it_failed",
]

# What evalkit's other packages take from here and users need not: not public, not in the API
# snapshot (``x as x`` marks each as re-exported for the type checker).
from ._record_values import hide_record_words as hide_record_words
from ._record_values import record_value_words as record_value_words

_SIBLING_API = (
    "hide_record_words",
    "record_value_words",
)

publish(globals())
