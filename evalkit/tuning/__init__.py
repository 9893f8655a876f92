"""Prompt tuning across many variants, with an honest winner.

    result = compare_variants(control_grades, {"warm": g1, "terse": g2},
                              options=VariantsOptions(holdout=0.3))
    result.winner          # a confirmed improvement, or None
    result.difference      # its gain, and result.interval (result.gain.method: how measured)
    result.leaderboard     # one row per arm: score, adjusted difference, verdict, dropped_at
    print(result)          # the winner (or why none), then the leaderboard

The winner is chosen on a seeded share of the cells and confirmed on the held-out rest by a
closed combination test, so picking the best of many equal variants is not called a win
(see :mod:`evalkit.tuning._selection`); its gain is measured on fresh repeats (``tune``,
``optimize``) or adjusted for the selection (see :mod:`evalkit.tuning._gain`).
"""

from __future__ import annotations

from .._util import publish
from ._compare import compare_variants
from ._gain import ReportedGain
from ._optimize import ProposerArg, aoptimize, optimize
from ._optimize_options import OptimizeOptions
from ._optimize_result import OptimizeResult
from ._options import TuneOptions, VariantsOptions
from ._outputs import write_tune_outputs
from ._promote import PromoteError, Promotion
from ._proposer import Proposal, ProposalBatch, Proposer, ProposerError, ProposerOptions
from ._proposer_prompt import PROPOSER_PROMPT_VERSION, FailingRule, ProposalRequest
from ._result import TuneResult
from ._tune import TuneError, atune, tune
from ._variants import VariantsFileError, VariantSpec, load_variants

__all__ = [
    "PROPOSER_PROMPT_VERSION",
    "FailingRule",
    "OptimizeOptions",
    "OptimizeResult",
    "PromoteError",
    "Promotion",
    "Proposal",
    "ProposalBatch",
    "ProposalRequest",
    "Proposer",
    "ProposerArg",
    "ProposerError",
    "ProposerOptions",
    "ReportedGain",
    "TuneError",
    "TuneOptions",
    "TuneResult",
    "VariantSpec",
    "VariantsFileError",
    "VariantsOptions",
    "aoptimize",
    "atune",
    "compare_variants",
    "load_variants",
    "optimize",
    "tune",
    "write_tune_outputs",
]

# What evalkit's other packages take from here and users need not: not public, not in the API
# snapshot (``x as x`` marks each as re-exported for the type checker).
from ._optimize import optimize_run_prefix as optimize_run_prefix
from ._tune import tune_run_prefix as tune_run_prefix

_SIBLING_API = (
    "optimize_run_prefix",
    "tune_run_prefix",
)

publish(globals())
