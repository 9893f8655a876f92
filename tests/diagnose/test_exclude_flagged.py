"""CompareOptions(exclude_flagged=...): which conversations a flag leaves out (its run's only,
or the id in any run without a run id), the counts per side and per flag, and options that
still compare and hash."""

from __future__ import annotations

import pandas as pd

from evalkit.compare import CompareOptions, compare_grades


def grades(run_id: str, cells: int = 6, repeats: int = 3, fail_every: int = 4) -> pd.DataFrame:
    rows = []
    for c in range(cells):
        for r in range(repeats):
            for rule, points in (("a", 60), ("b", 40)):
                fail = (c * repeats + r) % fail_every == 0 and rule == "a"
                rows.append(
                    {
                        "run_id": run_id, "conversation_id": f"cell{c}-{r}", "cell_id": f"cell{c}",
                        "persona_label": "p", "repeat": r, "rule_id": rule, "points": points,
                        "verdict": "fail" if fail else "pass",
                        "points_awarded": 0 if fail else points, "grader": "check:x",
                    }
                )  # fmt: skip
    return pd.DataFrame(rows)


BASE, CAND = grades("prod"), grades("draft", fail_every=3)


def flags(*rows: tuple[str | None, str, str]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"run_id": r, "conversation_id": c, "flag": f, "reason": "x"} for r, c, f in rows]
    )


def counts(options: CompareOptions) -> tuple[int, int, tuple[str, ...]]:
    cmp = compare_grades(BASE, CAND, options=options)
    row = cmp.summary.iloc[0]
    said = tuple(w for w in cmp.warnings if "flagged simulations" in w)
    return int(row["flagged_baseline"]), int(row["flagged_candidate"]), said


def test_a_flag_leaves_out_its_runs_conversation_only() -> None:
    scoped = flags(("draft", "cell0-0", "caller-loops"), ("draft", "cell1-2", "caller-loops"))
    base_n, cand_n, said = counts(CompareOptions(exclude_flagged=scoped))
    assert (base_n, cand_n) == (0, 2)
    assert said == (
        "0 baseline and 2 candidate conversation(s) were left out as flagged simulations "
        "(caller-loops: 2); they are not in any score or interval.",
    )
    cmp = compare_grades(BASE, CAND, options=CompareOptions(exclude_flagged=scoped))
    assert cmp.summary.iloc[0]["conversations_candidate"] == 16


def test_without_a_run_id_the_id_goes_on_both_sides_and_flags_count_once() -> None:
    anywhere = flags(
        (None, "cell0-0", "identical-repeats"),
        (None, "cell0-0", "caller-loops"),
        ("prod", "cell2-1", "persona-not-shown"),
        ("other-run", "cell3-0", "persona-not-shown"),  # a run not compared: nothing
    )
    base_n, cand_n, (said,) = counts(CompareOptions(exclude_flagged=anywhere))
    assert (base_n, cand_n) == (2, 1)
    assert "(caller-loops: 2, identical-repeats: 2, persona-not-shown: 1)" in said


def test_nothing_flagged_nothing_said_and_options_still_compare() -> None:
    assert counts(CompareOptions()) == (0, 0, ())
    empty = pd.DataFrame(columns=["run_id", "conversation_id", "flag", "reason"])
    assert counts(CompareOptions(exclude_flagged=empty)) == (0, 0, ())
    a = CompareOptions(exclude_flagged=flags((None, "cell0-0", "x")))
    assert a == CompareOptions()  # the flags frame is not part of equality or the hash
    assert hash(a) == hash(CompareOptions())
