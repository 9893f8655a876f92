"""evalkit: simulated-conversation evaluation for real-time voice assistants.

The top level is curated: what a user types in a notebook (the clients and their errors, grids
and runs, grading, comparisons, diagnosis, the draft-vs-prod and refine flows). Everything else stays in
its package (:mod:`evalkit.api` for wire models, :mod:`evalkit.store`, :mod:`evalkit.grading`,
:mod:`evalkit.compare`, ...), where each name's ``__module__`` is its public home.

Nothing is imported until first use, so ``import evalkit`` (and the ``evalkit`` command) start
fast. To add a top-level name: one line in :data:`_HOMES` (name -> package), the same name in
the ``TYPE_CHECKING`` imports below, and in ``tests/test_exported_members.py``; then
``python -m tests.api_snapshot`` and a line in CHANGELOG.md (the API snapshot gate).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__

if TYPE_CHECKING:
    from .api import (
        ApiError,
        AsyncClient,
        AuthenticationError,
        BadRequestError,
        Client,
        ConfigurationError,
        Done,
        EvalkitError,
        InvalidRequestError,
        NotFoundError,
        PaymentRequiredError,
        PermissionDeniedError,
        RateLimitError,
        RetryPolicy,
        ServerError,
        ServiceUnavailableError,
        SimulationFailed,
        StreamDropped,
        Turn,
    )
    from .audio import Audio, SpeakOptions, speak
    from .compare import (
        CompareOptions,
        Comparison,
        LatencyOptions,
        NightlyRule,
        RepeatPlanOptions,
        SequentialPlan,
        Verdict,
        compare_grades,
        compare_latency,
        compare_sequential,
        nightly_alarms,
        plan_repeats,
    )
    from .diagnose import ClusterOptions, failure_clusters, lint, simulation_flags
    from .flows import (
        DraftVsProd,
        DraftVsProdOptions,
        HistoryOptions,
        JudgeDrift,
        JudgeDriftOptions,
        compare_judges,
        compare_runs,
        draft_vs_prod,
        history,
    )
    from .grading import (
        AgreementOptions,
        GradeOptions,
        Grades,
        Judge,
        JudgeOptions,
        LabelOptions,
        Scorecard,
        grade_run,
        grade_transcripts,
        judge_agreement,
        label_queue,
    )
    from .grid import Grid, Persona, load_personas
    from .personas import (
        FindOptions,
        GenerateOptions,
        find_failures,
        generate_personas,
    )
    from .refine import (
        PollPolicy,
        RefineLoopOptions,
        RefineOptions,
        refine_and_wait,
        refine_loop,
        suggest_feedback,
    )
    from .runner import Budget, Pricing, RunOptions, run_grid
    from .store import Run, StoreError, list_runs, load_run, load_runs
    from .targets import Variant
    from .tuning import (
        OptimizeOptions,
        Proposer,
        TuneOptions,
        TuneResult,
        VariantsOptions,
        compare_variants,
        optimize,
        tune,
    )

#: Every top-level name and its public home (a package of evalkit), sorted as ruff sorts
#: ``__all__``: constants, classes, functions.
_HOMES: dict[str, str] = {
    "AgreementOptions": "grading",
    "ApiError": "api",
    "AsyncClient": "api",
    "Audio": "audio",
    "AuthenticationError": "api",
    "BadRequestError": "api",
    "Budget": "runner",
    "Client": "api",
    "ClusterOptions": "diagnose",
    "CompareOptions": "compare",
    "Comparison": "compare",
    "ConfigurationError": "api",
    "Done": "api",
    "DraftVsProd": "flows",
    "DraftVsProdOptions": "flows",
    "EvalkitError": "api",
    "FindOptions": "personas",
    "GenerateOptions": "personas",
    "GradeOptions": "grading",
    "Grades": "grading",
    "Grid": "grid",
    "HistoryOptions": "flows",
    "InvalidRequestError": "api",
    "Judge": "grading",
    "JudgeDrift": "flows",
    "JudgeDriftOptions": "flows",
    "JudgeOptions": "grading",
    "LabelOptions": "grading",
    "LatencyOptions": "compare",
    "NightlyRule": "compare",
    "NotFoundError": "api",
    "OptimizeOptions": "tuning",
    "PaymentRequiredError": "api",
    "PermissionDeniedError": "api",
    "Persona": "grid",
    "PollPolicy": "refine",
    "Pricing": "runner",
    "Proposer": "tuning",
    "RateLimitError": "api",
    "RefineLoopOptions": "refine",
    "RefineOptions": "refine",
    "RepeatPlanOptions": "compare",
    "RetryPolicy": "api",
    "Run": "store",
    "RunOptions": "runner",
    "Scorecard": "grading",
    "SequentialPlan": "compare",
    "ServerError": "api",
    "ServiceUnavailableError": "api",
    "SimulationFailed": "api",
    "SpeakOptions": "audio",
    "StoreError": "store",
    "StreamDropped": "api",
    "TuneOptions": "tuning",
    "TuneResult": "tuning",
    "Turn": "api",
    "Variant": "targets",
    "VariantsOptions": "tuning",
    "Verdict": "compare",
    "compare_grades": "compare",
    "compare_judges": "flows",
    "compare_latency": "compare",
    "compare_runs": "flows",
    "compare_sequential": "compare",
    "compare_variants": "tuning",
    "draft_vs_prod": "flows",
    "failure_clusters": "diagnose",
    "find_failures": "personas",
    "generate_personas": "personas",
    "grade_run": "grading",
    "grade_transcripts": "grading",
    "history": "flows",
    "judge_agreement": "grading",
    "label_queue": "grading",
    "lint": "diagnose",
    "list_runs": "store",
    "load_personas": "grid",
    "load_run": "store",
    "load_runs": "store",
    "nightly_alarms": "compare",
    "optimize": "tuning",
    "plan_repeats": "compare",
    "refine_and_wait": "refine",
    "refine_loop": "refine",
    "run_grid": "runner",
    "simulation_flags": "diagnose",
    "speak": "audio",
    "suggest_feedback": "refine",
    "tune": "tuning",
}

__all__ = [*_HOMES, "__version__"]

#: Public packages, reachable as ``evalkit.<package>`` after a bare ``import evalkit`` (imported
#: on first use, as ``evalkit.diagnose.cluster_members`` in README is typed).
_PACKAGES = frozenset(
    {
        *("aio", "api", "audio", "compare", "data", "diagnose", "emulator", "flows", "grading"),
        *("grid", "personas", "refine", "report", "runner", "stats", "store", "targets"),
        *("testing", "tuning", "view"),
    }
)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is not None:
        value = getattr(importlib.import_module(f".{home}", __name__), name)
        globals()[name] = value
        return value
    if name in _PACKAGES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'evalkit' has no attribute {name!r}")


def __dir__() -> list[str]:
    """What a user can type: ``__all__`` and the module's dunders (no helpers it imports)."""
    return sorted({*__all__, *(name for name in globals() if name.startswith("__"))})
