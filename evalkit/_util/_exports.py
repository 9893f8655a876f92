"""Give a package's exported names their public home as ``__module__`` (as httpx does)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

__all__ = ["publish"]


def publish(namespace: Mapping[str, Any]) -> None:
    """Set ``__module__`` of every class and function in ``namespace['__all__']`` defined in a
    private module of the package to the package itself, so reprs, docs and pickles name
    ``evalkit.store.Run``, not ``evalkit.store._store.Run``. A name from ``evalkit._util`` (no
    domain of its own) is adopted by the package that exports it (``evalkit.refine.PollPolicy``)."""
    package = namespace["__name__"]
    for name in namespace["__all__"]:
        value = namespace[name]
        module = getattr(value, "__module__", None)
        private = isinstance(module, str) and module.startswith((package + "._", "evalkit._util"))
        if private and (isinstance(value, type) or callable(value)):
            with contextlib.suppress(AttributeError, TypeError):
                value.__module__ = package
