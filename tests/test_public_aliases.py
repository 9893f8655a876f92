"""Every type alias a public signature names can be imported from a public package.

A signature such as ``Grid(personas: PersonasInput, ...)`` is only half documented when
``PersonasInput`` lives in a private module: a wrapper cannot annotate what it passes on. The
API snapshot holds every public signature as text; each alias defined in a private module
(``Name: TypeAlias = ...`` or ``Name = A | B``) that a signature names must be in some public
package's ``__all__``.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import evalkit

from .api_snapshot import SNAPSHOT, public_modules

#: Named in a signature but not a user's to build: (alias, why).
NOT_FOR_USERS = {
    "Journal": "RunWriter's own constructor takes it; users get a writer from RunWriter.open",
    "PathLike": "the snapshot's rendering of os.PathLike, not evalkit's private aliases of it",
}
_ALIAS = re.compile(r"^([A-Z]\w*)(?:: TypeAlias =| = [A-Z][\w\[\], .]* \|)", re.M)


def _private_modules() -> list[str]:
    found = pkgutil.walk_packages(evalkit.__path__, "evalkit.")
    return [m.name for m in found if "._" in m.name and not m.name.endswith("__main__")]


def test_every_alias_a_public_signature_names_is_importable() -> None:
    signatures = set(re.findall(r"\b[A-Z]\w*\b", SNAPSHOT.read_text(encoding="utf-8")))
    exported = {n for m in public_modules() for n in importlib.import_module(m).__all__}
    defined: dict[str, str] = {}
    for name in _private_modules():
        source = Path(str(importlib.import_module(name).__file__)).read_text(encoding="utf-8")
        for alias in _ALIAS.findall(source):
            defined.setdefault(alias, name)
    assert len(defined) > 20  # the pattern still finds the aliases
    hidden = {
        alias: where
        for alias, where in defined.items()
        if alias in signatures and alias not in exported and alias not in NOT_FOR_USERS
    }
    assert not hidden, f"aliases public signatures name but no public package exports: {hidden}"
