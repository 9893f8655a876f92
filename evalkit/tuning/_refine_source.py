"""``proposer="refine"``: each candidate is a refine build (E10) with its own ownerFeedback,
one per failure cluster of the current best (worst rule first), so a team whose service
refines prompts itself searches over builds instead of following one chain.

The builds run on the original built assistant one at a time, the draft restored from its
snapshot between builds (:func:`evalkit.refine._candidates.refine_candidates`); the captured
prompts then race on temporary clones like any other candidate.
"""

from __future__ import annotations

from typing import Any, Final

from ..api import AsyncClient
from ..refine import MAX_FEEDBACK_CHARS, refine_candidates
from ..store import StoreLike
from ._proposer import Proposal, ProposalBatch
from ._proposer_prompt import FailingRule, ProposalRequest

__all__ = ["RefineProposer", "cluster_feedbacks"]

_HEADER: Final = (
    "Rehearsed calls fell short here; please change the prompt so that every call meets it:"
)


def _one(rule: FailingRule, cluster: dict[str, Any] | None) -> str:
    line = f"- {rule.title.rstrip('.')} (missed in {rule.failures} of {rule.decided} calls)."
    if rule.criterion:
        line += f" The expectation: {' '.join(rule.criterion.split())}"
    if cluster:
        examples = "; ".join(f'"{e}"' for e in cluster.get("examples", [])[:2])
        if examples:
            line += f" For example: {examples}."
    return f"{_HEADER}\n{line}"[:MAX_FEEDBACK_CHARS]


def cluster_feedbacks(request: ProposalRequest) -> list[str]:
    """One ownerFeedback per failure cluster (worst rule first), at most ``candidates``."""
    out: list[str] = []
    for rule in request.failing_rules:
        clusters: list[dict[str, Any] | None] = [dict(c) for c in rule.clusters] or [None]
        for cluster in clusters:
            text = _one(rule, cluster)
            if text not in out:
                out.append(text)
    return out[: request.candidates]


class RefineProposer:
    """Candidates from refine builds of ``assistant_id`` (module docstring)."""

    def __init__(
        self, client: AsyncClient, assistant_id: str, *, store: StoreLike = "runs"
    ) -> None:
        self._client = client
        self._assistant_id = assistant_id
        self._store = store

    def describe(self) -> dict[str, Any]:
        return {"kind": "refine", "assistant_id": self._assistant_id}

    async def apropose(self, request: ProposalRequest) -> ProposalBatch:
        feedbacks = cluster_feedbacks(request)
        built = await refine_candidates(
            self._client, self._assistant_id, feedbacks, store=self._store
        )
        proposals = tuple(
            Proposal(c.instructions, c.feedback) for c in built if c.instructions is not None
        )
        failed = tuple(c.error or "" for c in built if c.instructions is None)
        return ProposalBatch(proposals, calls=len(built), malformed=len(failed), reasons=failed)
