"""Synthetic grades with known truth, for calibration tests, notebooks and the benchmark.

A :class:`SyntheticTruth` holds, for every cell of a grid and every rule of a scorecard, the
probability that the rule passes. A simulated conversation draws one latent "how it went"
value shared by all its rules (a Gaussian copula with correlation ``rho``: a conversation that
goes badly tends to fail several rules at once, as real ones do), so each rule still passes
with exactly its probability. Judged rules come back ``na`` or ``error`` at small fixed rates,
independently of the outcome; those are left out of the score, never scored as fail.

``truth.expected_score`` is the exact expected conversation score averaged over cells (na and
error included in the arithmetic), and ``truth.shifted(-15)`` is a truth whose expected score is
exactly 15 points lower (pass probabilities scaled down in proportion; a gain scales the failure
probabilities down instead). Everything is seeded::

    truth = SyntheticTruth.demo(seed=1)            # 18 cells (6 personas x 3), 8 rules
    prod = synthetic_grades(truth, repeats=3, seed=10)
    draft = synthetic_grades(truth.shifted(-15), repeats=3, seed=11, run_id="draft")

For many trials at once without DataFrames, :meth:`SyntheticTruth.simulate` returns verdict
codes shaped ``(trials, cells, repeats, rules)`` and :meth:`SyntheticTruth.scores` turns them
into conversation scores.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import special, stats

from evalkit.grading import score_from_points

__all__ = ["VERDICT_CODES", "SyntheticTruth", "synthetic_grades"]

#: Verdict names by the integer codes :meth:`SyntheticTruth.simulate` returns.
VERDICT_CODES: tuple[str, ...] = ("fail", "pass", "na", "error")
_FAIL, _PASS, _NA, _ERROR = range(4)

_DEMO_POINTS = (10.0, 10.0, 10.0, 15.0, 15.0, 20.0, 10.0, 10.0)
_DEMO_JUDGED = (False, False, False, False, True, True, True, True)


@dataclass(frozen=True)
class SyntheticTruth:
    """Known per-cell pass probabilities of each rule, and how simulated grades are drawn."""

    cell_ids: tuple[str, ...]
    persona_labels: tuple[str, ...]
    rule_ids: tuple[str, ...]
    points: tuple[float, ...]
    judged: tuple[bool, ...]
    p_pass: NDArray[np.float64]  # (cells, rules)
    na_rate: float = 0.06
    error_rate: float = 0.02
    rho: float = 0.5

    @classmethod
    def demo(cls, seed: int = 0, cells: int = 18, personas: int = 6) -> SyntheticTruth:
        """The demo's shape: ``cells`` cells over ``personas`` personas, 8 rules, 4 judged."""
        rng = np.random.default_rng(seed)
        rules = len(_DEMO_POINTS)
        logits = (
            rng.normal(1.3, 0.8, size=(1, rules))
            + rng.normal(0.0, 0.6, size=(cells, 1))
            + rng.normal(0.0, 0.4, size=(cells, rules))
        )
        return cls(
            cell_ids=tuple(f"cell-{c:03d}" for c in range(cells)),
            persona_labels=tuple(f"persona-{c % personas}" for c in range(cells)),
            rule_ids=tuple(f"rule-{j}" for j in range(rules)),
            points=_DEMO_POINTS,
            judged=_DEMO_JUDGED,
            p_pass=special.expit(logits),
        )

    def _weights(self) -> NDArray[np.float64]:
        """Expected share of the score each rule carries, ``(rules,)`` (na/error enumerated)."""
        applicable = np.where(self.judged, 1.0 - self.na_rate - self.error_rate, 1.0)
        return expected_rule_shares(self.points, self.judged, applicable)

    @property
    def cell_expected_scores(self) -> NDArray[np.float64]:
        """Exact expected conversation score (0-100) of each cell."""
        return np.asarray(100.0 * self.p_pass @ self._weights())

    @property
    def expected_score(self) -> float:
        """Exact expected score averaged over cells (the grid estimand)."""
        return float(self.cell_expected_scores.mean())

    def shifted(self, points: float) -> SyntheticTruth:
        """A truth whose expected score is ``points`` higher (negative: lower)."""
        e = self.expected_score
        if points <= 0:
            if e + points < 0:
                raise ValueError(f"cannot drop {-points} points from {e:.1f}")
            p = self.p_pass * ((e + points) / e)
        else:
            if e + points > 100:
                raise ValueError(f"cannot add {points} points to {e:.1f}")
            p = 1.0 - (1.0 - self.p_pass) * ((100.0 - e - points) / (100.0 - e))
        return replace(self, p_pass=p)

    def simulate(self, trials: int, repeats: int, seed: int) -> NDArray[np.int8]:
        """Verdict codes (see :data:`VERDICT_CODES`) shaped ``(trials, cells, repeats, rules)``."""
        rng = np.random.default_rng(seed)
        cells, rules = self.p_pass.shape
        latent = rng.standard_normal((trials, cells, repeats, 1))
        noise = rng.standard_normal((trials, cells, repeats, rules))
        draw = self.rho * latent + np.sqrt(1.0 - self.rho**2) * noise
        passed = draw < stats.norm.ppf(self.p_pass)[None, :, None, :]
        codes = np.where(passed, _PASS, _FAIL).astype(np.int8)
        u = rng.random((trials, cells, repeats, rules))
        judged = np.asarray(self.judged)
        codes[(u < self.na_rate) & judged] = _NA
        codes[(u >= self.na_rate) & (u < self.na_rate + self.error_rate) & judged] = _ERROR
        return codes

    def scores(self, codes: NDArray[np.int8]) -> NDArray[np.float64]:
        """Conversation scores (0-100, NaN when no rule applied) from verdict codes."""
        w = np.asarray(self.points)
        applicable = (codes == _PASS) | (codes == _FAIL)
        awarded = ((codes == _PASS) * w).sum(axis=-1)
        possible = (applicable * w).sum(axis=-1)
        return score_from_points(awarded, possible)

    def frame(self, codes: NDArray[np.int8], run_id: str = "synthetic") -> pd.DataFrame:
        """A grades DataFrame (the grading schema's main columns) from one trial's codes."""
        c, r, j = (a.ravel() for a in np.indices(codes.shape))
        names = np.asarray(VERDICT_CODES)[codes.ravel()]
        points = np.asarray(self.points)[j]
        awarded = np.where(names == "pass", points, np.where(names == "fail", 0.0, np.nan))
        cell_ids = np.asarray(self.cell_ids)[c]
        return pd.DataFrame(
            {
                "run_id": run_id,
                "conversation_id": [f"{run_id}-{a}-{b}" for a, b in zip(cell_ids, r, strict=True)],
                "cell_id": cell_ids,
                "persona_label": np.asarray(self.persona_labels)[c],
                "repeat": r.astype(np.int64),
                "rubric_version_id": "synthetic-v1",
                "rule_id": np.asarray(self.rule_ids)[j],
                "title": [f"Rule {x}" for x in j],
                "points": points,
                "verdict": names,
                "points_awarded": awarded,
                "grader": np.where(np.asarray(self.judged)[j], "judge", "deterministic"),
            }
        )


def synthetic_grades(
    truth: SyntheticTruth, repeats: int = 3, seed: int = 0, run_id: str = "synthetic"
) -> pd.DataFrame:
    """One simulated run's grades frame: every cell ``repeats`` times, every rule graded."""
    return truth.frame(truth.simulate(1, repeats, seed)[0], run_id=run_id)


def expected_rule_shares(
    points: tuple[float, ...], judged: tuple[bool, ...], applicable: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Expected share of a conversation's score each rule carries when judged rule ``j`` is
    applicable with probability ``applicable[j]`` (every presence pattern enumerated)."""
    w = np.asarray(points, dtype=np.float64)
    chances = np.broadcast_to(np.asarray(applicable, dtype=np.float64), w.shape)
    flagged = [j for j, flag in enumerate(judged) if flag]
    share = np.zeros(len(w))
    for pattern in itertools.product((False, True), repeat=len(flagged)):
        on = np.asarray([not flag for flag in judged])
        prob = 1.0
        for j, present in zip(flagged, pattern, strict=True):
            on[j] = present
            prob *= chances[j] if present else 1.0 - chances[j]
        if on.any():
            share += prob * np.where(on, w, 0.0) / w[on].sum()
    return share
