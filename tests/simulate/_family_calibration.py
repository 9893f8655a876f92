"""Calibrating test suites: twenty parametrised assertions over one recorded run pair, written
four ways, run over many generated suites at once.

:class:`SuiteGenerator` is a third generator of grades, built for suites: ``parts`` personas
of ``cells`` cells each, ``repeats`` conversations a cell and side, six weighted rules. Each
trial draws a new truth (logistic random effects per rule, cell and cell x rule) and each
conversation its own mood (a normal random effect shared by its rules, so they fail
together). Pass probabilities are integrated over the mood by Gauss-Hermite quadrature, so
each cell's expected score ``E`` is known, and a planted drop of ``d`` points in a cell thins
the candidate's passes with probability ``d / E``: that cell's expected score moves by exactly
``d``. A drop is planted in every part (the assistant got worse) or in the first part only.

:func:`suite_outcomes` decides every suite the four ways:

``family``
    ``evalkit.testing``: each part's ``compare_grades`` headline (:func:`._calibration._headline`,
    the very decision ``compare_grades`` makes, over arrays), Holm-adjusted over the parts
    (:func:`evalkit.testing._holm.holm_step_down`, the procedure ``family`` runs); a part fails
    on ``regressed``.
``unadjusted``
    the same per-part comparisons, each at 95% alone (twenty chances of a false failure).
``aggregate``
    a threshold on the part's mean score without an interval (candidate mean at least the
    baseline's minus the margin), what users ask for instead of per-case thresholds.
``per_case``
    DeepEval's style: each test is one conversation of the candidate (the part's first cell,
    first repeat) whose score must reach ``threshold`` points.

``tests/testing/test_family_calibration.py`` checks that the ``family`` path and
:func:`evalkit.testing.family` on the same grades agree suite by suite.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy import special

from evalkit.compare import Verdict
from evalkit.testing._holm import holm_step_down

from ._calibration import _headline
from ._generator import GeneratedGrades

__all__ = ["SUITE_STYLES", "SuiteGenerator", "per_case_failed", "suite_frames", "suite_outcomes"]

Codes = NDArray[np.int8]
Where = Literal["all", "first"]
#: The four ways a suite is written (module docstring).
SUITE_STYLES = ("family", "unadjusted", "aggregate", "per_case")
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(40)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


@dataclass(frozen=True)
class SuiteGenerator:
    """Suites of ``parts`` x ``cells`` x ``repeats`` conversations a side (module docstring)."""

    parts: int = 20
    cells: int = 3
    repeats: int = 8
    points: tuple[float, ...] = (25.0, 20.0, 15.0, 15.0, 15.0, 10.0)
    rule_logit_mean: float = 1.6
    rule_logit_sd: float = 0.7
    cell_sd: float = 0.6
    cell_rule_sd: float = 0.4
    mood_sd: float = 1.2

    def draw(
        self, trials: int, seed: int, drop: float = 0.0, where: Where = "all"
    ) -> tuple[Codes, Codes]:
        """Verdict codes ``(trials, parts, cells, repeats, rules)`` per side (1 pass, 0 fail);
        the candidate's expected score is ``drop`` points lower in the cells ``where`` says."""
        rng = np.random.default_rng(seed)
        k = len(self.points)
        shape_cells = (trials, self.parts, self.cells)
        logit = (
            rng.normal(self.rule_logit_mean, self.rule_logit_sd, (trials, 1, 1, k))
            + rng.normal(0.0, self.cell_sd, (*shape_cells, 1))
            + rng.normal(0.0, self.cell_rule_sd, (*shape_cells, k))
        )
        # expected pass probability over the mood, per (trial, part, cell, rule)
        mean_pass = (special.expit(logit[..., None] + self.mood_sd * _NODES) * _WEIGHTS).sum(-1)
        expected = mean_pass @ np.asarray(self.points)  # (trials, parts, cells), in points
        thin = np.zeros(shape_cells)
        if drop:
            planted = np.clip(drop / expected, 0.0, 1.0)
            if where == "first":
                planted[:, 1:, :] = 0.0
            thin = planted
        sides = []
        for side in (0, 1):
            mood = rng.normal(0.0, self.mood_sd, (*shape_cells, self.repeats, 1))
            p = special.expit(logit[:, :, :, None, :] + mood)
            passed = rng.random(p.shape) < p
            if side == 1 and drop:
                passed &= rng.random(p.shape) >= thin[..., None, None]
            sides.append(passed.astype(np.int8))
        return sides[0], sides[1]


