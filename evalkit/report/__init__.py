"""Reports: plots, transcripts as HTML, the RunBrowser widget, and static run overviews.

    from evalkit.report import plots, RunBrowser
    plots.rule_forest(comparison)             # a matplotlib Figure
    RunBrowser(run, grades)                   # in Jupyter: filters, paging, transcripts
    html_page("Draft vs prod", transcript_html(turns, grades))

``evalkit.report.plots`` is a subpackage (imports matplotlib); ipywidgets loads only when a
RunBrowser is made. ``execute_notebook`` runs a parameterised notebook with papermill and
exports a static HTML report (``report_page``).
"""

from __future__ import annotations

from .._util import publish
from ._browser import RunBrowser
from ._browser_controls import BrowserControls, run_voice
from ._filters import Filters, filter_conversations, record_text, searchable_text
from ._fonts import (
    NASTALIQ_FONT_STACK,
    ArabicFont,
    arabic_share,
    find_arabic_font,
    is_arabic_script,
)
from ._injected import refuse_unknown_parameters
from ._notebooks import (
    NOTEBOOK_ONLY_TAG,
    NotebookRun,
    ReportError,
    check_parameters,
    execute_notebook,
    export_html,
    notebook_parameters,
)
from ._output_dir import OUTPUT_FOLDER, notebook_output_dir
from ._page import report_page
from ._runs_html import runs_overview_html, write_runs_overview
from ._tables import rule_table
from ._transcript_html import (
    TranscriptOptions,
    anchor_id,
    html_page,
    rules_html,
    side_by_side_html,
    table_html,
    transcript_html,
)
from ._urdu_html import urdu_html

__all__ = [
    "NASTALIQ_FONT_STACK",
    "NOTEBOOK_ONLY_TAG",
    "OUTPUT_FOLDER",
    "ArabicFont",
    "BrowserControls",
    "Filters",
    "NotebookRun",
    "ReportError",
    "RunBrowser",
    "TranscriptOptions",
    "anchor_id",
    "arabic_share",
    "check_parameters",
    "execute_notebook",
    "export_html",
    "filter_conversations",
    "find_arabic_font",
    "html_page",
    "is_arabic_script",
    "notebook_output_dir",
    "notebook_parameters",
    "record_text",
    "refuse_unknown_parameters",
    "report_page",
    "rule_table",
    "rules_html",
    "run_voice",
    "runs_overview_html",
    "searchable_text",
    "side_by_side_html",
    "table_html",
    "transcript_html",
    "urdu_html",
    "write_runs_overview",
]

# What evalkit's other packages take from here and users need not: not public, not in the API
# snapshot (``x as x`` marks each as re-exported for the type checker).
from ._fonts import bundled_nastaliq_bytes as bundled_nastaliq_bytes

_SIBLING_API = ("bundled_nastaliq_bytes",)

publish(globals())
