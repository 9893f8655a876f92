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
def test_the_report_renders_in_chromium(tuned: NotebookRun) -> None:
    assert tuned.html is not None
    page_text = tuned.html.read_text(encoding="utf-8")
    assert not re.search(r'(?:src|href)="https?://', page_text), "a resource from the network"
    assert "assistant_id = None" not in page_text  # inputs hidden
    assert "sk_api_" not in page_text
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.fail("Debian's chromium is needed (.ci/run installs it)")
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
