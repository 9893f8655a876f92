"""Old spellings accepted for one release, each with a ``DeprecationWarning`` that says what
to write instead (positional arguments that became keywords, renamed keywords)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

__all__ = ["client_first", "deprecated", "positional_keywords"]


def deprecated(message: str, *, stacklevel: int = 3) -> None:
    """Warn that an old spelling goes in the next release (``stacklevel`` 3: the caller of the
    public function that calls this)."""
    warnings.warn(
        f"{message} (the old spelling goes in the next release)",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def positional_keywords(
    where: str,
    moved: tuple[Any, ...],
    keywords: Mapping[str, Any],
    defaults: Mapping[str, Any],
) -> dict[str, Any]:
    """``keywords`` with ``moved`` (positional values of parameters that became keyword-only,
    in the order of ``defaults``) applied, warning once. A value given both ways is a
    ``TypeError``, as Python raises for any function."""
    if not moved:
        return dict(keywords)
    names = list(defaults)
    if len(moved) > len(names):
        raise TypeError(
            f"{where}() takes at most {len(names)} more positional arguments "
            f"({', '.join(names)}; deprecated), got {len(moved)}"
        )
    out = dict(keywords)
    for name, value in zip(names, moved, strict=False):
        if keywords[name] is not defaults[name]:
            raise TypeError(f"{where}() got multiple values for argument {name!r}")
        out[name] = value
    given = ", ".join(f"{n}=" for n in names[: len(moved)])
    deprecated(f"{where}(): pass {given} by keyword", stacklevel=4)
    return out


def client_first(where: str, args: tuple[Any, ...], client: Any) -> tuple[Any, tuple[Any, ...]]:
    """Old calls put the client first (``f(client, assistant_id, ...)``): when the first
    positional argument is not a string (an id), it is the client: warn and move it to
    ``client=``. Returns the client and the subject's positional arguments."""
    if not args or isinstance(args[0], str):
        return client, args
    if client is not None:
        raise TypeError(f"{where}() got a client twice (first argument and client=)")
    deprecated(
        f"{where}(): pass the client as client=, after the positional arguments", stacklevel=4
    )
    return args[0], args[1:]
