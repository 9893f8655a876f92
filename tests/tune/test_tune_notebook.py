"""notebooks/tune_prompt.ipynb under papermill in a real kernel, and its report in Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from evalkit.report import NotebookRun, execute_notebook

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "tune_prompt.ipynb"


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NotebookRun]:
    folder = tmp_path_factory.mktemp("tune-notebook")
    source = Path(shutil.copy(NOTEBOOK, folder / NOTEBOOK.name))
    mp = pytest.MonkeyPatch()
    for name in (
        "JPY_SESSION_NAME",
        "VSCODE_PID",
        *(k for k in os.environ if k.startswith("EVALKIT_")),
    ):
        mp.delenv(name, raising=False)
    try:
        yield execute_notebook(
            source,
            {"max_repeats": 3},
            output=folder / "executed.ipynb",
            html=folder / "tune.html",
            timeout=480,
            cwd=folder,
        )
    finally:
        mp.undo()


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.timeout(600)
def test_the_notebook_finds_the_helpful_variant_offline(tuned: NotebookRun) -> None:
    assert tuned.ok, tuned.error
    out = tuned.notebook.parent / "evalkit-output" / "tune"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["winner"] == "confirm-slot"
    board = pd.read_parquet(out / "leaderboard.parquet").set_index("variant")
    assert board.loc["terse-no-greeting", "verdict"] == "regressed"
    assert pd.notna(board.loc["terse-no-greeting", "dropped_at"])
    assert (out / "waves.parquet").exists()
    assert (out / "runs").is_dir()


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.timeout(600)
def test_the_report_renders_in_chromium(tuned: NotebookRun, chromium: str) -> None:
    assert tuned.html is not None
    page_text = tuned.html.read_text(encoding="utf-8")
    assert not re.search(r'(?:src|href)="https?://', page_text), "a resource from the network"
    assert "assistant_id = None" not in page_text  # inputs hidden
    assert "sk_api_" not in page_text
    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    args += ["--disable-component-update", "--disable-sync", "--no-first-run"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=args)
        page = browser.new_page(viewport={"width": 1100, "height": 1400})
        page.goto(tuned.html.resolve().as_uri())
        headline = page.locator(".evalkit-tune b").first
        assert headline.is_visible()
        assert headline.inner_text().startswith("improved: confirm-slot beats draft by +")
        images = page.locator("img")
        assert images.count() >= 1
        widths = [images.nth(i).evaluate("e => e.naturalWidth") for i in range(images.count())]
        assert all(w > 300 for w in widths), widths  # the forest plot decoded
        assert page.get_by_text("terse-no-greeting").first.is_visible()
        browser.close()


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.timeout(600)
def test_the_notebook_tunes_a_given_assistant_on_a_given_grid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service path: an assistant id, a grid definition file and a store, with the service
    and the judge from the environment (here an emulator in this process)."""
    from evalkit.demo import DemoService, demo_grid

    for name in ("JPY_SESSION_NAME", "VSCODE_PID"):
        monkeypatch.delenv(name, raising=False)
    with DemoService(tmp_path / "service") as svc:
        monkeypatch.setenv("EVALKIT_BASE_URL", svc.emulator.base_url)
        monkeypatch.setenv("EVALKIT_API_KEY", svc.emulator.api_key)
        monkeypatch.setenv("EVALKIT_JUDGE_BASE_URL", svc.emulator.judge_base_url)
        monkeypatch.setenv("EVALKIT_JUDGE_MODEL", "emulator-judge")
        grid = tmp_path / "grid.json"
        grid.write_text(json.dumps(demo_grid(1).definition()), encoding="utf-8")
        source = Path(shutil.copy(NOTEBOOK, tmp_path / NOTEBOOK.name))
        run = execute_notebook(
            source,
            {
                "assistant_id": svc.assistant_id,
                "grid": str(grid),
                "max_repeats": 2,
                "store": str(tmp_path / "runs"),
                "output_dir": str(tmp_path / "out"),
            },
            output=tmp_path / "executed.ipynb",
            timeout=480,
            cwd=tmp_path,
        )
    assert run.ok, run.error
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["winner"] == "confirm-slot"
    assert summary["assistant_id"] == svc.assistant_id
    assert len(list((tmp_path / "runs").glob("tune-*-confirm-slot"))) == 1
    assert svc.emulator.api_key not in (tmp_path / "executed.ipynb").read_text(encoding="utf-8")
