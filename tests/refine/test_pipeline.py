"""Run -> grade -> compare written once (``evalkit.flows``): the functions, and the flows that
use them (``draft_vs_prod``, the refine loop) calling nothing else to run or grade."""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit import Client
from evalkit.compare import CompareOptions, compare_grades
from evalkit.flows import (
    DraftVsProdOptions,
    PipelineOptions,
    RunSpec,
    compare_graded,
    draft_vs_prod,
    run_and_grade,
)

from ..result_face import assert_result_face
from .conftest import SCORECARD, Demo, demo_grid

ROOT = Path(evalkit.__file__).parent


def test_run_grade_compare_and_draft_vs_prod_agree(demo: Demo, client: Client) -> None:
    grid = demo_grid(repeats=2)
    opts = PipelineOptions(min_effect=5.0)
    sides = [
        run_and_grade(
            grid,
            demo.assistant_id,
            SCORECARD,
            RunSpec(target, target),
            client=client,
            judge=False,
            store=demo.store,
            options=opts,
        )
        for target in ("prod", "draft")
    ]
    assert len(sides[0].grades) == len(sides[0].run.conversations) - sum(
        sides[0].grades.left_out.values()
    )
    comparison = compare_graded(sides[0], sides[1], options=opts)
    assert comparison.verdict.value == "regressed"  # the demo's draft lost its Nastaliq line
    # draft_vs_prod resumes the same run ids: the same runs, grades and comparison
    result = draft_vs_prod(
        grid, demo.assistant_id, SCORECARD, client=client, judge=False, store=demo.store
    )
    assert result.candidate.run_id == "draft"
    pd.testing.assert_frame_equal(result.candidate_grades.frame, sides[1].grades.frame)
    pd.testing.assert_frame_equal(result.comparison.summary, comparison.summary)
    assert_result_face(result)
    assert isinstance(result, evalkit.DraftVsProd)
    assert (result.verdict, result.difference, result.n) == (
        comparison.verdict,
        comparison.difference,
        comparison.n,
    )
    assert list(result.summary.columns[:2]) == ["baseline_run_id", "candidate_run_id"]
    assert "evalkit-verdict" in result._repr_html_()


def test_draft_vs_prod_runs_its_sides_at_the_same_time(demo: Demo, client: Client) -> None:
    """A fixed design runs prod and the draft together, so their latency is compared as
    interleaved (no 'recorded at different times' warning)."""
    opts = DraftVsProdOptions(baseline_run_id="prod-together", candidate_run_id="draft-together")
    result = draft_vs_prod(
        demo_grid(repeats=1),
        demo.assistant_id,
        SCORECARD,
        client=client,
        judge=False,
        store=demo.store,
        options=opts,
    )
    spans = [
        (run.conversations["started_at"].min(), run.conversations["finished_at"].max())
        for run in (result.baseline, result.candidate)
    ]
    # the two recording spans overlap
    assert spans[1][0] < spans[0][1], spans
    assert spans[0][0] < spans[1][1], spans
    assert result.latency is not None
    assert result.latency.interleaved is True
    assert not any("different times" in w for w in result.latency.warnings)


def test_compare_graded_on_some_cells_and_recorded_looks(demo: Demo, client: Client) -> None:
    grid = demo_grid(repeats=2)
    base, cand = (
        run_and_grade(
            grid,
            demo.assistant_id,
            SCORECARD,
            RunSpec(target, f"{target}-cells"),
            client=client,
            judge=False,
            store=demo.store,
        )
        for target in ("prod", "draft")
    )
    cells = sorted(set(base.grades.frame["cell_id"]))[:3]
    some = compare_graded(base, cand, cells=cells)
    frames = [g.grades.frame[g.grades.frame["cell_id"].isin(cells)] for g in (base, cand)]
    expected = compare_grades(*frames)
    columns = ["difference", "difference_low", "difference_high", "cells_paired"]
    pd.testing.assert_frame_equal(some.summary[columns], expected.summary[columns])
    assert some.summary["cells_paired"].iloc[0] == 3
    looks = demo.store / ".comparisons"
    assert not looks.exists()  # a cell subset is not a look at the pair
    compare_graded(base, cand)
    assert not looks.exists()  # no CompareOptions given: nothing recorded
    compare_graded(base, cand, options=PipelineOptions(compare=CompareOptions()))
    assert len(list(looks.glob("*.json"))) == 1  # given: record_looks is honoured
    off = PipelineOptions(compare=CompareOptions(record_looks=False))
    compare_graded(base, cand, options=off)
    assert len(list(looks.glob("*.json"))) == 1


def test_pipeline_options_are_checked() -> None:
    with pytest.raises(ValueError, match="judge_samples"):
        PipelineOptions(judge_samples=0)
    with pytest.raises(ValueError, match="confidence"):
        PipelineOptions(confidence=1.5)
    assert DraftVsProdOptions(min_effect=3, judge_samples=2).pipeline() == PipelineOptions(
        min_effect=3, judge_samples=2
    )


def _calls(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
    }


@pytest.mark.parametrize(
    "module", ["flows/_draft_vs_prod.py", "refine/_loop.py", "flows/_pipeline.py"]
)
def test_only_the_pipeline_runs_and_grades(module: str) -> None:
    calls = _calls(ROOT / module)
    low_level = {"arun_grid", "run_grid", "agrade_run", "grade_run", "compare_grades"}
    if module == "flows/_pipeline.py":
        assert {"arun_grid", "agrade_run", "compare_grades"} <= calls
    else:
        assert not calls & low_level, f"{module} runs, grades or compares by itself"
        assert {"arun_and_grade", "compare_graded"} <= calls


def test_draft_vs_prod_options_refuse_a_sequential_that_is_not_a_plan() -> None:
    with pytest.raises(TypeError, match=r"DraftVsProdOptions\.sequential must be a SequentialPlan"):
        DraftVsProdOptions(sequential=6)  # type: ignore[arg-type]
