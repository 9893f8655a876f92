"""Leaving flagged simulations out of a comparison: counted per side, said in a sentence.

``CompareOptions(exclude_flagged=flags)`` takes the frame ``evalkit.simulation_flags`` returns
(``conversation_id``, ``flag``, and ``run_id`` when known: conversation ids repeat across runs
of one grid, so a flag with a run id leaves out that run's conversation only). The grades of
those conversations are dropped before anything is computed; ``summary`` counts them
(``flagged_baseline``, ``flagged_candidate``) and ``Comparison.warnings`` says so.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["drop_flagged", "flagged_sentence"]


def _keep(grades: pd.DataFrame, flags: pd.DataFrame) -> tuple[pd.DataFrame, int, dict[str, int]]:
    """``grades`` without the flagged conversations; how many were left out, and the
    conversations left out per flag. A flag with a ``run_id`` applies to that run's
    conversation only (when the grades carry run ids); one without, to the id in any run."""
    cids = grades["conversation_id"].astype(str)
    runs = grades["run_id"].astype(str) if "run_id" in grades.columns else None
    flag_ids = flags["conversation_id"].astype(str)
    flag_runs = flags["run_id"] if runs is not None and "run_id" in flags.columns else None
    graded = set(zip(runs, cids, strict=True)) if runs is not None else set()
    graded_ids = set(cids)
    scoped: set[tuple[str, str]] = set()
    anywhere: set[str] = set()
    applies = []
    for i, cid in enumerate(flag_ids):
        run = None if flag_runs is None else flag_runs.iloc[i]
        if run is None or pd.isna(run):
            applies.append(cid in graded_ids)
            anywhere.add(cid)
        else:
            applies.append((str(run), cid) in graded)
            scoped.add((str(run), cid))
    if runs is None:
        hit = cids.isin(anywhere)
    else:
        hit = pd.Series(
            [(r, c) in scoped or c in anywhere for r, c in zip(runs, cids, strict=True)],
            index=grades.index,
        )
    applying = flags.loc[pd.Series(applies, index=flags.index, dtype=bool)]
    by_flag = applying.groupby("flag")["conversation_id"].nunique()
    left_out = int(cids[hit].nunique())
    return grades.loc[~hit], left_out, {str(k): int(v) for k, v in by_flag.items()}


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
