"""A store whose backend cannot be reached: one error type, recognised from any fsspec backend.

An object store that is down (or a network that is gone) surfaces as the backend's own error:
botocore's ``EndpointConnectionError`` through s3fs, aiohttp's ``ClientConnectorError``
through gcsfs, ... :func:`is_unreachable` recognises them (and the builtin
``ConnectionError``) along an exception's causes, without importing any backend, and
:func:`unreachable_store` turns them into :class:`StoreUnreachableError`, which names the store.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ._errors import StoreError

__all__ = ["StoreUnreachableError", "is_unreachable", "unreachable_store"]

#: Top-level modules of the backends' HTTP stacks.
_BACKENDS = frozenset({"botocore", "aiobotocore", "aiohttp", "urllib3", "requests", "google"})
#: Words in a backend error's class name that mean "could not reach it" (not a refusal).
_WORDS = ("Connect", "Timeout", "ConnectionClosed", "ServerDisconnected")


class StoreUnreachableError(StoreError):
    """The store's backend could not be reached (at start or mid-run); what was written before
    is kept, so the same command resumes once the store answers again. ``store`` is the
    store's URL or folder (never credentials); the cause is the backend's error."""

    def __init__(self, store: str, reason: str) -> None:
        self.store = store
        self.reason = reason
        super().__init__(f"cannot reach the store {store} ({reason})", store)


def _reachability_error(exc: BaseException, backends_only: bool) -> bool:
    if not backends_only and isinstance(exc, ConnectionError | TimeoutError):
        return True
    for kind in type(exc).__mro__:
        if kind.__module__.split(".")[0] in _BACKENDS and any(w in kind.__name__ for w in _WORDS):
            return True
    return False


def is_unreachable(exc: BaseException, *, backends_only: bool = False) -> bool:
    """True when ``exc`` (or an exception it was raised from) says the store's endpoint could
    not be reached: a refused or timed-out connection, a dropped one. ``backends_only``:
    only the storage backends' own errors count (not the builtin ``ConnectionError``, which
    the service's client may raise too)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, StoreUnreachableError) or _reachability_error(
            current, backends_only
        ):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _reason(exc: BaseException) -> str:
    first = next((line for line in str(exc).splitlines() if line.strip()), "")
    return first.strip().rstrip(":") or type(exc).__name__


@contextlib.contextmanager
def unreachable_store(store: object) -> Iterator[None]:
    """Raise :class:`StoreUnreachableError` for an unreachable-store error in the block."""
    try:
        yield
    except StoreUnreachableError:
        raise
    except Exception as exc:
        if not is_unreachable(exc):
            raise
        raise StoreUnreachableError(str(store), _reason(exc)) from exc
