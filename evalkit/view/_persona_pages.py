"""The viewer's pages for searches of callers that break a draft (``evalkit.find_failures``):
the list on the index, and one page per search with its confirmed failures (each linked to an
example conversation of the fresh repeats), the rounds and the coverage by trait value.

A search is read from what it stored: ``<store>/.personas/<prefix>/search.json`` (the
result's ``to_dict``) and the runs ``<prefix>-r<NN>`` and ``<prefix>-confirm``.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
from markupsafe import Markup

from ..personas import RECORDS_FOLDER
from ..report import table_html
from ._pages import Pages
from ._paths import conversation_path, run_path, seg

__all__ = ["failure_search_page", "failure_searches"]


def failure_search_path(prefix: str) -> str:
    return f"personas/{seg(prefix)}.html"


def _search(pages: Pages, prefix: str) -> dict[str, Any] | None:
    path = pages.site.root / RECORDS_FOLDER / prefix / "search.json"
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def failure_searches(pages: Pages) -> list[tuple[str, str]]:
    """``(href, text)`` of every finished caller search in the store, by name."""
    folder = pages.site.root / RECORDS_FOLDER
    if not folder.exists():
        return []
    found = []
    entries: list[Any] = list(folder.iterdir())
    for path in sorted(entries, key=lambda p: str(p.name)):
        data = _search(pages, path.name)
        if data is not None:
            found.append((failure_search_path(path.name), f"{path.name}: {data.get('headline')}"))
    return found


def _frame(records: Any, columns: list[str] | None = None) -> pd.DataFrame:
    frame = pd.DataFrame(records if isinstance(records, list) else [])
    if columns is not None and len(frame):
        frame = frame[[c for c in columns if c in frame.columns]]
    return frame


def failure_search_page(pages: Pages, prefix: str) -> str:
    """One search: its confirmed failures, rounds and coverage."""
    data = _search(pages, prefix)
    if data is None:
        raise KeyError(f"no caller search {prefix!r} in this store")
    runs = set(pages.site.catalog()["run_id"].astype(str))
    confirm = f"{prefix}-confirm"
    findings = [
        {
            **row,
            "href": (
                f"../{conversation_path(confirm, str(row['example_conversation_id']))}"
                if confirm in runs and row.get("example_conversation_id")
                else None
            ),
        }
        for row in data.get("findings") or []
        if isinstance(row, dict)
    ]
    rounds = _frame(data.get("rounds"))
    coverage = _frame(data.get("coverage"))
    return pages.render(
        "view/failure_search.html",
        "../",
        title=f"Caller search {prefix}",
        crumbs=[("../index.html", "runs"), (None, f"caller search {prefix}")],
        prefix=prefix,
        headline=str(data.get("headline", "")),
        method=str((data.get("decision") or {}).get("method", "")),
        findings=findings,
        warnings=list(data.get("warnings") or []),
        rounds=Markup(table_html(rounds)) if len(rounds) else None,
        coverage=Markup(table_html(coverage)) if len(coverage) else None,
        confirm_href=f"../{run_path(confirm)}" if confirm in runs else None,
    )
