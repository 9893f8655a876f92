"""Simulated sweeps and searches for measuring the winner's reported gain, on a generator of its
own (not :class:`~._generator.GradeGenerator`'s mixture), with every arm's true gain known.

:class:`FactorGenerator`: a conversation has a latent quality ``z = mu_c + sigma e`` (``mu_c``
the cell's quality, heavy-tailed over cells) and passes rule ``r`` when ``z + nu_r > tau_r``
(``nu_r`` standard normal), so rules fail together through ``z`` and a cell's pass
probabilities are ``Phi((mu_c - tau_r) / sqrt(1 + sigma^2))``. Six weighted rules, scores
0-100, no judge errors. A candidate's effect ``delta`` is planted per cell as
``delta + eta_c`` (a cell-by-candidate interaction, centred over the grid, absent when
``delta`` is 0): a gain turns each fail into a pass with probability
``delta_c / (100 - E_c)``, a loss each pass into a fail with probability ``-delta_c / E_c``
(``E_c`` the cell's expected score), so the cell's expected score moves by exactly
``delta_c`` (clipped where a cell cannot move that far; the truth is computed after the
clip). An arm's true gain is the grid mean of its cells' moves.

:func:`simulate_gains` runs tuning's statistics over many trials at once: rounds of candidates
raced in waves with the adaptive drops (selection cells only), the final closed combination
test over every candidate, then the numbers a result could report for the confirmed winner:
today's all-cells difference, the held-out difference, the selection-adjusted held-out
difference and the difference on fresh repeats of every cell.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

from evalkit.compare._decision import Scenarios
from evalkit.stats import CellMoments, paired_grid
from evalkit.tuning._adaptive import drop_bound_confidence, wave_drops
from evalkit.tuning._gain import adjusted_gain
from evalkit.tuning._selection import ArmsData, select_and_confirm
from evalkit.tuning._split import holdout_mask

__all__ = ["FactorGenerator", "GainDesign", "GainOutcome", "simulate_gains"]

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True)
class FactorGenerator:
    """Conversation scores from a latent quality factor (module docstring)."""

    points: tuple[float, ...] = (10.0, 15.0, 15.0, 20.0, 20.0, 20.0)
    quality_sd: float = 0.35  # between trials, the grid's mean quality
    cell_sd: float = 0.6  # between cells (a t with 5 df, scaled)
    conversation_sd: float = 1.0  # sigma: a conversation's own quality
    threshold_mean: float = -0.4
    threshold_sd: float = 0.5  # between rules
    interaction_sd: float = 3.0  # points: cell-by-candidate spread of a nonzero effect

    def truth(
        self, rng: np.random.Generator, trials: int, cells: int
    ) -> tuple[FloatArray, FloatArray]:
        """Per trial and cell, the quality ``mu_c`` and the rule thresholds ``tau_r``."""
        mean = rng.normal(0.0, self.quality_sd, (trials, 1))
        mu = mean + self.cell_sd * rng.standard_t(5, (trials, cells)) / np.sqrt(5.0 / 3.0)
        tau = rng.normal(self.threshold_mean, self.threshold_sd, (trials, len(self.points)))
        return mu, tau

    def pass_probabilities(self, mu: FloatArray, tau: FloatArray) -> FloatArray:
        """``(trials, cells, rules)``: a cell's chance to pass each rule."""
        scale = np.sqrt(1.0 + self.conversation_sd**2)
        return np.asarray(special.ndtr((mu[..., :, None] - tau[..., None, :]) / scale))

    def expected_scores(self, mu: FloatArray, tau: FloatArray) -> FloatArray:
        """``(trials, cells)``: each cell's expected score (0-100)."""
        return np.asarray(self.pass_probabilities(mu, tau) @ np.asarray(self.points))

    def cell_effects(
        self, rng: np.random.Generator, expected: FloatArray, effect: float
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Per cell: the flip probabilities (fail -> pass, pass -> fail) and the exact move."""
        shape = expected.shape
        if effect == 0.0:
            zero = np.zeros(shape)
            return zero, zero, zero
        eta = rng.normal(0.0, self.interaction_sd, shape)
        planned = effect + eta - eta.mean(axis=-1, keepdims=True)
        up = np.clip(np.where(planned > 0, planned / (100.0 - expected), 0.0), 0.0, 1.0)
        down = np.clip(np.where(planned < 0, -planned / expected, 0.0), 0.0, 1.0)
        moved = (100.0 - expected) * up - expected * down
        return up, down, moved

    def scores(
        self,
        rng: np.random.Generator,
        mu: FloatArray,
        tau: FloatArray,
        flips: tuple[FloatArray, FloatArray],
        repeats: int,
    ) -> FloatArray:
        """``(trials, cells, repeats)`` conversation scores of one side."""
        trials, cells = mu.shape
        z = mu[..., None] + self.conversation_sd * rng.standard_normal((trials, cells, repeats))
        nu = rng.standard_normal((trials, cells, repeats, len(self.points)))
        passed = z[..., None] + nu > tau[:, None, None, :]
        up, down = (f[:, :, None, None] for f in flips)
        u = rng.random(passed.shape)
        passed = np.where(passed, u >= down, u < up)
        return np.asarray(passed @ np.asarray(self.points), dtype=np.float64)


@dataclass(frozen=True)
class GainDesign:
    """The shape of simulated searches: cells, waves a race (``max_repeats``), the fresh
    repeats after a win (``confirm_repeats``), the held-out share and levels."""

    name: str
    cells: int = 18
    max_repeats: int = 2
    confirm_repeats: int = 2
    holdout: float = 0.3
    confidence: float = 0.95
    drop_alpha: float = 0.05
    adaptive: bool = True


@dataclass(frozen=True)
class GainOutcome:
    """Per trial: whether a winner was confirmed, its true gain and what each estimate said
    (NaN in trials without a confirmed winner)."""

    confirmed: BoolArray
    truth: FloatArray
    all_cells: FloatArray
    holdout: tuple[FloatArray, FloatArray, FloatArray]
    adjusted: tuple[FloatArray, FloatArray, FloatArray]
    fresh: tuple[FloatArray, FloatArray, FloatArray]
    conversations: FloatArray

    @property
    def trials(self) -> int:
        return int(self.confirmed.size)

    def rates(self, name: str) -> dict[str, Any]:
        """Over the confirmed winners: how many, the estimate ``name`` (``all_cells``,
        ``holdout``, ``adjusted``, ``fresh``) on average against the truth, its smallest value,
        and how often its interval holds the truth (None for ``all_cells``: no such interval)."""
        keep = self.confirmed
        value = getattr(self, name)
        est = value if name == "all_cells" else value[0]
        out: dict[str, Any] = {"winners": int(keep.sum()), "trials": self.trials}
        if not keep.any():
            return {**out, "mean": np.nan, "truth": np.nan, "min": np.nan, "covered": None}
        out["mean"] = float(np.mean(est[keep]))
        out["truth"] = float(np.mean(self.truth[keep]))
        out["min"] = float(np.min(est[keep]))
        if name == "all_cells":
            out["covered"] = None
        else:
            low, high = value[1][keep], value[2][keep]
            out["covered"] = int(((low <= self.truth[keep]) & (self.truth[keep] <= high)).sum())
        return out


def _moments(scores: FloatArray) -> Scenarios:
    return Scenarios.same(CellMoments.from_values(scores))


def _data(control: FloatArray, arms: FloatArray, repeats: int) -> ArmsData:
    """Arms data of the first ``repeats`` repeats (control ``(T, C, R)``, arms ``(T, K, C, R)``)."""
    return ArmsData(
        _moments(control[..., :repeats]),
        _moments(arms[..., :repeats]),
        np.zeros(arms.shape[:2], dtype=bool),
    )


def _drops(
    control: FloatArray, arms: FloatArray, hold: BoolArray, design: GainDesign
) -> NDArray[np.int64]:
    """When each of one round's arms was dropped (0: never), as tuning's waves drop."""
    trials, k = arms.shape[:2]
    dropped = np.zeros((trials, k), dtype=np.int64)
    if not design.adaptive:
        return dropped
    active = np.ones((trials, k), dtype=bool)
    level = drop_bound_confidence(k, design.max_repeats, design.drop_alpha)
    for wave in range(1, design.max_repeats):
        drops = wave_drops(_data(control, arms, wave), hold, active, confidence=level)
        dropped[drops] = wave
        active &= ~drops
    return dropped


def _take(values: FloatArray, index: NDArray[np.int64]) -> FloatArray:
    return np.take_along_axis(values, index[:, None], axis=1)[:, 0]


def simulate_gains(
    design: GainDesign,
    effects: Sequence[Sequence[float]],
    *,
    trials: int,
    seed: int = 0,
    generator: FactorGenerator | None = None,
) -> GainOutcome:
    """``trials`` searches of ``design``; ``effects[r]`` are round ``r``'s candidates' planted
    gains in points (one round: a ``tune`` sweep of those arms)."""
    gen = generator or FactorGenerator()
    rng = np.random.default_rng(seed)
    total = design.max_repeats + design.confirm_repeats
    mu, tau = gen.truth(rng, trials, design.cells)
    expected = gen.expected_scores(mu, tau)
    none = np.zeros_like(expected)
    control = gen.scores(rng, mu, tau, (none, none), total)
    flat = [float(e) for round_effects in effects for e in round_effects]
    arms, truths = [], []
    for effect in flat:
        up, down, moved = gen.cell_effects(rng, expected, effect)
        arms.append(gen.scores(rng, mu, tau, (up, down), total))
        truths.append(moved.mean(axis=-1))
    arm_scores = np.stack(arms, axis=1)  # (T, K, C, R)
    truth = np.stack(truths, axis=1)  # (T, K)
    cells = [f"cell-{c:03d}" for c in range(design.cells)]
    hold = holdout_mask(cells, design.holdout, seed)
    starts = np.cumsum([0, *(len(r) for r in effects)])
    dropped = np.concatenate(
        [_drops(control, arm_scores[:, a:b], hold, design) for a, b in itertools.pairwise(starts)],
        axis=1,
    )
    data = _data(control, arm_scores, design.max_repeats)
    sel = select_and_confirm(data, hold, confidence=design.confidence, active=dropped == 0)
    chosen = np.maximum(sel.selected, 0)
    confirmed = np.asarray(sel.confirmed, dtype=bool)
    every = np.ones(design.cells, dtype=bool)
    c = data.control.left_out
    expand = CellMoments(c.n[:, None, :], c.mean[:, None, :], c.var[:, None, :])
    all_cells = np.asarray(paired_grid(expand, data.arms.left_out.mask(every)).estimate)
    held = paired_grid(expand.mask(hold), data.arms.left_out.mask(hold)).interval(design.confidence)
    fresh_control = CellMoments.from_values(control[..., design.max_repeats :])
    winner = _take_arm(arm_scores, chosen)[..., design.max_repeats :]
    fresh = paired_grid(fresh_control, CellMoments.from_values(winner)).interval(design.confidence)

    def only(x: Any) -> FloatArray:
        return np.where(confirmed, np.asarray(x, dtype=np.float64), np.nan)

    race = np.where(dropped > 0, dropped, design.max_repeats).sum(axis=-1) + design.max_repeats
    spent = race * design.cells + np.where(confirmed, 2 * design.confirm_repeats * design.cells, 0)
    return GainOutcome(
        confirmed=confirmed,
        truth=only(_take(truth, chosen)),
        all_cells=only(_take(all_cells, chosen)),
        holdout=tuple(
            only(_take(np.asarray(v), chosen)) for v in (held.estimate, held.low, held.high)
        ),  # type: ignore[arg-type]
        adjusted=tuple(only(v) for v in adjusted_gain(sel, design.confidence)),  # type: ignore[arg-type]
        fresh=tuple(only(v) for v in (fresh.estimate, fresh.low, fresh.high)),  # type: ignore[arg-type]
        conversations=spent.astype(np.float64),
    )


def _take_arm(arms: FloatArray, index: NDArray[np.int64]) -> FloatArray:
    """``(T, C, R)``: each trial's arm ``index``."""
    return np.take_along_axis(arms, index[:, None, None, None], axis=1)[:, 0]


def _pct(count: int, n: int) -> str:
    """``93.4% [91.0, 95.2]``: a rate with its Wilson 95% interval (``-`` when n is 0)."""
    from evalkit.stats import wilson_interval

    if n == 0:
        return "-"
    low, high = wilson_interval(count, n)
    return f"{100 * count / n:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def gain_row(
    design: GainDesign,
    effects: Sequence[Sequence[float]],
    *,
    trials: int,
    seed: int,
    chunk: int = 1000,
) -> dict[str, Any]:
    """One benchmark row: ``trials`` searches (drawn ``chunk`` at a time), and over their
    confirmed winners what each estimate reports against the truth, with Wilson intervals."""
    parts = [
        simulate_gains(design, effects, trials=min(chunk, trials - start), seed=seed + start)
        for start in range(0, trials, chunk)
    ]

    def cat(name: str) -> Any:
        return np.concatenate([getattr(p, name) for p in parts])

    def three(name: str) -> tuple[FloatArray, FloatArray, FloatArray]:
        est, low, high = (np.concatenate([getattr(p, name)[i] for p in parts]) for i in range(3))
        return est, low, high

    out = GainOutcome(
        confirmed=cat("confirmed"),
        truth=cat("truth"),
        all_cells=cat("all_cells"),
        holdout=three("holdout"),
        adjusted=three("adjusted"),
        fresh=three("fresh"),
        conversations=cat("conversations"),
    )
    won = out.confirmed
    n = int(won.sum())
    fresh = out.rates("fresh")
    adjusted = out.rates("adjusted")
    spread = float(np.std(out.fresh[0][won], ddof=1)) if n > 1 else float("nan")
    median = float(np.median(out.adjusted[0][won])) if n else float("nan")
    return {
        "searches": trials,
        "confirmed": _pct(n, trials),
        "truth": fresh["truth"],
        "all cells (mean / min)": f"{out.rates('all_cells')['mean']:+.1f} / "
        f"{out.rates('all_cells')['min']:+.1f}"
        if n
        else "-",
        "held-out (mean)": f"{out.rates('holdout')['mean']:+.1f}" if n else "-",
        "fresh (mean ± se)": f"{fresh['mean']:+.1f} ± {spread / np.sqrt(n):.1f}" if n else "-",
        "fresh covers": _pct(fresh["covered"] or 0, n),
        "adjusted (median)": f"{median:+.1f}" if n else "-",
        "adjusted covers": _pct(adjusted["covered"] or 0, n),
        "conversations": f"{float(np.mean(out.conversations)):.0f}",
    }
