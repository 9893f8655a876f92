"""Reading a run folder: :class:`Run` (manifest and lazily loaded DataFrames), :func:`load_run`."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa
import pyarrow.compute as pc

from ._errors import RunNotFoundError, StoreError
from ._grades import grades_path
from ._labels import Label, add_labels, read_labels
from ._layout import (
    CONVERSATIONS_FILE,
    GRADES_DIR,
    SCHEMAS,
    STAMP_KEY,
    TURNS_FILE,
)
from ._location import StoreLocation
from ._manifest import MANIFEST_NAME, read_manifest
from ._records import (
    STATUSES,
)
from ._run_html import run_html
from ._tables import (
    GRADES_SCHEMA,
    empty_frame,
    read_parquet_table,
    table_metadata,
    to_frame,
)
from ._turn_timing import has_turn_timing, with_turn_latency
from ._urls import StoreLike, is_store_url, open_store
from ._wide import DEFAULT_TAG_PREFIX, DEFAULT_VARIABLE_PREFIX, expand_variables

if TYPE_CHECKING:
    import pandas as pd

logger = logging.getLogger("evalkit.store")


class Run:
    """A stored run: :attr:`manifest`, and lazily loaded, cached DataFrames.

    ``conversations`` and ``turns`` come from the parquet tables, or from the journal when the
    tables are missing or older than it (a crashed or still running run); both always come
    from the same source. The frames are cached: reuse them, copy before changing them.
    """

    def __init__(self, path: StoreLike) -> None:
        self.path: StoreLocation = open_store(path)
        self.manifest: dict[str, Any] = read_manifest(self.path / MANIFEST_NAME)
        self.run_id: str = str(self.manifest.get("run_id") or self.path.name)
        self._frames: dict[str, pd.DataFrame] = {}
        self._pending: dict[str, pa.Table] = {}
        self._stamp: str | None = None
        self._from_journal = False
        self._said_untimed = False

    def __repr__(self) -> str:
        counts = self.manifest.get("counts") or {}
        total = counts.get("total", "?")
        statuses = ", ".join(f"{s} {counts[s]}" for s in STATUSES if counts.get(s))
        target = self.manifest.get("target")
        on = f" on {target}" if target else ""
        graded = sorted(self.manifest.get("grades") or {})
        rubrics = f"; graded: {', '.join(graded)}" if graded else ""
        return (
            f"<Run {self.run_id!r}{on} at {str(self.path)!r}: {total} conversation(s)"
            f"{' (' + statuses + ')' if statuses else ''}{rubrics}>"
        )

    def _repr_html_(self) -> str:
        """Jupyter's display: reads the manifest again, so gradings made since show."""
        try:
            manifest = read_manifest(self.path / MANIFEST_NAME)
        except StoreError:
            manifest = self.manifest
        return run_html(self.run_id, str(self.path), manifest, self.counts)

    @property
    def conversations(self) -> pd.DataFrame:
        """One row per conversation (columns and dtypes: ``CONVERSATIONS_SCHEMA``).

        ``variables`` and ``persona_tags`` are JSON text; :meth:`conversations_wide` spreads
        them into columns.
        """
        return self._frame("conversations")

    def conversations_wide(
        self, *, prefix: str = DEFAULT_VARIABLE_PREFIX, tag_prefix: str | None = DEFAULT_TAG_PREFIX
    ) -> pd.DataFrame:
        """:attr:`conversations` plus a column per variable and a boolean column per persona tag.

        ``df["variables.customer_name"]``, ``df[df["tag.angry"]]``: see :func:`expand_variables`
        (``prefix`` and ``tag_prefix`` name the new columns; ``tag_prefix=None``: no tag columns).
        A new frame each call.
        """
        return expand_variables(self.conversations, prefix=prefix, tag_prefix=tag_prefix)

    @property
    def turns(self) -> pd.DataFrame:
        """One row per turn: run_id, conversation_id, index (1-based), role, text, ``at_s``
        (arrival, seconds from the simulate request) and ``latency_s`` (an agent turn's
        ``at_s`` minus the previous turn's; NaN for caller and first turns). Runs recorded
        before turn timing load with both NaN (said once, in a warning log line)."""
        return self._frame("turns")

    @property
    def has_turn_timing(self) -> bool:
        """True when the run's turns carry arrival times (runs recorded since turn timing)."""
        turns = self.turns
        return bool(len(turns)) and bool(turns["at_s"].notna().any())

    @property
    def counts(self) -> dict[str, int]:
        """Conversations by status, plus ``total`` (from the loaded conversations)."""
        status = self.conversations["status"].value_counts()
        return {"total": len(self.conversations), **{s: int(status.get(s, 0)) for s in STATUSES}}

    @property
    def from_journal(self) -> bool:
        """True when the frames come from the journal (tables missing or stale); loads them."""
        self._frame("conversations")
        return self._from_journal

    def _frame(self, name: Literal["conversations", "turns"]) -> pd.DataFrame:
        frame = self._frames.get(name)
        if frame is None:
            table = self._pending.pop(name, None)
            if table is None:
                table = self._table(name)
            if name == "turns":
                table = self._timed(table)
            frame = to_frame(table, SCHEMAS[name])
            self._frames[name] = frame
        return frame

    def _timed(self, turns: pa.Table) -> pa.Table:
        if turns.num_rows and not has_turn_timing(turns) and not self._said_untimed:
            self._said_untimed = True
            logger.warning(
                "run %s was recorded before turn timing: its turns have no at_s, so at_s and "
                "latency_s are NaN (latency comparisons refuse it)",
                self.run_id,
            )
        return with_turn_latency(turns)

    @property
    def local_folder(self) -> Path:
        """A local folder for this run's store-wide caches (the judge cache, the rubric
        registry): the store folder itself, or for a run at a URL a folder under the user's
        cache named after the store (``EVALKIT_CACHE_DIR`` overrides where)."""
        return self.path.parent.local_cache()

    def _table(self, name: Literal["conversations", "turns"]) -> pa.Table:
        if self._from_journal:
            return self._replay(name)
        parquet = self.path / (CONVERSATIONS_FILE if name == "conversations" else TURNS_FILE)
        if not parquet.exists():
            has_journal = self.path.journal_bytes() is not None
            return self._replay(name) if has_journal else SCHEMAS[name].empty_table()
        table = read_parquet_table(parquet, SCHEMAS[name])
        stamp = (table.schema.metadata or {}).get(STAMP_KEY.encode(), b"").decode() or None
        expected = self._stamp
        if expected is None:
            size = self.path.journal_bytes()  # tables are fresh if built from all of it
            expected = str(size) if size is not None else None
        if expected is not None and stamp != expected:
            return self._replay(name)
        self._stamp = stamp
        return table

    def _replay(self, name: Literal["conversations", "turns"]) -> pa.Table:
        logger.info(
            "run %s: tables missing or older than the journal; reading the journal", self.run_id
        )
        contents = self.path.read_journal()
        self._from_journal = True
        self._frames.clear()  # never mix a parquet frame with a journal frame
        other = "turns" if name == "conversations" else "conversations"
        self._pending[other] = getattr(contents, other)
        table: pa.Table = getattr(contents, name)
        return table

    def grades(self, rubric_version_id: str | None = None) -> pd.DataFrame:
        """Grades from ``grades/*.parquet``: one row per conversation x rule.

        ``rubric_version_id`` (or a scorecard, whose ``rubric_version_id`` is read) keeps only
        that scorecard's rows. With no grades yet: an empty frame with the grade columns.
        """
        folder = self.path / GRADES_DIR
        wanted = (
            None
            if rubric_version_id is None
            else str(getattr(rubric_version_id, "rubric_version_id", rubric_version_id))
        )
        own = grades_path(self.path, wanted) if wanted is not None else None
        if own is not None and own.is_file() and _holds_only(own, wanted):
            return to_frame(read_parquet_table(own, GRADES_SCHEMA), GRADES_SCHEMA)
        files = folder.files("*.parquet")
        if not files:
            return empty_frame(GRADES_SCHEMA)
        tables = [read_parquet_table(file, GRADES_SCHEMA) for file in files]
        table = pa.concat_tables(tables, promote_options="default")
        if wanted is not None:
            table = table.filter(pc.equal(table.column("rubric_version_id"), wanted))
        return to_frame(table, GRADES_SCHEMA)

    def labels(self, *, latest: bool = True) -> pd.DataFrame:
        """Hand labels stored in the run (see :func:`read_labels`): the last per conversation
        and rule, or with ``latest=False`` the whole append-only table."""
        return read_labels(self.path, latest=latest)

    def add_labels(self, labels: Iterable[Label | Mapping[str, Any]]) -> pd.DataFrame:
        """Append hand labels to the run (never to its grades); returns the stored rows.

        Every label is checked first (:meth:`check_labels`): a bad one is a
        :class:`ValueError` naming it and the field, and nothing is stored.
        """
        return add_labels(self.path, self.check_labels(labels))

    def check_labels(
        self, labels: Iterable[Label | Mapping[str, Any]], where: str | Sequence[str] = "label"
    ) -> list[Label]:
        """``labels`` checked against this run: each label's fields (:meth:`Label.checked`),
        its conversation must be in the run and, once the run is graded, its rubric version
        one the run was graded with and its rule one that scorecard graded. ``where`` names
        the labels in messages: a prefix (``label 0``, ``label 1``, ...) or one name each."""
        import pandas as pd

        given = list(labels)
        names = [f"{where} {i}" for i in range(len(given))] if isinstance(where, str) else where
        items = [
            (item if isinstance(item, Label) else Label.from_mapping(item, name)).checked(name)
            for item, name in zip(given, names, strict=True)
        ]
        known = set(self.conversations["conversation_id"].astype(str))
        grades = self.grades() if items else pd.DataFrame()
        rules: dict[str, set[str]] = {}
        if len(grades):
            for key, group in grades.groupby("rubric_version_id"):
                rules[str(key)] = set(group["rule_id"].astype(str))
        every = set().union(*rules.values()) if rules else set()
        for name, item in zip(names, items, strict=True):
            if item.conversation_id not in known:
                raise ValueError(
                    f"{name}: conversation_id {item.conversation_id!r} is not in run {self.run_id}"
                )
            if not rules:
                continue
            wanted = item.rubric_version_id
            if wanted is not None and wanted not in rules:
                raise ValueError(
                    f"{name}: rubric_version_id {wanted!r} is not a scorecard run "
                    f"{self.run_id} was graded with ({', '.join(sorted(rules))})"
                )
            allowed = every if wanted is None else rules[wanted]
            if item.rule_id not in allowed:
                raise ValueError(
                    f"{name}: rule_id {item.rule_id!r} is not a rule of the scorecard "
                    f"(rules: {', '.join(sorted(allowed))})"
                )
        return items

    def transcript(self, conversation_id: str) -> pd.DataFrame:
        """The turns of one conversation in speaking order (empty if it has none)."""
        if not (self.conversations["conversation_id"] == conversation_id).any():
            raise KeyError(
                f"no conversation {conversation_id!r} in run {self.run_id} ({self.path})"
            )
        turns = self.turns
        return turns[turns["conversation_id"] == conversation_id].reset_index(drop=True)


