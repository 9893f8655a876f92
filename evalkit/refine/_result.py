"""``RefineResult``: what one refine build changed, and how to put lost edits back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .._util import run_sync
from ..api import AsyncClient
from ..targets import NAME_PATH, ConfigEdit, ConfigSnapshot, apply_edits
from ._clients import AnyClient, async_client, find_assistant

__all__ = ["RefineResult"]


@dataclass(frozen=True)
class RefineResult:
    """One finished refine build.

    ``before``/``after``: redacted config snapshots (also recorded under the store);
    ``prompt_diff``: unified diff of ``agent.instructions``; ``overwritten``: every other path
    the build changed (the spec regenerates name and config from the brief, so these are
    usually manual edits it lost), values redacted; ``waited_s``/``polls``: the wait.
    """

    assistant_id: str
    build_id: str
    before: ConfigSnapshot
    after: ConfigSnapshot
    prompt_diff: str
    overwritten: tuple[ConfigEdit, ...]
    waited_s: float
    polls: int
    _before_config: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)
    _client: AnyClient | None = field(repr=False, compare=False, default=None)

    @property
    def overwritten_paths(self) -> list[str]:
        """The paths of :attr:`overwritten`, for :meth:`reapply`."""
        return [e.path for e in self.overwritten]

    def _check(self, paths: Sequence[str]) -> list[str]:
        if isinstance(paths, str):
            paths = [paths]
        unknown = sorted(set(paths) - set(self.overwritten_paths))
        if unknown:
            raise ValueError(
                f"not overwritten by build {self.build_id}: {unknown}; choose among "
                f"{self.overwritten_paths}"
            )
        return list(paths)

    async def areapply(self, paths: Sequence[str], client: AnyClient | None = None) -> Any:
        """Put the chosen edits back through E3 (on the config as it is now); returns E3's answer.

        ``paths`` come from :attr:`overwritten` (``name`` is the assistant's name). The values
        sent are the unredacted ones read before the build.
        """
        chosen = self._check(paths)
        async with async_client(client or self._client) as aclient:
            current = await find_assistant(aclient, self.assistant_id)
            config_paths = [p for p in chosen if p != NAME_PATH]
            fields: dict[str, Any] = {}
            if config_paths:
                fields["config"] = apply_edits(
                    current.config.to_json(), self._before_config, config_paths
                )
            if NAME_PATH in chosen:
                fields["name"] = self.before.name
            return await aclient.update_assistant(self.assistant_id, **fields)

    def reapply(self, paths: Sequence[str], client: AnyClient | None = None) -> Any:
        """Sync :meth:`areapply` (works inside Jupyter)."""
        given = client or self._client
        if not isinstance(given, AsyncClient):
            return run_sync(lambda: self.areapply(paths, given))
        base = given

        async def with_twin() -> Any:  # the given pool belongs to another loop: use a twin
            twin = AsyncClient.from_client(base)
            try:
                return await self.areapply(paths, twin)
            finally:
                await twin.aclose()

        return run_sync(with_twin)
