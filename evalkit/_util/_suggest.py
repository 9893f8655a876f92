"""``did you mean``: the closest known name to a misspelt one (difflib's ratio)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["closest_name", "unknown_name"]


def closest_name(name: str, known: Iterable[str]) -> str | None:
    """The known name closest to ``name`` (case ignored), or None when none is close."""
    by_folded = {k.casefold(): k for k in known}
    found = difflib.get_close_matches(name.casefold(), list(by_folded), n=1, cutoff=0.6)
    return by_folded[found[0]] if found else None


def unknown_name(name: str, known: Iterable[str], what: str = "key") -> str:
    """``"unknown key 'pionts' (did you mean 'points'?)"``, or the known names listed."""
    names = sorted(set(known))
    guess = closest_name(name, names)
    if guess is not None:
        return f"unknown {what} {name!r} (did you mean {guess!r}?)"
    return f"unknown {what} {name!r} (known: {', '.join(names)})"
