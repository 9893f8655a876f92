"""Calibration: how often verdicts go wrong, measured over many generated trials at once.

:func:`trial_decisions` runs the very decision :func:`compare_grades` makes (the headline, each
rule, each persona; see :mod:`._decision`) over every trial of a :class:`GeneratedGrades` in
one array pass, and :func:`calibrate` turns them into rates: false alarms (any ``improved`` or
``regressed`` verdict when the truth did not move), family-wise alarms per rule and per
persona, power, coverage of the planted effect, and the interval's health (NaN, zero-width,
out of ``[-100, 100]``). A test checks that this path and :func:`compare_grades` agree trial
by trial, so the rates are compare_grades' rates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evalkit.compare import SequentialPlan, Verdict
from evalkit.compare._decision import (
    Decision,
    Scenarios,
    decide_grid,
    errors_differ,
    rule_errors_bounded,
    scenario_scores,
)
from evalkit.compare._sequential import LookEvidence, decide_look
from evalkit.stats import CellMoments, VarianceMethod

from ._generator import Design, GeneratedGrades, GradeGenerator

__all__ = [
    "CALIBRATION_DESIGNS",
    "TrialDecisions",
    "calibrate",
    "calibrate_sequential",
    "trial_decisions",
]

#: The designs the statistics are calibrated in (tests and benchmarks/bench_calibration.py):
#: the demo's, one repeat per cell, mixed and unbalanced repeats, cells on one side only,
#: repeats that agree, informative judge errors.
CALIBRATION_DESIGNS: tuple[Design, ...] = (
    Design("demo grid, 18 cells x 3 repeats"),
    Design("18 cells x 2 repeats", repeats=2),
    Design("one repeat per cell, 60 x 1", cells=60, repeats=1, personas=10),
    Design("one repeat per cell, 18 x 1", repeats=1),
    Design("mixed repeats, 18 x {1,1,1,2}", repeat_choices=(1, 1, 1, 2)),
    Design(
        "60 x 1 plus one 2-repeat cell",
        cells=60,
        repeats=1,
        personas=10,
        repeat_pattern=(2,) + (1,) * 59,
    ),
    Design("repeats that agree in half the cells", deterministic_share=0.5),
    Design(
        "unbalanced {1..4}, 2 cells on one side", repeat_choices=(1, 2, 3, 4), one_sided_cells=2
    ),
    Design("informative judge errors (half of fails)", informative_errors=0.5),
)

_ERROR = 3


def _side_scenarios(codes: NDArray[np.int8], points: tuple[float, ...]) -> Scenarios:
    left_out, failed, passed = scenario_scores(codes, np.asarray(points))
    return Scenarios(*(CellMoments.from_values(x) for x in (left_out, failed, passed)))


def _rule_scenarios(codes: NDArray[np.int8]) -> Scenarios:
    by_rule = np.moveaxis(codes, -1, 1)  # (trials, rules, cells, repeats)
    value = np.where(by_rule == 1, 100.0, np.where(by_rule == 0, 0.0, np.nan))
    failed = np.where(by_rule == _ERROR, 0.0, value)
    passed = np.where(by_rule == _ERROR, 100.0, value)
    return Scenarios(*(CellMoments.from_values(x) for x in (value, failed, passed)))


def _persona_scenarios(s: Scenarios, personas: tuple[str, ...]) -> Scenarios:
    labels = sorted(set(personas))
    masks = np.stack([np.asarray(personas) == p for p in labels])  # (personas, cells)

    def one(m: CellMoments) -> CellMoments:
        return CellMoments(
            n=np.where(masks, m.n[..., None, :], 0.0),
            mean=np.where(masks, m.mean[..., None, :], np.nan),
            var=np.where(masks, m.var[..., None, :], np.nan),
        )

    return Scenarios(one(s.left_out), one(s.as_fail), one(s.as_pass))


def _conversations_with_errors(codes: NDArray[np.int8]) -> tuple[Any, Any]:
    """Per trial: conversations with a judge error, and conversations present."""
    present = (codes >= 0).all(axis=-1)
    return (codes == _ERROR).any(axis=-1).sum(axis=(-1, -2)), present.sum(axis=(-1, -2))


def _headline(
    base_codes: NDArray[np.int8],
    cand_codes: NDArray[np.int8],
    points: tuple[float, ...],
    confidence: float,
    min_effect: float,
) -> tuple[Decision, tuple[Scenarios, Scenarios], Any]:
    """Every trial's headline decision, the sides' scenarios, and where errors bound it."""
    base, cand = _side_scenarios(base_codes, points), _side_scenarios(cand_codes, points)
    bounded = errors_differ(
        _conversations_with_errors(base_codes), _conversations_with_errors(cand_codes)
    )
    decision = decide_grid(
        base, cand, confidence=confidence, min_effect=min_effect, bounded=bounded
    )
    return decision, (base, cand), bounded


@dataclass(frozen=True)
class TrialDecisions:
    """The headline, per-rule and per-persona decisions of every trial (arrays)."""

    headline: Decision  # (trials,)
    rules: Decision  # (trials, rules)
    personas: Decision  # (trials, personas)


def trial_decisions(
    grades: GeneratedGrades, *, confidence: float = 0.95, min_effect: float = 5.0
) -> TrialDecisions:
    """Every trial's decisions, as :func:`compare_grades` makes them (one array pass)."""
    headline, (base, cand), bounded = _headline(
        grades.baseline, grades.candidate, grades.points, confidence, min_effect
    )

    def rule_errors(codes: NDArray[np.int8]) -> tuple[Any, Any]:
        return (codes == _ERROR).sum(axis=(1, 2)), (codes >= 0).sum(axis=(1, 2))

    n_rules = len(grades.points)
    rules = decide_grid(
        _rule_scenarios(grades.baseline),
        _rule_scenarios(grades.candidate),
        confidence=1.0 - (1.0 - confidence) / n_rules,
        min_effect=min_effect,
        bounded=rule_errors_bounded(rule_errors(grades.baseline), rule_errors(grades.candidate)),
    )
    n_personas = len(set(grades.persona_of_cell))
    personas = decide_grid(
        _persona_scenarios(base, grades.persona_of_cell),
        _persona_scenarios(cand, grades.persona_of_cell),
        confidence=1.0 - (1.0 - confidence) / n_personas,
        min_effect=min_effect,
        bounded=np.asarray(bounded)[..., None],
    )
    return TrialDecisions(headline, rules, personas)


