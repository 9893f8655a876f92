"""What a run simulates: the draft, prod (on a temporary clone from a snapshot), or a variant;
config snapshots of every version evalkit reads; temporary clones and their clean-up."""

from __future__ import annotations

from .._util import publish
from ._snapshots import ConfigSnapshot, SnapshotStore, redact_config, strip_redacted_keys
from ._targets import (
    CLONE_DESCRIPTION,
    CLONE_PREFIX,
    ResolvedTarget,
    Target,
    TargetError,
    Variant,
    find_clones,
    merge_patch,
    resolve_target,
    simulation_target,
)

__all__ = [
    "CLONE_DESCRIPTION",
    "CLONE_PREFIX",
    "ConfigSnapshot",
    "ResolvedTarget",
    "SnapshotStore",
    "Target",
    "TargetError",
    "Variant",
    "find_clones",
    "merge_patch",
    "redact_config",
    "resolve_target",
    "simulation_target",
    "strip_redacted_keys",
]

publish(globals())
