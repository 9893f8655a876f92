"""Simulation generators for calibration and benchmarks, apart from the public API.

Two independent generators of grades (:class:`SyntheticTruth`, a Gaussian copula over one
fixed truth; :class:`GradeGenerator`, random truths per trial with good and bad
conversations), the calibration runs of the comparison and of sequential looks over them
(:func:`calibrate`, :func:`calibrate_sequential`), generated sweeps of many arms
(:func:`draw_arms`) and simulated adaptive sweeps (:func:`simulate_adaptive`). Tests and
``benchmarks/`` import them from here; nothing in evalkit's public API does.
"""

from __future__ import annotations

from ._adaptive import AdaptiveOutcome, adaptive_rates, simulate_adaptive
from ._arms import ArmCodes, arm_frame, arms_data, draw_arms
from ._calibration import CALIBRATION_DESIGNS, calibrate, calibrate_sequential, trial_decisions
from ._generator import Design, GeneratedGrades, GradeGenerator
from ._synthetic import VERDICT_CODES, SyntheticTruth, expected_rule_shares, synthetic_grades
from ._tune_calibration import NOISY_GENERATOR, TUNE_DESIGN, sweep_rates

__all__ = [
    "CALIBRATION_DESIGNS",
    "NOISY_GENERATOR",
    "TUNE_DESIGN",
    "VERDICT_CODES",
    "AdaptiveOutcome",
    "ArmCodes",
    "Design",
    "GeneratedGrades",
    "GradeGenerator",
    "SyntheticTruth",
    "adaptive_rates",
    "arm_frame",
    "arms_data",
    "calibrate",
    "calibrate_sequential",
    "draw_arms",
    "expected_rule_shares",
    "simulate_adaptive",
    "sweep_rates",
    "synthetic_grades",
    "trial_decisions",
]
