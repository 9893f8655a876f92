"""Variables records for a grid: reading dicts, DataFrames and CSV/JSON/JSONL files.

Problems name where a record came from, as a person would look for it: a file's record by its
line (``contacts.csv line 3: variables.customer_name: ...``, the header being line 1), a
Python list's by its 0-based index (``variables[2].customer_name``). A CSV header that repeats a
column name is an error naming the column and the file (pandas would quietly rename the copy
``name.1``).
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from .._util import canonical_json
from ..api import (
    MAX_VARIABLE_KEY_CHARS,
    MAX_VARIABLES_JSON_CHARS,
    InvalidRequestError,
    Problem,
    check_variables,
)
from ..data import resolve
from ._text import encodable, unsendable_text

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Places",
    "VariablesInput",
    "VariablesRecord",
    "load_records",
    "load_variables",
    "record_keys",
]

PathLike: TypeAlias = str | os.PathLike[str]
VariablesRecord: TypeAlias = dict[str, Any]
VariablesInput: TypeAlias = (
    "Mapping[str, Any] | Sequence[Mapping[str, Any] | None] | pd.DataFrame | PathLike | None"
)


class Places:
    """Where each record came from, for messages: a file's lines, or a list's indexes.

    A CSV's line numbers are worked out only when a message needs one (a second, cheap read
    of the file with the ``csv`` module, whose rows pandas also reads), so valid files cost
    nothing extra. Quoted cells spanning lines and blank lines are counted as in the file.
    """

    __slots__ = ("_csv_rows", "_file", "_lines", "_unit")

    def __init__(
        self, file: Path | None = None, *, unit: str = "line", csv_rows: int | None = None
    ) -> None:
        self._file = file
        self._unit = unit
        self._csv_rows = csv_rows  # a CSV: how many records pandas read from it
        self._lines: list[int] | None = None

    def field(self, i: int) -> str:
        """The field path of record ``i``: ``variables[i]`` or ``<file> line N: variables``."""
        if self._file is None:
            return f"variables[{i}]"
        return f"{self._file.name} {self.ref(i)}: variables"

    def ref(self, i: int) -> str:
        """Record ``i`` in short, for "duplicates ..." messages: ``variables[i]`` or ``line N``."""
        if self._file is None:
            return f"variables[{i}]"
        if self._csv_rows is not None:
            lines = self._csv_lines()
            return f"line {lines[i]}" if i < len(lines) else f"record {i + 1}"
        return f"{self._unit} {i + 1 if self._lines is None else self._lines[i]}"

    def _csv_lines(self) -> list[int]:
        if self._lines is None:
            lines = _csv_record_lines(self._file) if self._file else []
            # if the csv module and pandas disagree on the rows, count records instead
            self._lines = lines if len(lines) == self._csv_rows else []
        return self._lines

    @classmethod
    def jsonl(cls, file: Path, lines: list[int]) -> Places:
        """Places for a JSONL file whose records sit on ``lines`` (1-based)."""
        places = cls(file)
        places._lines = lines
        return places


def _csv_record_lines(path: Path) -> list[int]:
    """The 1-based line each data row of a CSV starts on (blank lines skipped, as pandas does)."""
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh)
            starts: list[int] = []
            previous = 0
            for row in reader:
                if row:
                    starts.append(previous + 1)
                previous = reader.line_num
    except (OSError, UnicodeDecodeError, csv.Error):
        return []
    return starts[1:]  # the first row is the header


# --------------------------------------------------------------------------- values


def _is_missing(value: Any) -> bool:
    """A tabular missing value: NaN, pd.NA, NaT (``None`` is handled by the caller)."""
    if isinstance(value, float):
        return math.isnan(value)
    kind = type(value).__name__
    return kind in ("NAType", "NaTType") or (kind.startswith("float") and value != value)


def _json_value(value: Any, field: str, problems: list[Problem]) -> Any:
    """A plain JSON value (numpy scalars unboxed, dates as ISO text), or a problem."""
    kind = type(value)
    if kind is str or kind is bool or kind is int or value is None:
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        problems.append(Problem(field, f"must be a finite number, got {value}"))
        return None
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                problems.append(Problem(field, f"keys must be strings, got {key!r}"))
                continue
            out[key] = _json_value(item, f"{field}.{key}", problems)
        return out
    if isinstance(value, list | tuple):
        return [_json_value(v, f"{field}[{i}]", problems) for i, v in enumerate(value)]
    if isinstance(value, bool):  # subclasses, e.g. numpy.float64 is a float
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return _json_value(float(value), field, problems)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, _dt.datetime | _dt.date | _dt.time):
        return value.isoformat()
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item) and type(value).__module__.startswith("numpy"):
        return _json_value(item(), field, problems)
    problems.append(Problem(field, f"is not JSON-serialisable ({type(value).__name__})"))
    return None


def _record(
    raw: Any, i: int, places: Places, problems: list[Problem], *, tabular: bool
) -> VariablesRecord | None:
    """One variables record, normalised; ``None`` stays ``None`` (no variables for the cell)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        got = type(raw).__name__
        problems.append(Problem(places.field(i), f"must be an object (a dict), got {got}"))
        return None
    out: VariablesRecord = {}
    for key, value in raw.items():
        kind = type(value)
        if kind is str or kind is int or kind is bool:  # the common case, kept fast
            name = key if type(key) is str else None
        elif (value is None and tabular) or _is_missing(value):
            continue
        else:
            name = key if isinstance(key, str) else None
            value = _json_value(value, f"{places.field(i)}.{key}", problems)
        if name is None:
            if not tabular:
                problems.append(Problem(places.field(i), f"keys must be strings, got {key!r}"))
                continue
            name = str(key)
        out[name] = value
    return out


