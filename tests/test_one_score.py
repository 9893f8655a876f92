"""One score formula (issue 21): a conversation's score is computed in one place.

``evalkit.grading.score_from_points`` is the formula (awarded over applicable points x 100);
every other module calls it. This test reads every module in ``evalkit/`` and fails when a
division of awarded (or "got") points by applicable (or "possible") points appears anywhere
else, which is how the second and third copies of the formula looked before.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

import evalkit
from evalkit.grading import score_from_points

ROOT = Path(evalkit.__file__).parent
HOME = ROOT / "grading" / "_score.py"
_NUMERATOR = re.compile(r"award|\bgot\b", re.IGNORECASE)
_DENOMINATOR = re.compile(r"applicable|possible", re.IGNORECASE)


def score_formulas(source: str) -> list[str]:
    """The divisions in ``source`` that compute a score from points."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            top, bottom = ast.unparse(node.left), ast.unparse(node.right)
            if _NUMERATOR.search(top) and _DENOMINATOR.search(bottom):
                found.append(ast.unparse(node))
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Div):
            top, bottom = ast.unparse(node.target), ast.unparse(node.value)
            if _NUMERATOR.search(top) and _DENOMINATOR.search(bottom):
                found.append(ast.unparse(node))
    return found


MODULES = sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)


def test_the_formula_has_one_home() -> None:
    assert score_formulas(HOME.read_text(encoding="utf-8")), "the checker no longer sees it"
    elsewhere = {
        str(path.relative_to(ROOT)): formulas
        for path in MODULES
        if path != HOME
        for formulas in [score_formulas(path.read_text(encoding="utf-8"))]
        if formulas
    }
    assert not elsewhere, f"a second score formula: {elsewhere}; call score_from_points"


@pytest.mark.parametrize(
    "snippet",
    [
        'out["score"] = out["awarded"] / out["applicable_points"]',
        "scores = np.where(possible > 0, 100.0 * got / possible, np.nan)",
        "x = sums['got'] / sums['possible'] * 100",
        "awarded /= applicable",
    ],
)
def test_the_checker_finds_the_copies_that_existed(snippet: str) -> None:
    assert score_formulas(snippet)


def test_pass_rates_are_not_scores() -> None:
    assert not score_formulas("rate = passed / applicable")


def test_the_formula() -> None:
    got = score_from_points([20, 0, 5], [40, 0, 5])
    assert got[0] == 50.0
    assert np.isnan(got[1])
    assert got[2] == 100.0
