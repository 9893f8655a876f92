"""The service a test session runs against (the ``evalkit_service`` fixture's value): a real
service from the options or the environment, or an emulator the session started."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..api import Client
from ..emulator import EmulatorAdmin
from ..grading import Judge

if TYPE_CHECKING:
    from .._test_session import SharedFolder

__all__ = ["EMULATED_JUDGE_MODEL", "Service"]

#: The emulator's judge model.
EMULATED_JUDGE_MODEL = "emulator-judge"


class Service:
    """Where the session's conversations go: ``base_url`` (ending ``/v1``), ``api_key`` (the
    emulator's project key; None for a real service, whose key comes from
    ``EVALKIT_API_KEY``), ``emulated`` and, on the emulator, ``emulator`` (its admin API:
    ``publish``, ``build``, ``stats``, ...) and ``judge_base_url`` (the emulated judge).
    :meth:`once` makes a value once per session, across pytest-xdist workers (an assistant to
    test, say). The key never shows in a repr.

    ``Service(base_url, api_key, emulated=...)`` makes one by hand (outside the plugin, or to
    hand a fixture of your own); the plugin's, under pytest-xdist, also shares :meth:`once`'s
    values with the session's other workers."""

    def __init__(
        self, base_url: str, api_key: str | None = None, *, emulated: bool = False
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.emulated = emulated
        self._shared: SharedFolder | None = None
        self._made: dict[str, Any] = {}
        self._admin: EmulatorAdmin | None = None

    @classmethod
    def _in_session(
        cls,
        base_url: str,
        api_key: str | None,
        shared: SharedFolder | None,
        *,
        emulated: bool = False,
    ) -> Service:
        """The plugin's service: :meth:`once` goes through the folder the session's
        processes share (None: this process alone)."""
        service = cls(base_url, api_key, emulated=emulated)
        service._shared = shared
        return service

    @property
    def api_key(self) -> str | None:
        return self._api_key

    @property
    def emulator(self) -> EmulatorAdmin:
        """The emulator's admin API (only when :attr:`emulated`)."""
        if not self.emulated or self._api_key is None:
            raise AttributeError(
                f"the service at {self.base_url} is not the session's emulator: it has no "
                "admin API (drop --evalkit-base-url to test on the embedded emulator)"
            )
        if self._admin is None:
            self._admin = EmulatorAdmin(self.base_url, self._api_key)
        return self._admin

    @property
    def judge_base_url(self) -> str | None:
        """The emulated judge on the emulator; for a real service ``EVALKIT_JUDGE_BASE_URL``."""
        if self.emulated:
            return self.emulator.judge_base_url
        return os.environ.get("EVALKIT_JUDGE_BASE_URL") or None

    def client(self) -> Client:
        """A client of this service (the caller closes it)."""
        return Client(self.base_url, self._api_key)

    def judge(self, cache_dir: str | os.PathLike[str] | None = None) -> Judge:
        """The emulated judge on the emulator; for a real service the judge the environment
        configures (``EVALKIT_JUDGE_*``, or :class:`~evalkit.grading.JudgeNotConfigured`)."""
        if self.emulated:
            return Judge(
                model=EMULATED_JUDGE_MODEL, base_url=self.judge_base_url, cache_dir=cache_dir
            )
        return Judge.from_env(cache_dir=cache_dir)

    def once(self, name: str, make: Callable[[], Any]) -> Any:
        """``make()``'s value, made once in this session (by the first pytest-xdist worker
        that asks, shared with the others as JSON: no secrets)."""
        if self._shared is not None:
            return self._shared.once(name, make)
        if name not in self._made:
            self._made[name] = make()
        return self._made[name]

    def close(self) -> None:
        if self._admin is not None:
            self._admin.close()

    def __repr__(self) -> str:
        kind = "emulator" if self.emulated else "service"
        return f"Service({kind} at {self.base_url!r})"
