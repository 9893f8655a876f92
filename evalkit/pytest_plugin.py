"""evalkit's pytest plugin (the ``pytest11`` entry point ``evalkit``; ``-p no:evalkit`` turns it
off): fixtures, session options, what insufficient evidence becomes, JUnit XML properties, a
Markdown summary, and one error for a session that cannot run its evals.

Loaded but unused it costs nothing: this module imports pytest and the standard library only,
no hook does work during collection, and the fixtures import ``evalkit.testing`` (pandas, the
emulator, the client) when a test first asks for one. ``benchmarks/bench_pytest_plugin.py``
measures ``pytest --collect-only`` with and without it.

Fixtures (session-scoped): ``evalkit_service`` (the service at ``--evalkit-base-url`` or
``EVALKIT_BASE_URL``, else an emulator the session starts: one per session, shared by every
pytest-xdist worker), ``evalkit_client``, ``evalkit_store`` (a temporary store, or
``--evalkit-store PATH`` to reuse runs across sessions and CI caches) and ``evalkit_judge``
(the emulated judge on the emulator, else ``EVALKIT_JUDGE_*``).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from ._test_session import CheckContext, check_context, stop_shared_emulator

if TYPE_CHECKING:
    from .api import Client
    from .grading import Judge
    from .testing import Check, Service

__all__ = [
    "evalkit_client",
    "evalkit_judge",
    "evalkit_service",
    "evalkit_store",
]

MODES: Final = ("fail", "xfail", "skip")
#: Errors that stop the session (by class name, so that none of evalkit is imported to tell):
#: every test would meet them again.
SESSION_ERRORS: Final = frozenset(
    {
        "SessionError",
        "ConfigurationError",
        "ApiConnectionError",
        "AuthenticationError",
        "PermissionDeniedError",
        "PaymentRequiredError",
        "ScorecardError",
        "PersonaError",
        "MissingVariablesError",
        "ServiceUnreachable",
        "StoreUnreachableError",
        "TargetError",
    }
)
_CHECKS = pytest.StashKey[list[dict[str, Any]]]()
_OPTIONS: Final = (
    (
        "base_url",
        "URL",
        "the service to test against (default EVALKIT_BASE_URL; without "
        "either, an emulator this session starts)",
    ),
    (
        "store",
        "PATH",
        "the run store (a folder or URL) to record runs in, so that an unchanged "
        "assistant and grid are not run again (default: a temporary store)",
    ),
    (
        "insufficient",
        "{fail,xfail,skip}",
        "what a check with insufficient evidence becomes "
        "(default xfail: reported with the reason and the conversations a decision needs)",
    ),
    (
        "summary",
        "PATH",
        "write a Markdown summary of every evalkit check (a CI job summary or "
        "a pull-request comment)",
    ),
    (
        "reports",
        "DIR",
        "write the HTML card of every check that did not pass here (default: "
        "the session's temporary folder)",
    ),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("evalkit", "evalkit: evals as tests")
    for name, meta, text in _OPTIONS:
        flag = f"--evalkit-{name.replace('_', '-')}"
        group.addoption(flag, dest=f"evalkit_{name}", metavar=meta, default=None, help=text)
        parser.addini(f"evalkit_{name}", f"{text} (as {flag})", default=None)


def _setting(config: pytest.Config, name: str) -> str | None:
    value = config.getoption(f"evalkit_{name}")
    if value is None:
        value = config.getini(f"evalkit_{name}")
    return str(value) if value not in (None, "") else None


def _path(config: pytest.Config, name: str) -> Path | None:
    """A path option; an ini value is relative to the ini file's folder."""
    value = _setting(config, name)
    if value is None:
        return None
    if config.getoption(f"evalkit_{name}") is None and config.inipath is not None:
        return (config.inipath.parent / value).resolve()
    return Path(value).resolve()


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _session_error(exc: BaseException) -> bool:
    return any(
        cls.__name__ in SESSION_ERRORS and cls.__module__.startswith("evalkit")
        for cls in type(exc).__mro__
    )


