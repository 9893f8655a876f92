"""``explore_run.ipynb`` used as an analyst uses it: a real JupyterLab 4 in headless Chromium.

A JupyterLab server starts on 127.0.0.1 (a free port, a token, its own config/settings/runtime
folders, news and update checks off, ``root_dir`` a temp folder holding a copy of the notebook).
Debian's chromium, driven by Playwright with ``executable_path`` (Playwright cannot download its
own browser here), opens the notebook, runs every cell from the Run menu, waits for the
RunBrowser widget, picks a persona in its dropdown and checks the transcript pane follows.
Chromium may fetch nothing but the server (other requests are aborted and counted). A
screenshot is kept in ``test-artifacts/``. Every wait is bounded; the server stops in a finally.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "explore_run.ipynb"
ARTIFACTS = Path(os.environ.get("EVALKIT_TEST_ARTIFACTS", "test-artifacts"))
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
#: JupyterLab user settings: no news prompt, and the notebook's kernel starts without a dialog.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false"},
    "@jupyterlab/notebook-extension/tracker": {"autoStartDefaultKernel": True},
}
SERVER_START_S = 90.0
PAGE_LOAD_MS = 120_000
KERNEL_IDLE_MS = 120_000
RUN_ALL_MS = 240_000
WIDGET_UPDATE_MS = 30_000


@dataclass(frozen=True)
class Lab:
    """A running JupyterLab: where it listens and its token."""

    base_url: str
    token: str

    def url(self, path: str) -> str:
        return f"{self.base_url}{path}?token={self.token}"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _lab_env(home: Path) -> dict[str, str]:
    """Config, data, runtime, settings and workspaces of this server only, under ``home``."""
    folders = {
        "JUPYTER_CONFIG_DIR": "config",
        "JUPYTER_DATA_DIR": "data",
        "JUPYTER_RUNTIME_DIR": "runtime",
        "JUPYTERLAB_SETTINGS_DIR": "settings",
        "JUPYTERLAB_WORKSPACES_DIR": "workspaces",
    }
    env = {**os.environ, **{k: str(home / v) for k, v in folders.items()}}
    for name in ("EVALKIT_PROGRESS", "JUPYTER_TOKEN", "JUPYTER_PORT"):
        env.pop(name, None)
    for plugin, values in LAB_SETTINGS.items():
        target = home / "settings" / f"{plugin}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values), encoding="utf-8")
    return env


def _wait_until_up(process: subprocess.Popen[bytes], lab: Lab, log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"jupyter lab exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        with contextlib.suppress(httpx.HTTPError):
            response = httpx.get(f"{lab.base_url}/api/status", params={"token": lab.token})
            if response.status_code == 200:
                return
        time.sleep(0.25)
    pytest.fail(f"jupyter lab not up after {SERVER_START_S:.0f}s:\n{log.read_text()[-3000:]}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the server shuts its kernels down), then SIGKILL the whole group if it lingers."""
    if process.poll() is None:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=20)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # kernels left behind, if any
    process.wait(timeout=10)