def _moved(verdict: Any) -> NDArray[np.bool_]:
    return np.isin(verdict, [Verdict.IMPROVED, Verdict.REGRESSED])


def calibrate(
    design: Design,
    effect: float = 0.0,
    *,
    trials: int = 2000,
    seed: int = 0,
    generator: GradeGenerator | None = None,
    confidence: float = 0.95,
    min_effect: float = 5.0,
) -> dict[str, Any]:
    """Rates over ``trials`` generated comparisons of ``design`` with a planted ``effect``.

    ``alarm``: share of trials whose headline says improved or regressed; ``regressed``,
    ``improved``, ``no_difference``, ``non_inferior``: shares of each; ``rule_alarm`` and
    ``persona_alarm``: family-wise (any rule, any persona moved); ``coverage``: the interval
    holds the planted effect; ``nan``, ``zero_width``, ``out_of_scale``: interval health over
    the headline and every rule.
    """
    grades = (generator or GradeGenerator()).draw(design, trials, seed, effect)
    d = trial_decisions(grades, confidence=confidence, min_effect=min_effect)
    v = np.asarray(d.headline.verdict)
    iv = d.headline.interval
    lows = np.concatenate([np.ravel(iv.low), np.ravel(d.rules.interval.low)])
    highs = np.concatenate([np.ravel(iv.high), np.ravel(d.rules.interval.high)])
    with np.errstate(invalid="ignore"):
        return {
            "design": design.name,
            "effect": effect,
            "trials": trials,
            "alarm": float(_moved(v).mean()),
            "regressed": float((v == Verdict.REGRESSED).mean()),
            "improved": float((v == Verdict.IMPROVED).mean()),
            "no_difference": float((v == Verdict.NO_DIFFERENCE).mean()),
            "non_inferior": float(np.mean(d.headline.non_inferior)),
            "rule_alarm": float(_moved(d.rules.verdict).any(axis=-1).mean()),
            "persona_alarm": float(_moved(d.personas.verdict).any(axis=-1).mean()),
            "coverage": float(np.mean((iv.low <= effect) & (iv.high >= effect))),
            "width": float(np.nanmean(np.asarray(iv.high) - np.asarray(iv.low))),
            "nan": float(np.mean(np.isnan(lows))),
            "zero_width": float(np.mean(highs - lows <= 0)),
            "out_of_scale": float(np.mean((lows < -100) | (highs > 100))),
            "method": VarianceMethod(
                int(np.bincount(np.ravel(d.headline.method), minlength=3).argmax())
            ).label,
        }


