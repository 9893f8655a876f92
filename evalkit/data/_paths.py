"""Where the bundled personas, scorecards, examples and notebooks are, and the bundled file a
name means.

In an installed wheel they live inside this package; in a source checkout they are the
repository's top-level folders. A user names a bundled file the way the README spells it from a
checkout (``scorecards/appointment-reminder-ur.yaml``) or by its name alone
(``appointment-reminder-ur``). A path that exists is always taken as it is, and a name is looked
up in the working folder's ``scorecards/`` (``personas/``, ...) before the bundled files, so
the copies :func:`copy_bundled` (``evalkit init``) makes are the ones used.
"""

from __future__ import annotations

import errno
import os
import shutil
from importlib.resources import files
from pathlib import Path, PurePosixPath
from typing import Literal, get_args

__all__ = [
    "BundledKind",
    "bundled_names",
    "bundled_path",
    "contacts_path",
    "copy_bundled",
    "personas_path",
    "resolve",
    "scorecards_path",
]

#: The folders of bundled files.
BundledKind = Literal["personas", "scorecards", "examples", "notebooks"]
_KINDS: tuple[BundledKind, ...] = get_args(BundledKind)

#: The file names a kind's items have (a name may leave its suffix out).
_SUFFIXES: dict[BundledKind, tuple[str, ...]] = {
    "personas": (".yaml", ".yml"),
    "scorecards": (".yaml", ".yml", ".json"),
    "examples": (".csv", ".yaml", ".yml", ".json", ".jsonl", ".txt"),
    "notebooks": (".ipynb",),
}


_SINGULAR: dict[BundledKind, str] = {
    "personas": "persona",
    "scorecards": "scorecard",
    "examples": "example",
    "notebooks": "notebook",
}


def _check_kind(kind: str) -> BundledKind:
    if kind not in _KINDS:
        raise ValueError(f"no bundled folder {kind!r}; choose one of {sorted(_KINDS)}")
    return kind


def bundled_path(name: str) -> Path:
    """``personas``, ``scorecards``, ``examples`` or ``notebooks``: the copy inside the installed
    package, else the source checkout's top-level folder."""
    kind = _check_kind(name)
    packaged = Path(str(files(__package__ or "evalkit.data") / kind))
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / kind
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"no bundled {kind!r} folder (looked in {packaged} and {checkout})")


def _bundled_files(kind: BundledKind) -> list[Path]:
    root = bundled_path(kind)
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and p.suffix.lower() in _SUFFIXES[kind] and "__pycache__" not in p.parts
    )


def bundled_names(kind: BundledKind) -> list[str]:
    """The names of the bundled files of ``kind``: scorecards, personas and notebooks by stem
    (``appointment-reminder-ur``), examples by file name (``contacts.csv``), subfolders with
    ``/`` (``variants/urdu_reminder.yaml``)."""
    root = bundled_path(_check_kind(kind))
    names = []
    for path in _bundled_files(kind):
        relative = path.relative_to(root).as_posix()
        names.append(relative if kind == "examples" else relative.rsplit(".", 1)[0])
    return names


def _bundled_match(kind: BundledKind, text: str) -> Path | None:
    name = PurePosixPath(text.replace(os.sep, "/"))
    if name.is_absolute() or ".." in name.parts or not name.parts:
        return None
    if name.parts[0] == kind:  # README's spelling from a checkout: scorecards/x.yaml
        name = PurePosixPath(*name.parts[1:]) if len(name.parts) > 1 else PurePosixPath(".")
    if name == PurePosixPath("."):
        return bundled_path(kind)
    for root in (Path(kind), bundled_path(kind)):  # the project's copies first (evalkit init)
        exact = root / name
        if exact.is_file() or (exact.is_dir() and kind == "personas"):
            return exact
        for suffix in _SUFFIXES[kind]:
            candidate = root / f"{name}{suffix}"
            if candidate.is_file():
                return candidate
    return None


def resolve(source: str | os.PathLike[str], kind: BundledKind) -> Path:
    """The file (or, for personas, folder) ``source`` means: the path itself when it exists,
    else the item of ``kind`` it names (``appointment-reminder-ur``,
    ``scorecards/appointment-reminder-ur.yaml``, ``contacts.csv``), taken from the working
    folder's ``<kind>/`` when a copy is there, else from the bundled files; ``personas`` alone
    is the bundled personas folder.

    :class:`FileNotFoundError` when it is neither, listing the bundled names.
    """
    kind = _check_kind(kind)
    path = Path(source)
    if path.exists():
        return path
    found = _bundled_match(kind, os.fspath(source))
    if found is not None:
        return found
    listed = ", ".join(bundled_names(kind))
    message = f"no such file, nor the name of a bundled {_SINGULAR[kind]} ({listed})"
    raise FileNotFoundError(errno.ENOENT, message, str(source))


def copy_bundled(
    folder: str | os.PathLike[str],
    kinds: tuple[BundledKind, ...] = _KINDS,
    *,
    overwrite: bool = False,
) -> list[Path]:
    """Copy the bundled files of ``kinds`` into ``folder/<kind>/`` to edit them there; files
    already there are kept unless ``overwrite``. Returns the files written."""
    written: list[Path] = []
    for kind in map(_check_kind, kinds):
        root = bundled_path(kind)
        extras = [root / "README.md"] if (root / "README.md").is_file() else []
        for source in [*_bundled_files(kind), *extras]:
            target = Path(folder) / kind / source.relative_to(root)
            if target.exists() and not overwrite:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            written.append(target)
    return written


def personas_path() -> Path:
    """The folder of bundled caller personas (YAML)."""
    return bundled_path("personas")


def scorecards_path() -> Path:
    """The folder of bundled scorecards (YAML)."""
    return bundled_path("scorecards")


def contacts_path() -> Path:
    """The bundled sample contacts CSV (Urdu/English appointment records)."""
    return bundled_path("examples") / "contacts.csv"
