"""Hand labels as CSV, for teams that label elsewhere: :func:`export_labels` writes a store's
labels (a ``run_id`` column, then :data:`LABEL_COLUMNS`); :func:`import_labels` appends a CSV's
labels to the runs it names, checking every row before anything is stored."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._util import atomic_write_bytes
from ._errors import RunNotFoundError
from ._labels import LABEL_COLUMNS, Label
from ._listing import stored_manifests
from ._reader import Run, load_run
from ._urls import StoreLike, open_store

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["export_labels", "import_labels"]

CSV_COLUMNS = ("run_id", *LABEL_COLUMNS)


def _runs(store: StoreLike, run_ids: list[str] | None) -> list[Run]:
    if run_ids:
        return [load_run(run_id, store) for run_id in run_ids]
    return [Run(folder) for folder, _ in stored_manifests(open_store(store))]


def labels_table(
    store: StoreLike = "runs", run_ids: list[str] | None = None, *, latest: bool = False
) -> pd.DataFrame:
    """Every label of the store's runs (or of ``run_ids``) with a ``run_id`` column first."""
    import pandas as pd

    frames = []
    for run in _runs(store, run_ids):
        frame = run.labels(latest=latest)
        if len(frame):
            frames.append(frame.assign(run_id=run.run_id))
    if not frames:
        return pd.DataFrame({name: pd.Series(dtype="object") for name in CSV_COLUMNS})
    return pd.concat(frames, ignore_index=True)[list(CSV_COLUMNS)]


def export_labels(
    store: StoreLike = "runs",
    output: str | os.PathLike[str] | None = None,
    *,
    run_ids: list[str] | None = None,
    latest: bool = False,
) -> str:
    """The labels as CSV text (the whole history unless ``latest``); also written to
    ``output`` (atomically) when given."""
    text = labels_table(store, run_ids, latest=latest).to_csv(index=False)
    if output is not None:
        target = Path(os.fspath(output))
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, text.encode("utf-8"))
    return text


def _read_csv(source: str | os.PathLike[str] | io.StringIO) -> pd.DataFrame:
    import pandas as pd

    if not isinstance(source, io.StringIO):
        source = io.StringIO(_utf8_text(Path(os.fspath(source))))
    try:
        frame = pd.read_csv(source, dtype=str, keep_default_na=False)
    except (ValueError, pd.errors.ParserError) as exc:
        raise ValueError(f"labels CSV {source}: cannot be read ({exc})") from exc
    missing = {"conversation_id", "rule_id", "label"} - set(frame.columns)
    if missing:
        raise ValueError(f"labels CSV {source}: missing column(s) {', '.join(sorted(missing))}")
    return frame


def _utf8_text(path: Path) -> str:
    """The file's text; invalid UTF-8 is a :class:`ValueError` naming the line and column
    (never stored as U+FFFD)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"labels CSV {path}: cannot be read ({exc})") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start].decode("utf-8", "replace")
        line = before.count("\n") + 1
        header = next(csv.reader([data.split(b"\n", 1)[0].decode("utf-8", "replace")]), [])
        field = len(next(csv.reader([before.rsplit("\n", 1)[-1]]), [""])) - 1
        name = header[field] if 0 <= field < len(header) else f"column {field + 1}"
        raise ValueError(f"labels CSV line {line}: {name!r} is not valid UTF-8 text") from None


def _key(row: Mapping[Any, Any]) -> tuple[str, ...]:
    return tuple(str(row.get(name) or "") for name in LABEL_COLUMNS)


def import_labels(
    source: str | os.PathLike[str] | io.StringIO,
    store: StoreLike = "runs",
    *,
    run_id: str | None = None,
) -> dict[str, int]:
    """Append the labels of a CSV to their runs; returns labels stored per run.

    Each row names its run in ``run_id`` (or every row goes to ``run_id=``). Every row is
    checked first, its run and conversation must exist: one bad row is a :class:`ValueError`
    naming the row and field, and nothing is stored. Rows already stored (same values) are
    skipped, so importing a file twice adds nothing.
    """
    frame = _read_csv(source)
    if run_id is None and "run_id" not in frame.columns:
        raise ValueError(f"labels CSV {source}: no run_id column; pass run_id= (--run)")
    batches: dict[str, list[Label]] = {}
    lines: dict[str, list[int]] = {}
    for number, row in enumerate(frame.to_dict("records"), start=2):  # line 1 is the header
        where = f"labels CSV line {number}"
        target = run_id or str(row.get("run_id") or "")
        if not target:
            raise ValueError(f"{where}: run_id is empty")
        batches.setdefault(target, []).append(Label.from_mapping(row, where).checked(where))
        lines.setdefault(target, []).append(number)
    runs = {}
    for name in batches:
        try:
            runs[name] = load_run(name, store)
        except RunNotFoundError as exc:
            raise ValueError(f"labels CSV line {lines[name][0]}: run_id {name!r}: {exc}") from exc
    stored: dict[str, int] = {}
    fresh_batches: dict[str, list[Label]] = {}
    for name, labels in batches.items():
        checked = runs[name].check_labels(labels, [f"labels CSV line {n}" for n in lines[name]])
        have = {_key(r) for r in runs[name].labels(latest=False).to_dict("records")}
        fresh_batches[name] = [item for item in checked if _key(item.to_json()) not in have]
    for name, fresh in fresh_batches.items():
        stored[name] = len(runs[name].add_labels(fresh)) if fresh else 0
    return stored
