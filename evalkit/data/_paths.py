"""Where the bundled personas, scorecards and sample contacts are."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = ["bundled_path", "contacts_path", "personas_path", "scorecards_path"]

_SOURCE_FOLDERS = {
    "personas": "personas",
    "scorecards": "scorecards",
    "examples": "examples",
    "notebooks": "notebooks",
}


def bundled_path(name: str) -> Path:
    """``personas``, ``scorecards``, ``examples`` or ``notebooks``: the copy inside the installed package,
    else the source checkout's top-level folder."""
    if name not in _SOURCE_FOLDERS:
        raise ValueError(f"no bundled folder {name!r}; choose one of {sorted(_SOURCE_FOLDERS)}")
    packaged = Path(str(files(__package__ or "evalkit.data") / name))
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / _SOURCE_FOLDERS[name]
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"no bundled {name!r} folder (looked in {packaged} and {checkout})")


def personas_path() -> Path:
    """The folder of bundled caller personas (YAML)."""
    return bundled_path("personas")


def scorecards_path() -> Path:
    """The folder of bundled scorecards (YAML)."""
    return bundled_path("scorecards")


def contacts_path() -> Path:
    """The bundled sample contacts CSV (Urdu/English appointment records)."""
    return bundled_path("examples") / "contacts.csv"
