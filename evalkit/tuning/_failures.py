"""What a round shows its proposer: the current best's failing rules on the selection cells,
worst first (points lost), each with its criterion and clustered failure examples.

Held-out cells are dropped before anything is counted, clustered or quoted, so the proposer
never sees what will confirm the winner. Clusters come from
:func:`evalkit.diagnose.failure_clusters`; an example is the evidence turn's words, else the
judge's rationale, cut short, with every word of the grid's variables records (contact names,
clinics, doctors; read from the run's ``conversations``) replaced by ``[record]``: a proposer
is a model outside evalkit, and the prompt it writes must not carry one contact's name.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

import pandas as pd

from .._util import redact_text
from ..diagnose import ClusterOptions, failure_clusters, hide_record_words, record_value_words
from ..grading import Scorecard
from ._proposer_prompt import FailingRule

__all__ = ["failing_rules"]

MAX_RULES: Final = 6
MAX_EXAMPLES: Final = 2
MAX_QUOTE: Final = 160


def _quote(text: Any, hidden: frozenset[str]) -> str:
    flat = hide_record_words(" ".join(redact_text(str(text)).split()), hidden)
    return flat if len(flat) <= MAX_QUOTE else flat[: MAX_QUOTE - 1].rstrip() + "…"


def _example(row: Any, turns: pd.DataFrame, hidden: frozenset[str]) -> str | None:
    turn = row.get("evidence_turn")
    if turns is not None and len(turns) and turn is not None and not pd.isna(turn):
        hit = turns[
            (turns["conversation_id"] == row["conversation_id"]) & (turns["index"] == int(turn))
        ]
        if len(hit):
            return _quote(f"{hit.iloc[0]['role']}: {hit.iloc[0]['text']}", hidden)
    agent = turns[(turns["conversation_id"] == row["conversation_id"]) & (turns["role"] == "agent")]
    if len(agent):
        return _quote(f"agent: {agent.iloc[0]['text']}", hidden)
    rationale = row.get("rationale")
    return _quote(rationale, hidden) if isinstance(rationale, str) and rationale else None


def failing_rules(
    grades: pd.DataFrame,
    turns: pd.DataFrame,
    card: Scorecard,
    *,
    held_out: Collection[str],
    seed: int = 0,
    conversations: pd.DataFrame | None = None,
) -> list[FailingRule]:
    """The failing rules of ``grades`` on the cells not in ``held_out`` (module docstring);
    ``conversations`` (with ``variables``) gives the records whose words quotes hide."""
    hidden = record_value_words(conversations)
    kept = grades[~grades["cell_id"].isin(set(held_out))]
    decided = kept[kept["verdict"].isin(["pass", "fail"])]
    fails = decided[decided["verdict"] == "fail"]
    if fails.empty:
        return []
    lost = fails.groupby("rule_id")["points"].sum().sort_values(ascending=False, kind="stable")
    top = [str(r) for r in lost.index[:MAX_RULES]]
    ids = set(kept["conversation_id"])
    turns = turns[turns["conversation_id"].isin(ids)]
    try:
        clusters = failure_clusters(kept, turns, rules=top, options=ClusterOptions(seed=seed))
    except ValueError:  # too few texts to cluster: examples without clusters
        clusters = pd.DataFrame(columns=["rule_id", "label", "conversations", "example_ids"])
    rules = {r.rule_id: r for r in card.rules}
    by_id = fails.drop_duplicates("conversation_id").set_index("conversation_id", drop=False)
    out = []
    for rule_id in top:
        rule_fails = fails[fails["rule_id"] == rule_id]
        found = []
        for row in clusters[clusters["rule_id"] == rule_id].to_dict("records"):
            examples = []
            for cid in list(row.get("example_ids") or [])[:MAX_EXAMPLES]:
                hit = rule_fails[rule_fails["conversation_id"] == cid]
                source = hit.iloc[0] if len(hit) else by_id.loc[cid] if cid in by_id.index else None
                text = None if source is None else _example(source, turns, hidden)
                if text:
                    examples.append(text)
            found.append(
                {
                    "label": str(row.get("label", "")),
                    "conversations": int(row.get("conversations", 0)),
                    "examples": examples,
                }
            )
        rule = rules.get(rule_id)
        out.append(
            FailingRule(
                rule_id=rule_id,
                title=str(rule_fails["title"].iloc[0]) if "title" in rule_fails else rule_id,
                criterion=rule.criterion if rule is not None else None,
                failures=len(rule_fails),
                decided=int((decided["rule_id"] == rule_id).sum()),
                points=float(lost[rule_id]),
                clusters=tuple(found),
            )
        )
    return out
