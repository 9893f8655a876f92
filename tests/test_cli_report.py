"""`evalkit report` as a new user types it: paths from the caller's folder, the whole failure
message in the log, and outputs never beside the notebook."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli import app
from evalkit.data import bundled_path
from evalkit.demo import offline_runs

runner = CliRunner()
NOTEBOOK = bundled_path("notebooks") / "compare_draft_prod.ipynb"


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's runs (3 repeats: the draft regresses), graded."""
    return offline_runs(tmp_path_factory.mktemp("demo"), repeats=3, progress=False)


@pytest.fixture
def work(demo_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's folder holding ``runs/``, as the working directory."""
    shutil.copytree(demo_store, tmp_path / "runs")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.timeout(600)
def test_a_relative_store_means_the_callers_folder(work: Path) -> None:
    result = runner.invoke(app, ["report", str(NOTEBOOK), "-p", "store", "runs"])
    assert result.exit_code == 0, result.output
    assert (work / "report.html").is_file()
    summary = json.loads((work / "evalkit-output" / "compare" / "summary.json").read_text())
    assert summary["verdict"] == "regressed"
    assert not (NOTEBOOK.parent / "evalkit-output").exists()


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.timeout(600)
def test_a_regression_failure_reaches_the_log_whole(work: Path) -> None:
    args = ["report", str(NOTEBOOK), "-p", "store", "runs", "-p", "fail_on_regression", "true"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    book = json.loads((work / "report.ipynb").read_text(encoding="utf-8"))
    (error,) = [
        out
        for cell in book["cells"]
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    assert error["ename"] == "Regression"
    assert len(error["evalue"]) > 500  # longer than the old cut
    assert f"Regression: {error['evalue']}" in result.stderr
    assert "urdu-script" in result.stderr  # the biggest regression, at the end of the message


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.timeout(600)
def test_a_missing_run_says_where_the_notebook_looked(work: Path) -> None:
    result = runner.invoke(app, ["report", str(NOTEBOOK), "-p", "store", "elsewhere"])
    assert result.exit_code == 1
    assert "no run 'prod'" in result.stderr
    assert f"the notebook ran in {work}" in result.stderr
