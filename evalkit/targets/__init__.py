"""What a run simulates: the draft, prod (on a temporary clone from a snapshot), or a variant;
config snapshots of every version evalkit reads; temporary clones, their owners and their clean-up."""

from __future__ import annotations

from .._util import publish
from ._clones import (
    CLONE_DESCRIPTION,
    CLONE_PREFIX,
    CloneLease,
    CloneOwner,
    clone_owner,
    find_clones,
    owner_gone,
)
from ._diff import ConfigEdit
from ._snapshots import ConfigSnapshot, SnapshotStore, redact_config, strip_redacted_keys
from ._targets import (
    ResolvedTarget,
    Target,
    TargetError,
    Variant,
    merge_patch,
    resolve_target,
    simulation_target,
)

__all__ = [
    "CLONE_DESCRIPTION",
    "CLONE_PREFIX",
    "CloneLease",
    "CloneOwner",
    "ConfigEdit",
    "ConfigSnapshot",
    "ResolvedTarget",
    "SnapshotStore",
    "Target",
    "TargetError",
    "Variant",
    "clone_owner",
    "find_clones",
    "merge_patch",
    "owner_gone",
    "redact_config",
    "resolve_target",
    "simulation_target",
    "strip_redacted_keys",
]

publish(globals())
