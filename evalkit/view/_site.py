"""What the viewer reads from a store: the run catalog, and per run its conversations, turns,
grades (the scorecard graded last), labels and scores, reloaded when the run changes."""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .._util import content_hash
from ..audio import AUDIO_DIR
from ..store import (
    JOURNAL_NAME,
    LABELS_DIR,
    Run,
    RunNotFoundError,
    StoreError,
    StoreLocation,
    catalog,
    open_store,
    read_stored_manifest,
)

__all__ = ["RunData", "Site"]

logger = logging.getLogger("evalkit.view")

#: Runs whose frames are held between requests (least recently used out first).
RUNS_HELD = 16
#: Folders of a store that no page reads (caches): left out of its stamp.
_NOT_READ = frozenset({AUDIO_DIR, ".judge-cache"})
#: ... and what pages over the whole store never read: they read manifests, tables and grades,
#: not a run's journal (a run being written) nor its hand labels.
_NOT_READ_ACROSS_RUNS = _NOT_READ | {JOURNAL_NAME, LABELS_DIR}
#: How deep below a run's folder (or the store's own folders) a stamp looks.
_DEPTH = 2


def _tree_stamp(
    folder: str, depth: int, into: list[tuple[object, ...]], skip: frozenset[str] = _NOT_READ
) -> None:
    """Append (path, inode, size, mtime) of every file below ``folder``, ``depth`` deep, but
    what ``skip`` names: a file rewritten (atomically: a new inode), grown (a journal) or
    added (a run, a label object, grades) changes it. A folder looked into is named without
    its times (a skipped entry made inside it changes nothing); one at the last level counts
    as a file."""
    try:
        with os.scandir(folder) as entries:
            found = sorted(entries, key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        into.append((folder, None))
        return
    for entry in found:
        if entry.name in skip:
            continue
        if depth > 1 and entry.is_dir():
            into.append((entry.path,))
            _tree_stamp(entry.path, depth - 1, into, skip)
            continue
        try:
            st = entry.stat()
        except FileNotFoundError:
            continue
        into.append((entry.path, st.st_ino, st.st_size, st.st_mtime_ns))


def _rubric(manifest: Mapping[str, Any], grades: pd.DataFrame) -> str | None:
    """The scorecard graded last (by the manifest's graded_at), else any graded."""
    summary = manifest.get("grades")
    if isinstance(summary, Mapping) and summary:
        return str(max(summary, key=lambda k: str((summary[k] or {}).get("graded_at") or "")))
    versions = sorted(str(v) for v in pd.unique(grades["rubric_version_id"].dropna()))
    return versions[-1] if versions else None


@dataclass
class RunData:
    """One run as the pages need it (frames indexed for lookups)."""

    run: Run
    stamp: str
    rubric: str | None
    grades: pd.DataFrame
    conversations: pd.DataFrame  # indexed by conversation_id, in grid order
    scores: pd.Series

    @classmethod
    def load(cls, run: Run, stamp: str) -> RunData:
        from ..report.plots import conversation_scores

        everything = run.grades()
        rubric = _rubric(run.manifest, everything)
        grades = everything[everything["rubric_version_id"] == rubric] if rubric else everything
        grades = grades.reset_index(drop=True)
        conv = run.conversations.sort_values(["cell_id", "repeat", "conversation_id"])
        conv = conv.set_index(conv["conversation_id"].astype(str), drop=False)
        scores = conversation_scores(grades) if len(grades) else pd.Series(dtype="float64")
        return cls(run, stamp, rubric, grades, conv, scores)

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def running(self) -> bool:
        """True while the run has not been finalized (its pages refresh)."""
        return self.run.manifest.get("finalized_at") is None

    def labels(self) -> pd.DataFrame:
        """The latest label per conversation and rule (read fresh: labels change live)."""
        return self.run.labels()

    def turns_of(self, conversation_id: str) -> pd.DataFrame:
        turns = self.run.turns
        return turns[turns["conversation_id"] == conversation_id].sort_values("index")

    def grades_of(self, conversation_id: str) -> pd.DataFrame:
        return self.grades[self.grades["conversation_id"] == conversation_id]


class Site:
    """A store, read for the viewer; thread-safe (uvicorn serves from a thread pool)."""

    def __init__(self, store: Any, storage_options: Mapping[str, Any] | None = None) -> None:
        self.root: StoreLocation = open_store(store, storage_options)
        self._lock = threading.Lock()
        self._runs: OrderedDict[str, RunData] = OrderedDict()
        self._latency: dict[str, tuple[str, dict[str, float]]] = {}  # run -> (finalized, p50/p95)

    @property
    def label(self) -> str:
        return str(self.root)

    def catalog(self) -> pd.DataFrame:
        """One row per run (see :func:`evalkit.store.catalog`)."""
        return catalog(self.root)

    def stamp(self, run_ids: Iterable[str] | None = None) -> str | None:
        """A fingerprint of what a page reads: the folders of ``run_ids`` (it changes when a
        manifest is rewritten, a journal grows, grades or labels are written), or with
        ``None`` the whole store as the catalog and the history read it (a run added or
        removed, a manifest, tables or grades written; not journals nor labels). The caches
        evalkit keeps in the store (audio, judge answers) are left out. ``None`` for a store at
        a URL (its pages are rendered on every request: a listing there costs about as much
        as the page)."""
        root = self.root
        if not isinstance(root, Path):
            return None
        found: list[tuple[object, ...]] = []
        if run_ids is None:
            _tree_stamp(os.fspath(root), _DEPTH + 1, found, _NOT_READ_ACROSS_RUNS)
        else:
            for run_id in run_ids:
                self.folder(run_id)  # refuses a run id that is not a folder's name
                _tree_stamp(os.fspath(root / run_id), _DEPTH, found)
        return content_hash(repr(found))

    def folder(self, run_id: str) -> StoreLocation:
        if not run_id or run_id.startswith(".") or any(c in run_id for c in "/\\"):
            raise RunNotFoundError(f"no run {run_id!r} in {self.root}", None)
        return self.root / run_id

    def run(self, run_id: str) -> RunData:
        """The run's data, loaded again when its manifest or journal changed."""
        folder = self.folder(run_id)
        manifest = read_stored_manifest(folder)
        if manifest is None:
            raise RunNotFoundError(f"no run {run_id!r} in {self.root}", folder)
        stamp = content_hash({"manifest": manifest, "journal": folder.journal_bytes()})
        with self._lock:
            cached = self._runs.get(run_id)
            if cached is not None:
                self._runs.move_to_end(run_id)
        if cached is not None and cached.stamp == stamp and not cached.running:
            return cached
        data = RunData.load(Run(folder), stamp)
        with self._lock:
            self._runs[run_id] = data
            self._runs.move_to_end(run_id)
            while len(self._runs) > RUNS_HELD:
                self._runs.popitem(last=False)
        return data

    def latency(self, run_id: str, finalized_at: Any) -> dict[str, float]:
        """The run's agent latency p50 and p95 (:func:`evalkit.compare.latency_quantiles`;
        NaN without turn timing), kept while its finalize time holds (a run still running is
        read again each time; a resumed run finalizes again)."""
        from ..compare import latency_quantiles

        stamp = str(finalized_at)
        final = not pd.isna(finalized_at)
        with self._lock:
            known = self._latency.get(run_id)
        if final and known is not None and known[0] == stamp:
            return known[1]
        try:
            found = latency_quantiles(Run(self.folder(run_id)))
        except StoreError as exc:  # a run being written, or a damaged one: no latency
            logger.debug("run %s: no agent latency (%s)", run_id, exc)
            found = {"p50": float("nan"), "p95": float("nan")}
        if final:
            with self._lock:
                self._latency[run_id] = (stamp, found)
        return found

    def forget(self, run_id: str) -> None:
        with self._lock:
            self._runs.pop(run_id, None)
