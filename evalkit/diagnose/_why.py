""" "Why did it fail": the rules that moved in a comparison, their failure clusters with
examples and counts per side, the simulation flags of both runs (and the comparison without
the flagged conversations), and the lint findings that differ between the two configs.

The library computes; a report only presents (``notebooks/compare_draft_prod.ipynb``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import pandas as pd

from .._results import Result, json_records
from ._clusters import ClusterOptions, cluster_members, failure_clusters
from ._documents import grades_frame
from ._flags import simulation_flags
from ._lint import lint

if TYPE_CHECKING:
    from ..compare import Comparison
    from ..store import Run

__all__ = ["WhyItFailed", "moved_rules", "why_it_failed"]

MOVED: Final = ("regressed", "improved")
EXAMPLE_CHARS: Final = 220


def moved_rules(comparison: Comparison) -> list[str]:
    """The rules whose verdict is ``regressed`` or ``improved``, regressions first, each
    group by the size of the difference."""
    table = comparison.by_rule
    moved = table[table["direction"].isin(MOVED)].copy()
    moved["_order"] = moved["direction"].map({"regressed": 0, "improved": 1})
    moved["_size"] = -moved["difference"].abs()
    return [str(r) for r in moved.sort_values(["_order", "_size"], kind="stable")["rule_id"]]


def _merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch (a variant's config is its base with its patch applied)."""
    if not isinstance(patch, Mapping):
        return patch
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge_patch(result.get(key), value)
    return result


def run_config(run: Run) -> dict[str, Any] | None:
    """The config a run exercised, from its manifest (snapshot, then a variant's patch)."""
    snapshot = run.manifest.get("config_snapshot") or {}
    config = snapshot.get("config") if isinstance(snapshot, Mapping) else None
    if not isinstance(config, Mapping):
        return None
    variant = run.manifest.get("variant")
    if isinstance(variant, Mapping) and isinstance(variant.get("patch"), Mapping):
        return dict(_merge_patch(config, variant["patch"]))
    return dict(config)


def lint_changes(baseline: Run, candidate: Run) -> pd.DataFrame:
    """Lint findings on one side only: ``change`` ("new in the candidate" or "gone in the
    candidate", with the runs' labels), ``rule_id``, ``severity``, ``path``, ``message``."""
    columns = ["change", "rule_id", "severity", "path", "message"]
    base_config, cand_config = run_config(baseline), run_config(candidate)
    if base_config is None or cand_config is None:
        return pd.DataFrame(columns=columns)
    found = [lint(base_config), lint(cand_config)]
    keys = [set(zip(f["rule_id"], f["path"], f["message"], strict=True)) for f in found]
    label = _label(candidate)
    rows = []
    for change, frame, other in (
        (f"new in {label}", found[1], keys[0]),
        (f"gone in {label}", found[0], keys[1]),
    ):
        for row in frame.itertuples(index=False):
            if (row.rule_id, row.path, row.message) not in other:
                rows.append((change, row.rule_id, row.severity, row.path, row.message))
    return pd.DataFrame(rows, columns=columns)


def _label(run: Run) -> str:
    target = run.manifest.get("target")
    return str(target) if target else run.run_id


def _turn_text(turns: pd.DataFrame, run_id: str, cid: str, index: Any) -> str:
    rows = turns[(turns["conversation_id"].astype(str) == cid)]
    if "run_id" in rows.columns:
        rows = rows[rows["run_id"].astype(str) == run_id]
    if index is not None and not pd.isna(index):
        hit = rows[rows["index"] == int(index)]
        if len(hit):
            return str(hit["text"].iloc[0])
    agent = rows[rows["role"] == "agent"]
    return str(agent["text"].iloc[0]) if len(agent) else ""


def _examples(clusters: pd.DataFrame, grades: pd.DataFrame, turns: pd.DataFrame) -> pd.DataFrame:
    members = cluster_members(clusters)
    side_of = {
        (str(m["rule_id"]), int(m["cluster"]), str(m["conversation_id"])): (
            str(m["side"]),
            str(m["run_id"]),
        )
        for m in members.to_dict(orient="records")
    }
    evidence = {
        (str(g["run_id"]), str(g["conversation_id"]), str(g["rule_id"])): g.get("evidence_turn")
        for g in grades.to_dict(orient="records")
    }
    rows: list[tuple[str, int, str, str, str, str]] = []
    for row in clusters.to_dict(orient="records"):
        rule, number = str(row["rule_id"]), int(row["cluster"])
        for cid in row["example_ids"]:
            side, run_id = side_of[(rule, number, str(cid))]
            text = _turn_text(turns, run_id, str(cid), evidence.get((run_id, str(cid), rule)))
            if len(text) > EXAMPLE_CHARS:
                text = text[: EXAMPLE_CHARS - 1] + "…"
            rows.append((rule, number, side, run_id, str(cid), text))
    return pd.DataFrame(
        rows, columns=["rule_id", "cluster", "side", "run_id", "conversation_id", "text"]
    )