class EvalkitSession:
    """The plugin's state for one session (registered as ``evalkit-session``)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        mode = _setting(config, "insufficient") or "xfail"
        if mode not in MODES:
            raise pytest.UsageError(
                f"--evalkit-insufficient (or the evalkit_insufficient ini option) must be one "
                f"of {', '.join(MODES)}, got {mode!r}"
            )
        self.insufficient = mode
        self.checks: list[dict[str, Any]] = []
        self.session_error: str | None = None
        self._reports: Path | None = None
        # the controller of pytest-xdist workers: the folder they share and the emulator's key
        self.shared_dir: Path | None = None
        self._emulator_key: str | None = None

    # ------------------------------------------------------------------ pytest-xdist

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """Give each worker the session's shared folder and emulator key (in memory)."""
        if self.shared_dir is None:
            token = secrets.token_hex(4)
            self.shared_dir = Path(tempfile.gettempdir()) / f"evalkit-pytest-{os.getpid()}-{token}"
            self._emulator_key = "sk_api_" + secrets.token_hex(24)
        node.workerinput["evalkit_shared_dir"] = str(self.shared_dir)
        node.workerinput["evalkit_emulator_key"] = self._emulator_key
        node.workerinput["evalkit_controller_pid"] = os.getpid()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.shared_dir is not None and self.shared_dir.exists():
            stop_shared_emulator(self.shared_dir)
            shutil.rmtree(self.shared_dir, ignore_errors=True)

    # ------------------------------------------------------------------ each test

    def _report_dir(self) -> Path | None:
        if self._reports is None:
            given = _path(self.config, "reports")
            if given is None:
                factory = self.config._tmp_path_factory  # type: ignore[attr-defined]
                given = factory.getbasetemp() / "evalkit-reports"
            self._reports = given
        return self._reports

    @contextlib.contextmanager
    def _context(self, item: pytest.Item) -> Iterator[None]:
        def record(check: Check) -> None:
            item.stash.setdefault(_CHECKS, []).append(
                {
                    "test": item.nodeid,
                    **check.to_dict(),
                    "markdown": check.to_markdown(),
                }
            )
            item.user_properties.extend(check.properties())

        context = CheckContext(item.nodeid, self.insufficient, self._report_dir, record)
        with check_context(context):
            yield

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, object, object]:
        with self._context(item):
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, object, object]:
        with self._context(item):
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        checks = item.stash.get(_CHECKS, None)
        if checks:
            report.evalkit_checks = list(checks)  # type: ignore[attr-defined]
            checks.clear()
        error = call.excinfo.value if call.excinfo is not None else None
        if report.failed and error is not None and _session_error(error):
            message = f"evalkit: {type(error).__name__}: {error}"
            report.longrepr = message  # one clear line, no traceback
            report.evalkit_session_error = message  # type: ignore[attr-defined]
            item.session.shouldfail = message
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        outcome = "xfailed" if hasattr(report, "wasxfail") else report.outcome
        for entry in getattr(report, "evalkit_checks", None) or ():
            self.checks.append({**entry, "test_outcome": outcome})
        error = getattr(report, "evalkit_session_error", None)
        if error and self.session_error is None:
            self.session_error = str(error)

    # ------------------------------------------------------------------ the end

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        path = _path(self.config, "summary")
        if path is None or _is_worker(self.config):
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(markdown_summary(self.checks, self.session_error), encoding="utf-8")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.session_error:
            terminalreporter.section("evalkit", sep="=", red=True)
            terminalreporter.write_line(self.session_error)
        if not self.checks:
            return
        if not self.session_error:
            terminalreporter.section("evalkit", sep="=")
        terminalreporter.write_line(_counts_line(self.checks))
        path = _path(self.config, "summary")
        if path is not None and not _is_worker(self.config):
            terminalreporter.write_line(f"summary: {path}")


def _counts_line(checks: list[dict[str, Any]]) -> str:
    counts = {
        o: sum(c["outcome"] == o for c in checks) for o in ("passed", "failed", "insufficient")
    }
    return (
        f"{len(checks)} evalkit checks: {counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['insufficient']} with insufficient evidence"
    )


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _number(x: float | None) -> str:
    return "n/a" if x is None else f"{round(x, 9) + 0.0:+.3g}"


