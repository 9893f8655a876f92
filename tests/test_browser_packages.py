"""The test run's own provisioning of the browser tests' Debian packages: what it decides
without installing anything (apt-get is never reached here)."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from . import browser_packages


@pytest.fixture
def no_apt_get(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        if "apt-get" in args:
            raise AssertionError(f"apt-get was run: {args}")
        return subprocess.CompletedProcess(args, 1, "", "")

    monkeypatch.setattr(browser_packages.subprocess, "run", refuse)


@pytest.mark.usefixtures("no_apt_get")
def test_without_root_or_password_less_sudo_it_names_the_packages_and_installs_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(browser_packages, "missing", lambda: browser_packages.PACKAGES)
    monkeypatch.setattr(browser_packages.os, "geteuid", lambda: 1000)
    announced: list[tuple[str, ...]] = []
    outcome = browser_packages.provision(announced.append)
    assert not outcome.ready
    assert outcome.missing == ("chromium", "fonts-noto-core")
    assert announced == []
    message = browser_packages.unavailable_message(outcome)
    assert "chromium and fonts-noto-core" in message
    assert "sudo apt-get install chromium fonts-noto-core" in message
    assert "-m 'not browser'" in message


@pytest.mark.usefixtures("no_apt_get")
def test_nothing_missing_is_ready_without_asking_for_privileges(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(browser_packages, "missing", lambda: ())
    monkeypatch.setattr(browser_packages, "_privilege", lambda: pytest.fail("privileges asked"))
    assert browser_packages.provision(lambda needed: pytest.fail(f"announced {needed}")).ready


@pytest.mark.parametrize(
    ("markexpr", "selected"),
    [
        ("", True),
        ("not browser", False),
        ("not slow and not browser", False),
        ("slow", True),
        ("not slow", True),
        ("browser", True),
        ("notebook and not browser", False),
    ],
)
def test_provisioning_follows_whether_m_selects_browser_tests(
    markexpr: str, selected: bool
) -> None:
    assert browser_packages.selected(markexpr) is selected
