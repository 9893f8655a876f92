"""Fixtures of the report tests: two graded synthetic runs and a synthetic comparison."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.compare import Comparison, compare_grades
from evalkit.report import ArabicFont, _fonts
from evalkit.store import Run
from tests.simulate import SyntheticTruth, synthetic_grades

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


@pytest.fixture
def urdu_font() -> ArabicFont:
    """The installed font that draws Urdu; its absence fails the test, never skips it silently.

    CI installs Debian's fonts-noto-core (Noto Nastaliq Urdu); without it the report's Urdu
    cannot be checked, which is a broken test machine, not a pass.
    """
    font = _fonts.find_arabic_font()
    if font is None:
        pytest.fail("no installed font draws Urdu: install fonts-noto-core (.ci/run does)")
    return font
