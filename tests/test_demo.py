"""The demo: draft vs prod end to end on the embedded emulator, ending in an HTML report."""

from __future__ import annotations

import re
from pathlib import Path

from evalkit.demo import run_demo

ARABIC = re.compile(r"[\u0600-\u06FF]")
LATIN = re.compile(r"[A-Za-z]")


def _arabic_share(texts: list[str]) -> float:
    joined = "".join(texts)
    arabic, latin = len(ARABIC.findall(joined)), len(LATIN.findall(joined))
    return arabic / max(arabic + latin, 1)


def test_demo_runs_prod_on_a_clone_and_shows_the_regression(tmp_path: Path) -> None:
    result = run_demo(tmp_path / "demo", repeats=1, seed=3)
    prod, draft = result.prod, result.draft
    assert prod.manifest["target"] == "prod"
    assert prod.manifest["on_clone"] is True
    assert prod.manifest["assistant_version"] == 1
    assert draft.manifest["assistant_version"] == 2
    assert len(prod.conversations) == len(draft.conversations) == 18
    assert set(prod.conversations["conversation_id"]) == set(draft.conversations["conversation_id"])
    assert (prod.conversations["status"] == "done").all()
    # prod's prompt asks for Nastaliq; the draft lost that line and answers in Roman Urdu
    prod_agent = prod.turns[prod.turns["role"] == "agent"]["text"].tolist()
    draft_agent = draft.turns[draft.turns["role"] == "agent"]["text"].tolist()
    assert _arabic_share(prod_agent) > 0.6
    assert _arabic_share(draft_agent) < 0.2
    page = result.report.read_text(encoding="utf-8")
    assert "Draft vs prod" in page
    assert "<table" in page
    assert "sk_api_" not in page
