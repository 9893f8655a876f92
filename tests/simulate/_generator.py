"""A second, independent generator of grades for calibrating the statistics in many designs.

:class:`SyntheticTruth` fixes one truth and draws conversations through a Gaussian copula.
:class:`GradeGenerator` is built differently on purpose, so the calibration does not rest on
one generator's assumptions: every trial draws a new truth (per-cell, per-rule pass
probabilities from a logistic random-effects model), and a conversation is "good" or "bad"
(a cell-specific share goes badly, failing many rules at once), which correlates rules within
a conversation through a mixture rather than a copula. Six weighted rules, three judged (the
judged ones come back ``na`` or ``error`` at small rates).

A :class:`Design` says how many cells, how many repeats each cell gets on each side (fixed,
drawn per cell from choices, or a pattern), how many cells each side lacks, what share of
cells is deterministic (every repeat agrees), and which judge errors are informative (a share
of the candidate's judged fails comes back ``error``).

Effects are exact: a drop of ``d`` points thins the candidate's passes (each pass becomes a
fail with probability ``d / E``, ``E`` the trial's expected grid score), a gain fattens its
fails (each fail becomes a pass with probability ``d / (100 - E)``), so the expected grid
score moves by exactly ``d`` in every trial. Verdict codes are those of
:data:`VERDICT_CODES`, with ``-1`` for a repeat the design does not have.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy import special

from ._synthetic import expected_rule_shares

__all__ = ["Design", "GeneratedGrades", "GradeGenerator"]

_FAIL, _PASS, _NA, _ERROR, _MISSING = 0, 1, 2, 3, -1

Codes = NDArray[np.int8]


@dataclass(frozen=True)
class Design:
    """The shape of a paired comparison: cells, repeats a side, missing cells, determinism.

    ``repeats``: every cell's repeats on each side, unless ``repeat_choices`` (each cell and
    side draws its count from these) or ``repeat_pattern`` (one count per cell, both sides)
    is given. ``one_sided_cells``: on each side, this many cells (drawn per trial) have no
    conversation at all. ``deterministic_share``: cells whose rules pass or fail with
    certainty, so their repeats agree. ``informative_errors``: the share of the candidate's
    judged fails that the judge returns as ``error``.
    """

    name: str
    cells: int = 18
    repeats: int = 3
    personas: int = 6
    repeat_choices: tuple[int, ...] = ()
    repeat_pattern: tuple[int, ...] = ()
    one_sided_cells: int = 0
    deterministic_share: float = 0.0
    informative_errors: float = 0.0

    @property
    def max_repeats(self) -> int:
        return max((self.repeats, *self.repeat_choices, *self.repeat_pattern))

    def repeat_counts(self, rng: np.random.Generator, trials: int) -> NDArray[np.int64]:
        """Repeats per (trial, side, cell), zero for a side's missing cells."""
        shape = (trials, 2, self.cells)
        if self.repeat_pattern:
            if len(self.repeat_pattern) != self.cells:
                raise ValueError("repeat_pattern needs one count per cell")
            counts = np.broadcast_to(np.asarray(self.repeat_pattern), shape).copy()
        elif self.repeat_choices:
            counts = rng.choice(np.asarray(self.repeat_choices), size=shape)
        else:
            counts = np.full(shape, self.repeats)
        if self.one_sided_cells:
            order = rng.random(shape).argsort(axis=-1)
            counts[order < self.one_sided_cells] = 0
        return counts.astype(np.int64)


@dataclass(frozen=True)
class GeneratedGrades:
    """Verdict codes ``(trials, cells, repeats, rules)`` per side, and the truth behind them."""

    baseline: Codes
    candidate: Codes
    points: tuple[float, ...]
    judged: tuple[bool, ...]
    persona_of_cell: tuple[str, ...]
    expected_difference: NDArray[np.float64]  # per trial, points (the planted effect)

    def frame(self, trial: int, side: str) -> object:
        """One trial's grades as a DataFrame (the grading schema's main columns)."""
        import pandas as pd

        codes = self.baseline[trial] if side == "baseline" else self.candidate[trial]
        c, r, j = (a.ravel() for a in np.indices(codes.shape))
        flat = codes.ravel()
        present = flat >= 0
        c, r, j, flat = c[present], r[present], j[present], flat[present]
        names = np.asarray(("fail", "pass", "na", "error"))[flat]
        points = np.asarray(self.points)[j]
        return pd.DataFrame(
            {
                "run_id": side,
                "conversation_id": [f"{side}-c{a}-r{b}" for a, b in zip(c, r, strict=True)],
                "cell_id": [f"cell-{a:03d}" for a in c],
                "persona_label": np.asarray(self.persona_of_cell)[c],
                "repeat": r.astype(np.int64),
                "rubric_version_id": "generated-v1",
                "rule_id": [f"rule-{x}" for x in j],
                "title": [f"Generated rule {x}" for x in j],
                "points": points,
                "verdict": names,
                "points_awarded": np.where(
                    names == "pass", points, np.where(names == "fail", 0.0, np.nan)
                ),
                "grader": np.where(np.asarray(self.judged)[j], "judge", "deterministic"),
            }
        )


