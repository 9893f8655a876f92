"""Shared test configuration: no developer settings leak in, hypothesis draws are seeded, and
the browser tests' Debian packages are installed before any worker starts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from . import browser_packages
from .docs.collect import docs_directory
from .docs.tally import DocsTally

ENV_NAMES = (
    "EVALKIT_BASE_URL",
    "EVALKIT_API_KEY",
    "EVALKIT_JUDGE_BASE_URL",
    "EVALKIT_JUDGE_API_KEY",
    "EVALKIT_JUDGE_MODEL",
    "EVALKIT_DEBUG",
)


def pytest_configure(config: pytest.Config) -> None:
    """Hypothesis runs the same examples every time and in every xdist worker (``ci``, the
    default); ``HYPOTHESIS_PROFILE=explore`` draws fresh examples and keeps a database."""
    settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
    settings.register_profile("explore", derandomize=False)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
    config.pluginmanager.register(DocsTally(), "evalkit-docs-tally")


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """tests/docs also collects README.md and the docs pages (``tests/docs/collect.py``)."""
    return docs_directory(path, parent)


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Install Debian's chromium and fonts-noto-core when missing, once, in the controller,
    before xdist starts its workers (its own session start runs last)."""
    config = session.config
    if (
        _is_worker(config)
        or config.option.collectonly
        or not browser_packages.selected(config.option.markexpr)
    ):
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")

    def announce(needed: tuple[str, ...]) -> None:
        if reporter is not None:
            reporter.write_line(
                f"browser tests: installing Debian's {' and '.join(needed)} with apt-get "
                "(once per machine, a minute or two)"
            )

    outcome = browser_packages.provision(announce)
    if not outcome.ready:
        config.pluginmanager.register(_Unavailable(outcome), "evalkit-browser-unavailable")
    if reporter is None:
        return
    if outcome.installed:
        reporter.write_line(
            f"browser tests: installed {' and '.join(outcome.installed)} in {outcome.seconds:.0f} s"
        )
    elif not outcome.ready:
        reporter.write_line(browser_packages.unavailable_message(outcome), yellow=True)


class _Unavailable:
    """In the controller, when the packages cannot be had: the browser tests skip (one folded
    reason), the run ends with one message naming the packages and exits failed."""

    def __init__(self, outcome: browser_packages.Outcome) -> None:
        self.outcome = outcome
        self.skipped = 0

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and "browser" in report.keywords:
            self.skipped += 1

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.skipped and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.skipped:
            terminalreporter.section("browser tests not run", sep="=", red=True)
            terminalreporter.write_line(
                f"{self.skipped} browser tests skipped. "
                + browser_packages.unavailable_message(self.outcome)
            )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that takes the ``chromium`` fixture is a browser test (``-m 'not browser'``)."""
    for item in items:
        if "chromium" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's chromium; without it (and its fonts) every browser test is skipped with one
    reason, and the run ends failed with one message saying what to install."""
    lacking = browser_packages.missing()
    found = browser_packages.chromium_path()
    if lacking or found is None:
        pytest.skip(browser_packages.skip_reason(lacking or ("chromium",)))
    return found


@pytest.fixture(autouse=True)
def _no_evalkit_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never pick up a developer's real service settings."""
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
