"""One calling convention (issue 32): flows take ``(grid, assistant_id, scorecard, *, client,
judge, store, options)``, knobs live in options objects. The old spellings of this release
work for one release, each with a ``DeprecationWarning`` saying what to write instead; the
new spellings never warn. The shims announced in the previous release (issue 21: positional
``run_grid`` arguments, client-first refine calls, ``grade_run(store=bool)``,
``Run.grades(scorecard=)``, ``judge_agreement(rubric=)``) are gone: Python's own errors."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalkit.api import AsyncClient, Client, InvalidRequestError
from evalkit.compare import CompareOptions, compare_grades
from evalkit.emulator import EmulatorServer
from evalkit.flows import compare_runs
from evalkit.grading import GradeOptions, Grades, grade_run
from evalkit.grid import load_personas
from evalkit.refine import RefineLoopOptions, arefine_loop, refine_and_wait, refine_loop
from evalkit.runner import RunOptions, arun_grid, run_grid
from evalkit.tuning import VariantsOptions, compare_variants

from .result_face import empty_why, grades_frame, sequential_run
from .runner_fixtures import emulator_fixture
from .runner_support import PERSONAS_DIR, build_assistant, make_grid

emu = emulator_fixture(time_scale=0.005, seed=21)
CARD = {
    "rubricVersionId": "dep/v1",
    "rules": [
        {"ruleId": "first", "title": "Agent first", "points": 60, "check": {"type": "agent_speaks_first"}},
        {"ruleId": "short", "title": "Short", "points": 40, "check": {"type": "turns", "max": 40}},
    ],
}  # fmt: skip
QUIET = RunOptions(progress=False)


@pytest.fixture(scope="module")
def assistant_id(emu: EmulatorServer) -> str:
    return build_assistant(emu)


@pytest.fixture
def client(emu: EmulatorServer) -> Iterator[Client]:
    with Client(emu.base_url, emu.api_key) as c:
        yield c


def _grid() -> Any:
    return make_grid(load_personas(PERSONAS_DIR), n=1, repeats=1)


@pytest.fixture
def no_deprecations() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        yield


def test_run_grid_knobs_go_in_options_and_positional_places_are_gone(
    client: Client, assistant_id: str, tmp_path: Path
) -> None:
    grid = _grid()
    with pytest.warns(DeprecationWarning, match=r"run_grid\(\): pass progress= in options="):
        old = run_grid(grid, assistant_id, client=client, store=tmp_path, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        new = run_grid(
            grid, assistant_id, client=client, store=tmp_path, run_id=old.run_id, options=QUIET
        )
    assert new.run_id == old.run_id  # the same run, resumed: nothing ran again
    assert new.counts == old.counts
    with pytest.raises(TypeError, match="positional argument"):
        run_grid(grid, assistant_id, client, "draft", tmp_path)  # type: ignore[misc]


def test_arun_grid_positional_client_is_a_type_error(
    emu: EmulatorServer, assistant_id: str, tmp_path: Path
) -> None:
    async def main() -> Any:
        async with AsyncClient(emu.base_url, emu.api_key) as aclient:
            with pytest.raises(TypeError, match="positional argument"):
                await arun_grid(_grid(), assistant_id, aclient, store=tmp_path)  # type: ignore[misc]
            with pytest.warns(DeprecationWarning, match=r"arun_grid\(\): pass concurrency="):
                return await arun_grid(
                    _grid(), assistant_id, client=aclient, store=tmp_path, concurrency=2
                )

    run = asyncio.run(main())
    assert run.counts["done"] == len(_grid())


def test_grade_run_knobs_go_in_options_and_store_bool_is_gone(
    client: Client, assistant_id: str, tmp_path: Path
) -> None:
    run = run_grid(_grid(), assistant_id, client=client, store=tmp_path, options=QUIET)
    with pytest.raises(TypeError, match="unexpected keyword argument 'store'"):
        grade_run(run, CARD, judge=False, store=False)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'scorecard'"):
        run.grades(scorecard="dep/v1")  # type: ignore[call-arg]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        new = grade_run(run, CARD, judge=False, options=GradeOptions(judge_samples=2))
    with pytest.warns(DeprecationWarning, match=r"grade_run\(\): pass judge_samples= in options"):
        old = grade_run(run, CARD, judge=False, judge_samples=2)
    pd.testing.assert_frame_equal(old.frame, new.frame)


def test_compare_knobs_go_in_options_and_seed_is_said_to_do_nothing(
    client: Client, assistant_id: str, tmp_path: Path
) -> None:
    runs = [
        run_grid(_grid(), assistant_id, client=client, store=tmp_path, target=t, options=QUIET)
        for t in ("prod", "draft")
    ]
    grades = [grade_run(r, CARD, judge=False) for r in runs]
    options = CompareOptions(confidence=0.9, min_effect=3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        new = compare_grades(grades[0], grades[1], options=options)
    with pytest.warns(DeprecationWarning, match=r"compare_grades\(\): pass confidence=, min_eff"):
        old = compare_grades(grades[0], grades[1], confidence=0.9, min_effect=3.0)
    assert old.to_dict() == new.to_dict()
    with pytest.warns(DeprecationWarning, match=r"drop seed=: it does nothing"):
        seeded = compare_grades(grades[0], grades[1], options=options, seed=7)
    assert seeded.to_dict() == new.to_dict()  # seed never changed anything
    assert "seed" not in new.summary.columns
    with pytest.raises(TypeError, match="unexpected keyword argument 'alpha'"):
        compare_grades(grades[0], grades[1], alpha=0.1)
    quiet = CompareOptions(confidence=0.9, min_effect=3.0, record_looks=False)
    with pytest.warns(DeprecationWarning, match=r"compare_runs\(\): pass min_effect= in"):
        by_runs = compare_runs(*runs, CARD, False, min_effect=3.0, options=replace_ci(quiet))
    assert by_runs.summary.iloc[0]["difference"] == new.summary.iloc[0]["difference"]
    for bad in ({"confidence": 0.4}, {"confidence": 1.0}, {"min_effect": -1.0}):
        with pytest.raises(ValueError, match=r"CompareOptions\.(confidence|min_effect)"):
            CompareOptions(**bad)  # type: ignore[arg-type]


def replace_ci(options: CompareOptions) -> CompareOptions:
    from dataclasses import replace

    return replace(options, min_effect=5.0)


def test_refine_old_orders(tmp_path: Path) -> None:
    """refine_loop's old order warns and maps its arguments (too-long feedback is refused as
    feedback, before anything is sent); the client-first order of the release before is gone."""
    grid = _grid()
    too_long = "x" * 2001
    with (
        pytest.warns(DeprecationWarning, match=r"refine_loop\(assistant_id, grid, scorecard"),
        pytest.raises(InvalidRequestError),
    ):
        refine_loop("a1", grid, CARD, too_long)  # type: ignore[arg-type]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with pytest.raises(InvalidRequestError):
            refine_loop(grid, "a1", CARD, feedback=too_long, store=tmp_path)
        with pytest.raises(InvalidRequestError):
            asyncio.run(arefine_loop(grid, "a1", CARD, feedback=too_long, store=tmp_path))
    with pytest.raises(TypeError, match="takes 3 positional arguments"):
        refine_loop(None, "a1", grid, CARD, too_long)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="missing the keyword argument 'feedback'"):
        refine_loop(grid, "a1", CARD)
    with Client("http://127.0.0.1:9/v1", "sk_api_" + "k" * 32) as client:
        with pytest.raises(TypeError, match="positional argument"):
            refine_and_wait(client, "a1", too_long, store=tmp_path)  # type: ignore[arg-type, misc]
        with pytest.raises(InvalidRequestError):
            refine_and_wait("a1", too_long, client=client, store=tmp_path)
    with (
        pytest.warns(DeprecationWarning, match=r"RefineLoopOptions\(store=\.\.\.\) is now"),
        pytest.raises(InvalidRequestError),
    ):
        refine_loop(grid, "a1", CARD, feedback=too_long, options=RefineLoopOptions(store=tmp_path))


def _old_spellings(source: str) -> list[str]:
    """Calls in ``source`` that use a spelling deprecated in this release."""
    import ast

    knobs = {"concurrency", "budget", "max_attempts", "progress", "rerun", "repeats"}
    knobs |= {"stop_after_unreachable", "allow_missing_variables"}
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        keywords = {k.arg for k in node.keywords}
        if (
            (name in ("run_grid", "arun_grid") and keywords & knobs)
            or (name in ("grade_run", "agrade_run") and "judge_samples" in keywords)
            or (
                name in ("compare_grades", "compare_runs", "acompare_runs")
                and keywords & {"confidence", "min_effect", "seed"}
            )
            or (name == "RefineLoopOptions" and keywords & {"judge", "store"})
        ):
            found.append(ast.unparse(node))
        elif name in ("tune", "atune", "refine_loop", "arefine_loop") and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) or (
                isinstance(first, ast.Name) and "assistant" in first.id
            ):
                found.append(ast.unparse(node))
    return found


def test_evalkit_itself_uses_no_old_spelling() -> None:
    root = Path(__file__).resolve().parents[1]
    sources = [
        *(root / "evalkit").rglob("*.py"),
        *(root / "benchmarks").rglob("*.py"),
        root / "notebooks" / "make_notebooks.py",
    ]
    old = {
        str(path.relative_to(root)): calls
        for path in sources
        for calls in [_old_spellings(path.read_text(encoding="utf-8"))]
        if calls
    }
    assert not old, f"deprecated spellings inside the package: {old}"
    assert _old_spellings("run_grid(grid, aid, client=c, progress=False)")
    assert _old_spellings("tune(assistant_id, variants, grid, card)")
    assert _old_spellings("compare_grades(b, c, min_effect=5)")
    assert not _old_spellings("tune(grid, assistant_id, card, variants=v)")


# --- result spellings (issue 32): summary is a DataFrame property, headline() the sentence ---


def test_grades_summary_call_warns_and_answers() -> None:
    grades = Grades.of(grades_frame(5, 3, "g"))
    with pytest.warns(DeprecationWarning, match=r"Grades.summary: summary is a property now"):
        old = grades.summary()
    pd.testing.assert_frame_equal(old, grades.by_rule())
    with pytest.warns(DeprecationWarning, match="summary is a property now"):
        narrow = grades.summary(0.5)
    pd.testing.assert_frame_equal(narrow, grades.by_rule(0.5))


def test_tune_result_summary_as_mapping_warns_and_answers() -> None:
    result = compare_variants(
        grades_frame(30, 3, "c"),
        {"better": grades_frame(30, 50, "b")},
        options=VariantsOptions(min_effect=3.0),
    )
    with pytest.warns(DeprecationWarning, match=r"TuneResult.summary: summary is a DataFrame"):
        assert result.summary["winner"] == "better"
    with pytest.warns(DeprecationWarning, match="read 'arms' from"):
        assert result.summary.get("arms") == 1
    with pytest.warns(DeprecationWarning, match="read 'no-such-key' from"):
        assert result.summary.get("no-such-key", "fallback") == "fallback"
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        assert list(result.summary["variant"]) == ["control", "better"]  # a column: no warning


def test_sequential_sentence_and_why_sentences_warn() -> None:
    run = sequential_run()
    with pytest.warns(DeprecationWarning, match=r"SequentialRun.sentence\(\): write .headline"):
        assert run.sentence() == run.headline()
    why = empty_why()
    with pytest.warns(DeprecationWarning, match=r"WhyItFailed.sentences\(\): write .findings"):
        assert why.sentences() == list(why.findings)


def test_report_css_is_the_one_stylesheet_with_a_warning() -> None:
    import evalkit.report
    from evalkit._util._html import stylesheet

    with pytest.warns(DeprecationWarning, match=r"REPORT_CSS: the one stylesheet"):
        css = evalkit.report.REPORT_CSS
    assert css == stylesheet()
