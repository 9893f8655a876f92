"""Old spellings accepted for one release, each with a ``DeprecationWarning`` that says what
to write instead (renamed keywords, knobs that moved into options objects, old argument
orders). The shims of one release are removed in the next."""

from __future__ import annotations

import warnings

__all__ = ["deprecated"]


def deprecated(message: str, *, stacklevel: int = 3) -> None:
    """Warn that an old spelling goes in the next release (``stacklevel`` 3: the caller of the
    public function that calls this)."""
    warnings.warn(
        f"{message} (the old spelling goes in the next release)",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
