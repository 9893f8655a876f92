"""What a run simulates against: ``draft``, ``prod`` or a named :class:`Variant`.

* ``draft``: the assistant itself (simulate runs the config saved now).
* ``prod``: the assistant itself when it is unpublished or its draft equals prod; otherwise a
  temporary private clone (E2) made from evalkit's snapshot of the published version, deleted
  (E4) when the run ends, on failure and on Ctrl-C too. No snapshot: a clear error, no guess.
* a :class:`Variant`: a JSON merge patch (RFC 7386) over the draft (or prod) config, run on a
  temporary clone: the basis of A/B prompt tuning.

A clone has no stored build brief, so runs against it should pass ``context`` and
``variables`` explicitly (the runner warns when a grid leaves them out).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from .._exceptions import EvalkitError
from ..api import AsyncClient, NotFoundError
from ._clones import CLONE_PREFIX, CloneLease, CloneOwner, find_clones, lease_renewal
from ._snapshots import ConfigSnapshot, SnapshotStore, redact_config, strip_redacted_keys

logger = logging.getLogger("evalkit.targets")

#: How long a clone's deletion may take once the run around it has been cancelled.
DELETE_GRACE_S: Final = 30.0


def report_leftover_clones(client: AsyncClient, ids: list[str]) -> None:
    """Warn about left-over clones, each once per client (a tune resolves many targets;
    the memory is the client's :attr:`~evalkit.api.AsyncClient.said_once`)."""
    fresh = [i for i in ids if client.said_once.first("left-over clone", i)]
    if not fresh:
        return
    logger.warning(
        "%d temporary evalkit clone(s) of runs that are gone were not deleted (a killed "
        "process?): %s; `evalkit clones --delete` removes them",
        len(fresh),
        ", ".join(fresh),
    )


class TargetError(EvalkitError):
    """A run's target cannot be resolved (for example prod's config was never seen)."""


def merge_patch(target: Any, patch: Any) -> Any:
    """Apply an RFC 7386 JSON merge patch (``None`` deletes a key) and return the result."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


@dataclass(frozen=True)
class Variant:
    """A named config override, run on a temporary clone.

    ``patch`` is a JSON merge patch over the ``base`` config (``"draft"`` or ``"prod"``).
    Its credentials (a provider ``apiKey``, a tool's ``headers.Authorization``, ...) are masked
    in ``repr``/``str`` and in a pickle: an unpickled variant's clone omits them and is billed
    through the service, as a clone made from a redacted snapshot is.
    """

    name: str
    patch: Mapping[str, Any] = field(default_factory=dict)
    base: Literal["draft", "prod"] = "draft"

    def __repr__(self) -> str:
        return f"Variant(name={self.name!r}, patch={redact_config(dict(self.patch))!r}, base={self.base!r})"

    __str__ = __repr__

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.name, redact_config(dict(self.patch)), self.base))

    def __copy__(self) -> Variant:
        return self  # frozen

    def __deepcopy__(self, memo: dict[int, Any]) -> Variant:
        return type(self)(self.name, copy.deepcopy(dict(self.patch), memo), self.base)

    def __post_init__(self) -> None:
        if not self.name or self.name in ("draft", "prod"):
            raise ValueError(f"a variant needs a name other than draft/prod, got {self.name!r}")
        if self.base not in ("draft", "prod"):
            raise ValueError(f"Variant.base must be 'draft' or 'prod', got {self.base!r}")

    @classmethod
    def with_instructions(
        cls, name: str, instructions: str, base: Literal["draft", "prod"] = "draft"
    ) -> Variant:
        """A variant with another system prompt."""
        return cls(name, {"agent": {"instructions": instructions}}, base)

    @classmethod
    def with_llm(cls, name: str, base: Literal["draft", "prod"] = "draft", **llm: Any) -> Variant:
        """A variant with other LLM settings (``provider``, ``model``, knobs), merged into ``llm.default``."""
        return cls(name, {"llm": {"default": llm}}, base)

    def definition(self) -> dict[str, Any]:
        """JSON-able description for manifests and run identity."""
        return {"name": self.name, "base": self.base, "patch": redact_config(dict(self.patch))}


Target = Literal["draft", "prod"] | str | Variant


@dataclass(frozen=True)
class ResolvedTarget:
    """Where a run's conversations go and which config version they exercise."""

    label: str
    assistant_id: str
    version: int
    snapshot: ConfigSnapshot
    clone_config: dict[str, Any] | None = field(default=None, repr=False)  # may hold keys
    variant: Variant | None = None

    @property
    def needs_clone(self) -> bool:
        """True when the run happens on a temporary clone."""
        return self.clone_config is not None

    def definition(self) -> dict[str, Any]:
        """What identifies this target in a run's identity hash."""
        return {
            "label": self.label,
            "assistant_id": self.assistant_id,
            "config_version": self.version,
            "variant": self.variant.definition() if self.variant else None,
        }


async def resolve_target(
    client: AsyncClient, assistant_id: str, target: Target, snapshots: SnapshotStore
) -> ResolvedTarget:
    """Read the assistant (recording a snapshot of its draft) and decide where to simulate."""
    assistants = await client.list_assistants()
    found = next((a for a in assistants if a.id == assistant_id), None)
    if found is None:
        raise TargetError(
            f"assistant {assistant_id} is not among the {len(assistants)} assistant(s) of this "
            "API key's project (E1); check the id and EVALKIT_API_KEY"
        )
    report_leftover_clones(client, [a.id for a in find_clones(assistants)])
    draft = ConfigSnapshot.from_assistant(found)
    snapshots.save(draft)
    aliases = found.aliases
    if aliases is None:
        aliases = (await client.get_assistant_metadata(assistant_id)).aliases

    def prod_snapshot() -> ConfigSnapshot | None:
        """The prod snapshot, or None when prod runs the draft itself."""
        if aliases.prod is None or aliases.prod.version == draft.version:
            return None
        snap = snapshots.load(assistant_id, aliases.prod.version)
        if snap is None:
            seen = snapshots.versions(assistant_id)
            raise TargetError(
                f"prod of assistant {assistant_id} is version {aliases.prod.version}, but the draft has "
                f"moved on to version {draft.version} and evalkit never saw version "
                f"{aliases.prod.version}'s config (the service returns only the draft's). Snapshots "
                f"recorded: {seen or 'none'} in {snapshots.root}. Take one with `evalkit snapshot "
                f"--assistant {assistant_id}` whenever a version you will publish is the draft; "
                "evalkit will not guess prod's config."
            )
        return snap

    if isinstance(target, Variant):
        base = prod_snapshot() if target.base == "prod" else None
        base = base or draft
        config = merge_patch(base.config, target.patch)
        return ResolvedTarget(
            target.name, assistant_id, base.version, base, strip_redacted_keys(config), target
        )
    if target == "draft":
        return ResolvedTarget("draft", assistant_id, draft.version, draft)
    if target == "prod":
        snap = prod_snapshot()
        if snap is None:
            return ResolvedTarget("prod", assistant_id, draft.version, draft)
        return ResolvedTarget(
            "prod", assistant_id, snap.version, snap, strip_redacted_keys(snap.config)
        )
    raise TargetError(f"target must be 'draft', 'prod' or a Variant, got {target!r}")


@contextlib.asynccontextmanager
async def simulation_target(
    client: AsyncClient,
    resolved: ResolvedTarget,
    run_id: str = "",
    lease: CloneLease | None = None,
) -> AsyncIterator[str]:
    """Yield the assistant id to simulate against; a clone is deleted on every exit path.

    A clone's description names its owner (``run_id``, this host and process) and a lease the
    run renews while it lasts, so other runs and ``evalkit clones`` leave it alone.
    """
    if resolved.clone_config is None:
        yield resolved.assistant_id
        return
    lease = lease or CloneLease()
    owner = CloneOwner.current(run_id, lease)
    creation = asyncio.ensure_future(
        client.create_assistant(
            name=f"{CLONE_PREFIX} {resolved.label} of {resolved.snapshot.name} v{resolved.version}"[
                :200
            ],
            config=resolved.clone_config,
            description=owner.description(resolved.assistant_id),
            public=False,
        )
    )
    try:
        clone = await asyncio.shield(creation)
    except asyncio.CancelledError:  # cancelled while the service makes the clone: delete it
        await asyncio.wait([creation], timeout=DELETE_GRACE_S)
        if creation.done() and not creation.cancelled() and creation.exception() is None:
            await _delete_even_when_cancelled(client, creation.result().id)
        raise
    logger.info("created temporary clone %s for target %s", clone.id, resolved.label)
    try:
        async with lease_renewal(client, clone.id, resolved.assistant_id, run_id, lease):
            yield clone.id
    finally:
        await _delete_even_when_cancelled(client, clone.id)


async def _delete_even_when_cancelled(client: AsyncClient, clone_id: str) -> None:
    """Delete the clone; when the caller is cancelled meanwhile (Ctrl-C, a sibling arm's
    error), still wait up to :data:`DELETE_GRACE_S` for the deletion before passing the
    cancellation on (a shielded task alone dies with the event loop, leaving the clone)."""
    deletion = asyncio.ensure_future(_delete_clone(client, clone_id))
    try:
        await asyncio.shield(deletion)
    except asyncio.CancelledError:
        await asyncio.wait([deletion], timeout=DELETE_GRACE_S)
        raise


async def _delete_clone(client: AsyncClient, clone_id: str) -> None:
    try:
        await client.delete_assistant(clone_id)
        logger.info("deleted temporary clone %s", clone_id)
    except NotFoundError:
        pass
    except EvalkitError as exc:
        logger.error("could not delete temporary clone %s: %s (delete it by hand)", clone_id, exc)