def load_run(path_or_id: StoreLike, store: StoreLike = "runs") -> Run:
    """Open a run: a path or URL to its folder, or its id inside ``store`` (a folder or URL).

    Raises :class:`RunNotFoundError` (naming the paths tried) or :class:`CorruptRunError`.
    """
    if not isinstance(path_or_id, str | os.PathLike) or is_store_url(path_or_id):
        folder = open_store(path_or_id)  # a place already opened, or a URL: the run itself
        if (folder / MANIFEST_NAME).is_file():
            return Run(folder)
        raise RunNotFoundError(f"no run at {folder}: it holds no {MANIFEST_NAME}", folder)
    name = os.fspath(path_or_id)
    direct = open_store(Path(name))  # a run folder, else a run id inside the store
    in_store = open_store(store) / name
    for folder in (direct, in_store):
        if (folder / MANIFEST_NAME).is_file():
            return Run(folder)
    said = direct if str(direct) == str(in_store) else f"{direct} nor {in_store}"
    raise RunNotFoundError(f"no run {name!r}: neither {said} holds a {MANIFEST_NAME}", in_store)


def local_folder(store: StoreLike) -> Path:
    """A local folder for what belongs with ``store`` but stays on this machine (the judge
    cache, the in-flight refine record): the store folder itself, or a cache folder for a URL
    store. Config snapshots live in the store itself (:class:`evalkit.targets.SnapshotStore`)."""
    return open_store(store).local_cache()


def _holds_only(path: StoreLocation, rubric_version_id: str | None) -> bool:
    """True when a grades file says (in its footer) it holds that rubric version only."""
    try:
        return table_metadata(path).get("evalkit.rubric_version_id") == rubric_version_id
    except (OSError, pa.ArrowException):
        return False
