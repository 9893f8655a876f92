"""The search's decision rule, as arrays: which personas to confirm, and which failures to
report. Pure and vectorised (leading axes are independent searches), so the calibration
simulates thousands of searches through the very code :func:`find_failures` runs.

1. **Screening.** Every persona runs a few conversations; a (persona, rule) pair is *kept*
   when the rule failed in at least ``keep_failures`` of them.
2. **Choice.** The personas with kept pairs are scored by how specific their failures are:
   the sum over kept rules of the persona's screening failure share times the share of other
   screened conversations that passed the rule (a rule every caller fails says little about
   the caller), and ``max_confirmed`` are chosen greedily, each time the one whose score times
   the share of its (kept rule, trait value) pairs no chosen persona has yet is highest: ten
   near copies of one failing caller do not take every place.
3. **Confirmation.** Each chosen persona runs fresh conversations, none of which played a
   part in choosing it. For every kept pair, the exact one-sided binomial test of "the rule
   fails in at most ``threshold`` of this persona's conversations" (Clopper-Pearson's tail;
   valid when the persona's conversations differ in their rates, Hoeffding 1956), and Holm's
   (1979) step-down over every pair tested in the search at ``1 - confidence``. A pair is
   *reported* when Holm rejects; its rate and Clopper-Pearson interval come from the fresh
   conversations alone.

Because the fresh conversations are independent of the screening that chose the pairs, the
tests are valid given the choice, and Holm keeps the chance that a search reports any pair
whose true failure rate is at most the threshold within ``1 - confidence``, however many
rounds, personas and rules it screened.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..stats import binomial_p_above, clopper_pearson_interval, holm_adjusted

__all__ = ["Confirmation", "choose", "confirm", "kept_pairs", "specificity"]

BoolArray = NDArray[np.bool_]
FloatArray = NDArray[np.float64]


def kept_pairs(failures: ArrayLike, decided: ArrayLike, keep_failures: int) -> BoolArray:
    """(..., persona, rule) pairs whose rule failed at least ``keep_failures`` times."""
    f = np.asarray(failures)
    n = np.asarray(decided)
    return np.asarray((f >= keep_failures) & (n > 0), dtype=bool)


def specificity(failures: ArrayLike, decided: ArrayLike, kept: ArrayLike) -> FloatArray:
    """(..., persona) scores for the choice: over kept rules, the persona's screening failure
    share times the share of the *other* personas' screening verdicts that passed the rule."""
    f = np.asarray(failures, dtype=np.float64)
    n = np.asarray(decided, dtype=np.float64)
    keep = np.asarray(kept, dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n > 0, f / n, 0.0)
        others_f = f.sum(axis=-2, keepdims=True) - f
        others_n = n.sum(axis=-2, keepdims=True) - n
        passed = np.where(others_n > 0, 1.0 - others_f / others_n, 1.0)
    return np.asarray(np.where(keep, share * passed, 0.0).sum(axis=-1), dtype=np.float64)


#: How much a persona whose failures are all covered already still counts (it is chosen
#: after every persona that brings something new, by its score).
COVERED_WEIGHT = 0.05


def choose(
    scores: ArrayLike,
    eligible: ArrayLike,
    max_confirmed: int,
    features: ArrayLike | None = None,
) -> BoolArray:
    """(..., persona): ``max_confirmed`` eligible personas, chosen greedily (module
    docstring, step 2); ``features`` (..., persona, item): what each persona's failures cover
    (its kept rules crossed with its trait values; None: the highest scores alone)."""
    s = np.asarray(scores, dtype=np.float64)
    ok = np.asarray(eligible, dtype=bool)
    if features is None:
        ranked = np.where(ok, s, -np.inf)
        order = np.argsort(-ranked, axis=-1, kind="stable")
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(s.shape[-1]), axis=-1)
        return np.asarray(ok & (rank < max_confirmed), dtype=bool)
    items = np.asarray(features, dtype=bool)
    size = np.maximum(items.sum(axis=-1), 1)
    chosen = np.zeros(s.shape, dtype=bool)
    covered = np.zeros((*s.shape[:-1], items.shape[-1]), dtype=bool)
    for _ in range(min(max_confirmed, s.shape[-1])):
        new = (items & ~covered[..., None, :]).sum(axis=-1) / size
        gain = np.where(ok & ~chosen, s * (COVERED_WEIGHT + new), -np.inf)
        pick = np.argmax(gain, axis=-1)
        found = np.take_along_axis(gain, pick[..., None], axis=-1)[..., 0] > -np.inf
        hit = (np.arange(s.shape[-1]) == pick[..., None]) & found[..., None]
        chosen |= hit
        covered |= (items & hit[..., None]).any(axis=-2)
    return chosen


@dataclass(frozen=True)
class Confirmation:
    """Per (..., persona, rule): ``tested``, the fresh ``rate`` with its interval, the
    one-sided ``p_value``, Holm's ``p_adjusted`` over the search, and ``reported``."""

    tested: BoolArray
    rate: FloatArray
    low: FloatArray
    high: FloatArray
    p_value: FloatArray
    p_adjusted: FloatArray
    reported: BoolArray


def confirm(
    failures: ArrayLike,
    decided: ArrayLike,
    tested: ArrayLike,
    *,
    threshold: float,
    confidence: float,
) -> Confirmation:
    """The fresh conversations' verdict on every tested pair (module docstring, step 3).
    Arrays are (..., persona, rule); a search is the last two axes."""
    f = np.asarray(failures, dtype=np.float64)
    n = np.asarray(decided, dtype=np.float64)
    test = np.asarray(tested, dtype=bool) & (n > 0)
    p = np.where(test, np.asarray(binomial_p_above(f, n, threshold), dtype=np.float64), np.nan)
    shape = p.shape
    flat = p.reshape(*shape[:-2], -1) if p.ndim >= 2 else p.reshape(1, -1)
    adjusted = np.asarray(holm_adjusted(flat), dtype=np.float64).reshape(shape)
    alpha = 1.0 - confidence
    reported = test & (np.nan_to_num(adjusted, nan=1.0) <= alpha)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(n > 0, f / n, np.nan)
    low, high = clopper_pearson_interval(f, n, confidence)
    return Confirmation(
        tested=test,
        rate=rate,
        low=_array(low),
        high=_array(high),
        p_value=p,
        p_adjusted=adjusted,
        reported=np.asarray(reported, dtype=bool),
    )


def _array(value: Any) -> FloatArray:
    return np.asarray(value, dtype=np.float64)
