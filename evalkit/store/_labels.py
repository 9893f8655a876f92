"""Hand labels: what a person says a rule's verdict on a transcript should have been.

A run's labels are an append-only table kept in the run, apart from its grades (so
re-grading never touches them): ``<run>/labels/<time>-<random>.jsonl``, one object per
batch of labels, each line one label. An object is created once and never rewritten (a
conditional create at a URL, a temp file renamed into place locally), so two people labelling
at once both keep their labels. Readers list the objects and read them as one table, oldest
first; :func:`read_labels` with ``latest=True`` keeps each (conversation, rule)'s last label.
"""

from __future__ import annotations

import getpass
import json
import os
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Final

from .._util import now
from ._errors import CorruptRunError, storage_error
from ._location import StoreLocation
from ._urls import StoreLike, open_store

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "LABELS_DIR",
    "LABEL_COLUMNS",
    "LABEL_VALUES",
    "Label",
    "add_labels",
    "read_labels",
]

LABELS_DIR: Final = "labels"
#: What a label may say the verdict should have been.
LABEL_VALUES: Final = ("pass", "fail", "na")
#: The labels table's columns, in order.
LABEL_COLUMNS: Final = (
    "conversation_id",
    "rule_id",
    "label",
    "note",
    "labelled_by",
    "labelled_at",
    "rubric_version_id",
    "judge_verdict",
    "inclusion_probability",
)
MAX_NOTE: Final = 2000
_LABELLER_ENV: Final = "EVALKIT_LABELLER"


def default_labeller() -> str:
    """Who labels when nobody says: ``EVALKIT_LABELLER``, else the login name."""
    name = os.environ.get(_LABELLER_ENV)
    if name:
        return name
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


