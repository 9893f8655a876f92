"""The label queue: a seeded, stratified random draw of judged verdicts for people to label,
each with the chance it had of being drawn, so labels can correct the judge without bias.

Strata are rule x judge verdict x run (Cochran 1977, ch. 5: stratified random sampling).
A rule's labels (in a run) are spread over its verdicts by :attr:`LabelOptions.allocation`:

- ``proportional``: in proportion to the verdicts' counts ``N_h``, so every judged verdict of
  the rule is equally likely to be labelled;
- ``neyman`` (Neyman 1934; Cochran 1977, §5.5): in proportion to ``N_h S_h``, the count times
  the spread of the truth behind the verdict (:mod:`._label_strata`), which minimises the
  corrected rate's variance for the labels spent: more labels where the judge errs more (a
  lenient judge's false passes hide among its passes). The spreads come from a pilot run or
  the labels so far; with neither, the allocation is proportional.

Both give every stratum at least two labels when ``n`` allows (the stratified estimator needs
a spread in each), never more than it holds. Pairs already labelled (with an inclusion
probability: the labels given, or a run's stored ones) are not drawn again: the draw tops the
stratum up to its allocation, so each stratum's labels, old and new, are a simple random
sample of it, and a new label's ``inclusion_probability`` is the stratum's labelled share
after the draw, ``(k_h + m_h) / N_h``. That is exact when the allocation does not depend on
the labels' values (proportional, or Neyman from a pilot); Neyman from the run's own labels is
a two-phase design, exact given the allocation.

How many: an explicit ``n`` is spread over the rules (and runs) in proportion to their judged
pairs; without one, each rule gets what :func:`~evalkit.grading.plan_labels` says it still
needs for a judge-corrected interval of ``halfwidth`` points (:func:`planned_n`: the sum over
rules, and over runs when several are queued, of ``still_needed``, counting the labels already
given or stored in the run).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..store import Run
from ._correction import match_labels
from ._grades import GradesLike, as_grades_frame
from ._label_options import DEFAULT_HALFWIDTH, LabelOptions
from ._label_plan import pilot_table, plan_labels
from ._label_strata import spread

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


def _known(source: GradesOrRun, labels: pd.DataFrame | None) -> pd.DataFrame | None:
    """The labels so far: those given, else a run's stored labels."""
    return labels if labels is not None else _stored_labels(source)


def planned_n(
    grades_or_run: GradesOrRun | Sequence[GradesOrRun],
    labels: pd.DataFrame | None = None,
    *,
    options: LabelOptions | None = None,
) -> tuple[int, pd.DataFrame]:
    """The labels still needed (summed over judged rules and runs) for a judge-corrected
    interval of ``options.halfwidth`` points on each judged rule, and the plan behind it
    (:func:`~evalkit.grading.plan_labels` per run, with ``run_id``). ``labels``: labels given
    so far (a run's stored labels are read when it is a :class:`~evalkit.store.Run` and
    ``labels`` is None). Reads ``rules``, ``rubric_version_id`` and the plan's fields of
    :class:`LabelOptions`."""
    opts = options or LabelOptions()
    plans = []
    for source in _sources(grades_or_run):
        pairs = judged_pairs(source, rules=opts.rules, rubric_version_id=opts.rubric_version_id)
        if pairs.empty:
            continue
        plan = plan_labels(pairs, _known(source, labels), options=opts)
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


def apportion(score: np.ndarray, room: np.ndarray, n: int, minimum: np.ndarray) -> np.ndarray:
    """``n`` whole labels over slots in proportion to ``score`` (largest remainders), at least
    ``minimum`` each when ``n`` allows, never more than ``room`` each."""
    room = np.asarray(room, dtype=np.int64)
    n = min(int(n), int(room.sum()))
    floor = np.minimum(np.asarray(minimum, dtype=np.int64), room)
    take = floor.copy() if n >= int(floor.sum()) else np.zeros_like(room)
    weight = np.asarray(score, dtype=np.float64)
    for _ in range(len(room) + 1):  # each pass fills slots or finishes
        left = n - int(take.sum())
        free = room - take
        open_ = (free > 0) & (weight > 0)
        if left <= 0 or not free.any():
            break
        if not open_.any():  # what is left has no score: spread it by room
            open_, weight = free > 0, free.astype(np.float64)
        share = np.where(open_, left * weight / weight[open_].sum(), 0.0)
        extra = np.minimum(np.floor(share).astype(np.int64), free)
        rest = left - int(extra.sum())
        for i in np.argsort(-(share - np.floor(share)), kind="stable"):
            if rest <= 0:
                break
            if free[i] > extra[i] and open_[i]:
                extra[i] += 1
                rest -= 1
        take = take + extra
    return take


def _labelled(pairs: pd.DataFrame, labels: pd.DataFrame | None) -> tuple[np.ndarray, np.ndarray]:
    """Per pair: labelled at random so far (a pass/fail label with a probability), and its
    label's pass (1.0) or fail (0.0)."""
    matched = match_labels(pairs[["conversation_id", "rule_id"]], labels)
    label = matched["label"].to_numpy(dtype=object)
    known = np.isin(label, ["pass", "fail"]) & matched["inclusion_probability"].notna().to_numpy()
    return known, (label == "pass").astype(np.float64)


