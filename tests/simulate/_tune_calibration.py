"""How often a sweep's verdict goes wrong, and how often it finds a real winner, measured
over many generated sweeps at once (the very arrays :func:`compare_variants` decides from).

:func:`sweep_rates` also measures two other confirmation rules on the same trials, so the
choice of rule is a measurement: ``split`` (choose on the selection cells, then a one-sided t
test at ``1 - confidence`` on the held-out cells alone) and ``holm_all_cells`` (Holm over the
arms on every cell, the winner the best arm Holm rejects; it never looks at held-out cells).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from evalkit.tuning._selection import _grid, one_sided_p, select_and_confirm
from evalkit.tuning._split import holdout_mask

from ._arms import arms_data, draw_arms
from ._generator import Design, GradeGenerator

__all__ = ["NOISY_GENERATOR", "TUNE_DESIGN", "sweep_rates"]

#: The issue's design: 36 cells x 4 repeats a side.
TUNE_DESIGN = Design("36 cells x 4 repeats", cells=36, repeats=4)

#: Noisier conversations (half of them can go badly, and badly means most rules fail): the
#: plain split confirms a 15-point winner in about 67% of sweeps here, the issue's figure.
NOISY_GENERATOR = GradeGenerator(bad_share=(3.0, 3.0), bad_penalty=5.0, cell_rule_sd=1.0)


def _holm_reject(p: np.ndarray, alpha: float) -> np.ndarray:
    """Holm's step-down rejections along the last axis (Holm 1979)."""
    k = p.shape[-1]
    order = np.argsort(p, axis=-1)
    sorted_p = np.take_along_axis(p, order, axis=-1)
    ok = sorted_p <= alpha / (k - np.arange(k))
    ok = np.cumprod(ok, axis=-1).astype(bool)
    out = np.zeros_like(ok)
    np.put_along_axis(out, order, ok, axis=-1)
    return out


def sweep_rates(
    design: Design,
    effects: Sequence[float],
    *,
    trials: int = 2000,
    seed: int = 0,
    holdout: float = 0.3,
    confidence: float = 0.95,
    generator: GradeGenerator | None = None,
) -> dict[str, Any]:
    """Rates over ``trials`` sweeps of ``design`` with one arm per planted effect.

    ``confirmed``: any arm called ``improved``; ``best_confirmed``: the arm with the largest
    planted effect (the first of them) is the confirmed winner; ``other_confirmed``: another
    arm is; the same three for the ``split`` and ``holm_all_cells`` rules.
    """
    codes = draw_arms(design, effects, trials=trials, seed=seed, generator=generator)
    data = arms_data(codes)
    cells = [f"cell-{c:03d}" for c in range(design.cells)]
    hold = holdout_mask(cells, holdout, seed)
    sel = select_and_confirm(data, hold, confidence=confidence)
    best = int(np.argmax(effects)) if max(effects) > 0 else -1
    alpha = (1.0 - confidence) / 2.0

    def rates(confirmed: np.ndarray, winner: np.ndarray, prefix: str) -> dict[str, float]:
        return {
            f"{prefix}confirmed": float(confirmed.mean()),
            f"{prefix}best_confirmed": float((confirmed & (winner == best)).mean()),
            f"{prefix}other_confirmed": float((confirmed & (winner != best)).mean()),
        }

    split = (sel.holdout_p <= 1.0 - confidence) & (sel.selected >= 0)
    full = _grid(data.control.left_out, data.arms.left_out, np.ones(design.cells, dtype=bool))
    p_full = one_sided_p(full)
    rejected = _holm_reject(p_full, alpha)
    ranked = np.where(rejected, np.asarray(full.estimate), -np.inf)
    holm_winner = np.argmax(ranked, axis=-1)
    return {
        "design": design.name,
        "arms": len(effects),
        "effects": "/".join(f"{e:g}" for e in effects),
        "trials": trials,
        **rates(sel.confirmed, sel.selected, ""),
        **rates(split, sel.selected, "split_"),
        **rates(np.asarray(rejected.any(axis=-1)), holm_winner, "holm_all_cells_"),
    }
