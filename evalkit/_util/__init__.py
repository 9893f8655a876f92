"""Helpers with no domain knowledge: atomic writes, sync-over-async, progress, canonical JSON
and hashes, sibling tasks that end together, the one secret redactor, a clock, a poll helper
and HTML from the one template set. Private to evalkit: ``__all__`` is what its siblings use.

Light by rule: the command line's start (``evalkit --help``) imports it, so nothing here
imports pandas, numpy, Jinja2 or ``importlib.resources`` at import time (:mod:`._html` loads
them when it first renders; results, which need pandas, are :mod:`evalkit._results`)."""

from __future__ import annotations

from ._atomic import atomic_write, atomic_write_bytes, fsync_dir, remove_stale_temps, temp_path_for
from ._canonical import canonical_json, content_hash, json_default
from ._clock import now, now_iso
from ._exports import publish
from ._html import environment, render_html, stylesheet
from ._markdown import markdown_cell, markdown_table, markdown_text
from ._once import SaidOnce
from ._poll import PollOutcome, PollPolicy, apoll
from ._progress import PlannedEnd, Progress, planned_stop, progress_label
from ._redact import MASK, is_masked, is_secret_key, mask, redact, redact_text, strip_masked
from ._suggest import closest_name, unknown_name
from ._sync import run_sync
from ._tasks import cancel_and_wait, gather_or_cancel

__all__ = [
    "MASK",
    "PlannedEnd",
    "PollOutcome",
    "PollPolicy",
    "Progress",
    "SaidOnce",
    "apoll",
    "atomic_write",
    "atomic_write_bytes",
    "cancel_and_wait",
    "canonical_json",
    "closest_name",
    "content_hash",
    "environment",
    "fsync_dir",
    "gather_or_cancel",
    "is_masked",
    "is_secret_key",
    "json_default",
    "markdown_cell",
    "markdown_table",
    "markdown_text",
    "mask",
    "now",
    "now_iso",
    "planned_stop",
    "progress_label",
    "publish",
    "redact",
    "redact_text",
    "remove_stale_temps",
    "render_html",
    "run_sync",
    "strip_masked",
    "stylesheet",
    "temp_path_for",
    "unknown_name",
]
