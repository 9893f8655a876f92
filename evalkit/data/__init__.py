"""The content evalkit ships: example personas, scorecards, sample contacts and other examples,
notebooks, and fonts.

In an installed wheel they live inside this package (read with :mod:`importlib.resources`); in
a source checkout they are the repository's top-level ``personas/``, ``scorecards/``,
``examples/`` and ``notebooks/`` folders. Every place evalkit takes one of these files (command
options, :meth:`~evalkit.grading.Scorecard.load`, :func:`~evalkit.grid.load_personas`, ...)
also takes a bundled file by name (:func:`resolve`); :func:`copy_bundled` (``evalkit init``)
copies them into a project to edit.
"""

from __future__ import annotations

from .._util import publish
from ._fonts import LATIN_FAMILY, NASTALIQ_FAMILY, latin_font_path, nastaliq_font_path
from ._paths import (
    BundledKind,
    bundled_names,
    bundled_path,
    contacts_path,
    copy_bundled,
    personas_path,
    resolve,
    scorecards_path,
)

__all__ = [
    "LATIN_FAMILY",
    "NASTALIQ_FAMILY",
    "BundledKind",
    "bundled_names",
    "bundled_path",
    "contacts_path",
    "copy_bundled",
    "latin_font_path",
    "nastaliq_font_path",
    "personas_path",
    "resolve",
    "scorecards_path",
]

publish(globals())
