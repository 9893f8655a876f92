"""What changed between a run and its series' last-known-good run (or any run): config keys,
the prompt by diff hunk, the grid, the scorecard, the judge and evalkit's version, from the
stored snapshots and manifests (secrets stay redacted).

The prompt (``agent.instructions``) is cut into sentences and lines and diffed with
:class:`difflib.SequenceMatcher`; each changed stretch is one hunk, so :func:`bisect` can apply
hunks one by one (:func:`apply_changes`).
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import pandas as pd

from .._exceptions import EvalkitError
from .._util import redact
from ..store import Run, StoreLike, load_run

__all__ = [
    "CHANGE_COLUMNS",
    "MissingSnapshotError",
    "apply_changes",
    "changes_frame",
    "config_of",
    "diff_runs",
    "what_changed",
]

#: The columns of :func:`what_changed`'s frame.
CHANGE_COLUMNS: Final = ("kind", "path", "before", "after")
PROMPT: Final = ("agent", "instructions")
_SENTENCE: Final = re.compile(r"(?<=[.!?\u061f\u06d4])\s+|\n+")


class MissingSnapshotError(EvalkitError):
    """A run's config snapshot is not in its manifest: nothing to diff."""


def config_of(run: Run) -> dict[str, Any]:
    """The (redacted) config a run exercised, from its manifest's snapshot."""
    snap = run.manifest.get("config_snapshot")
    if not isinstance(snap, Mapping) or not isinstance(snap.get("config"), Mapping):
        raise MissingSnapshotError(
            f"run {run.run_id} has no config snapshot (its manifest.json holds no "
            f"config_snapshot of assistant {run.manifest.get('assistant_id')} "
            f"v{run.manifest.get('assistant_version')}): nothing to diff against"
        )
    config = dict(snap["config"])
    variant = run.manifest.get("variant")
    if isinstance(variant, Mapping) and isinstance(variant.get("patch"), Mapping):
        from ..targets import merge_patch

        config = merge_patch(config, variant["patch"])
    return dict(redact(config))


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping) and value:
        out: dict[str, Any] = {}
        for key in sorted(value):
            out |= _flat(value[key], f"{prefix}.{key}" if prefix else str(key))
        return out
    return {prefix: value}


def _show(value: Any) -> str | None:
    if value is None:
        return None
    return (
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    )


def split_prompt(text: str) -> list[str]:
    """The prompt's sentences and lines, the units its hunks are made of."""
    return [part for part in _SENTENCE.split(text) if part.strip()]


def _sentences(start: int, stop: int) -> str:
    """Sentences ``start`` (0-based) up to ``stop`` (excluded), 1-based as people count."""
    return f"sentence {stop}" if stop - start == 1 else f"sentences {start + 1}-{stop}"


def hunk_label(tag: str, i1: int, i2: int, j1: int, j2: int) -> str:
    """A hunk in words, numbered as the prompt before counts its sentences: ``replace
    sentences 1-3``, ``delete sentence 5``, ``insert a sentence after sentence 4`` (an
    insertion takes no sentence of the prompt before, so it says where it goes)."""
    if tag != "insert":
        return f"{tag} {_sentences(i1, i2)}"
    added = "a sentence" if j2 - j1 == 1 else f"{j2 - j1} sentences"
    return f"insert {added} " + (f"after sentence {i1}" if i1 else "at the start")


def _prompt_hunks(before: str, after: str) -> list[dict[str, Any]]:
    old, new = split_prompt(before), split_prompt(after)
    rows = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for n, (tag, i1, i2, j1, j2) in enumerate(
        (op for op in matcher.get_opcodes() if op[0] != "equal"), start=1
    ):
        rows.append(
            {
                "kind": "prompt",
                "path": f"agent.instructions#hunk-{n} ({hunk_label(tag, i1, i2, j1, j2)})",
                "before": " ".join(old[i1:i2]) or None,
                "after": " ".join(new[j1:j2]) or None,
                "_hunk": (i1, i2, j1, j2),
            }
        )
    return rows