@dataclass(frozen=True)
class Label:
    """One hand label: on ``conversation_id``, rule ``rule_id`` should be ``label``.

    ``judge_verdict`` is the verdict the labeller saw (so "the judge was right" is a label
    equal to it); ``rubric_version_id`` the scorecard version it was seen under.
    ``inclusion_probability`` is the chance the label queue had of drawing this (conversation,
    rule) (:func:`evalkit.grading.label_queue`); None when a person picked it by hand, and then
    the label counts for agreement but not for judge-corrected estimates. Empty
    ``labelled_by``/``labelled_at`` are filled in when stored.
    """

    conversation_id: str
    rule_id: str
    label: str
    note: str = ""
    labelled_by: str = ""
    labelled_at: str = ""
    rubric_version_id: str | None = None
    judge_verdict: str | None = None
    inclusion_probability: float | None = None

    def checked(self, where: str = "label") -> Label:
        """This label, validated (:class:`ValueError` naming the field), with who and when."""
        import pandas as pd

        for name in ("conversation_id", "rule_id"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"{where}: {name} must be a non-empty string, got {value!r}")
        if self.label not in LABEL_VALUES:
            raise ValueError(
                f"{where}: label must be one of {', '.join(LABEL_VALUES)}, got {self.label!r}"
            )
        if not isinstance(self.note, str) or len(self.note) > MAX_NOTE:
            raise ValueError(f"{where}: note must be text of at most {MAX_NOTE} characters")
        if self.judge_verdict not in (None, "", "pass", "fail", "na", "error"):
            raise ValueError(f"{where}: judge_verdict {self.judge_verdict!r} is not a verdict")
        probability = _probability(self.inclusion_probability, where)
        when = self.labelled_at or now().isoformat(timespec="microseconds")
        try:
            pd.Timestamp(when)
        except ValueError as exc:
            raise ValueError(f"{where}: labelled_at {when!r} is not a timestamp") from exc
        return Label(
            conversation_id=self.conversation_id,
            rule_id=self.rule_id,
            label=self.label,
            note=self.note,
            labelled_by=self.labelled_by or default_labeller(),
            labelled_at=when,
            rubric_version_id=self.rubric_version_id or None,
            judge_verdict=self.judge_verdict or None,
            inclusion_probability=probability,
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_mapping(cls, row: Mapping[Any, Any], where: str = "label") -> Label:
        """A label from a dict or CSV row (unknown keys ignored, missing optional ones empty)."""
        import pandas as pd

        values = {}
        for name in LABEL_COLUMNS:
            value = row.get(name)
            if value is None or (not isinstance(value, str) and pd.isna(value)):
                value = None
            values[name] = value
        missing = [n for n in ("conversation_id", "rule_id", "label") if values[n] is None]
        if missing:
            raise ValueError(f"{where}: missing {', '.join(missing)}")
        return cls(
            conversation_id=str(values["conversation_id"]),
            rule_id=str(values["rule_id"]),
            label=str(values["label"]).strip().lower(),
            note=str(values["note"] or ""),
            labelled_by=str(values["labelled_by"] or ""),
            labelled_at=str(values["labelled_at"] or ""),
            rubric_version_id=_text_or_none(values["rubric_version_id"]),
            judge_verdict=_text_or_none(values["judge_verdict"]),
            inclusion_probability=_number_or_none(values["inclusion_probability"], where),
        )


def _probability(value: Any, where: str) -> float | None:
    """An inclusion probability in (0, 1], or None (a label picked by hand)."""
    if value is None:
        return None
    try:
        p = float(value)
    except (TypeError, ValueError):
        raise ValueError(
            f"{where}: inclusion_probability must be a number in (0, 1], got {value!r}"
        ) from None
    if not 0.0 < p <= 1.0:  # NaN fails too
        raise ValueError(f"{where}: inclusion_probability must be in (0, 1], got {value!r}")
    return p


def _number_or_none(value: Any, where: str) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return _probability(value, where)


def _text_or_none(value: Any) -> str | None:
    return None if value is None or str(value) == "" else str(value)


def _object_name() -> str:
    stamp = now().strftime("%Y%m%dT%H%M%S%f")
    return f"{stamp}-{secrets.token_hex(4)}.jsonl"


def add_labels(run_path: StoreLike, labels: Iterable[Label | Mapping[str, Any]]) -> pd.DataFrame:
    """Append ``labels`` to the run at ``run_path`` as one new object; return what was stored.

    Every label is checked first (a :class:`ValueError` names the label and field, and nothing
    is written). An empty batch writes nothing.
    """
    checked = [
        (item if isinstance(item, Label) else Label.from_mapping(item, f"label {i}")).checked(
            f"label {i}"
        )
        for i, item in enumerate(labels)
    ]
    if not checked:
        return _frame([])
    data = "".join(
        json.dumps(label.to_json(), ensure_ascii=False, sort_keys=True) + "\n" for label in checked
    ).encode("utf-8")
    target = open_store(run_path) / LABELS_DIR / _object_name()
    try:
        target.create_bytes(data)
    except OSError as exc:
        raise storage_error(exc, target, "store labels in") from exc
    return _frame([label.to_json() for label in checked])


def _read_all(run_path: StoreLocation) -> list[tuple[StoreLocation, bytes]]:
    paths = (run_path / LABELS_DIR).files("*.jsonl")
    found = run_path.read_many(paths) if paths else {}
    return [(p, found[p]) for p in paths if p in found]


def read_labels(run_path: StoreLike, *, latest: bool = True) -> pd.DataFrame:
    """The run's labels (columns :data:`LABEL_COLUMNS`), oldest first.

    ``latest`` keeps only the last label of each (conversation, rule): a later label corrects
    an earlier one. ``latest=False`` gives the whole append-only history.
    """
    import pandas as pd

    rows: list[dict[str, Any]] = []
    for path, data in _read_all(open_store(run_path)):
        for number, line in enumerate(data.decode("utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except ValueError as exc:
                raise CorruptRunError(f"{path}, line {number}: not JSON ({exc})", path) from exc
    frame = _frame(rows)
    if frame.empty:
        return frame
    order = pd.to_datetime(frame["labelled_at"], utc=True, format="ISO8601", errors="coerce")
    frame = frame.iloc[order.argsort(kind="stable")].reset_index(drop=True)
    if latest:
        frame = frame.drop_duplicates(["conversation_id", "rule_id"], keep="last")
    return frame.reset_index(drop=True)


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    data = {
        name: pd.Series([row.get(name) for row in rows], dtype="object") for name in LABEL_COLUMNS
    }
    return pd.DataFrame(data)