@contextlib.contextmanager
def jupyterlab(root_dir: Path, home: Path) -> Iterator[Lab]:
    """A JupyterLab 4 server on loopback serving ``root_dir``; stopped on exit."""
    lab = Lab(f"http://127.0.0.1:{_free_port()}", secrets.token_hex(16))
    port = lab.base_url.rsplit(":", 1)[1]
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root"]
    command += ["--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}"]
    command += ["--ServerApp.port_retries=0", f"--IdentityProvider.token={lab.token}"]
    command += [f"--ServerApp.root_dir={root_dir}", "--LabApp.news_url=None"]
    command += ["--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    command += ["--LabApp.extension_manager=readonly"]
    log = home / "jupyterlab.log"
    env = _lab_env(home)
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        _wait_until_up(process, lab, log)
        yield lab
    finally:
        _stop(process)


def _count(pattern: str, text: str) -> int:
    found = re.search(pattern, text)
    assert found is not None, f"{pattern!r} not in {text!r}"
    return int(found.group(1))


FILTERS = ("persona", "rule", "verdict", "status", "search")
#: The narrowest a filter may be drawn: wide enough for "any verdict" and its arrow.
MIN_FILTER_PX = 150


def _assert_filters_fit(page: Page) -> None:
    """Every filter control of the RunBrowser is whole inside the output area (at 1400 px the
    status dropdown used to be clipped to "sta")."""
    area = page.locator(".jp-OutputArea-output", has=page.locator(".widget-dropdown")).first
    box = area.bounding_box()
    assert box is not None
    for name in FILTERS:
        control = (
            page.locator(".widget-dropdown, .widget-text")
            .filter(has=page.locator("label", has_text=re.compile(f"^{name}$")))
            .locator("select, input")
            .first
        )
        control.scroll_into_view_if_needed()
        own = control.bounding_box()
        assert own is not None, name
        assert own["width"] >= MIN_FILTER_PX, (name, own)
        assert own["x"] >= box["x"] - 1, (name, own, box)
        assert own["x"] + own["width"] <= box["x"] + box["width"] + 1, (name, own, box)
        visible = control.evaluate(
            "e => { const r = e.getBoundingClientRect();"
            " const hit = document.elementFromPoint(r.right - 4, r.top + r.height / 2);"
            " return hit === e || e.contains(hit); }"
        )
        assert visible, f"the {name} filter's right edge is covered or off screen"


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.timeout(600)
def test_run_browser_in_jupyterlab_follows_the_persona_filter(
    tmp_path: Path, chromium: str
) -> None:
    from playwright.sync_api import Route, expect, sync_playwright

    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(NOTEBOOK, root / NOTEBOOK.name)
    elsewhere: list[str] = []
    with jupyterlab(root, tmp_path / "home") as lab, sync_playwright() as pw:

        def loopback_only(route: Route) -> None:
            if route.request.url.startswith(f"{lab.base_url}/"):
                route.continue_()
            else:
                elsewhere.append(route.request.url)
                route.abort()

        browser = pw.chromium.launch(executable_path=chromium, args=list(CHROMIUM_ARGS))
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.route("**/*", loopback_only)
            page.goto(lab.url(f"/lab/tree/{NOTEBOOK.name}"), timeout=PAGE_LOAD_MS)
            page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for(timeout=PAGE_LOAD_MS)
            status = page.locator("#jp-main-statusbar")
            expect(status).to_contain_text("Python 3", timeout=KERNEL_IDLE_MS)
            expect(status).to_contain_text("Idle", timeout=KERNEL_IDLE_MS)

            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click()

            persona = page.locator(".widget-dropdown").filter(
                has=page.locator("label", has_text=re.compile(r"^persona$"))
            )
            select = persona.locator("select")
            select.wait_for(timeout=RUN_ALL_MS)
            transcript = page.locator(".jp-OutputArea-output .widget-html .ek-conv").first
            transcript.wait_for(timeout=WIDGET_UPDATE_MS)
            label = page.locator(".widget-label", has_text=re.compile(r"^page \d+ of \d+")).first
            title = transcript.locator("h3").first
            before_title = title.inner_text()
            before_label = label.inner_text()
            total = _count(r"of (\d+) conversations", before_label)

            options = select.locator("option").all_inner_texts()
            choices = [c.replace("\xa0", " ") for c in options]
            other = next(c for c in choices[1:] if f"· {c} ·" not in before_title)
            select.select_option(label=other)

            expect(title).not_to_have_text(before_title, timeout=WIDGET_UPDATE_MS)
            expect(title).to_contain_text(f"· {other} ·", timeout=WIDGET_UPDATE_MS)
            assert transcript.locator(".ek-text").count() >= 2  # turns, not a placeholder
            expect(label).not_to_have_text(before_label, timeout=WIDGET_UPDATE_MS)
            matched = _count(r"· (\d+) of", label.inner_text())
            assert 0 < matched < total

            # a Run and a Grades render as HTML (their _repr_html_), not as one line of text
            run_shown = page.locator(".jp-OutputArea-output .evalkit-run").first
            expect(run_shown).to_contain_text("conversation(s):", timeout=WIDGET_UPDATE_MS)
            graded = page.locator(".jp-OutputArea-output .evalkit-grades").first
            expect(graded).to_contain_text("conversation(s) graded", timeout=WIDGET_UPDATE_MS)
            assert graded.locator("tbody tr").count() >= 3  # one row per rule
            expect(graded.locator("thead")).to_contain_text("pass rate (95% Wilson)")
            stderr = page.locator(
                '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
            )
            assert not any("Error" in t for t in stderr.all_inner_texts()), stderr.all_inner_texts()
            # JupyterLab runs the kernel beside the notebook: the outputs went elsewhere
            said = page.locator(".jp-OutputArea-output", has_text="per-rule summary in")
            written = Path(said.first.inner_text().split("per-rule summary in", 1)[1].strip())
            assert written.is_file()
            assert root not in written.parents
            assert not (root / "evalkit-output").exists()
            shutil.rmtree(written.parent, ignore_errors=True)

            _assert_filters_fit(page)
            select.scroll_into_view_if_needed()
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            shot = ARTIFACTS / "jupyterlab-explore-run.png"
            page.screenshot(path=str(shot))
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000
    assert elsewhere == [], f"Chromium tried to reach beyond the server: {elsewhere[:5]}"
