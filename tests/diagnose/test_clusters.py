"""Failure clusters on hand-made grades and transcripts: one failure mode per script
(English, Roman Urdu, Nastaliq) comes out as one cluster each, names do not split them, the
sides are counted (new in the draft, fixed in the draft), the same seed gives the same
clusters, and every failing conversation is a member."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from evalkit.diagnose import ClusterOptions, cluster_members, failure_clusters

NAMES = ["Ayesha Khan", "Bilal Ahmed", "Fatima Noor", "Omar Shah", "Hina Raza", "Zara Malik"]
URDU_NAMES = ["عائشہ خان", "بلال احمد", "فاطمہ نور", "عمر شاہ", "حنا رضا", "زارا ملک"]
MODES = {
    "english": "Hello {en}, this is the clinic. Your visit is on {d} November at {t} pm, goodbye.",
    "roman": "Assalam o alaikum {en} ji, aap ki appointment {d} November ko {t} baje hai, shukriya.",
    "nastaliq": "السلام علیکم {ur} جی، آپ کی اپائنٹمنٹ {d} نومبر کو {t} بجے ہے، شکریہ۔",
}


def _side(
    run_id: str, modes: dict[str, str], repeats: int = 2
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Grades, turns and conversations of a run: cell c-i fails with ``modes[cell]`` (a mode
    name) or passes when the cell is not in ``modes``."""
    grades, turns, conv = [], [], []
    for i in range(18):
        cell = f"c{i:02d}"
        person = i % len(NAMES)
        for r in range(repeats):
            cid = f"{cell}-{r}"
            mode = modes.get(cell)
            text = MODES[mode or "nastaliq"].format(
                en=NAMES[person], ur=URDU_NAMES[person], d=10 + i, t=1 + r
            )
            turns += [
                {
                    "run_id": run_id,
                    "conversation_id": cid,
                    "index": 1,
                    "role": "agent",
                    "text": text,
                },
                {
                    "run_id": run_id,
                    "conversation_id": cid,
                    "index": 2,
                    "role": "caller",
                    "text": "Jee.",
                },
            ]
            grades.append(
                {
                    "run_id": run_id, "conversation_id": cid, "cell_id": cell, "repeat": r,
                    "rule_id": "script", "verdict": "fail" if mode else "pass",
                    "rationale": "the agent does not answer as asked" if mode else "ok",
                    "evidence_turn": 1 if mode else pd.NA,
                }
            )  # fmt: skip
            conv.append(
                {
                    "run_id": run_id,
                    "conversation_id": cid,
                    "variables": json.dumps({"name": NAMES[person]}),
                }
            )
    return pd.DataFrame(grades), pd.DataFrame(turns), pd.DataFrame(conv)


# draft fails cells 0-5 in English, 6-11 in Roman Urdu; prod fails 12-14 in Nastaliq and 0-1
DRAFT = {f"c{i:02d}": ("english" if i < 6 else "roman") for i in range(12)}
PROD = {**{f"c{i:02d}": "nastaliq" for i in range(12, 15)}, "c00": "english", "c01": "english"}


@pytest.fixture(scope="module")
def clusters() -> pd.DataFrame:
    cand, cand_turns, cand_conv = _side("draft", DRAFT)
    base, base_turns, base_conv = _side("prod", PROD)
    return failure_clusters(
        cand,
        pd.concat([base_turns, cand_turns]),
        baseline=base,
        conversations=pd.concat([base_conv, cand_conv]),
    )


def test_one_cluster_per_failure_mode_whatever_the_script(clusters: pd.DataFrame) -> None:
    assert clusters["rule_id"].tolist() == ["script"] * 3
    members = cluster_members(clusters)
    modes = members.assign(
        mode=[
            (PROD if side == "baseline" else DRAFT)[cell]
            for side, cell in zip(members["side"], members["cell_id"], strict=True)
        ]
    )
    purity = modes.groupby("cluster")["mode"].nunique()
    assert (purity == 1).all(), modes.groupby(["cluster", "mode"]).size()
    by_mode = modes.groupby("mode")["cluster"].first()
    english, roman, nastaliq = (clusters.set_index("cluster").loc[by_mode[m]] for m in MODES)
    assert (english["conversations_candidate"], english["conversations_baseline"]) == (12, 4)
    assert (roman["conversations_candidate"], roman["conversations_baseline"]) == (12, 0)
    assert (nastaliq["conversations_candidate"], nastaliq["conversations_baseline"]) == (0, 6)
    # new in the draft: cells prod passed; fixed: prod failures in cells the draft passed
    assert (english["new_in_candidate"], english["fixed_in_candidate"]) == (8, 0)
    assert (roman["new_in_candidate"], roman["fixed_in_candidate"]) == (12, 0)
    assert (nastaliq["new_in_candidate"], nastaliq["fixed_in_candidate"]) == (0, 6)
    assert clusters["cluster"].tolist() == [0, 1, 2]  # most candidate failures first
    assert clusters["share"].iloc[:2].tolist() == [0.5, 0.5]
    for examples in clusters["example_ids"]:
        assert len(examples) == 2
    roman_words = set(roman["label"].split(" · "))
    assert roman_words & {"appointment", "baje", "alaikum", "assalam", "shukriya", "november"}
    assert not roman_words & {n.lower() for name in NAMES for n in name.split()}


def test_members_and_their_filters(clusters: pd.DataFrame) -> None:
    members = clusters.attrs["members"]
    assert len(members) == 24 + 10  # every failing conversation of both sides, once
    assert list(members.columns) == [
        "rule_id", "cluster", "label", "side", "run_id", "conversation_id", "cell_id",
    ]  # fmt: skip
    first = cluster_members(clusters, "script", 0, side="candidate")
    assert len(first) == clusters.loc[0, "conversations_candidate"]
    assert set(first["run_id"]) == {"draft"}
    with pytest.raises(ValueError, match="not a failure_clusters result"):
        cluster_members(pd.DataFrame())


def test_the_same_seed_gives_the_same_clusters() -> None:
    cand, turns, conv = _side("draft", DRAFT)
    a = failure_clusters(cand, turns, conversations=conv, options=ClusterOptions(seed=3))
    b = failure_clusters(cand, turns, conversations=conv, options=ClusterOptions(seed=3))
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a.attrs["members"], b.attrs["members"])
    assert a["conversations_baseline"].isna().all()  # no baseline: no per-side counts
    assert a["new_in_candidate"].isna().all()


def test_small_and_empty_inputs() -> None:
    cand, turns, _ = _side("draft", {"c00": "roman"}, repeats=1)
    one = failure_clusters(cand, turns)
    assert one[["cluster", "conversations"]].values.tolist() == [[0, 1]]
    passing, turns2, _ = _side("draft", {}, repeats=1)
    none = failure_clusters(passing, turns2)
    assert none.empty
    assert "label" in none.columns
    assert none.attrs["members"].empty
    assert failure_clusters(cand, turns, rules=["other"]).empty
    single = failure_clusters(*_side("draft", DRAFT)[:2], options=ClusterOptions(max_clusters=1))
    assert len(single) == 1
    with pytest.raises(ValueError, match="grades lack columns"):
        failure_clusters(pd.DataFrame({"x": [1]}), turns)
