"""Reports: HTML pages built from stored runs (static content only: no widget JavaScript)."""

from ._runs_html import runs_overview_html, write_runs_overview

__all__ = ["runs_overview_html", "write_runs_overview"]
