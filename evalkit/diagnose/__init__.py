"""Why did it fail: config lint, simulation flags, failure clusters.

:func:`lint` finds the spec's silent failures and ignored knobs in a config;
:func:`simulation_flags` says which conversations the simulated caller, not the assistant,
makes suspect; :func:`failure_clusters` groups failing conversations by what failed.
"""

from __future__ import annotations

from .._util import publish
from ._clusters import ClusterOptions, cluster_members, failure_clusters
from ._flags import FLAG_RULES, flag_rules, simulation_flags
from ._lint import lint, lint_rules
from ._recorded import FLAGS_KEY, record_flags, recorded_flags
from ._why import WhyItFailed, moved_rules, why_it_failed

__all__ = [
    "FLAGS_KEY",
    "FLAG_RULES",
    "ClusterOptions",
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

publish(globals())
