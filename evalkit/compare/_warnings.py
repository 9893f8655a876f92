"""Plain sentences about what could mislead a comparison (``Comparison.warnings``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..stats import fisher_exact_p
from ._decision import ERRORS_ALPHA
from ._sides import NA, Sides

__all__ = ["comparison_warnings"]

#: Fewer degrees of freedom than this and the interval is said to rest on a small design.
SMALL_DF = 5.0


def _rules_list(rules: Sequence[str], counts: Sequence[tuple[int, int]]) -> str:
    return ", ".join(f"{r} ({b} vs {c})" for r, (b, c) in zip(rules, counts, strict=True))


def _na_differ(sides: Sides) -> Iterator[str]:
    base, cand = (s.rule_counts for s in sides.pair)
    rules = sides.rules
    p = np.atleast_1d(fisher_exact_p(base[NA], base[-1], cand[NA], cand[-1]))
    differ = np.flatnonzero(p < ERRORS_ALPHA)
    if differ.size:
        yield (
            "Rules are n/a more often on one side (an n/a rule is left out of the score, so the "
            "sides are scored on different ground): "
            + _rules_list(
                [rules[i] for i in differ],
                [(int(base[NA][i]), int(cand[NA][i])) for i in differ],
            )
            + " (n/a rows, baseline vs candidate)."
        )


def _left_out_differ(counts: Sequence[tuple[int, int] | None]) -> Iterator[str]:
    """``counts``: per side, (conversations left out, conversations in the run), or None when
    the side does not know (a bare grades frame)."""
    known = [c for c in counts if c is not None and c[1] > 0]
    if len(known) < 2:
        return
    p = fisher_exact_p(known[0][0], known[0][1], known[1][0], known[1][1])
    if p < ERRORS_ALPHA:
        yield (
            f"Conversations left out (not done) differ between the sides: {known[0][0]} of "
            f"{known[0][1]} baseline vs {known[1][0]} of {known[1][1]} candidate (Fisher's "
            f"exact p = {p:.3g}); the scores describe only the conversations that finished."
        )


def comparison_warnings(
    row: dict[str, Any],
    by_rule: pd.DataFrame,
    sides: Sides,
    left_out: Sequence[tuple[int, int] | None],
) -> list[str]:
    """Every warning a comparison's summary, rules and sides give, as sentences."""
    out: list[str] = []
    for label in ("baseline", "candidate"):
        if row[f"rules_left_out_{label}"]:
            out.append(
                f"The {label}'s scores leave out whole rules ({row[f'rules_left_out_{label}']}: "
                f"{row[f'points_left_out_{label}']:g} points): not one pass or fail, only "
                "errors (a judge that did not answer?), so no verdict rests on them."
            )
    if row["errors_differ"]:
        b, c = row["conversations_with_errors_baseline"], row["conversations_with_errors_candidate"]
        p = fisher_exact_p(b, row["conversations_baseline"], c, row["conversations_candidate"])
        out.append(
            f"Judge errors differ between the sides: {b} of {row['conversations_baseline']} "
            f"baseline vs {c} of {row['conversations_candidate']} candidate conversations have a "
            f"judged rule in error (Fisher's exact p = {p:.3g}). Errors may fall on failing or "
            "passing conversations, so the verdict needs the bounds with them scored against "
            f"and for the candidate to agree ({row['worst_case_low']:+.1f} to "
            f"{row['best_case_high']:+.1f} points)."
        )
    moved = by_rule[by_rule["errors_differ"]] if "errors_differ" in by_rule else by_rule.iloc[:0]
    if len(moved):
        out.append(
            "Rules whose judge errors differ between the sides (their direction needs the "
            "error bounds to agree): "
            + _rules_list(
                list(moved["rule_id"]),
                list(zip(moved["error_baseline"], moved["error_candidate"], strict=True)),
            )
            + "."
        )
    out.extend(_na_differ(sides))
    out.extend(_left_out_differ(left_out))
    if row["method"] == "none":
        out.append(f"No interval: {row['method_reason'].removeprefix('no interval: ')}.")
    elif float(row["df"]) < SMALL_DF:
        out.append(
            f"The design is small for its method: the interval rests on {float(row['df']):.3g} "
            "degrees of freedom, so it is wide; more cells or repeats would narrow it."
        )
    unpaired = int(row["cells_unpaired"])
    if unpaired:
        out.append(
            f"{unpaired} cell(s) were scored on one side only "
            f"({row['unpaired_cells_baseline']} baseline, {row['unpaired_cells_candidate']} "
            "candidate) and are left out of the difference."
        )
    return out
