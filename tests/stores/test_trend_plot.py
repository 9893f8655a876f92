"""The nightly trend's figure and its words, on a store of our generator's nights with a planted
25-point drop on the last two nights: the plot marks what history says (a ring per regression
against the last-known-good run, a star per last-known-good run, every score inside the axes),
its title is the image's alt text, and the notebook's sentence names the newest verdicts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection

from evalkit.flows import HistoryOptions, Regression, nightly_trend
from evalkit.report.plots import CAPTION_GID, figure_to_img_tag, score_trend

from .test_store_urls import _synthetic_store


@pytest.mark.slow
def test_the_trend_plot_marks_what_history_says(tmp_path: Path) -> None:
    _synthetic_store(tmp_path, [0, 0, 25, 25])
    trend = nightly_trend(tmp_path)
    frame = trend.by_run
    fig = score_trend(frame)
    (ax,) = fig.axes
    marks = {c.get_label(): c for c in ax.collections if isinstance(c, PathCollection)}
    ring = marks["regressed (confirmed)"]
    assert len(ring.get_offsets()) == int((frame["alarm"] == "regressed").sum())
    assert len(ring.get_offsets()) == 2
    stars = marks["last-known-good"]
    assert len(stars.get_offsets()) == int(frame["is_last_good"].sum()) == 2
    low, high = ax.get_ylim()
    every_y = np.concatenate([c.get_offsets()[:, 1] for c in marks.values()])
    assert (every_y >= low).all()
    assert (every_y <= high).all()  # the stars above a high score stay inside the axes
    caption = next(t for t in fig.texts if t.get_gid() == CAPTION_GID).get_text()
    assert "4 run(s)" in caption
    assert "confirmed by the nightly rule (2)" in caption
    tag = figure_to_img_tag(fig)
    assert 'alt="Score by run, with intervals"' in tag  # the left-aligned title, not "plot"
    with pytest.raises(ValueError, match="by='rule'"):
        score_trend(trend.by_rule)


@pytest.mark.slow
def test_the_trend_says_what_the_newest_night_did_and_gates_on_it(tmp_path: Path) -> None:
    _synthetic_store(tmp_path, [0, 0, 25])
    trend = nightly_trend(tmp_path, options=HistoryOptions(min_effect=5.0))
    text = trend.markdown()
    table = trend.summary
    assert type(table) is pd.DataFrame
    assert list(table["run_id"]) == ["night-2"]
    assert table["alarm"].iloc[0] == "regressed"
    assert trend.headline().startswith("asst_1, scorecard synthetic-v1: night-2 scored ")
    assert "regressed against the last-known-good run night-1" in trend.headline()
    assert repr(trend).startswith("<NightlyTrend: asst_1, scorecard")
    assert "night-2" in trend._repr_html_()
    assert trend.to_dict()["regressed"] is True
    assert text.startswith("**night-2**, the newest of 3 run(s), scored ")
    assert "against the run before (`night-1`) it regressed" in text
    assert "against the last-known-good (`night-1`) it regressed" in text
    assert set(trend.newest_rules()["run_id"]) == {"night-2"}
    written = trend.write(tmp_path / "out")
    assert written.name == "trend.json"
    assert {p.name for p in written.parent.iterdir()} == {
        "trend.json",
        "history.parquet",
        "history_by_rule.parquet",
    }
    with pytest.raises(Regression, match="night-2 regressed against the last-known-good run"):
        trend.fail_on_regression()

    steady = tmp_path / "steady"
    _synthetic_store(steady, [0])
    one = nightly_trend(steady)
    assert "first of its series" in one.markdown()
    one.fail_on_regression()  # nothing to compare: no regression
    empty = nightly_trend(tmp_path / "nothing-here")
    assert empty.markdown() == "No graded run matches: nothing to plot."
    assert empty.headline() == "No graded run matches: nothing to plot."
    assert empty.summary.empty
