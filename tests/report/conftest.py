"""Fixtures of the report tests: two graded synthetic runs and a synthetic comparison."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.compare import Comparison, SyntheticTruth, compare_grades, synthetic_grades
from evalkit.store import Run

from .fixtures import RunSpec, write_graded_run


@pytest.fixture
def prod_run(tmp_path: Path) -> Run:
    return write_graded_run(tmp_path / "runs", RunSpec("prod", "prod", p_pass=0.85, seed=1))


@pytest.fixture
def draft_run(tmp_path: Path) -> Run:
    return write_graded_run(tmp_path / "runs", RunSpec("draft", "draft", p_pass=0.6, seed=2))


@pytest.fixture(scope="module")
def regressed() -> Comparison:
    truth = SyntheticTruth.demo(seed=3)
    prod = synthetic_grades(truth, repeats=3, seed=10, run_id="prod")
    draft = synthetic_grades(truth.shifted(-15), repeats=3, seed=11, run_id="draft")
    return compare_grades(prod, draft)
