"""compare_variants on grades frames: the leaderboard contract, words, JSON, bad input."""

from __future__ import annotations

import json

import pytest
from scipy import stats

from evalkit.compare import Verdict
from evalkit.tuning import TuneResult, VariantsOptions, compare_variants
from tests.simulate._arms import arm_frame, draw_arms
from tests.simulate._tune_calibration import TUNE_DESIGN

COLUMNS = [
    "variant",
    "conversations",
    "score",
    "score_low",
    "score_high",
    "difference",
    "difference_low",
    "difference_high",
    "verdict",
    "dropped_at",
    "confirmed",
]


@pytest.fixture(scope="module")
def sweep() -> TuneResult:
    codes = draw_arms(TUNE_DESIGN, (18.0, 0.0, -25.0), trials=1, seed=21)
    return compare_variants(
        arm_frame(codes, 0, None),
        {
            "helps": arm_frame(codes, 0, 0),
            "same": arm_frame(codes, 0, 1),
            "hurts": arm_frame(codes, 0, 2),
        },
    )


def test_leaderboard_has_the_contract_columns(sweep: TuneResult) -> None:
    board = sweep.leaderboard
    assert set(COLUMNS) <= set(board.columns)
    assert next(iter(board["variant"])) == "control"
    assert list(board["variant"])[1] == "helps"  # arms by difference
    assert board["conversations"].tolist() == [144] * 4
    assert any(c.startswith("pass_rate:") for c in board.columns)
    rows = board.set_index("variant")
    assert rows.loc["helps", "verdict"] == Verdict.IMPROVED
    assert rows.loc["hurts", "verdict"] == Verdict.REGRESSED
    assert bool(rows.loc["helps", "confirmed"])
    assert not rows["confirmed"].drop("helps").any()
    arms = rows.drop("control")
    assert (arms["difference_low"] < arms["difference"]).all()
    assert (arms["difference"] < arms["difference_high"]).all()


def test_winner_words_and_json(sweep: TuneResult) -> None:
    assert sweep.winner == "helps"
    assert sweep.winner_variant is None  # decided from grades alone: no config to promote
    assert sweep.diff == ""
    text = str(sweep)
    assert text.startswith("improved: helps beats control by +")
    assert "confirmed on" in text
    html = sweep._repr_html_()
    assert "<table" in html
    assert "helps" in html
    again = json.loads(json.dumps(sweep.to_dict()))
    assert again["winner"] == "helps"
    assert len(again["leaderboard"]) == 4


def test_equal_arms_say_the_best_may_be_chance() -> None:
    trials = 40
    codes = draw_arms(TUNE_DESIGN, (0.0,) * 5, trials=trials, seed=3)
    notes = []
    winners = 0
    for trial in range(trials):
        result = compare_variants(
            arm_frame(codes, trial, None), {f"v{k}": arm_frame(codes, trial, k) for k in range(5)}
        )
        winners += result.winner is not None
        top = result.leaderboard.iloc[1]
        if top["difference"] > 0 and result.winner is None:
            notes.append(top["note"])
            assert "best by chance is likely" in str(result)
    assert notes
    assert all("best by chance is likely" in n for n in notes)
    # five arms equal to control: a winner is a false alarm, family-wise at most
    # (1 - confidence) / 2 = 2.5% per sweep (the bound allows for the trial count)
    assert winners <= stats.binom.ppf(0.999, trials, 0.025)


def test_bad_input_names_the_field() -> None:
    codes = draw_arms(TUNE_DESIGN, (0.0,), trials=1, seed=1)
    control = arm_frame(codes, 0, None)
    with pytest.raises(ValueError, match=r"variants\['x'\] grades lack columns \['verdict'\]"):
        compare_variants(control, {"x": control.drop(columns="verdict")})
    with pytest.raises(ValueError, match="at least one arm"):
        compare_variants(control, {})
    with pytest.raises(TypeError, match=r"control must be an evalkit\.grading\.Grades"):
        compare_variants([1, 2], {"x": control})
    with pytest.raises(ValueError, match=r"VariantsOptions\.holdout must be in \[0, 1\)"):
        VariantsOptions(holdout=1.5)
    with pytest.raises(ValueError, match=r"VariantsOptions\.confidence"):
        VariantsOptions(confidence=0.3)


def test_unbalanced_and_small_designs_still_decide() -> None:
    codes = draw_arms(TUNE_DESIGN, (15.0,), trials=1, seed=2)
    control, arm = arm_frame(codes, 0, None), arm_frame(codes, 0, 0)
    alone = compare_variants(control, {"one": arm}, options=VariantsOptions(holdout=0.0))
    assert alone.winner == "one"
    assert "no held-out cells: tested on all cells, Bonferroni over 1 arm," in alone.headline()
    half = arm[(arm["cell_id"] < "cell-018") & (arm["repeat"] == 0)]
    mixed = compare_variants(control, {"half": half, "full": arm})
    rows = mixed.leaderboard.set_index("variant")
    assert rows.loc["half", "conversations"] == 18
    assert rows.loc["half", "difference_low"] < rows.loc["half", "difference_high"]
    two_cells = compare_variants(
        control[control["cell_id"] < "cell-002"], {"x": arm[arm["cell_id"] < "cell-002"]}
    )
    assert two_cells.winner is None
    assert two_cells.headline().startswith("no confirmed improvement: x looks better")


def test_results_pickle_and_hold_no_config() -> None:
    import pickle

    codes = draw_arms(TUNE_DESIGN, (0.0, 0.0), trials=1, seed=4)
    result = compare_variants(
        arm_frame(codes, 0, None), {"a": arm_frame(codes, 0, 0), "b": arm_frame(codes, 0, 1)}
    )
    again = pickle.loads(pickle.dumps(result))
    assert again.winner == result.winner
    assert repr(again) == f"<TuneResult: {result.headline()}>"


def test_the_forest_plot_names_the_winner_n_and_the_dropped(sweep: TuneResult) -> None:
    from evalkit.report import plots

    fig = plots.arm_forest(sweep)
    (caption,) = [t.get_text() for t in fig.texts if t.get_gid() == plots.CAPTION_GID]
    assert caption.startswith("n = 144 control conversations, 432 on 3 arms; 36 cells, 11 held out")
    (ax,) = fig.axes
    assert "winner helps" in ax.get_title()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0] == "helps\n(confirmed winner)"  # the best arm first (on top)
    assert len(plots.figure_to_png(fig)) > 10_000
