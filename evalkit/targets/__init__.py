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

# What evalkit's other packages take from here and users need not: not public, not in the API
# snapshot (``x as x`` marks each as re-exported for the type checker).
from ._diff import NAME_PATH as NAME_PATH
from ._diff import PROMPT_PATH as PROMPT_PATH
from ._diff import apply_edits as apply_edits
from ._diff import config_diff as config_diff
from ._diff import config_edits as config_edits
from ._diff import prompt_diff as prompt_diff

_SIBLING_API = (
    "NAME_PATH",
    "PROMPT_PATH",
    "apply_edits",
    "config_diff",
    "config_edits",
    "prompt_diff",
)

publish(globals())