@dataclass(frozen=True, repr=False)
class WhyItFailed(Result):
    """What :func:`why_it_failed` found; every frame is empty rather than missing.

    ``headline()``: how many rules moved and where the largest cluster is; ``summary``: one
    row per cluster as a person reads it (:meth:`cluster_table`); ``findings``: plain
    sentences (each moved rule's largest cluster, the flags, the lint changes).

    ``rules``: the rules that moved; ``clusters``: their failure clusters (both sides);
    ``examples``: each cluster's example conversations with the failing turn; ``flags``: the
    simulation flags of both runs (``side`` added); ``flag_counts``: flagged conversations
    per flag and side; ``without_flagged``: the comparison with the flagged conversations
    left out (None when none is flagged); ``lint``: findings on one config only.
    """

    baseline_label: str
    candidate_label: str
    rules: tuple[str, ...]
    clusters: pd.DataFrame
    examples: pd.DataFrame
    flags: pd.DataFrame
    flag_counts: pd.DataFrame
    without_flagged: Comparison | None
    lint: pd.DataFrame

    def cluster_table(self) -> pd.DataFrame:
        """One row per cluster as a person reads it (in the order of :attr:`rules`): rule,
        cluster, label, script, failures per side, new and fixed in the candidate, and the
        first example's failing turn."""
        first = {
            (str(r["rule_id"]), int(r["cluster"])): str(r["text"])
            for r in self.examples.to_dict(orient="records")
        }
        order = {rule: i for i, rule in enumerate(self.rules)}
        records = sorted(
            self.clusters.to_dict(orient="records"),
            key=lambda r: (order.get(str(r["rule_id"]), len(order)), int(r["cluster"])),
        )
        rows = []
        for row in records:
            key = (str(row["rule_id"]), int(row["cluster"]))
            rows.append(
                {
                    "rule": row["rule_id"],
                    "cluster": row["cluster"],
                    "what the failures share": row["label"],
                    "script": row["script"],
                    "failing in baseline": row["conversations_baseline"],
                    "failing in candidate": row["conversations_candidate"],
                    "new in candidate": row["new_in_candidate"],
                    "fixed in candidate": row["fixed_in_candidate"],
                    "example": first.get(key, ""),
                    "example ids": ", ".join(row["example_ids"]),
                }
            )
        return pd.DataFrame(rows)

    template = "why.html"

    @property
    def summary(self) -> pd.DataFrame:
        """One row per cluster (see :meth:`cluster_table`)."""
        return self.cluster_table()

    @property
    def n(self) -> int:
        """Failing conversations clustered, both sides."""
        if self.clusters.empty:
            return 0
        return int(
            self.clusters["conversations_baseline"].sum()
            + self.clusters["conversations_candidate"].sum()
        )

    def headline(self) -> str:
        """How many rules moved, how many clusters, how many flagged conversations."""
        rules = len(self.rules)
        flagged = int(self.flags["conversation_id"].nunique()) if len(self.flags) else 0
        first = self.findings[0] if self.rules else "no rule to explain"
        return (
            f"{rules} rule(s) explained in {len(self.clusters)} cluster(s), {flagged} "
            f"conversation(s) flagged; {first}"
        )

    def to_dict(self) -> dict[str, Any]:
        """Labels, rules, findings and every table (JSON-ready)."""
        return {
            "baseline": self.baseline_label,
            "candidate": self.candidate_label,
            "rules": list(self.rules),
            "findings": list(self.findings),
            "clusters": json_records(self.cluster_table()),
            "examples": json_records(self.examples),
            "flag_counts": json_records(self.flag_counts),
            "without_flagged": (
                None if self.without_flagged is None else self.without_flagged.to_dict()["summary"]
            ),
            "lint": json_records(self.lint),
        }

    def __str__(self) -> str:
        return "\n".join(self.findings)

    @property
    def findings(self) -> tuple[str, ...]:
        """Plain sentences: each moved rule's largest cluster, the flags, the lint changes."""
        out: list[str] = []
        b, c = self.baseline_label, self.candidate_label
        for rule in self.rules:
            mine = self.clusters[self.clusters["rule_id"] == rule]
            if mine.empty:
                out.append(f"{rule}: no failing conversation on either side.")
                continue
            total_c = int(mine["conversations_candidate"].sum())
            total_b = int(mine["conversations_baseline"].sum())
            if total_c == 0:
                fixed = int(mine["fixed_in_candidate"].sum())
                out.append(
                    f"{rule}: no failing conversation in {c}; {total_b} in {b} ({fixed} fixed "
                    f"in {c}), in {len(mine)} cluster(s)."
                )
                continue
            top = mine.sort_values(["conversations_candidate"], ascending=False).iloc[0]
            out.append(
                f"{rule}: {total_c} failing in {c} and {total_b} in {b}, in {len(mine)} "
                f"cluster(s); the largest in {c} ({int(top['conversations_candidate'])}, "
                f"{int(top['new_in_candidate'])} new in {c}) is in {top['script']} and shares "
                f"\u201c{top['label']}\u201d."
            )
        n_flagged = self.flags.groupby("side")["conversation_id"].nunique().to_dict()
        if self.flags.empty:
            out.append("No simulation flag: no conversation looks like a simulator fault.")
        else:
            out.append(
                f"Simulation flags: {n_flagged.get('baseline', 0)} conversation(s) of {b} and "
                f"{n_flagged.get('candidate', 0)} of {c} look like simulator faults."
            )
            if self.without_flagged is not None:
                row = self.without_flagged.summary.iloc[0]
                out.append(
                    f"Left out, the comparison reads {self.without_flagged.verdict.value} "
                    f"({row['difference']:+.1f} points [{row['difference_low']:+.1f}, "
                    f"{row['difference_high']:+.1f}]), with {int(row['flagged_baseline'])} and "
                    f"{int(row['flagged_candidate'])} conversations left out."
                )
        if self.lint.empty:
            out.append(f"Lint: the same findings for {b} and {c}.")
        else:
            counts = self.lint["change"].value_counts()
            out.append(
                "Lint: "
                + "; ".join(f"{n} finding(s) {change}" for change, n in counts.items())
                + "."
            )
        return tuple(out)


