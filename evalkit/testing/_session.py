"""Opening a test session's service: a real one (checked once, so a wrong address or key is
one error for the session), the session's shared emulator under pytest-xdist, or an emulator
in this process."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .._exceptions import EvalkitError
from .._test_session import SharedFolder
from ..api import ApiConnectionError, ApiError, Client, ConfigurationError
from ..emulator import EmulatorSettings, serve
from ._service import Service

__all__ = ["EMULATOR_SETTINGS", "SessionError", "SessionSettings", "open_service"]

#: The session emulator's pace: seeded (the same transcripts every session), emulated time
#: 500x faster (a 15 s ping in 30 ms), 10 emulated seconds per answer (20 ms, so latency
#: assertions have something to measure), and a minute of real time before the ceiling.
EMULATOR_SETTINGS: Final[dict[str, Any]] = {
    "seed": 7,
    "time_scale": 0.002,
    "turn_delay": 10.0,
    "min_ceiling_s": 60.0,
}


class SessionError(EvalkitError):
    """The session's evals cannot run at all (the service cannot be reached, a key is
    missing or refused): reported once for the session, naming what to fix."""


@dataclass(frozen=True)
class SessionSettings:
    """What the plugin read: ``base_url`` (None: an emulator), the folder the session's
    processes share and the emulator's key (both None without pytest-xdist) and the process
    the shared emulator watches (the xdist controller)."""

    base_url: str | None = None
    shared_dir: Path | None = None
    emulator_key: str | None = None
    watch_pid: int | None = None


def _checked(service: Service) -> Service:
    """``service`` once reached (E1), or :class:`SessionError` saying what to fix."""
    where = "--evalkit-base-url / EVALKIT_BASE_URL"
    try:
        with Client(service.base_url, service.api_key) as client:
            client.list_assistants()
    except ConfigurationError as exc:
        raise SessionError(f"the service at {service.base_url}: {exc}") from None
    except ApiConnectionError as exc:
        raise SessionError(
            f"the service at {service.base_url} cannot be reached ({exc}); check {where}, or "
            "leave both unset to test on the embedded emulator"
        ) from None
    except ApiError as exc:
        raise SessionError(
            f"the service at {service.base_url} refused the session ({exc}); check EVALKIT_API_KEY"
        ) from None
    return service


@contextlib.contextmanager
def open_service(settings: SessionSettings) -> Iterator[Service]:
    """The session's service for the block (an emulator started here stops after it)."""
    shared = SharedFolder(settings.shared_dir) if settings.shared_dir is not None else None
    if settings.base_url:
        service = _checked(Service._in_session(settings.base_url, None, shared))
        try:
            yield service
        finally:
            service.close()
        return
    if shared is not None and settings.emulator_key and settings.watch_pid:
        url = shared.emulator(EMULATOR_SETTINGS, settings.emulator_key, settings.watch_pid)
        service = Service._in_session(url + "/v1", settings.emulator_key, shared, emulated=True)
        try:
            yield service
        finally:
            service.close()
        return
    with serve(settings=EmulatorSettings(**EMULATOR_SETTINGS)) as emulator:
        service = Service._in_session(emulator.base_url, emulator.api_key, shared, emulated=True)
        try:
            yield service
        finally:
            service.close()
