"""The viewer's pages for prompt searches (``evalkit optimize``): the list on the index, and one
page per search with its rounds, every candidate (raced, refused or failed, with the
proposer's reason) and links to the candidates' runs.

A search is read from what it stored: ``<store>/.optimize/<prefix>/round-NN.json`` (the
request, the proposals, the refusals, the round's summary) and the runs
``<prefix>-draft`` and ``<prefix>-r<round>-c<i>``.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
from markupsafe import Markup

from ..report import table_html
from ._pages import Pages
from ._paths import run_path, seg

__all__ = ["optimisations", "optimize_page"]

FOLDER = ".optimize"


def optimize_path(prefix: str) -> str:
    return f"optimize/{seg(prefix)}.html"


def _rounds(pages: Pages, prefix: str) -> list[dict[str, Any]]:
    folder = pages.site.root / FOLDER / prefix
    if not folder.exists():
        raise KeyError(f"no prompt search {prefix!r} in this store")
    out = []
    entries: list[Any] = list(folder.iterdir())
    for path in sorted(entries, key=lambda p: str(p.name)):
        if path.name.startswith("round-") and path.name.endswith(".json"):
            try:
                data = json.loads(path.read_bytes())
            except (OSError, ValueError):
                continue
            if isinstance(data, dict):
                out.append(data)
    return out


def optimisations(pages: Pages) -> list[tuple[str, str]]:
    """``(href, text)`` of every search in the store, newest name last."""
    folder = pages.site.root / FOLDER
    if not folder.exists():
        return []
    found = []
    entries: list[Any] = list(folder.iterdir())
    for path in sorted(entries, key=lambda p: str(p.name)):
        rounds = _rounds(pages, path.name)
        if rounds:
            finished = sum(1 for r in rounds if r.get("finished"))
            found.append((optimize_path(path.name), f"{path.name} ({finished} round(s))"))
    return found


def _candidates(prefix: str, data: dict[str, Any], runs: set[str]) -> list[dict[str, Any]]:
    number = int(data.get("round", 0))
    refused = {
        r.get("candidate"): f"{r.get('kind') or 'refused'}: {r.get('reason')}"
        for r in data.get("refused") or []
    }
    dropped = data.get("dropped_at") or {}
    rows = []
    for i, proposal in enumerate(data.get("proposals") or [], start=1):
        name = f"r{number}-c{i}"
        run_id = f"{prefix}-{name}"
        if name in refused:
            status = refused[name]
        elif run_id in runs:
            status = f"raced, dropped after wave {dropped[name]}" if name in dropped else "raced"
        else:
            status = "not run"
        rows.append(
            {
                "candidate": name,
                "status": status,
                "rationale": str(proposal.get("rationale", "")),
                "run": run_id if run_id in runs else "",
            }
        )
    return rows


def optimize_page(pages: Pages, prefix: str) -> str:
    """One search: its rounds and every candidate."""
    rounds = _rounds(pages, prefix)
    runs = set(pages.site.catalog()["run_id"].astype(str)) if rounds else set()
    summary = pd.DataFrame([r["summary"] for r in rounds if isinstance(r.get("summary"), dict)])
    sections = []
    for data in rounds:
        rows = _candidates(prefix, data, runs)
        sections.append(
            {
                "round": data.get("round"),
                "parent": data.get("parent"),
                "finished": bool(data.get("finished")),
                "rows": rows,
                "links": {r["candidate"]: f"../{run_path(r['run'])}" for r in rows if r["run"]},
            }
        )
    draft = f"{prefix}-draft"
    return pages.render(
        "view/optimization.html",
        "../",
        title=f"Prompt search {prefix}",
        crumbs=[("../index.html", "runs"), (None, f"prompt search {prefix}")],
        prefix=prefix,
        summary=Markup(table_html(summary, float_format="{:.1f}")) if len(summary) else None,
        sections=sections,
        draft_href=f"../{run_path(draft)}" if draft in runs else None,
    )
