"""Statistics for honest comparisons: pure functions, every random draw seeded.

- :func:`wilson_interval`, :func:`pass_hat_k`: proportions and pass^k, vectorised;
- :func:`paired_bootstrap`: BCa bootstrap of a mean of paired differences (scipy);
- :class:`CellMoments`, :func:`grid_mean`, :func:`paired_difference`: repeats reduced within
  cells first, then a grid average whose variance comes from the repeats (see ``_cells``);
- :func:`minimum_detectable_effect`, :func:`grid_difference_se`, :func:`paired_df`: planning.
"""

from __future__ import annotations

from .._util import publish
from ._bootstrap import paired_bootstrap
from ._cells import CellMoments, Interval, grid_mean, paired_difference, t_interval
from ._intervals import pass_hat_k, wilson_interval
from ._power import grid_difference_se, minimum_detectable_effect, paired_df

__all__ = [
    "CellMoments",
    "Interval",
    "grid_difference_se",
    "grid_mean",
    "minimum_detectable_effect",
    "paired_bootstrap",
    "paired_df",
    "paired_difference",
    "pass_hat_k",
    "t_interval",
    "wilson_interval",
]

publish(globals())
