"""The content evalkit ships: example personas, scorecards, sample contacts and fonts.

In an installed wheel they live inside this package (read with :mod:`importlib.resources`); in
a source checkout they are the repository's top-level ``personas/``, ``scorecards/`` and
``examples/`` folders.
"""

from __future__ import annotations

from .._util import publish
from ._fonts import LATIN_FAMILY, NASTALIQ_FAMILY, latin_font_path, nastaliq_font_path
from ._paths import bundled_path, contacts_path, personas_path, scorecards_path

__all__ = [
    "LATIN_FAMILY",
    "NASTALIQ_FAMILY",
    "bundled_path",
    "contacts_path",
    "latin_font_path",
    "nastaliq_font_path",
    "personas_path",
    "scorecards_path",
]

publish(globals())