def suite_frames(baseline: Codes, candidate: Codes, points: tuple[float, ...]) -> GeneratedGrades:
    """The suites as :class:`GeneratedGrades` (its ``frame(trial, side)`` is a grades frame;
    personas are ``persona-00`` ...)."""
    trials, parts, cells = baseline.shape[:3]
    return GeneratedGrades(
        baseline=baseline.reshape(trials, parts * cells, *baseline.shape[3:]),
        candidate=candidate.reshape(trials, parts * cells, *candidate.shape[3:]),
        points=points,
        judged=(False,) * len(points),
        persona_of_cell=tuple(f"persona-{p:02d}" for p in range(parts) for _ in range(cells)),
        expected_difference=np.zeros(trials),
    )


def _scores(codes: Codes, points: tuple[float, ...]) -> NDArray[np.float64]:
    w = np.asarray(points, dtype=np.float64)
    scores: NDArray[np.float64] = (codes * w).sum(-1) * 100.0 / w.sum()
    return scores


def per_case_failed(
    candidate: Codes, points: tuple[float, ...], threshold: float
) -> NDArray[np.bool_]:
    """Per suite, whether any per-case test failed: each part's first conversation (first
    cell, first repeat) of the candidate scored below ``threshold`` points."""
    below: NDArray[np.bool_] = np.asarray(_scores(candidate, points)[:, :, 0, 0] < threshold)
    return np.asarray(below.any(-1), dtype=bool)


def suite_outcomes(
    baseline: Codes,
    candidate: Codes,
    points: tuple[float, ...],
    *,
    confidence: float = 0.95,
    margin: float = 5.0,
    threshold: float = 50.0,
) -> dict[str, Any]:
    """Per style, whether each suite failed (any of its tests failed): bool ``(trials,)``;
    and ``family_parts``, the family's per-part outcome codes ``(trials, parts)`` (0 passed,
    1 failed, 2 insufficient)."""
    parts = baseline.shape[1]
    decisions: dict[int, Any] = {}

    def decide(divisor: int) -> Any:
        if divisor not in decisions:
            level = 1.0 - (1.0 - confidence) / divisor
            decisions[divisor] = _headline(baseline, candidate, points, level, margin)[0]
        return decisions[divisor]

    def rejects(divisor: int) -> NDArray[np.bool_]:
        verdict = np.asarray(decide(divisor).verdict)
        return np.isin(verdict, [Verdict.IMPROVED, Verdict.REGRESSED])

    steps = holm_step_down(parts, rejects)
    verdict = np.empty(steps.divisor.shape, dtype=object)
    non_inferior = np.zeros(steps.divisor.shape, dtype=bool)
    for divisor in np.unique(steps.divisor):
        here = steps.divisor == divisor
        d = decide(int(divisor))
        verdict[here] = np.asarray(d.verdict)[here]
        non_inferior[here] = np.asarray(d.non_inferior)[here]
    failed = verdict == Verdict.REGRESSED
    codes = np.where(non_inferior, 0, np.where(failed, 1, 2))
    alone = np.asarray(decide(1).verdict) == Verdict.REGRESSED
    base_mean = _scores(baseline, points).mean(axis=(-1, -2))
    cand_scores = _scores(candidate, points)
    aggregate = cand_scores.mean(axis=(-1, -2)) < base_mean - margin
    return {
        "family": failed.any(-1),
        "unadjusted": alone.any(-1),
        "aggregate": aggregate.any(-1),
        "per_case": per_case_failed(candidate, points, threshold),
        "family_parts": codes,
    }
