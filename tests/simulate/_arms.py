"""Synthetic sweeps: one control and many arms drawn from one truth, for calibration.

:func:`draw_arms` uses :class:`evalkit.compare.GradeGenerator`'s model (per-trial random
truths, good and bad conversations, judged rules with ``na`` and ``error``): every arm and
the control share the trial's cells and their pass probabilities, and each arm's expected
grid score moves by exactly its planted effect (passes thinned or fails fattened, as the
generator does for a candidate). :func:`arms_data` reduces the codes to the per-cell moments
:func:`~._selection.select_and_confirm` takes, for every trial at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from evalkit.compare._decision import Scenarios, errors_differ, scenario_scores
from evalkit.stats import CellMoments
from evalkit.tuning._selection import ArmsData

from ._generator import Design, GeneratedGrades, GradeGenerator

__all__ = ["ArmCodes", "arm_frame", "arms_data", "draw_arms"]

_FAIL, _PASS, _NA, _ERROR, _MISSING = 0, 1, 2, 3, -1
Codes = NDArray[np.int8]


@dataclass(frozen=True)
class ArmCodes:
    """Verdict codes ``(trials, cells, repeats, rules)`` for the control and
    ``(trials, arms, cells, repeats, rules)`` for the arms (-1: a repeat not drawn)."""

    control: Codes
    arms: Codes
    points: tuple[float, ...]
    effects: tuple[float, ...]

    def truncated(self, repeats: int) -> ArmCodes:
        """The first ``repeats`` repeats of every cell (a sweep stopped earlier)."""
        return ArmCodes(
            self.control[:, :, :repeats], self.arms[:, :, :, :repeats], self.points, self.effects
        )


def draw_arms(
    design: Design,
    effects: Sequence[float],
    *,
    trials: int,
    seed: int,
    generator: GradeGenerator | None = None,
) -> ArmCodes:
    """``trials`` sweeps of ``design``: the control and one arm per planted effect (points)."""
    gen = generator or GradeGenerator()
    rng = np.random.default_rng(seed)
    share, good, bad = gen._truth(rng, trials, design)
    marginal = share[..., None] * bad + (1.0 - share[..., None]) * good
    expected = 100.0 * (marginal @ gen._weights()).mean(axis=-1)  # (T,)
    judged = np.asarray(gen.judged)
    shape = (trials, design.cells, design.repeats, len(gen.points))

    def side(effect: float) -> Codes:
        is_bad = rng.random((*shape[:-1], 1)) < share[:, :, None, None]
        p = np.where(is_bad, bad[:, :, None, :], good[:, :, None, :])
        passed = rng.random(shape) < p
        thin = rng.random(shape)
        e = expected[:, None, None, None]
        if effect < 0:
            passed &= thin >= -effect / e
        elif effect > 0:
            passed |= thin < effect / (100.0 - e)
        codes = np.where(passed, _PASS, _FAIL).astype(np.int8)
        u = rng.random(shape)
        codes[(u < gen.na_rate) & judged] = _NA
        codes[(u >= gen.na_rate) & (u < gen.na_rate + gen.error_rate) & judged] = _ERROR
        return codes

    control = side(0.0)
    arms = np.stack([side(float(e)) for e in effects], axis=1)
    return ArmCodes(control, arms, gen.points, tuple(float(e) for e in effects))


def _scenarios(codes: Codes, points: tuple[float, ...]) -> Scenarios:
    """Per-cell moments of the three error scenarios; a conversation's scores are looked up
    from a table of every code pattern (5 ** rules rows), which is many times faster than
    scoring millions of conversations rule by rule."""
    rules = codes.shape[-1]
    values: tuple[NDArray[np.float64], ...]
    if rules > 8:
        values = scenario_scores(codes, np.asarray(points))
    else:
        patterns = np.indices((5,) * rules).reshape(rules, -1).T.astype(np.int8) - 1
        tables = scenario_scores(patterns, np.asarray(points))
        index = np.zeros(codes.shape[:-1], dtype=np.int32)
        for rule in range(rules):
            index = index * 5 + (codes[..., rule] + 1)
        values = tuple(table[index] for table in tables)
    return Scenarios(*(CellMoments.from_values(x) for x in values))


def _errors(codes: Codes) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Conversations with a judge error, and conversations, over cells and repeats."""
    present = (codes >= 0).all(axis=-1)
    erred = (codes == _ERROR).any(axis=-1) & present
    return erred.sum(axis=(-1, -2)), present.sum(axis=(-1, -2))


def arms_data(codes: ArmCodes) -> ArmsData:
    """Per-cell moments of every trial's control and arms, and where errors differ."""
    control_errors = _errors(codes.control)
    arm_errors = _errors(codes.arms)
    bounded = errors_differ((control_errors[0][:, None], control_errors[1][:, None]), arm_errors)
    return ArmsData(
        control=_scenarios(codes.control, codes.points),
        arms=_scenarios(codes.arms, codes.points),
        bounded=np.asarray(bounded, dtype=bool),
    )


def arm_frame(codes: ArmCodes, trial: int, arm: int | None) -> pd.DataFrame:
    """One trial's grades of the control (``arm`` None) or of an arm, as a grades frame."""
    side = codes.control if arm is None else codes.arms[:, arm]
    generated = GeneratedGrades(
        baseline=side,
        candidate=side,
        points=codes.points,
        judged=GradeGenerator().judged,
        persona_of_cell=tuple(f"persona-{c % 6}" for c in range(side.shape[1])),
        expected_difference=np.zeros(side.shape[0]),
    )
    frame: pd.DataFrame = generated.frame(trial, "baseline")  # type: ignore[assignment]
    name = "control" if arm is None else f"arm{arm}"
    frame = frame.assign(run_id=name)
    frame["conversation_id"] = name + "-" + frame["conversation_id"].astype(str)
    return frame
