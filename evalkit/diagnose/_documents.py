"""What a failure says: one text per failing conversation x rule, from its evidence turn (or
the agent's turns when the grader named none) and the grader's rationale.

Texts are normalised so that what varies between contacts does not split a cluster: NFKC,
case-folded, every digit (ASCII, Urdu or Arabic-Indic) becomes ``0``.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING, Final

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # grading brings scipy: `evalkit lint FILE` must not import it
    from ..grading import GradesLike

__all__ = ["failing_documents", "grades_frame"]

_DIGITS_RE: Final = re.compile(r"\d", re.UNICODE)
MAX_CHARS: Final = 600
"""A document keeps at most this many characters of turns (the rationale comes first)."""


def grades_frame(grades: GradesLike, name: str = "grades") -> pd.DataFrame:
    """A :class:`~evalkit.Grades` or its DataFrame, as the DataFrame (with the columns
    clustering needs)."""
    from ..grading import as_grades_frame

    frame = as_grades_frame(grades, name)
    missing = [c for c in ("conversation_id", "rule_id", "verdict") if c not in frame.columns]
    if missing:
        raise ValueError(f"grades lack columns {missing}")
    return frame


def _normalise(text: str) -> str:
    return _DIGITS_RE.sub("0", unicodedata.normalize("NFKC", text).casefold())


def _turn_texts(
    turns: pd.DataFrame,
) -> tuple[dict[tuple[str, str, int], str], dict[tuple[str, str], str]]:
    """(run, conversation, index) -> text, and (run, conversation) -> the agent's turns."""
    run = (
        turns["run_id"].astype(str)
        if "run_id" in turns.columns
        else pd.Series("", index=turns.index)
    )
    keys = list(zip(run, turns["conversation_id"].astype(str), strict=True))
    texts = turns["text"].fillna("").astype(str).tolist()
    by_index = {(r, c, int(i)): t for (r, c), i, t in zip(keys, turns["index"], texts, strict=True)}
    agent: dict[tuple[str, str], list[str]] = {}
    for key, role, text in zip(keys, turns["role"], texts, strict=True):
        if role == "agent":
            agent.setdefault(key, []).append(text)
    return by_index, {k: " ".join(v) for k, v in agent.items()}


def _records(conversations: pd.DataFrame | None) -> dict[tuple[str, str], str]:
    """(run, conversation) -> its variables record (JSON text), when known."""
    if conversations is None or "variables" not in conversations.columns:
        return {}
    run = (
        conversations["run_id"].astype(str)
        if "run_id" in conversations.columns
        else pd.Series("", index=conversations.index)
    )
    return {
        (r, str(c)): str(v)
        for r, c, v in zip(
            run, conversations["conversation_id"], conversations["variables"], strict=True
        )
    }


def failing_documents(
    grades: pd.DataFrame,
    turns: pd.DataFrame,
    side: str,
    rules: set[str] | None,
    conversations: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per failing conversation x rule: ``rule_id``, ``run_id``, ``conversation_id``,
    ``cell_id``, ``record`` (its variables record, else its cell), ``side``, ``text``
    (normalised). Turns match on run and conversation when both frames carry ``run_id``
    (conversation ids repeat across runs of one grid)."""
    failing = grades[grades["verdict"] == "fail"]
    if rules is not None:
        failing = failing[failing["rule_id"].isin(rules)]
    by_index, agent = _turn_texts(turns)
    with_run = "run_id" in turns.columns and "run_id" in failing.columns
    runs = failing["run_id"].astype(str) if with_run else pd.Series("", index=failing.index)
    evidence = (
        failing["evidence_turn"]
        if "evidence_turn" in failing
        else pd.Series(pd.NA, index=failing.index)
    )
    rationale = (
        failing["rationale"].fillna("").astype(str)
        if "rationale" in failing
        else pd.Series("", index=failing.index)
    )
    texts = []
    for run, cid, turn, why in zip(
        runs, failing["conversation_id"].astype(str), evidence, rationale, strict=True
    ):
        said = None
        if turn is not None and not pd.isna(turn):
            said = by_index.get((run, cid, int(turn)))
        if said is None:
            said = agent.get((run, cid), "")
        texts.append(_normalise(f"{why} | {said[:MAX_CHARS]}"))
    known = _records(conversations)
    ids = failing["conversation_id"].astype(str).tolist()
    cells = (
        failing["cell_id"].astype(str)
        if "cell_id" in failing
        else failing["conversation_id"].astype(str).str.rsplit("-", n=1).str[0]
    )
    return pd.DataFrame(
        {
            "rule_id": failing["rule_id"].astype(str).to_numpy(),
            "run_id": failing["run_id"].astype(str).to_numpy()
            if "run_id" in failing
            else np.full(len(failing), ""),
            "conversation_id": failing["conversation_id"].astype(str).to_numpy(),
            "cell_id": cells.to_numpy(),
            "record": [
                known.get((r if with_run else "", c), known.get(("", c), cell))
                for r, c, cell in zip(runs, ids, cells, strict=True)
            ],
            "side": side,
            "text": texts,
        }
    )