def why_it_failed(
    comparison: Comparison,
    baseline: Run,
    candidate: Run,
    baseline_grades: Any,
    candidate_grades: Any,
    rules: Iterable[str] | None = None,
    *,
    options: ClusterOptions | None = None,
) -> WhyItFailed:
    """Explain ``comparison`` of two runs: failure clusters of the rules that moved (or
    ``rules``), simulation flags of both runs, and lint findings that differ between their
    configs (see :class:`WhyItFailed`). ``options``: the clusters' (:func:`failure_clusters`)."""
    from ..compare import CompareOptions, compare_grades

    base, cand = grades_frame(baseline_grades), grades_frame(candidate_grades)
    chosen = tuple(moved_rules(comparison) if rules is None else rules)
    turns = pd.concat([baseline.turns, candidate.turns], ignore_index=True)
    conversations = pd.concat([baseline.conversations, candidate.conversations], ignore_index=True)
    clusters = failure_clusters(cand, turns, base, conversations, chosen, options=options)
    examples = _examples(clusters, pd.concat([base, cand], ignore_index=True), turns)
    flags = pd.concat(
        [
            simulation_flags(baseline).assign(side="baseline"),
            simulation_flags(candidate).assign(side="candidate"),
        ],
        ignore_index=True,
    )
    counts = (
        flags.groupby(["flag", "side"])["conversation_id"].nunique().unstack(fill_value=0)
        if len(flags)
        else pd.DataFrame()
    )
    without = None
    if len(flags):
        summary = comparison.summary.iloc[0]
        without = compare_grades(
            base,
            cand,
            options=CompareOptions(
                confidence=float(summary["confidence"]),
                min_effect=float(summary["min_effect"]),
                exclude_flagged=flags,
                record_looks=False,
            ),
        )
    return WhyItFailed(
        _label(baseline),
        _label(candidate),
        chosen,
        clusters,
        examples,
        flags,
        counts.reset_index() if len(counts) else pd.DataFrame(columns=["flag"]),
        without,
        lint_changes(baseline, candidate),
    )
