"""Issue 33, item 3: every shipped notebook refuses a parameter papermill injected but the
notebook does not have, naming the closest known one (papermill itself only warns and runs
on, so ``-p fail_on_regresion True`` silently turned the CI gate off)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from evalkit.report import ReportError, notebook_parameters, refuse_unknown_parameters
from evalkit.report._injected import injected_parameters

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
ALL = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))


def test_an_injected_typo_is_refused_naming_the_closest_parameter() -> None:
    history = ["", "# Parameters (papermill: ...)\nfail_on_regression = False\n"]
    history.append("# Parameters\nfail_on_regresion = True\nseed = 3\n")
    with pytest.raises(ReportError) as caught:
        refuse_unknown_parameters(["fail_on_regression", "seed"], history)
    message = str(caught.value)
    assert "'fail_on_regresion' (did you mean 'fail_on_regression'?)" in message
    assert "its parameters are: fail_on_regression, seed" in message


def test_known_parameters_and_cells_that_are_not_injected_pass() -> None:
    refuse_unknown_parameters(["seed"], ["# Parameters\nseed = 3\n", "extra = 1\n"])
    refuse_unknown_parameters(["seed"], [])
    assert injected_parameters(["# Parameters\na = 1\nb, c = 2, 3\n", "# note\nd = 4"]) == ["a"]


@pytest.mark.parametrize("name", ALL)
def test_the_cell_after_the_parameters_refuses_unknown_ones(name: str) -> None:
    book = nbformat.read(NOTEBOOKS / name, as_version=4)
    (at,) = [i for i, c in enumerate(book.cells) if "parameters" in c.metadata.get("tags", [])]
    guard = book.cells[at + 1]
    assert guard.cell_type == "code"
    assert "refuse_unknown_parameters([" in guard.source
    known = set(notebook_parameters(NOTEBOOKS / name))
    listed = {line.strip().strip('",') for line in guard.source.splitlines()[4:-1]}
    assert listed == known


def papermill(name: str, folder: Path, *params: str) -> subprocess.CompletedProcess[str]:
    source = folder / name
    shutil.copy(NOTEBOOKS / name, source)
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALKIT_")}
    out = folder / f"out-{name}"
    command = [sys.executable, "-m", "papermill", str(source), str(out), "-k", "python3"]
    return subprocess.run(
        [*command, "--cwd", str(folder), *params],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.notebook
def test_papermill_fails_on_a_misspelt_gate(tmp_path: Path) -> None:
    done = papermill("compare_draft_prod.ipynb", tmp_path, "-p", "fail_on_regresion", "True")
    assert done.returncode != 0
    assert "did you mean 'fail_on_regression'?" in done.stderr + done.stdout
    assert not (tmp_path / "evalkit-output").exists()  # refused before anything ran


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.parametrize("name", [n for n in ALL if n != "compare_draft_prod.ipynb"])
def test_papermill_fails_on_any_unknown_parameter(name: str, tmp_path: Path) -> None:
    done = papermill(name, tmp_path, "-p", "output_dri", str(tmp_path / "out"))
    assert done.returncode != 0
    assert "did you mean 'output_dir'?" in done.stderr + done.stdout