def _config_rows(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    old, new = _flat(before), _flat(after)
    for path in sorted(set(old) | set(new)):
        if path == ".".join(PROMPT) or old.get(path) == new.get(path):
            continue
        rows.append(
            {
                "kind": "config",
                "path": path,
                "before": _show(old.get(path)),
                "after": _show(new.get(path)),
            }
        )
    prompt_old = str(before.get("agent", {}).get("instructions") or "")
    prompt_new = str(after.get("agent", {}).get("instructions") or "")
    if prompt_old != prompt_new:
        rows += _prompt_hunks(prompt_old, prompt_new)
    return rows


def _grades_facts(run: Run) -> dict[str, set[str]]:
    grades = run.grades()
    facts: dict[str, set[str]] = {}
    for column in ("rubric_version_id", "scorecard_hash", "judge_model", "prompt_version"):
        if column in grades.columns:
            facts[column] = {str(v) for v in grades[column].dropna().unique()}
    return facts


def _other_rows(base: Run, cand: Run) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    old_grid, new_grid = (
        _flat(base.manifest.get("grid") or {}),
        _flat(cand.manifest.get("grid") or {}),
    )
    for path in sorted(set(old_grid) | set(new_grid)):
        if path.startswith("shard") or path == "cells_digest":
            continue
        if old_grid.get(path) != new_grid.get(path):
            rows.append(
                {
                    "kind": "grid",
                    "path": path,
                    "before": _show(old_grid.get(path)),
                    "after": _show(new_grid.get(path)),
                }
            )
    facts = _grades_facts(base), _grades_facts(cand)
    for kind, column in (
        ("scorecard", "rubric_version_id"),
        ("scorecard", "scorecard_hash"),
        ("judge", "judge_model"),
        ("judge", "prompt_version"),
    ):
        old, new = facts[0].get(column, set()), facts[1].get(column, set())
        if old != new:
            rows.append(
                {
                    "kind": kind,
                    "path": column,
                    "before": ", ".join(sorted(old)) or None,
                    "after": ", ".join(sorted(new)) or None,
                }
            )
    old_v, new_v = base.manifest.get("evalkit_version"), cand.manifest.get("evalkit_version")
    if old_v != new_v:
        rows.append(
            {
                "kind": "evalkit",
                "path": "evalkit_version",
                "before": _show(old_v),
                "after": _show(new_v),
            }
        )
    return rows


def diff_runs(base: Run, cand: Run) -> list[dict[str, Any]]:
    """The changes from ``base`` to ``cand`` as rows (prompt rows keep their ``_hunk``)."""
    rows = _config_rows(config_of(base), config_of(cand)) + _other_rows(base, cand)
    return [{**row, **{k: redact(row[k]) for k in ("before", "after")}} for row in rows]


def _against(store: StoreLike, run: Run) -> str:
    from ._history import HistoryOptions, history

    picked = HistoryOptions(assistant_id=run.manifest.get("assistant_id"))
    frame = history(store, options=picked)
    rows = frame[frame["run_id"] == run.run_id].dropna(subset=["last_good_run"])
    if rows.empty:
        raise ValueError(
            f"run {run.run_id} has no last-known-good run in its series (the first of its "
            "series, not finished complete, or not graded): pass against=RUN"
        )
    return str(rows["last_good_run"].iloc[0])


def what_changed(store: StoreLike, run_id: str, against: str | None = None) -> pd.DataFrame:
    """What changed from ``against`` (None: the run's series' last-known-good run) to
    ``run_id``, runs of ``store`` (the store is what is read, so it comes first, as in
    :func:`history`): one row per change with ``kind`` (config, prompt, grid, scorecard, judge,
    evalkit), ``path`` (a dotted config key; ``agent.instructions#hunk-N`` for a prompt hunk),
    ``before`` and ``after`` (text; JSON for other values; secrets redacted). A run without a
    config snapshot raises :class:`MissingSnapshotError` naming it."""
    run = load_run(run_id, store=store)
    base = load_run(against or _against(store, run), store=store)
    frame = changes_frame(diff_runs(base, run))
    frame.attrs["against"] = base.run_id
    return frame


def changes_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Change rows as :data:`CHANGE_COLUMNS`, object columns so an absent ``before`` or
    ``after`` stays None (a text column would turn it into NaN, printed as ``nan``)."""
    return pd.DataFrame(
        [{c: r[c] for c in CHANGE_COLUMNS} for r in rows],
        columns=list(CHANGE_COLUMNS),
        dtype=object,
    )


def apply_changes(
    config: Mapping[str, Any],
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """``config`` (the good config) with the changes ``rows`` (from :func:`diff_runs` of
    ``before`` -> ``after``) applied: config keys set to their ``after`` values, prompt hunks
    spliced in."""
    out = copy.deepcopy(dict(config))
    flat_after = _flat(after)
    hunks = []
    for row in rows:
        if row["kind"] == "prompt":
            hunks.append(row["_hunk"])
        elif row["kind"] == "config":
            _set(out, str(row["path"]).split("."), flat_after.get(str(row["path"])))
    if hunks:
        old = split_prompt(str(before.get("agent", {}).get("instructions") or ""))
        new = split_prompt(str(after.get("agent", {}).get("instructions") or ""))
        parts: list[str] = []
        cursor = 0
        for i1, i2, j1, j2 in sorted(hunks):
            parts += old[cursor:i1] + new[j1:j2]
            cursor = i2
        parts += old[cursor:]
        out.setdefault("agent", {})["instructions"] = " ".join(parts)
    return out


def _set(target: dict[str, Any], path: list[str], value: Any) -> None:
    for key in path[:-1]:
        nxt = target.get(key)
        if not isinstance(nxt, dict):
            nxt = {}
            target[key] = nxt
        target = nxt
    if value is None:
        target.pop(path[-1], None)
    else:
        target[path[-1]] = copy.deepcopy(value)
