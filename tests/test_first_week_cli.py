"""Issue 33, item 11: `labels agreement` without labels and `view` on a missing folder say
so in words instead of printing NaN or serving an empty viewer."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from evalkit.cli import app
from tests.grading.test_labels import _graded


def test_agreement_without_labels_says_there_are_none_yet(tmp_path: Path) -> None:
    _graded(tmp_path, {"c2"})
    result = CliRunner().invoke(app, ["labels", "agreement", "r1", "--store", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "NaN" not in result.output
    assert "no labels yet for run r1" in result.output


def test_view_of_a_missing_folder_refuses_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir"
    result = CliRunner().invoke(app, ["view", "--store", str(missing), "--port", "0"])
    assert result.exit_code == 2
    assert "no-such-dir" in result.output
    assert "no folder" in result.output
    assert not missing.exists()
