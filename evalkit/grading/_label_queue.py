"""The label queue: a seeded, stratified random draw of judged verdicts for people to label,
each with the chance it had of being drawn, so labels can correct the judge without bias.

Strata are rule x judge verdict x run (Cochran 1977, ch. 5: stratified random sampling).
Within a stratum of ``N_h`` judged (conversation, rule) pairs, ``n_h`` are drawn without
replacement, so each has inclusion probability ``n_h / N_h``. The ``n`` labels are allocated
proportionally to the strata's sizes (largest remainders), with at least two per stratum when
``n`` allows, so every judged verdict has a known, non-zero chance of being labelled (the
corrected estimates weight each label by ``1 / inclusion_probability``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..store import Run
from ._grades import GradesLike, as_grades_frame

__all__ = ["QUEUE_COLUMNS", "judged_pairs", "label_queue"]

QUEUE_COLUMNS = (
    "run_id",
    "conversation_id",
    "rule_id",
    "verdict",
    "stratum",
    "inclusion_probability",
    "evidence_turn",
)
#: Labels a stratum gets at least (when ``n`` allows): one cannot estimate a spread from one.
MIN_PER_STRATUM = 2

GradesOrRun = GradesLike | Run


def _frame(source: GradesOrRun, rubric_version_id: str | None) -> pd.DataFrame:
    if isinstance(source, Run):
        frame = source.grades(rubric_version_id)
        if "run_id" not in frame.columns or frame["run_id"].isna().all():
            frame = frame.assign(run_id=source.run_id)
        return frame
    return as_grades_frame(source)


def judged_pairs(
    grades_or_run: GradesOrRun | Sequence[GradesOrRun],
    *,
    rules: Sequence[str] | None = None,
    rubric_version_id: str | None = None,
) -> pd.DataFrame:
    """The judged (conversation, rule) pairs with a pass or fail verdict: what the queue
    draws from (deterministic checks and ``na``/``error`` verdicts are not queued)."""
    sources = (
        list(grades_or_run)
        if isinstance(grades_or_run, Sequence) and not isinstance(grades_or_run, str)
        else [grades_or_run]
    )
    frames = [_frame(s, rubric_version_id) for s in sources]
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if frame.empty:
        return pd.DataFrame(columns=list(QUEUE_COLUMNS))
    if "run_id" not in frame.columns:
        frame = frame.assign(run_id="")
    grader = frame.get("grader", pd.Series("", index=frame.index)).fillna("").astype(str)
    keep = ~grader.str.startswith("check:") & frame["verdict"].isin(["pass", "fail"])
    if rules is not None:
        unknown = sorted(set(rules) - set(frame["rule_id"].astype(str)))
        if unknown:
            raise ValueError(f"rules: {', '.join(unknown)} not in the grades")
        keep &= frame["rule_id"].isin(list(rules))
    out = frame.loc[keep].copy()
    if "evidence_turn" not in out.columns:
        out["evidence_turn"] = np.nan
    out["run_id"] = out["run_id"].fillna("").astype(str)
    out = out.sort_values(["run_id", "rule_id", "verdict", "conversation_id"], kind="stable")
    out["stratum"] = out["rule_id"].astype(str) + " x " + out["verdict"] + " x " + out["run_id"]
    return out.reset_index(drop=True)


def _allocate(sizes: np.ndarray, n: int) -> np.ndarray:
    """Labels per stratum: proportional (largest remainders), at least
    :data:`MIN_PER_STRATUM` each when ``n`` allows, never more than the stratum holds."""
    total = int(sizes.sum())
    if n >= total:
        return sizes.copy()
    floor = np.minimum(sizes, MIN_PER_STRATUM) if n >= MIN_PER_STRATUM * len(sizes) else 0
    take = np.asarray(floor, dtype=np.int64) * np.ones_like(sizes)
    for _ in range(len(sizes) + 1):  # each pass fills strata or finishes
        left = n - int(take.sum())
        room = sizes - take
        if left <= 0 or not room.any():
            break
        share = left * room / room.sum()
        extra = np.minimum(np.floor(share).astype(np.int64), room)
        rest = left - int(extra.sum())
        order = np.argsort(-(share - np.floor(share)), kind="stable")
        for i in order:
            if rest <= 0:
                break
            if room[i] > extra[i]:
                extra[i] += 1
                rest -= 1
        take = take + extra
    return np.asarray(take, dtype=np.int64)


def label_queue(
    grades_or_run: GradesOrRun | Sequence[GradesOrRun],
    *,
    n: int = 50,
    rules: Sequence[str] | None = None,
    seed: int = 0,
    rubric_version_id: str | None = None,
) -> pd.DataFrame:
    """A seeded random draw of ``n`` judged (conversation, rule) pairs to label, without
    replacement within strata (rule x judge verdict x run; module docstring).

    ``grades_or_run``: a :class:`~evalkit.store.Run` (its grades; ``rubric_version_id`` picks
    a scorecard), :class:`Grades`, a grades frame, or a list of them (one stratum set per
    run). Columns :data:`QUEUE_COLUMNS`, in a random order (label from the top; a queue
    labelled only part-way keeps its probabilities only if the rest is labelled too).
    ``inclusion_probability`` goes with each label (:class:`~evalkit.store.Label`), so the
    judge-corrected comparison can weight it. The same grades, ``n`` and ``seed`` give the
    same queue.
    """
    if not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"n must be a positive number of labels, got {n!r}")
    pairs = judged_pairs(grades_or_run, rules=rules, rubric_version_id=rubric_version_id)
    if pairs.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in QUEUE_COLUMNS})
    rng = np.random.default_rng(seed)
    pairs["_key"] = rng.random(len(pairs))
    strata, codes = np.unique(pairs["stratum"].to_numpy(dtype=str), return_inverse=True)
    sizes = np.bincount(codes, minlength=len(strata)).astype(np.int64)
    take = _allocate(sizes, int(n))
    pairs["_rank"] = pairs.groupby("stratum")["_key"].rank(method="first").astype(np.int64)
    chosen = pairs[pairs["_rank"] <= take[codes]].copy()
    chosen_codes = np.searchsorted(strata, chosen["stratum"].to_numpy(dtype=str))
    chosen["inclusion_probability"] = take[chosen_codes] / sizes[chosen_codes]
    chosen = chosen.sort_values("_key", kind="stable").reset_index(drop=True)
    return chosen[list(QUEUE_COLUMNS)]
