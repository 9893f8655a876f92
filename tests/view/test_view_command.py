"""``evalkit view`` as a user starts it: a child process prints its address, serves the
store's pages, and stops cleanly on Ctrl-C (SIGINT); the templates ship as package data."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from importlib.resources import files
from pathlib import Path

import httpx
import pytest


def test_templates_and_static_files_are_package_data() -> None:
    templates = files("evalkit").joinpath("templates")  # the one template set
    for name in ("base.html", "index.html", "run.html", "conversation.html", "compare.html"):
        assert templates.joinpath("view", name).is_file(), name
    assert templates.joinpath("evalkit.css").is_file()  # the one stylesheet
    assert files("evalkit.view").joinpath("static", "viewer.js").is_file()


@pytest.mark.slow
def test_evalkit_view_serves_until_ctrl_c(store: Path) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("EVALKIT_API_KEY", None)
    child = subprocess.Popen(
        [sys.executable, "-m", "evalkit", "view", "--store", str(store), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert child.stdout is not None
        deadline = time.monotonic() + 60
        line = ""
        while "evalkit viewer:" not in line:
            assert time.monotonic() < deadline, "no address printed"
            assert child.poll() is None, child.stderr.read() if child.stderr else ""
            line = child.stdout.readline()
        url = line.split("evalkit viewer:", 1)[1].split()[0]
        assert url.startswith("http://127.0.0.1:")
        assert url.endswith("/index.html")
        page = httpx.get(url, timeout=30)
        assert page.status_code == 200
        assert "draft" in page.text
        assert "prod" in page.text
        child.send_signal(signal.SIGINT)
        assert child.wait(20) == 130  # ExitCode.INTERRUPTED, as for every command
        assert child.stderr is not None
        assert "Traceback" not in child.stderr.read()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)


def test_bundle_of_a_run_not_in_the_store_names_it(demo_store: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evalkit.cli import app

    site = tmp_path / "site"
    args = ["view", "bundle", "--store", str(demo_store), "-o", str(site)]
    out = CliRunner().invoke(app, [*args, "--run", "prod", "--run", "nope"])
    assert out.exit_code == 1
    assert "runs: no run 'nope' in" in out.output
    assert not site.exists()
    done = CliRunner().invoke(app, [*args, "--run", "prod"])
    assert done.exit_code == 0, done.output
    assert done.output.startswith("1 run(s), ")
