"""Where a store lives: a local folder, or an fsspec URL (``s3://bucket/prefix``, ``memory://``).

:func:`open_store` turns what a user passed as ``store=`` into a :class:`StoreLocation` (the
storage protocol): a :class:`LocalPath` or a :class:`RemotePath`. Anything shaped
``scheme://`` is a URL, never a local folder named after it; ``file://`` is a local folder. A scheme whose fsspec backend is not installed is an
:class:`UnsupportedStoreError` naming the scheme and the extra that brings it. Credentials and
endpoints come from the usual environment (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ...) or
``storage_options``; nothing of them is written into the store.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, TypeAlias
from urllib.parse import unquote, urlsplit

from ._errors import StoreError
from ._local import LocalPath
from ._location import StoreLocation
from ._remote import RemotePath

__all__ = [
    "STORE_BACKENDS",
    "StoreLike",
    "UnsupportedStoreError",
    "as_location",
    "is_store_url",
    "open_store",
    "store_url",
]

#: What ``store=`` takes: a folder, an fsspec URL, or a place already opened.
StoreLike: TypeAlias = str | os.PathLike[str] | StoreLocation

_URL: Final = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)://(?P<rest>.*)$", re.S)

#: scheme -> (the fsspec package that serves it, the evalkit extra that installs it).
STORE_BACKENDS: Final[dict[str, tuple[str, str]]] = {
    "s3": ("s3fs", "evalkit[s3]"),
    "s3a": ("s3fs", "evalkit[s3]"),
    "gs": ("gcsfs", "evalkit[gs]"),
    "gcs": ("gcsfs", "evalkit[gs]"),
    "az": ("adlfs", "evalkit[az]"),
    "abfs": ("adlfs", "evalkit[az]"),
    "abfss": ("adlfs", "evalkit[az]"),
    "memory": ("fsspec", "evalkit"),
}

#: Defaults per protocol: never answer a listing from fsspec's cache (another machine writes).
_DEFAULT_OPTIONS: Final[dict[str, dict[str, Any]]] = {
    "s3": {"use_listings_cache": False},
    "s3a": {"use_listings_cache": False},
    "gs": {"use_listings_cache": False},
    "gcs": {"use_listings_cache": False},
}


class UnsupportedStoreError(StoreError):
    """A store URL whose scheme evalkit cannot open (unknown, or its package not installed)."""


def is_store_url(store: object) -> bool:
    """True for ``scheme://...`` strings other than ``file://`` (those are local folders)."""
    if isinstance(store, RemotePath):
        return True
    if not isinstance(store, str):
        return False
    match = _URL.match(store)
    return match is not None and match["scheme"].lower() != "file"


def store_url(store: StoreLike) -> str:
    """How to show a store: its URL, or its local path."""
    return os.fspath(store) if isinstance(store, str | os.PathLike) else str(store)


def open_store(store: StoreLike, storage_options: Mapping[str, Any] | None = None) -> StoreLocation:
    """The :class:`StoreLocation` for ``store``: a :class:`LocalPath` or a :class:`RemotePath`.

    ``storage_options`` go to the fsspec filesystem (``{"endpoint_url": ...}``,
    ``{"anon": True}``...); without them the backend reads the usual environment.
    """
    if isinstance(store, LocalPath | RemotePath):
        return store
    if not isinstance(store, str | os.PathLike):
        return store  # another implementation of the protocol
    text = os.fspath(store)
    match = _URL.match(text) if not isinstance(store, Path) else None
    if match is None:
        return LocalPath(text)
    scheme = match["scheme"].lower()
    if scheme == "file":
        return LocalPath(unquote(urlsplit(text).path) or "/")
    return _remote(text, scheme, dict(storage_options or {}))


def _remote(url: str, scheme: str, options: dict[str, Any]) -> RemotePath:
    try:
        import fsspec
        from fsspec.registry import known_implementations
    except ImportError as exc:  # pragma: no cover - fsspec is a dependency
        raise _unsupported(url, scheme, str(exc)) from exc
    if scheme not in known_implementations and scheme not in STORE_BACKENDS:
        raise _unsupported(url, scheme, "no fsspec backend is known for it")
    try:
        cls = fsspec.get_filesystem_class(scheme)
    except (ImportError, ValueError) as exc:
        raise _unsupported(url, scheme, str(exc).splitlines()[0] if str(exc) else "") from exc
    merged = {**_DEFAULT_OPTIONS.get(scheme, {}), **options}
    try:
        fs = cls(**merged)
    except TypeError as exc:
        raise StoreError(f"storage_options for {scheme}:// are not accepted: {exc}", url) from exc
    key = cls._strip_protocol(url)
    if not key.strip("/"):
        raise StoreError(
            f"store URL {url!r} names no bucket or folder; use {scheme}://BUCKET/PREFIX", url
        )
    protocol = scheme if scheme in STORE_BACKENDS else _first(cls.protocol, scheme)
    return RemotePath(fs, protocol, key if scheme != "memory" else "/" + key.lstrip("/"))


def _first(protocol: str | tuple[str, ...], default: str) -> str:
    if isinstance(protocol, str):
        return protocol
    return protocol[0] if protocol else default


def _unsupported(url: str, scheme: str, reason: str) -> UnsupportedStoreError:
    backend = STORE_BACKENDS.get(scheme)
    if backend is not None:
        package, extra = backend
        hint = f"install the {package} package: pip install '{extra}'"
    else:
        known = ", ".join(sorted({f"{s}://" for s in STORE_BACKENDS}))
        hint = (
            f"use a local folder or one of {known} (with its extra, e.g. pip install 'evalkit[s3]')"
        )
    detail = f" ({reason})" if reason else ""
    return UnsupportedStoreError(
        f"store {url!r}: the {scheme}:// scheme cannot be opened{detail}; {hint}", None
    )


def as_location(place: str | os.PathLike[str] | StoreLocation) -> StoreLocation:
    """``place`` as a :class:`StoreLocation` (a path or URL is opened with defaults)."""
    return open_store(place)
