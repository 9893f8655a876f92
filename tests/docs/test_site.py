"""The documentation site: it builds offline with ``mkdocs build --strict`` (a broken link, a
page missing from the nav, a reference that does not resolve, a page that would load from
another address all fail), outside the repository, with the generated pages and the executed
notebooks in it; and what the pages say stays true of the code."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .collect import ROOT, pages

BUILD_TIMEOUT_S = 1500


def _git_status() -> Any:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.mark.slow
@pytest.mark.timeout(BUILD_TIMEOUT_S)
def test_the_site_builds_strict_and_offline_outside_the_repository(tmp_path: Path) -> None:
    site = tmp_path / "site"
    before = _git_status()
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**_env(), "NO_MKDOCS_2_WARNING": "1", "MPLBACKEND": "Agg"},
        timeout=BUILD_TIMEOUT_S - 60,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-8000:]
    if before is not None:  # what appeared while it built (a file saved meanwhile aside)
        appeared = set(_git_status().splitlines()) - set(before.splitlines())
        assert not {line for line in appeared if line.startswith("??")}, appeared
    cli = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    for command in _cli_reference().commands():
        assert f'id="{command.anchor}"' in cli, command.name
    for shot in ("report.png", "viewer-runs.png", "viewer-rules.png", "viewer-transcript.png"):
        assert (site / "assets" / "screenshots" / shot).stat().st_size > 10_000, shot
    for notebook in (ROOT / "notebooks").glob("*.ipynb"):
        page = site / "reference" / "notebooks" / f"{notebook.stem}.html"
        assert "jp-OutputArea-output" in page.read_text(encoding="utf-8"), notebook.name


def _cli_reference() -> Any:
    spec = importlib.util.spec_from_file_location(
        "cli_reference", ROOT / "docs" / "_build" / "cli_reference.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "EVALKIT_DOCS_QUICK"}


def test_the_environment_page_names_every_variable_evalkit_reads() -> None:
    page = (ROOT / "docs" / "reference" / "environment.md").read_text(encoding="utf-8")
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "evalkit").rglob("*.py"))
    named = set(re.findall(r"\bEVALKIT_[A-Z0-9]+(?:_[A-Z0-9]+)*\b", source))
    named -= {"EVALKIT_JUDGE"}  # "EVALKIT_JUDGE_*", the family
    missing = sorted(n for n in named if f"`{n}`" not in page)
    assert missing == [], f"docs/reference/environment.md does not name {missing}"


def test_no_page_names_an_issue_number() -> None:
    said = []
    for path in pages():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\bissues?\s+#?\d+|\(#\d+\)|\bissue #\d+", line, re.IGNORECASE):
                said.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert said == []
