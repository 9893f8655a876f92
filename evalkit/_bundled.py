"""Where the example personas and scorecards live: inside the wheel, or the source checkout."""

from __future__ import annotations

from pathlib import Path


def bundled_path(name: str) -> Path:
    """``personas`` or ``scorecards``: the copy shipped in the wheel, else the repo's folder."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_bundled" / name, here.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"no bundled {name!r} folder next to evalkit (looked in {here})")
