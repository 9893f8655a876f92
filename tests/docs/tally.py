"""How many documentation examples ran and which were skipped (with their reasons), said at
the end of a pytest run. Registered by ``tests/conftest.py`` so the xdist controller, which
collects nothing, counts the reports its workers send."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

KIND = "docs_kind"


class DocsTally:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.skipped: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if KIND not in dict(report.user_properties):
            return
        if report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
            self.counts["skipped"] += 1
            self.skipped.append(f"{report.nodeid}: {str(reason).removeprefix('Skipped: ')}")
        elif report.when == "call":
            self.counts["passed" if report.passed else "failed"] += 1
        elif report.failed:
            self.counts["failed"] += 1

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.counts:
            return
        ran = self.counts["passed"] + self.counts["failed"]
        terminalreporter.write_sep("-", "docs examples")
        terminalreporter.write_line(
            f"{ran} run ({self.counts['passed']} passed, {self.counts['failed']} failed), "
            f"{self.counts['skipped']} skipped"
        )
        for line in sorted(self.skipped):
            terminalreporter.write_line(f"  skipped {line}")