@dataclass(frozen=True)
class GradeGenerator:
    """Random truths and the conversations drawn from them (see the module docstring)."""

    points: tuple[float, ...] = (25.0, 20.0, 15.0, 15.0, 15.0, 10.0)
    judged: tuple[bool, ...] = (False, False, False, True, True, True)
    rule_logit_mean: float = 1.8
    rule_logit_sd: float = 0.7
    cell_sd: float = 0.7
    cell_rule_sd: float = 0.5
    bad_penalty: float = 2.5
    bad_share: tuple[float, float] = field(default=(1.5, 6.0))  # Beta(a, b) per cell
    na_rate: float = 0.05
    error_rate: float = 0.02

    def _weights(self) -> NDArray[np.float64]:
        """Expected share of a conversation's score each rule carries (na/error enumerated)."""
        applicable = np.full(len(self.points), 1.0 - self.na_rate - self.error_rate)
        return expected_rule_shares(self.points, self.judged, applicable)

    def _truth(
        self, rng: np.random.Generator, trials: int, design: Design
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Per trial: cells' bad share ``(T, C)`` and pass probabilities good/bad ``(T, C, J)``."""
        rules = len(self.points)
        logit = (
            rng.normal(self.rule_logit_mean, self.rule_logit_sd, (trials, 1, rules))
            + rng.normal(0.0, self.cell_sd, (trials, design.cells, 1))
            + rng.normal(0.0, self.cell_rule_sd, (trials, design.cells, rules))
        )
        good = special.expit(logit)
        bad = special.expit(logit - self.bad_penalty)
        share = rng.beta(*self.bad_share, size=(trials, design.cells))
        fixed = rng.random((trials, design.cells)) < design.deterministic_share
        good = np.where(fixed[..., None], np.round(good), good)
        bad = np.where(fixed[..., None], good, bad)
        share = np.where(fixed, 0.0, share)
        return share, good, bad

    def draw(self, design: Design, trials: int, seed: int, effect: float = 0.0) -> GeneratedGrades:
        """``trials`` paired runs of ``design``; the candidate's expected score moves by ``effect``."""
        rng = np.random.default_rng(seed)
        share, good, bad = self._truth(rng, trials, design)
        marginal = share[..., None] * bad + (1.0 - share[..., None]) * good
        expected = 100.0 * (marginal @ self._weights()).mean(axis=-1)  # (T,)
        counts = design.repeat_counts(rng, trials)
        sides = []
        for side in (0, 1):
            shape = (trials, design.cells, design.max_repeats, len(self.points))
            is_bad = rng.random((*shape[:-1], 1)) < share[:, :, None, None]
            p = np.where(is_bad, bad[:, :, None, :], good[:, :, None, :])
            passed = rng.random(shape) < p
            thin = rng.random(shape)
            if side == 1 and effect < 0:
                passed &= thin >= -effect / expected[:, None, None, None]
            elif side == 1 and effect > 0:
                passed |= thin < effect / (100.0 - expected[:, None, None, None])
            codes = np.where(passed, _PASS, _FAIL).astype(np.int8)
            judged = np.asarray(self.judged)
            u = rng.random(shape)
            codes[(u < self.na_rate) & judged] = _NA
            codes[(u >= self.na_rate) & (u < self.na_rate + self.error_rate) & judged] = _ERROR
            if side == 1 and design.informative_errors:
                hide = (codes == _FAIL) & judged & (rng.random(shape) < design.informative_errors)
                codes[hide] = _ERROR
            present = np.arange(design.max_repeats) < counts[:, side, :, None]
            codes[~present] = _MISSING
            sides.append(codes)
        return GeneratedGrades(
            baseline=sides[0],
            candidate=sides[1],
            points=self.points,
            judged=self.judged,
            persona_of_cell=tuple(f"persona-{c % design.personas}" for c in range(design.cells)),
            expected_difference=np.full(trials, float(effect)),
        )
