"""notebooks/nightly_trend.ipynb in a real kernel under papermill, on its offline defaults and
on an ``s3://`` store of moto's server on loopback, and its HTML in Debian's chromium
(Playwright with ``executable_path``): the plot decodes, the runs and the verdicts are there,
nothing is loaded from elsewhere; ``fail_on_regression`` makes papermill fail."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import evalkit
from evalkit.emulator import EmulatorServer
from evalkit.flows import HistoryOptions
from evalkit.report import NotebookRun, execute_notebook
from evalkit.runner import RunOptions

from ..runner_fixtures import emulator_fixture
from ..runner_support import build_assistant
from .nights import run_nights

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "nightly_trend.ipynb"
TIMEOUT = 480.0
CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-background-networking")
PLOT_ALT = "Score by run, with intervals"

emu = emulator_fixture(time_scale=0.01, seed=5)


def _execute(folder: Path, parameters: dict[str, Any]) -> NotebookRun:
    """A copy of the notebook run with the kernel in ``folder`` (as ``evalkit report`` does)."""
    folder.mkdir(parents=True, exist_ok=True)
    source = Path(shutil.copy(NOTEBOOK, folder / NOTEBOOK.name))
    return execute_notebook(
        source,
        parameters,
        output=folder / "executed.ipynb",
        html=folder / "trend.html",
        timeout=TIMEOUT,
        cwd=folder,
    )


def _errors(executed: Path) -> list[str]:
    book = json.loads(executed.read_text(encoding="utf-8"))
    return [
        f"{out.get('ename')}: {out.get('evalue')}"
        for cell in book["cells"]
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]


def _in_chromium(chromium: str, page_path: Path, shot: Path) -> dict[str, Any]:
    """What a reader sees: the plot (decoded), the runs table's run ids, the text."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=list(CHROMIUM_ARGS))
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 1400})
            requests: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            page.goto(page_path.resolve().as_uri())
            plot = page.locator(f"img[alt='{PLOT_ALT}']")
            seen = {
                "plots": plot.count(),
                "width": plot.first.evaluate("e => e.naturalWidth") if plot.count() else 0,
                "text": page.locator("body").inner_text(),
                "runs": page.locator(
                    "table:has(th:text-is('is_last_good')) tbody tr td:nth-child(2)"
                ).all_inner_texts(),
                "elsewhere": [u for u in requests if not u.startswith(("file:", "data:"))],
            }
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    return seen


def _artifacts(tmp_path: Path) -> Path:
    where = Path(os.environ.get("EVALKIT_TEST_ARTIFACTS") or tmp_path / "artifacts")
    where.mkdir(parents=True, exist_ok=True)
    return where


@pytest.mark.slow
@pytest.mark.notebook
def test_the_trend_notebook_runs_offline_and_renders_in_chromium(
    tmp_path: Path, chromium: str
) -> None:
    run = _execute(tmp_path, {})  # its defaults: four offline nights of the demo assistant
    assert run.ok, run.error
    assert _errors(run.notebook) == []
    out = tmp_path / "evalkit-output" / "trend"
    trend = json.loads((out / "trend.json").read_text(encoding="utf-8"))
    assert [r["run_id"] for r in trend["runs"]] == [f"night-0{i}" for i in range(1, 5)]
    assert trend["regressed"] is True  # the last night's simplified prompt
    history = pd.read_parquet(out / "history.parquet")
    assert history["verdict_vs_last_good"].iloc[-1] == "regressed"
    assert not history["is_last_good"].iloc[-1]
    by_rule = pd.read_parquet(out / "history_by_rule.parquet")
    newest = by_rule[by_rule["run_id"] == "night-04"].set_index("rule_id")
    assert newest.loc["urdu-script", "verdict_vs_last_good"] == "regressed"

    seen = _in_chromium(chromium, run.html, _artifacts(tmp_path) / "trend-offline.png")  # type: ignore[arg-type]
    assert seen["plots"] == 1
    assert seen["width"] > 300  # the PNG decoded
    assert seen["runs"] == ["night-01", "night-02", "night-03", "night-04"]
    assert seen["text"].count("Nightly trend") == 1
    assert re.search(r"night-04\S*, the newest of 4 run\(s\), scored \d+\.\d", seen["text"])
    assert "regressed" in seen["text"]
    assert "Run it as it is" not in seen["text"]  # the notebook's instructions stay in Jupyter
    assert seen["elsewhere"] == []


@pytest.mark.slow
@pytest.mark.notebook
def test_the_trend_notebook_reads_a_bucket_and_fails_on_a_regression_when_asked(
    emu: EmulatorServer, bucket: str, tmp_path: Path, chromium: str
) -> None:
    assistant = build_assistant(emu)
    run_nights(emu, bucket, 3, assistant=assistant)
    expected = evalkit.history(bucket, options=HistoryOptions(assistant_id=assistant))
    params = {"store": bucket, "assistant_id": assistant, "output_dir": str(tmp_path / "out")}
    # as examples/nightly.yml runs it: `evalkit report` in a child process, the kernel reaching
    # moto through the AWS_* environment
    kernel = tmp_path / "kernel"
    kernel.mkdir()
    html = tmp_path / "trend.html"
    command = [sys.executable, "-m", "evalkit", "report", str(NOTEBOOK), "-o", str(html)]
    for name, value in params.items():
        command += ["-r", name, value]
    done = subprocess.run(
        command, cwd=kernel, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    written = pd.read_parquet(tmp_path / "out" / "history.parquet")
    cols = ["run_id", "score", "score_low", "score_high", "verdict_vs_previous", "is_last_good"]
    pd.testing.assert_frame_equal(written[cols], expected[cols])
    assert not (kernel / "evalkit-output").exists()  # output_dir was given
    seen = _in_chromium(chromium, html, _artifacts(tmp_path) / "trend-s3.png")
    assert seen["plots"] == 1
    assert seen["width"] > 300
    assert seen["runs"] == ["night-00", "night-01", "night-02"]
    assert seen["elsewhere"] == []
    assert "testing-secret" not in html.read_text(encoding="utf-8")

    # a fourth night on a prompt that lost its greeting and names unknown variables: the
    # agent no longer speaks first and leaves {{placeholders}} in its lines; the gate fails
    _plant_a_regressed_night(emu, bucket, assistant, "night-03")
    failing = _execute(tmp_path / "gate", {**params, "fail_on_regression": True})
    assert not failing.ok
    assert "Regression" in (failing.error or "")
    assert "night-03 regressed against the last-known-good run" in (failing.error or "")
    assert failing.html is not None
    assert failing.html.is_file()  # the page is still written


def _plant_a_regressed_night(emu: EmulatorServer, store: str, assistant: str, run_id: str) -> None:
    from evalkit import Client
    from evalkit.grading import grade_run
    from evalkit.runner import run_grid

    from ..runner_support import load_grid
    from .nights import scorecard

    with Client(emu.base_url, emu.api_key) as client:
        (found,) = [a for a in client.list_assistants() if a.id == assistant]
        config = found.config.to_json()
        config["agent"]["instructions"] = (
            "You remind {{name}} of an appointment on {{date}} at {{slot_time}} in {{clinic}}."
        )
        config["agent"].pop("initialGreeting", None)
        client.update_assistant(assistant, config=config)
        run = run_grid(
            load_grid(3, 2),
            assistant,
            client=client,
            store=store,
            run_id=run_id,
            # the broken prompt is the point
            options=RunOptions(progress=False, allow_missing_variables=True),
        )
    grade_run(run, scorecard(), judge=False)
