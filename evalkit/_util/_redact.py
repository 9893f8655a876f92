"""The one secret redactor: API keys in text, and credential values inside JSON-like data.

Used by exceptions, logs, manifests, config snapshots and model reprs, so one rule decides
what a secret is:

* any string shaped like a project key (``sk_api_...``) or a bearer credential
  (``Bearer <token>``) is masked wherever it appears;
* the ``user:password@`` part of a URL is masked wherever it appears;
* any string under a credential key (``apiKey``, ``api_key``, ``Authorization``, ``password``,
  ``secret``, ``token``, ... compared without case, ``_`` or ``-``; also any key *ending* in
  one of those words, such as ``X-Auth-Token`` or ``openai_api_key``) keeps only its last 4
  characters (nothing when it is short).

A project key is matched with every character a key, a base64 or a percent-encoded value may
hold (``.``, ``+``, ``/``, ``=``, ``%``, ``~``), so nothing of it but the last 4 stays visible.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "MASK",
    "SECRET_KEYS",
    "is_masked",
    "is_secret_key",
    "mask",
    "redact",
    "redact_text",
    "strip_masked",
]

MASK: Final = "…"
#: Keys whose string values are credentials, normalised (lower case, no ``_`` or ``-``).
SECRET_KEYS: Final = frozenset(
    {
        "apikey",
        "xapikey",
        "authorization",
        "proxyauthorization",
        "password",
        "secret",
        "clientsecret",
        "accesstoken",
        "refreshtoken",
        "bearertoken",
        "token",
        "livekitapisecret",
    }
)
#: Endings of normalised keys whose values are credentials too (``xauthtoken``, ``dbpassword``).
_SECRET_SUFFIXES: Final = (
    "apikey",
    "authorization",
    "credential",
    "credentials",
    "passwd",
    "password",
    "privatekey",
    "secret",
    "token",
)
_KEY_RE: Final = re.compile(r"sk_api_[A-Za-z0-9_\-.+/=%~]+")
_BEARER_RE: Final = re.compile(r"(?i)\b(bearer|basic)\s+([A-Za-z0-9_\-.+/=~%]{6,})")
_USERINFO_RE: Final = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@?#]+@")


def mask(value: str) -> str:
    """``value`` cut to a mask and its last 4 characters (all of it masked when short)."""
    if not value or is_masked(value):
        return value
    return MASK + value[-4:] if len(value) > 8 else MASK


def is_masked(value: str) -> bool:
    """True for a value :func:`mask` produced."""
    return value.startswith((MASK, "sk_api_" + MASK, "*"))


def redact_text(text: str) -> str:
    """``text`` with every project key, bearer credential and URL password masked."""
    if "@" in text and "://" in text:
        text = _USERINFO_RE.sub(lambda m: m.group(1) + MASK + "@", text)
    if "sk_api_" in text:
        text = _KEY_RE.sub(lambda m: "sk_api_" + mask(m.group(0)[7:]), text)
    if "earer" in text or "asic" in text:
        text = _BEARER_RE.sub(lambda m: f"{m.group(1)} {mask(m.group(2))}", text)
    return text


def is_secret_key(key: object) -> bool:
    """True when values under ``key`` are credentials."""
    if not isinstance(key, str):
        return False
    norm = key.replace("_", "").replace("-", "").lower()
    return norm in SECRET_KEYS or norm.endswith(_SECRET_SUFFIXES)


def redact(value: Any, *, key: object = None) -> Any:
    """A copy of JSON-like ``value`` (pydantic models included) with every secret masked."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        value = dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, Mapping):
        return {redact_text(str(k)): redact(v, key=k) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return mask(value) if is_secret_key(key) else redact_text(value)
    return value


def strip_masked(value: Any) -> Any:
    """A copy of ``value`` without the credential entries :func:`redact` masked.

    A clone made from a redacted snapshot then bills the service instead of sending a
    truncated key.
    """
    if isinstance(value, Mapping):
        return {
            k: strip_masked(v)
            for k, v in value.items()
            if not (is_secret_key(k) and isinstance(v, str) and is_masked(v))
        }
    if isinstance(value, list):
        return [strip_masked(v) for v in value]
    return value
