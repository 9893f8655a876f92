"""Leaving flagged simulations out of a comparison: counted per side, said in a sentence.

``CompareOptions(exclude_flagged=flags)`` takes the frame ``evalkit.simulation_flags`` returns
(``conversation_id``, ``flag``, and ``run_id`` when known: conversation ids repeat across runs
of one grid, so a flag with a run id leaves out that run's conversation only). The grades of
those conversations are dropped before anything is computed; ``summary`` counts them
(``flagged_baseline``, ``flagged_candidate``) and ``Comparison.warnings`` says so.
"""

from __future__ import annotations

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

__all__ = ["drop_flagged", "flagged_sentence"]


def _keep(grades: pd.DataFrame, flags: pd.DataFrame) -> tuple[pd.DataFrame, int, dict[str, int]]:
    ids = flags["conversation_id"].astype(str)
    if "run_id" in flags.columns and "run_id" in grades.columns:
        run = flags["run_id"]
        scoped = run.notna()
        keys = set(zip(run[scoped].astype(str), ids[scoped], strict=True))
        anywhere = set(ids[~scoped])
        pairs = zip(
            grades["run_id"].astype(str), grades["conversation_id"].astype(str), strict=True
        )
        hit = pd.Series([(r, c) in keys or c in anywhere for r, c in pairs], index=grades.index)
    else:
        hit = grades["conversation_id"].astype(str).isin(set(ids))
    dropped = grades.loc[hit, "conversation_id"].astype(str).unique()
    by_flag = flags[ids.isin(set(dropped))].groupby("flag")["conversation_id"].nunique()
    return grades.loc[~hit], len(dropped), {str(k): int(v) for k, v in by_flag.items()}


def drop_flagged(
    baseline: pd.DataFrame, candidate: pd.DataFrame, flags: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, int], dict[str, int]]:
    """Both grades frames without the flagged conversations; the count left out per side and
    the conversations per flag (over both sides)."""
    missing = [c for c in ("conversation_id", "flag") if c not in flags.columns]
    if missing:
        raise ValueError(f"exclude_flagged lacks columns {missing} (use simulation_flags)")
    base, n_base, flags_base = _keep(baseline, flags)
    cand, n_cand, flags_cand = _keep(candidate, flags)
    per_flag = {k: flags_base.get(k, 0) + flags_cand.get(k, 0) for k in {*flags_base, *flags_cand}}
    return base, cand, {"baseline": n_base, "candidate": n_cand}, per_flag


def flagged_sentence(counts: dict[str, int], per_flag: dict[str, int]) -> str | None:
    """The warning that says what was left out, or None when nothing was."""
    if not any(counts.values()):
        return None
    detail = ", ".join(f"{flag}: {n}" for flag, n in sorted(per_flag.items()))
    return (
        f"{counts['baseline']} baseline and {counts['candidate']} candidate conversation(s) were "
        f"left out as flagged simulations ({detail}); they are not in any score or interval."
    )
