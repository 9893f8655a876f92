"""notebooks/optimize_prompt.ipynb under papermill in a real kernel, offline by default."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from evalkit.report import execute_notebook

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "optimize_prompt.ipynb"


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.timeout(600)
def test_the_notebook_finds_and_confirms_a_winner_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (
        "JPY_SESSION_NAME",
        "VSCODE_PID",
        *(k for k in os.environ if k.startswith("EVALKIT_")),
    ):
        monkeypatch.delenv(name, raising=False)
    source = Path(shutil.copy(NOTEBOOK, tmp_path / NOTEBOOK.name))
    run = execute_notebook(
        source,
        {"rounds": 2},
        output=tmp_path / "executed.ipynb",
        html=tmp_path / "optimize.html",
        timeout=480,
        cwd=tmp_path,
    )
    assert run.ok, run.error
    out = tmp_path / "evalkit-output" / "optimize"
    summary = json.loads((out / "optimize.json").read_text(encoding="utf-8"))
    assert summary["verdict"] == "improved"
    assert summary["winner"] in {c["candidate"] for c in summary["lineage"]}
    rounds = pd.read_parquet(out / "rounds.parquet")
    assert set(rounds["round"]) == {1, 2}
    page = (tmp_path / "optimize.html").read_text(encoding="utf-8")
    assert "Score by round" in page
    assert "data:image/png;base64," in page