def _look_headline(
    grades: GeneratedGrades, look: int, confidence: float, min_effect: float
) -> Decision:
    """The headline decision of every trial on the first ``look`` repeats of every cell."""
    base, cand = grades.baseline[:, :, :look, :], grades.candidate[:, :, :look, :]
    return _headline(base, cand, grades.points, confidence, min_effect)[0]


def calibrate_sequential(
    design: Design,
    plan: SequentialPlan,
    effect: float = 0.0,
    *,
    trials: int = 2000,
    seed: int = 0,
    generator: GradeGenerator | None = None,
) -> dict[str, Any]:
    """Rates over ``trials`` generated sequential comparisons with a planted ``effect``, and
    the fixed design of the same maximum on the same trials.

    ``design.repeats`` is the plan's maximum; each trial looks after every wave (as
    :func:`~evalkit.compare.compare_sequential` does, one array pass per look) and stops at the
    first deciding look. ``alarm``/``power``: share of trials ending ``improved`` or
    ``regressed`` (``regressed`` for a negative effect); ``conversations``: mean conversations
    spent (both sides); ``fixed_*``: the same for the fixed design; ``saved``: ``1 -
    conversations / fixed_conversations``; ``stopped_for``: shares by reason.
    """
    max_repeats = design.max_repeats
    grades = (generator or GradeGenerator()).draw(design, trials, seed, effect)
    nominal = plan.nominal_confidence(max_repeats)
    verdict = np.full(trials, Verdict.INSUFFICIENT_EVIDENCE, dtype=object)
    reason = np.full(trials, "", dtype=object)
    spent = np.zeros(trials)
    covered = np.zeros(trials, dtype=bool)
    open_ = np.ones(trials, dtype=bool)
    for look in range(1, max_repeats + 1):
        h = _look_headline(grades, look, float(nominal[look - 1]), plan.min_effect)
        d = decide_look(plan, look, max_repeats, LookEvidence.of(h))
        now = open_ & np.asarray(d.stop, dtype=bool)
        wave = sum(
            (codes[:, :, look - 1, 0] >= 0).sum(axis=1)
            for codes in (grades.baseline, grades.candidate)
        )
        spent[open_] += wave[open_]
        verdict[now] = np.asarray(h.verdict, dtype=object)[now]
        reason[now] = np.asarray(d.stopped_for, dtype=object)[now]
        covered[now] = (
            (np.asarray(h.interval.low) <= effect) & (np.asarray(h.interval.high) >= effect)
        )[now]
        open_ &= ~now
    fixed = _look_headline(grades, max_repeats, plan.confidence, plan.min_effect)
    fixed_v = np.asarray(fixed.verdict, dtype=object)
    fixed_spent = float(2 * ((grades.baseline >= 0).all(axis=-1).sum(axis=(1, 2))).mean())
    want = [Verdict.REGRESSED] if effect < 0 else [Verdict.IMPROVED] if effect > 0 else None
    moved = [Verdict.IMPROVED, Verdict.REGRESSED]
    return {
        "design": design.name,
        "effect": effect,
        "trials": trials,
        "method": plan.method,
        "alarm": float(np.isin(verdict, moved).mean()),
        "power": float(np.isin(verdict, want).mean()) if want else float("nan"),
        "no_difference": float((verdict == Verdict.NO_DIFFERENCE).mean()),
        "conversations": float(spent.mean()),
        "fixed_alarm": float(np.isin(fixed_v, moved).mean()),
        "fixed_power": float(np.isin(fixed_v, want).mean()) if want else float("nan"),
        "fixed_conversations": fixed_spent,
        "saved": 1.0 - float(spent.mean()) / fixed_spent,
        "coverage": float(covered.mean()),
        "stopped_for": {
            k: float((reason == k).mean())
            for k in ("efficacy", "equivalence", "non-inferior", "futility", "last look")
        },
    }
