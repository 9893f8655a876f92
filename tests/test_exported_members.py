"""The curated top level, pinned (as httpx's ``tests/test_exported_members.py`` pins its own).

``evalkit.__all__`` is what a user types in a notebook; everything else stays in its package.
Adding a top-level name is one line in ``evalkit._HOMES`` (with its TYPE_CHECKING import) and
one line here. A name that leaks (an internal helper) fails the first test.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import subprocess
import sys
import warnings

import pytest

import evalkit

EXPECTED = [
    "AgreementOptions",
    "ApiError",
    "AsyncClient",
    "Audio",
    "AuthenticationError",
    "BadRequestError",
    "Budget",
    "Client",
    "ClusterOptions",
    "CompareOptions",
    "Comparison",
    "ConfigurationError",
    "Done",
    "DraftVsProd",
    "DraftVsProdOptions",
    "EvalkitError",
    "GradeOptions",
    "Grades",
    "Grid",
    "HistoryOptions",
    "InvalidRequestError",
    "Judge",
    "JudgeDrift",
    "JudgeDriftOptions",
    "JudgeOptions",
    "LatencyOptions",
    "NightlyRule",
    "NotFoundError",
    "OptimizeOptions",
    "PaymentRequiredError",
    "PermissionDeniedError",
    "Persona",
    "PollPolicy",
    "Pricing",
    "Proposer",
    "RateLimitError",
    "RefineLoopOptions",
    "RefineOptions",
    "RepeatPlanOptions",
    "RetryPolicy",
    "Run",
    "RunOptions",
    "Scorecard",
    "SequentialPlan",
    "ServerError",
    "ServiceUnavailableError",
    "SimulationFailed",
    "SpeakOptions",
    "StoreError",
    "StreamDropped",
    "TuneOptions",
    "TuneResult",
    "Turn",
    "Variant",
    "VariantsOptions",
    "Verdict",
    "compare_grades",
    "compare_judges",
    "compare_latency",
    "compare_runs",
    "compare_sequential",
    "compare_variants",
    "draft_vs_prod",
    "failure_clusters",
    "grade_run",
    "grade_transcripts",
    "history",
    "judge_agreement",
    "label_queue",
    "lint",
    "list_runs",
    "load_personas",
    "load_run",
    "load_runs",
    "nightly_alarms",
    "optimize",
    "plan_repeats",
    "refine_and_wait",
    "refine_loop",
    "run_grid",
    "simulation_flags",
    "speak",
    "suggest_feedback",
    "tune",
    "__version__",
]


def test_the_top_level_is_the_curated_list() -> None:
    assert evalkit.__all__ == EXPECTED
    # 80: what a notebook types, and beside each top-level function its options object
    assert 40 <= len(EXPECTED) - 1 <= 86


def test_every_name_resolves_to_its_public_home() -> None:
    for name in evalkit.__all__:
        value = getattr(evalkit, name)
        if name == "__version__":
            assert isinstance(value, str)
            continue
        home = getattr(value, "__module__", "")
        assert home == "evalkit" or home.startswith("evalkit."), (name, home)  # the root error
        assert "._" not in home, f"{name}.__module__ is private: {home}"
        assert getattr(importlib.import_module(home), name) is value, (name, home)
        assert inspect.isclass(value) or callable(value), name


def test_internal_helpers_are_not_at_the_top_level() -> None:
    for name in ("storage_error", "owner_gone", "merge_patch", "finalize_run", "decide"):
        assert name not in evalkit.__all__
        assert name not in dir(evalkit)
    for name in ("synthetic_grades", "SUGGEST", "GRADES_SCHEMA", "LlmBlock"):
        assert name not in evalkit.__all__


def test_a_name_that_left_the_top_level_is_not_there() -> None:
    """One spelling: a package's name is imported from its package, never from the top."""
    with pytest.raises(AttributeError, match="merge_patch"):
        evalkit.merge_patch  # noqa: B018
    with pytest.raises(AttributeError, match="not_a_name"):
        evalkit.not_a_name  # noqa: B018
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert evalkit.Client is evalkit.api.Client  # curated names never warn


def test_every_top_level_function_has_its_options_object_beside_it() -> None:
    """The one calling convention: a top-level function that takes ``options`` takes an
    object a user reaches at the top level too."""
    for name in evalkit.__all__:
        value = getattr(evalkit, name)
        if not inspect.isfunction(value):
            continue
        options = inspect.signature(value).parameters.get("options")
        if options is None:
            continue
        annotation = str(options.annotation).replace(" | None", "")
        assert annotation in evalkit.__all__, (name, annotation)


def test_poll_policy_is_public() -> None:
    from evalkit.refine import PollPolicy

    assert evalkit.PollPolicy is PollPolicy
    assert PollPolicy.__module__ == "evalkit.refine"
    with pytest.raises(ValueError, match=r"PollPolicy\.timeout must be > 0"):
        PollPolicy(timeout=0)
    params = inspect.signature(evalkit.refine_and_wait).parameters
    assert list(params) == ["assistant_id", "owner_feedback", "client", "store", "options"]
    assert "poll" in {f.name for f in dataclasses.fields(evalkit.RefineOptions)}


def _fresh_python(code: str) -> str:
    """What ``code`` prints in a new interpreter (nothing imported yet)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_evalkit_stays_lazy() -> None:
    """``import evalkit`` loads no package of its own and nothing heavy."""
    loaded = _fresh_python(
        "import sys, evalkit\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pandas', 'pyarrow', 'httpx', 'pydantic', 'numpy') or "
        "(m.startswith('evalkit.') and m != 'evalkit._version')))\n"
    )
    assert loaded == "[]"


def test_no_top_level_name_is_also_a_subpackage() -> None:
    """Python sets ``evalkit.<sub>`` to the subpackage when it is imported, which would hide a
    top-level name spelled the same (a ``tune`` function beside a ``tune`` package)."""
    import pkgutil

    subpackages = {m.name for m in pkgutil.iter_modules(evalkit.__path__)}
    assert not subpackages & set(evalkit.__all__)
    # the package imported first, the top level after: the name is still the function
    shown = _fresh_python(
        "import inspect, evalkit.tuning._options, evalkit\n"
        "print(inspect.isfunction(evalkit.tune))\n"
    )
    assert shown == "True"


def test_a_package_is_reachable_after_a_bare_import() -> None:
    """README types ``evalkit.diagnose.cluster_members`` and ``evalkit.tuning.atune`` after
    ``import evalkit`` alone; a fresh interpreter, so no other test imported them first."""
    code = (
        "import sys, evalkit\n"
        "assert 'evalkit.diagnose' not in sys.modules\n"
        "assert callable(evalkit.diagnose.cluster_members)\n"
        "assert callable(evalkit.tuning.atune) and callable(evalkit.flows.sequential_record)\n"
        "assert evalkit.api.PITFALL_RULES\n"
        "try:\n"
        "    evalkit.cli_not_a_package\n"
        "except AttributeError:\n"
        "    pass\n"
        "else:\n"
        "    raise SystemExit('an unknown name resolved')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