# --------------------------------------------------------------------------- sources


def _frame_records(frame: pd.DataFrame, problems: list[Problem]) -> list[dict[Any, Any]]:
    """One dict per row, built column-wise (much faster than ``to_dict`` on text columns)."""
    keys = [str(k) for k in frame.columns]
    if len(set(keys)) != len(keys):
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        problems.append(Problem("variables", f"duplicate column names: {', '.join(dupes)}"))
    columns = [frame.iloc[:, j].tolist() for j in range(len(keys))]
    return [dict(zip(keys, row, strict=True)) for row in zip(*columns, strict=True)]


def _csv_header(path: Path) -> list[str]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        for row in csv.reader(fh):
            if row:
                return row
    return []


def _duplicate_columns(path: Path, header: Sequence[str]) -> list[Problem]:
    """A problem per column name the header of ``path`` repeats (naming its positions)."""
    positions: dict[str, list[int]] = {}
    for number, name in enumerate(header, start=1):
        positions.setdefault(name, []).append(number)
    out = []
    for name, where in positions.items():
        if len(where) > 1:
            listed = ", ".join(map(str, where[:-1])) + f" and {where[-1]}"
            message = (
                f"{path}: column {name!r} appears {len(where)} times (columns {listed}); "
                "rename or remove the copies"
            )
            out.append(Problem("variables", message))
    return out


def _read_jsonl(path: Path) -> tuple[list[Any], Places]:
    records: list[Any] = []
    lines: list[int] = []
    text = path.read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {number}: {exc.msg} (column {exc.colno})") from None
        lines.append(number)
    return records, Places.jsonl(path, lines)


def _read_file(
    path: Path, csv_dtype: Any, problems: list[Problem]
) -> tuple[list[Any], bool, Places]:
    """Raw records of a variables file, whether they came from a table, and their places."""
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        raw, places = _read_jsonl(path)
        return raw, False, places
    if suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        return (data if isinstance(data, list) else [data]), False, Places(path, unit="record")
    import pandas as pd

    frame = pd.read_csv(
        path, dtype=csv_dtype, keep_default_na=False, na_values=[""], encoding="utf-8-sig"
    )
    problems.extend(_duplicate_columns(path, _csv_header(path)))
    return _frame_records(frame, problems), True, Places(path, csv_rows=len(frame))


def load_records(
    source: Any, problems: list[Problem], *, csv_dtype: Any = str
) -> tuple[list[VariablesRecord | None], Places]:
    """Normalised records of any variables input, and where each came from (problems appended)."""
    places = Places()
    if source is None:
        return [None], places
    if isinstance(source, Mapping):
        return [_record(source, 0, places, problems, tabular=False)], places
    raw: list[Any]
    tabular = False
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        try:
            path = resolve(source, "examples")  # a bundled example by name: contacts.csv
            raw, tabular, places = _read_file(path, csv_dtype, problems)
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            problems.append(Problem("variables", f"cannot read {path}: {exc}"))
            return [], places
    elif hasattr(source, "to_dict") and hasattr(source, "columns"):  # a pandas DataFrame
        raw, tabular = _frame_records(source, problems), True
    elif isinstance(source, Iterable) and not isinstance(source, bytes):
        raw = list(source)
    else:
        kinds = "None, a dict, a list of dicts, a DataFrame or a file path"
        problems.append(Problem("variables", f"must be {kinds}; got {type(source).__name__}"))
        return [], places
    if not raw:
        problems.append(
            Problem("variables", "holds no records (pass None for cells without variables)")
        )
    records = [_record(r, i, places, problems, tabular=tabular) for i, r in enumerate(raw)]
    return records, places


def load_variables(source: VariablesInput, *, csv_dtype: Any = str) -> list[VariablesRecord | None]:
    """Variables records from any grid input, normalised (see the grid module's rules).

    ``source`` is ``None``, one dict, a list of dicts (``None`` entries allowed), a pandas
    DataFrame (one record per row), or a path to a ``.csv``, ``.json`` (a list of objects) or
    ``.jsonl`` file. CSVs are read with ``dtype=csv_dtype`` (text by default, so ``"0012"``
    stays ``"0012"``). Raises :class:`~evalkit.InvalidRequestError` listing every problem; a
    file's problems name its line (``contacts.csv line 3: variables.name: ...``).
    """
    problems: list[Problem] = []
    records, _ = load_records(source, problems, csv_dtype=csv_dtype)
    if problems:
        raise InvalidRequestError(problems, what="variables")
    return records


def record_keys(
    records: Sequence[VariablesRecord | None], places: Places, problems: list[Problem]
) -> list[str]:
    """Each record's canonical JSON (its part of the cell id), checking the E9 limits."""
    keys: list[str] = []
    for i, record in enumerate(records):
        try:
            key = canonical_json(record)
        except (TypeError, ValueError):
            key = f"<invalid {i}>"  # already reported while normalising
        if not encodable(key):  # a lone surrogate: JSON cannot go out as UTF-8
            problems.extend(unsendable_text(record, places.field(i)))
            key = f"<invalid {i}>"
        keys.append(key)
        # check_variables measures the same compact JSON (key order aside), so it is called,
        # for its messages, only for a record that can fail: 100k records stay fast
        if record is not None and (
            len(key) >= MAX_VARIABLES_JSON_CHARS
            or any(len(k) > MAX_VARIABLE_KEY_CHARS for k in record)
        ):
            problems.extend(check_variables(record, places.field(i)))
    return keys
