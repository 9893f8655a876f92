"""Reports: HTML overviews of runs (plots, the run browser and notebook reports join here)."""

from __future__ import annotations

from .._util import publish
from ._notebooks import (
    NotebookRun,
    ReportError,
    check_parameters,
    execute_notebook,
    export_html,
    notebook_parameters,
)
from ._page import report_page
from ._runs_html import runs_overview_html, write_runs_overview

__all__ = [
    "NotebookRun",
    "ReportError",
    "check_parameters",
    "execute_notebook",
    "export_html",
    "notebook_parameters",
    "report_page",
    "runs_overview_html",
    "write_runs_overview",
]

publish(globals())
