"""The label queue: a seeded, stratified random draw of judged verdicts for people to label,
each with the chance it had of being drawn, so labels can correct the judge without bias.

Strata are rule x judge verdict x run (Cochran 1977, ch. 5: stratified random sampling).
Within a stratum of ``N_h`` judged (conversation, rule) pairs, ``n_h`` are drawn without
replacement, so each has inclusion probability ``n_h / N_h``. The ``n`` labels are allocated
proportionally to the strata's sizes (largest remainders), with at least two per stratum when
``n`` allows, so every judged verdict has a known, non-zero chance of being labelled (the
corrected estimates weight each label by ``1 / inclusion_probability``).

How many: an explicit ``n`` is honoured; without one the queue draws what
:func:`~evalkit.grading.plan_labels` says is still needed for a judge-corrected interval of
``halfwidth`` points on every judged rule (:func:`planned_n`: the sum over rules, and over runs
when several are queued, of ``still_needed``, counting the labels already given or stored in
the run). Proportional allocation gives each rule about its share, which is its need when the
rules are judged on the same conversations, as a scorecard's are.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..store import Run
from ._grades import GradesLike, as_grades_frame

__all__ = ["DEFAULT_HALFWIDTH", "QUEUE_COLUMNS", "judged_pairs", "label_queue", "planned_n"]

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
#: Without ``n``, the queue holds the labels a corrected interval this wide (points) needs.
DEFAULT_HALFWIDTH = 10.0

GradesOrRun = GradesLike | Run


def _frame(source: GradesOrRun, rubric_version_id: str | None) -> pd.DataFrame:
    if isinstance(source, Run):
        frame = source.grades(rubric_version_id)
        if "run_id" not in frame.columns or frame["run_id"].isna().all():
            frame = frame.assign(run_id=source.run_id)
        return frame
    return as_grades_frame(source)


def _sources(grades_or_run: GradesOrRun | Sequence[GradesOrRun]) -> list[GradesOrRun]:
    return (
        list(grades_or_run)
        if isinstance(grades_or_run, Sequence) and not isinstance(grades_or_run, str)
        else [grades_or_run]
    )


def _stored_labels(source: GradesOrRun) -> pd.DataFrame | None:
    if not isinstance(source, Run):
        return None
    from ..store import StoreError

    try:
        return source.labels()
    except StoreError:
        return None


def planned_n(
    grades_or_run: GradesOrRun | Sequence[GradesOrRun],
    *,
    halfwidth: float = DEFAULT_HALFWIDTH,
    labels: pd.DataFrame | None = None,
    rules: Sequence[str] | None = None,
    rubric_version_id: str | None = None,
) -> tuple[int, pd.DataFrame]:
    """The labels still needed (summed over judged rules and runs) for a judge-corrected
    interval of ``halfwidth`` points on each judged rule, and the plan behind it
    (:func:`~evalkit.grading.plan_labels` per run, with ``run_id``). ``labels``: labels given
    so far (a run's stored labels are read when it is a :class:`~evalkit.store.Run` and
    ``labels`` is None)."""
    from ._label_plan import plan_labels

    plans = []
    for source in _sources(grades_or_run):
        pairs = judged_pairs(source, rules=rules, rubric_version_id=rubric_version_id)
        if pairs.empty:
            continue
        known = labels if labels is not None else _stored_labels(source)
        plan = plan_labels(pairs, known, halfwidth=halfwidth)
        plans.append(plan.assign(run_id=str(pairs["run_id"].iloc[0])))
    if not plans:
        return 0, pd.DataFrame()
    plan = pd.concat(plans, ignore_index=True)
    return int(plan["still_needed"].sum()), plan


def judged_pairs(
    grades_or_run: GradesOrRun | Sequence[GradesOrRun],
    *,
    rules: Sequence[str] | None = None,
    rubric_version_id: str | None = None,
) -> pd.DataFrame:
    """The judged (conversation, rule) pairs with a pass or fail verdict: what the queue
    draws from (deterministic checks and ``na``/``error`` verdicts are not queued)."""
    frames = [_frame(s, rubric_version_id) for s in _sources(grades_or_run)]
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
    n: int | None = None,
    rules: Sequence[str] | None = None,
    seed: int = 0,
    rubric_version_id: str | None = None,
    halfwidth: float = DEFAULT_HALFWIDTH,
    labels: pd.DataFrame | None = None,
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

    ``n`` None (the default): as many as :func:`planned_n` says a corrected interval of
    ``halfwidth`` points needs on every judged rule, counting ``labels`` (or the run's stored
    labels; :func:`planned_n` returns the plan per rule and run). An empty queue when nothing
    more is needed.
    """
    if n is not None and (not isinstance(n, int | np.integer) or n < 1):
        raise ValueError(f"n must be a positive number of labels, got {n!r}")
    if n is None:
        n, _plan = planned_n(
            grades_or_run,
            halfwidth=halfwidth,
            labels=labels,
            rules=rules,
            rubric_version_id=rubric_version_id,
        )
    pairs = judged_pairs(grades_or_run, rules=rules, rubric_version_id=rubric_version_id)
    if pairs.empty or n == 0:
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
