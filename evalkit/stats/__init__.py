"""Statistics for honest comparisons: pure functions, every random draw seeded.

- :func:`wilson_interval`, :func:`pass_hat_k`: proportions and pass^k, vectorised;
- :func:`paired_bootstrap`: BCa bootstrap of a mean of paired differences (scipy);
- :class:`CellMoments`, :func:`grid_mean`, :func:`paired_grid`, :func:`paired_difference`:
  repeats reduced within cells first, then a grid average whose variance comes from the
  repeats or from the cells, as the design allows (see ``_cells``), with limits that respect
  the scale (Wilson with an effective sample size, MOVER; see ``_bounded``);
- :func:`power_of`, :func:`expected_power`, :func:`minimum_detectable_effect`,
  :func:`grid_difference_se`, :func:`paired_df`: planning (noncentral t; pilot uncertainty);
- :func:`ppi_mean`, :func:`ppi_difference`, :func:`ppi_pseudo_values`: prediction-powered
  (PPI++) means that correct a judge's verdicts with hand labels drawn with known
  probabilities, built from per-item influence terms (see ``_ppi``);
- :func:`efficacy_bounds`, :func:`futility_bounds`, :func:`spent_alpha`,
  :func:`stopping_probabilities`, :func:`conditional_power`, :func:`confidence_sequence_bounds`:
  group-sequential boundaries (Lan-DeMets spending, beta-spending futility, recursive
  integration) and always-valid confidence sequences.
"""

from __future__ import annotations

from .._util import publish
from ._bootstrap import paired_bootstrap
from ._bounded import effective_wilson, mover_difference, t_quantile
from ._cells import (
    CellMoments,
    Interval,
    PairedGrid,
    VarianceMethod,
    choose_method,
    grid_mean,
    paired_difference,
    paired_grid,
    t_interval,
)
from ._cluster_quantiles import ClusteredSample as ClusteredSample
from ._cluster_quantiles import cluster_quantile_difference as cluster_quantile_difference
from ._cluster_quantiles import expanded_percentile_interval as expanded_percentile_interval
from ._exact import fisher_exact_p
from ._intervals import pass_hat_k, wilson_interval
from ._power import (
    expected_power,
    grid_difference_se,
    minimum_detectable_effect,
    paired_df,
    power_of,
)
from ._ppi import PPIEstimate, ppi_difference, ppi_mean, ppi_pseudo_values
from ._sequential import (
    SPENDING_FUNCTIONS,
    StopProbabilities,
    conditional_power,
    confidence_sequence_bounds,
    efficacy_bounds,
    futility_bounds,
    spent_alpha,
    stopping_probabilities,
)

__all__ = [
    "SPENDING_FUNCTIONS",
    "CellMoments",
    "Interval",
    "PPIEstimate",
    "PairedGrid",
    "StopProbabilities",
    "VarianceMethod",
    "choose_method",
    "conditional_power",
    "confidence_sequence_bounds",
    "effective_wilson",
    "efficacy_bounds",
    "expected_power",
    "fisher_exact_p",
    "futility_bounds",
    "grid_difference_se",
    "grid_mean",
    "minimum_detectable_effect",
    "mover_difference",
    "paired_bootstrap",
    "paired_df",
    "paired_difference",
    "paired_grid",
    "pass_hat_k",
    "power_of",
    "ppi_difference",
    "ppi_mean",
    "ppi_pseudo_values",
    "spent_alpha",
    "stopping_probabilities",
    "t_interval",
    "t_quantile",
    "wilson_interval",
]

# What evalkit's other packages take from here and users need not: not public, not in the API
# snapshot (``x as x`` marks each as re-exported for the type checker).

_SIBLING_API = (
    "ClusteredSample",
    "cluster_quantile_difference",
    "expanded_percentile_interval",
)

publish(globals())