def _needs(
    pairs: pd.DataFrame, groups: np.ndarray, sources: list[GradesOrRun],
    labels: pd.DataFrame | None, opts: LabelOptions, room: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """Labels each (run, rule) group gets: ``n`` spread by the groups' sizes, or the plan's
    ``still_needed`` per rule and run."""
    keys = pairs.groupby(groups, sort=True).first()[["run_id", "rule_id"]]
    if opts.n is not None:
        sizes = np.bincount(groups, minlength=len(keys))
        return apportion(sizes, room, opts.n, np.zeros(len(keys), dtype=np.int64))
    _, plan = planned_n(sources, labels, options=opts)
    if plan.empty:
        return np.zeros(len(keys), dtype=np.int64)
    need = plan.set_index(["run_id", "rule_id"])["still_needed"]
    wanted = need.reindex(list(zip(keys["run_id"], keys["rule_id"], strict=True))).fillna(0)
    return np.asarray(np.minimum(wanted.to_numpy(dtype=np.int64), room), dtype=np.int64)


def _spreads(
    pairs: pd.DataFrame, strata: np.ndarray, known: np.ndarray, passed: np.ndarray,
    opts: LabelOptions,
) -> np.ndarray:  # fmt: skip
    """Per stratum, the Neyman spread: from the pilot when given, else the labels so far."""
    first = pairs.groupby(strata, sort=True).first()
    pilot = pilot_table(opts)
    if pilot is not None:
        keyed = pilot.reindex(list(zip(first["rule_id"], first["verdict"], strict=True)))
        keyed = keyed.fillna(0.0)
        return spread(keyed["passed"].to_numpy(), keyed["labelled"].to_numpy())
    k = np.bincount(strata, weights=known, minlength=len(first))
    x = np.bincount(strata, weights=known * passed, minlength=len(first))
    return spread(x, k)


def label_queue(
    grades_or_run: GradesOrRun | Sequence[GradesOrRun],
    labels: pd.DataFrame | None = None,
    *,
    options: LabelOptions | None = None,
) -> pd.DataFrame:
    """A seeded random draw of judged (conversation, rule) pairs to label, without
    replacement within strata (rule x judge verdict x run), allocated over the verdicts by
    ``options.allocation`` (module docstring).

    ``grades_or_run``: a :class:`~evalkit.store.Run` (its grades;
    ``options.rubric_version_id`` picks a scorecard), :class:`Grades`, a grades frame, or a
    list of them (one stratum set per run). ``labels``: the labels so far (None: a run's
    stored labels), which are counted, inform a Neyman allocation and are not drawn again.
    Columns :data:`QUEUE_COLUMNS`, in a random order (label from the top; the stratified
    correction weighs a stratum's labels equally, so a queue labelled part-way stays a
    random sample). ``inclusion_probability`` goes with each label
    (:class:`~evalkit.store.Label`). The same grades, labels and options give the same queue.

    ``options.n`` None (the default): as many as :func:`planned_n` says a corrected interval
    of ``options.halfwidth`` points needs on every judged rule, counting the labels so far. An
    empty queue when nothing more is needed.
    """
    opts = options or LabelOptions()
    sources = _sources(grades_or_run)
    pairs = judged_pairs(sources, rules=opts.rules, rubric_version_id=opts.rubric_version_id)
    if pairs.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in QUEUE_COLUMNS})
    known_labels = [_known(s, labels) for s in sources]
    given = [f for f in known_labels if f is not None and len(f)]
    so_far = pd.concat(given, ignore_index=True) if given else None
    known, passed = _labelled(pairs, so_far)
    rng = np.random.default_rng(opts.seed)
    pairs["_key"] = rng.random(len(pairs))
    group_names = pairs["run_id"] + "\x00" + pairs["rule_id"].astype(str)
    _, groups = np.unique(group_names.to_numpy(dtype=str), return_inverse=True)
    strata_names, strata = np.unique(pairs["stratum"].to_numpy(dtype=str), return_inverse=True)
    groups, strata = groups.ravel(), strata.ravel()
    n_strata = len(strata_names)
    size = np.bincount(strata, minlength=n_strata).astype(np.int64)
    had = np.bincount(strata, weights=known, minlength=n_strata).astype(np.int64)
    of_group = np.zeros(n_strata, dtype=np.int64)
    of_group[strata] = groups
    room = np.bincount(of_group, weights=size - had, minlength=groups.max() + 1).astype(np.int64)
    need = _needs(pairs, groups, sources, so_far, opts, room)
    score = size.astype(np.float64)
    if opts.allocation == "neyman":
        score = score * _spreads(pairs, strata, known, passed, opts)
    take = np.zeros(n_strata, dtype=np.int64)
    for g in np.flatnonzero(need > 0):
        members = np.flatnonzero(of_group == g)
        total = int(need[g] + had[members].sum())
        floor = np.minimum(size[members], MIN_PER_STRATUM)
        target = apportion(score[members], size[members], total, floor)
        deficit = np.maximum(target - had[members], 0)
        minimum = np.maximum(floor - had[members], 0)
        take[members] = apportion(deficit, size[members] - had[members], int(need[g]), minimum)
    if not take.any():
        return pd.DataFrame({c: pd.Series(dtype="object") for c in QUEUE_COLUMNS})
    fresh = pairs.loc[~known].copy()
    fresh["_code"] = strata[~known]
    fresh["_rank"] = fresh.groupby("_code")["_key"].rank(method="first").astype(np.int64)
    chosen = fresh[fresh["_rank"] <= take[fresh["_code"].to_numpy()]].copy()
    codes = chosen["_code"].to_numpy()
    chosen["inclusion_probability"] = (had[codes] + take[codes]) / size[codes]
    chosen = chosen.sort_values("_key", kind="stable").reset_index(drop=True)
    out: pd.DataFrame = chosen[list(QUEUE_COLUMNS)]
    return out
