"""Holm's step-down through intervals is Holm's procedure: on p-values (a part rejects at the
Bonferroni level alpha / j when its p-value is at most alpha / j) it rejects exactly what
statsmodels' ``multipletests(method="holm")`` rejects, family by family.

statsmodels' Holm branch ends with a full ``gc.collect()`` on every call (statsmodels 0.15,
``stats/multitest.py``): 400 families made 400 full collections of the worker's whole heap, a
minute or two per case on a loaded machine (past the 300 s timeout: the flake), and ran other
tests' finalizers inside this one. The reference calls run with that collection turned off; it
changes nothing of what ``multipletests`` returns."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from evalkit.testing._holm import holm_step_down

ALPHA = 0.05


def _p_values(rng: np.random.Generator, families: int, m: int) -> np.ndarray:
    """A mix of nulls (uniform) and alternatives (small), with ties and exact boundaries."""
    p = rng.uniform(size=(families, m))
    strong = rng.random((families, m)) < 0.3
    p = np.where(strong, rng.uniform(0, 0.01, size=(families, m)), p)
    p[:5] = ALPHA / np.arange(1, m + 1)[::-1]  # p_(i) exactly at alpha / (m - i + 1)
    p[5] = ALPHA / m  # ties at the first step's bound
    return p


def _holm_reference(p: np.ndarray, monkeypatch: pytest.MonkeyPatch) -> np.ndarray:
    """statsmodels' Holm rejections, family (row) by family, without its per-call collection."""
    with monkeypatch.context() as patch:
        patch.setattr(gc, "collect", lambda generation=2: 0)
        return np.array([multipletests(row, ALPHA, method="holm")[0] for row in p])


@pytest.mark.parametrize("m", [1, 2, 6, 20])
def test_matches_statsmodels_holm_on_p_values(m: int, monkeypatch: pytest.MonkeyPatch) -> None:
    p = _p_values(np.random.default_rng(m), 400, m)
    calls: list[int] = []

    def rejects(divisor: int) -> np.ndarray:
        calls.append(divisor)
        return p <= ALPHA / divisor

    steps = holm_step_down(m, rejects)
    expected = _holm_reference(p, monkeypatch)
    np.testing.assert_array_equal(steps.rejected, expected)
    assert len(calls) == len(set(calls))  # each level asked once, for every family at once
    # a rejected part is read at the step that rejected it: its p-value clears that level
    assert np.all(p[steps.rejected] <= ALPHA / steps.divisor[steps.rejected])
    # the rest are read at the last step, m minus the family's rejections
    last = m - steps.rejected.sum(axis=-1, keepdims=True)
    np.testing.assert_array_equal(
        steps.divisor[~steps.rejected], np.broadcast_to(last, p.shape)[~steps.rejected]
    )


def test_nothing_rejected_stops_after_one_step() -> None:
    calls: list[int] = []

    def rejects(divisor: int) -> np.ndarray:
        calls.append(divisor)
        return np.zeros(5, dtype=bool)

    steps = holm_step_down(5, rejects)
    assert calls == [5]
    assert not steps.rejected.any()
    assert (steps.divisor == 5).all()


def test_all_rejected_reads_each_at_its_step() -> None:
    levels = np.array([ALPHA / 4, ALPHA / 3.5, ALPHA / 2.5, ALPHA / 1.5])  # one per step

    steps = holm_step_down(4, lambda divisor: levels <= ALPHA / divisor)
    assert steps.rejected.all()
    np.testing.assert_array_equal(steps.divisor, [4, 3, 2, 1])


def test_a_family_needs_a_part() -> None:
    with pytest.raises(ValueError, match="at least one part"):
        holm_step_down(0, lambda divisor: np.zeros(0, dtype=bool))
