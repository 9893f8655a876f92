"""Reports: HTML overviews of runs (plots, the run browser and notebook reports join here)."""

from __future__ import annotations

from .._util import publish
from ._runs_html import runs_overview_html, write_runs_overview

__all__ = ["runs_overview_html", "write_runs_overview"]

publish(globals())
