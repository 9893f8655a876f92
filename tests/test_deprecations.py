"""Consistent keywords (issue 21): ``store`` is always a place, ``rubric_version_id`` where a
rubric id is meant, ``client=`` keyword-only after the positional subject. The old spellings
work for one release, each with a ``DeprecationWarning`` saying what to write instead; the
new spellings never warn."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalkit.api import AsyncClient, Client, InvalidRequestError
from evalkit.emulator import EmulatorServer
from evalkit.grading import Grades, grade_run
from evalkit.grid import load_personas
from evalkit.refine import arefine_and_wait, arefine_loop, refine_and_wait, refine_loop
from evalkit.runner import arun_grid, run_grid
from evalkit.tuning import compare_variants

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


def test_run_grid_positional_client_and_place_warn_and_still_run(
    client: Client, assistant_id: str, tmp_path: Path
) -> None:
    grid = _grid()
    with pytest.warns(DeprecationWarning, match=r"run_grid\(\): pass client=, target=, store="):
        old = run_grid(grid, assistant_id, client, "draft", tmp_path, progress=False)
    assert old.path.parent == tmp_path
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        new = run_grid(
            grid, assistant_id, client=client, store=tmp_path, run_id=old.run_id, progress=False
        )
    assert new.run_id == old.run_id  # the same run, resumed: nothing ran again
    assert new.counts == old.counts
    with pytest.raises(TypeError, match="multiple values for argument 'client'"):
        run_grid(grid, assistant_id, client, client=client)


def test_arun_grid_positional_client_warns(
    emu: EmulatorServer, assistant_id: str, tmp_path: Path
) -> None:
    async def main() -> Any:
        async with AsyncClient(emu.base_url, emu.api_key) as aclient:
            with pytest.warns(DeprecationWarning, match=r"arun_grid\(\): pass client="):
                return await arun_grid(_grid(), assistant_id, aclient, store=tmp_path)

    run = asyncio.run(main())
    assert run.counts["done"] == len(_grid())


def test_grade_run_store_bool_is_now_save(
    client: Client, assistant_id: str, tmp_path: Path, no_deprecations: None
) -> None:
    run = run_grid(_grid(), assistant_id, client=client, store=tmp_path, progress=False)
    with pytest.warns(DeprecationWarning, match=r"grade_run\(\): store=False is now save=False"):
        unsaved = grade_run(run, CARD, judge=False, store=False)
    assert unsaved.path is None
    assert run.grades("dep/v1").empty
    with pytest.raises(TypeError, match="a place"):
        grade_run(run, CARD, judge=False, store="runs")  # type: ignore[arg-type]
    saved = grade_run(run, CARD, judge=False, save=True)
    assert saved.path is not None
    # run.grades: rubric_version_id=, with scorecard= its old name
    by_id = run.grades(rubric_version_id="dep/v1")
    pd.testing.assert_frame_equal(by_id, run.grades("dep/v1"))
    with pytest.warns(DeprecationWarning, match=r"scorecard= is now rubric_version_id="):
        old = run.grades(scorecard="dep/v1")
    pd.testing.assert_frame_equal(old, by_id)
    with pytest.raises(TypeError, match="rubric_version_id= only"):
        run.grades("dep/v1", scorecard="dep/v1")


def test_refine_client_first_warns_and_maps_the_arguments(tmp_path: Path) -> None:
    """The old order (client, assistant_id, owner_feedback) still means the same: the
    feedback is checked as feedback (too long: refused before anything is sent)."""
    too_long = "x" * 2001
    with Client("http://127.0.0.1:9/v1", "sk_api_" + "k" * 32) as client:
        with (
            pytest.warns(DeprecationWarning, match=r"refine_and_wait\(\): pass the client as"),
            pytest.raises(InvalidRequestError) as old,
        ):
            refine_and_wait(client, "a1", too_long, store=tmp_path)  # type: ignore[arg-type]
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            with pytest.raises(InvalidRequestError) as new:
                refine_and_wait("a1", too_long, client=client, store=tmp_path)
        assert old.value.fields == new.value.fields == ["ownerFeedback"]
        with pytest.raises(TypeError, match="client twice"):
            refine_and_wait(client, "a1", "x", client=client)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"takes 2 positional arguments"):
            refine_and_wait("a1", "x", "y")
        with (
            pytest.warns(DeprecationWarning, match=r"arefine_and_wait\(\)"),
            pytest.raises(InvalidRequestError),
        ):
            asyncio.run(arefine_and_wait(None, "a1", too_long, store=tmp_path))  # type: ignore[arg-type]


def test_refine_loop_client_first_warns(tmp_path: Path) -> None:
    grid = _grid()
    with (
        pytest.warns(DeprecationWarning, match=r"refine_loop\(\): pass the client as"),
        pytest.raises(InvalidRequestError),
    ):
        refine_loop(None, "a1", grid, CARD, "x" * 2001)  # type: ignore[arg-type]
    with (
        pytest.warns(DeprecationWarning, match=r"arefine_loop\(\)"),
        pytest.raises(InvalidRequestError),
    ):
        asyncio.run(arefine_loop(None, "a1", grid, CARD, "x" * 2001))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"takes 4 positional arguments"):
        refine_loop("a1", grid, CARD, "x", "y")


def _old_spellings(source: str) -> list[str]:
    """Calls in ``source`` that use an old spelling (what would warn at run time)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        keywords = {k.arg for k in node.keywords}
        if (
            (name in ("run_grid", "arun_grid") and len(node.args) > 2)
            or (name in ("grade_run", "agrade_run") and "store" in keywords)
            or (name == "grades" and "scorecard" in keywords)
        ):
            found.append(ast.unparse(node))
        elif name in ("refine_and_wait", "arefine_and_wait", "refine_loop", "arefine_loop"):
            first = node.args[0] if node.args else None
            if (isinstance(first, ast.Constant) and first.value is None) or (
                isinstance(first, ast.Name) and "client" in first.id
            ):
                found.append(ast.unparse(node))
    return found


def test_evalkit_itself_uses_no_old_spelling() -> None:
    root = Path(__file__).resolve().parents[1]
    sources = [*(root / "evalkit").rglob("*.py"), *(root / "benchmarks").rglob("*.py")]
    old = {
        str(path.relative_to(root)): calls
        for path in sources
        for calls in [_old_spellings(path.read_text(encoding="utf-8"))]
        if calls
    }
    assert not old, f"deprecated spellings inside the package: {old}"
    assert _old_spellings("run_grid(grid, aid, client)")
    assert _old_spellings("refine_loop(client, aid, grid, card, text)")
    assert _old_spellings("grade_run(run, card, store=False)")


def test_judge_agreement_rubric_is_now_rubric_version_id(tmp_path: Path) -> None:
    from evalkit.grading import judge_agreement
    from evalkit.store import Label

    from .grading.test_labels import _graded

    run = _graded(tmp_path, {"c1"})
    run.add_labels([Label("c1", "confirm", "fail"), Label("c2", "confirm", "pass")])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        new = judge_agreement(run, rubric_version_id="demo/v1", seed=1)
    with pytest.warns(DeprecationWarning, match=r"rubric= is now rubric_version_id="):
        old = judge_agreement(run, rubric="demo/v1", seed=1)
    pd.testing.assert_frame_equal(old, new)
    with pytest.raises(TypeError, match="rubric_version_id= only"):
        judge_agreement(run, rubric="demo/v1", rubric_version_id="demo/v1")


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
        grades_frame(30, 3, "c"), {"better": grades_frame(30, 50, "b")}, min_effect=3.0
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