def _interval(check: dict[str, Any]) -> str:
    low, high = check["interval"]
    if low is None or high is None:
        return "n/a"
    return f"[{_number(low)}, {_number(high)}]"


def markdown_summary(checks: list[dict[str, Any]], session_error: str | None = None) -> str:
    """Every check of the session: a line of counts, a table (test and its outcome, the
    check's outcome, claim, verdict, difference, interval, n), then the checks that did not
    pass in full."""
    lines = [f"## {_counts_line(checks)}", ""]
    if session_error:
        lines += [f"**The session stopped**: {_cell(session_error)}", ""]
    if checks:
        lines += [
            "| test | test outcome | check | claim | verdict | difference | interval | n |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for c in sorted(checks, key=lambda c: (c["outcome"] == "passed", c["test"])):
            lines.append(
                f"| `{_cell(c['test'])}` | {c.get('test_outcome', 'n/a')} | {c['outcome']} | "
                f"{_cell(c['claim'])} | {_cell(c['verdict'])} | {_number(c['difference'])} | "
                f"{_interval(c)} {_cell(c['unit'])} | {c['n']} |"
            )
        lines.append("")
    for c in checks:
        if c["outcome"] != "passed":
            test = f"### `{_cell(c['test'])}` (test {c.get('test_outcome', 'n/a')})"
            lines += [test, "", c["markdown"].rstrip(), ""]
    return "\n".join(lines).rstrip() + "\n"


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(EvalkitSession(config), "evalkit-session")


# ---------------------------------------------------------------------- fixtures


def _worker_input(config: pytest.Config) -> dict[str, Any]:
    found: dict[str, Any] = getattr(config, "workerinput", {})
    return found


@pytest.fixture(scope="session")
def evalkit_service(pytestconfig: pytest.Config) -> Iterator[Service]:
    """The session's service: ``--evalkit-base-url`` / ``EVALKIT_BASE_URL`` (reached once;
    a wrong address or key stops the session with one error), else an emulator started for
    the session (seeded; one for all pytest-xdist workers). ``.base_url``, ``.api_key`` and
    ``.emulator`` (its admin API) on the emulator; ``.once(name, make)`` makes a value once
    per session."""
    from .testing import SessionSettings, open_service

    shared = _worker_input(pytestconfig)
    settings = SessionSettings(
        base_url=_setting(pytestconfig, "base_url") or os.environ.get("EVALKIT_BASE_URL"),
        shared_dir=Path(shared["evalkit_shared_dir"]) if "evalkit_shared_dir" in shared else None,
        emulator_key=shared.get("evalkit_emulator_key"),
        watch_pid=shared.get("evalkit_controller_pid"),
    )
    with open_service(settings) as service:
        yield service


@pytest.fixture(scope="session")
def evalkit_client(evalkit_service: Service) -> Iterator[Client]:
    """A client of the session's service."""
    with evalkit_service.client() as client:
        yield client


@pytest.fixture(scope="session")
def evalkit_store(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> str:
    """Where the session records runs: ``--evalkit-store`` (a folder or an fsspec URL, kept
    across sessions, so unchanged runs are read, not run again), else a temporary folder
    (one for all pytest-xdist workers)."""
    given = _setting(pytestconfig, "store")
    if given is not None:
        return given if "://" in given else str(_path(pytestconfig, "store"))
    shared = _worker_input(pytestconfig).get("evalkit_shared_dir")
    if shared is not None:
        folder = Path(shared) / "store"
        folder.mkdir(parents=True, exist_ok=True)
        return str(folder)
    return str(tmp_path_factory.mktemp("evalkit-store"))


@pytest.fixture(scope="session")
def evalkit_judge(evalkit_service: Service, evalkit_store: str) -> Judge:
    """The judge of judged rules: the emulated judge on the emulator, else the one
    ``EVALKIT_JUDGE_*`` configures (missing: one error for the session). Its verdicts are
    cached beside the store."""
    from .store import local_folder

    return evalkit_service.judge(cache_dir=local_folder(evalkit_store) / ".judge-cache")
