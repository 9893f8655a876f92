"""Issue 29: the compare notebook (what `evalkit report` runs) gave HTML reports judge-only
verdicts even when the runs held hand labels. Now it passes the stored labels to the comparison
and says so ("Verdicts are judge-corrected with N + N hand labels"); ``use_labels=False`` turns
it off. Runs the notebook in a real kernel with papermill against the biased-judge demo's
store (a lenient emulated judge, queue labels stored in both runs)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from evalkit.demo import run_biased_judge_demo
from evalkit.report import execute_notebook

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "compare_draft_prod.ipynb"
CORRECTED = re.compile(r"Verdicts are judge-corrected with (\d+) \+ (\d+) hand labels")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("biased")
    run_biased_judge_demo(folder, repeats=2, labels=40, progress=False)
    return folder / "runs"


def _report(store: Path, folder: Path, **parameters: object) -> tuple[str, dict[str, object]]:
    folder.mkdir(parents=True, exist_ok=True)
    source = Path(shutil.copy(NOTEBOOK, folder / NOTEBOOK.name))
    out = folder / "out"
    execute_notebook(
        source,
        {"store": str(store), "output_dir": str(out), **parameters},
        output=folder / "executed.ipynb",
        html=folder / "report.html",
        timeout=480.0,
        cwd=folder,
    )
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return (folder / "report.html").read_text(encoding="utf-8"), summary


@pytest.mark.slow
def test_the_report_rests_on_the_stored_labels_unless_told_not_to(
    store: Path, tmp_path: Path
) -> None:
    html, summary = _report(store, tmp_path / "with")
    found = CORRECTED.search(html)
    assert found, "the report does not say the verdict is judge-corrected"
    row = summary["summary"]
    assert isinstance(row, dict)
    assert row["judge_correction"] == "ppi++"
    assert (int(found[1]), int(found[2])) == (row["labelled_baseline"], row["labelled_candidate"])
    assert int(found[1]) >= 10

    plain, plain_summary = _report(store, tmp_path / "without", use_labels=False)
    assert not CORRECTED.search(plain)
    assert "rest on the judge&#39;s verdicts alone" in plain or "verdicts alone" in plain
    off = plain_summary["summary"]
    assert isinstance(off, dict)
    assert off["judge_correction"] == "none"
    assert off["difference"] != row["difference"]  # the labels moved the estimate
