"""Issue 33, item 11: the history page's captions are shown whole. Drawn into the trend's
PNG, the caption ("2 run(s) in 2 series, ... triangle: suspect night; star: last good") ran
past the figure's edge and was cut; now it is text under the image, checked in Chromium at a
desktop and a narrow width."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from evalkit.flows import HistoryOptions, history, series_labels
from evalkit.report.plots import CAPTION_GID, score_trend
from evalkit.store import catalog
from evalkit.view import ViewerOptions, ViewerServer

from .browser import launched, screenshot, watched_page

pytestmark = pytest.mark.slow


def _captions(store: Path, assistant: str) -> list[str]:
    """What score_trend writes as the caption of the history's plot and of each series'."""
    frame = history(store, options=HistoryOptions(assistant_id=assistant))
    labels = series_labels(frame)
    figures = [score_trend(frame, labels=labels)] + [
        score_trend(rows.reset_index(drop=True), title=labels[str(series)])
        for series, rows in frame.groupby("series", sort=False)
    ]
    return [
        " ".join(t.get_text().split())
        for fig in figures
        for t in fig.texts
        if t.get_gid() == CAPTION_GID
    ]


def test_the_trend_png_draws_its_whole_caption_under_the_tick_labels(demo_store: Path) -> None:
    """For a notebook's ``score_trend(...)``: the caption drawn in the figure ends inside it
    (it ran 244 px past the right edge of 900) and stays clear of the rotated run labels."""
    assistant = str(catalog(demo_store)["assistant_id"].iloc[0])
    frame = history(demo_store, options=HistoryOptions(assistant_id=assistant))
    fig = score_trend(frame, labels=series_labels(frame))
    FigureCanvasAgg(fig).draw()  # as figure_to_png draws it
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    (caption,) = [t for t in fig.texts if t.get_gid() == CAPTION_GID]
    box = caption.get_window_extent(renderer)
    assert box.x0 >= 0
    assert box.x1 <= fig.bbox.x1
    assert box.y0 >= 0
    (ax,) = fig.axes
    assert box.y1 <= ax.get_tightbbox(renderer).y0  # below the axes and their tick labels
    assert caption.get_text().endswith("star: last good")


@pytest.mark.parametrize("width", [1280, 640])
def test_every_history_caption_is_shown_whole(demo_store: Path, width: int, chromium: str) -> None:
    assistant = str(catalog(demo_store)["assistant_id"].iloc[0])
    expected = _captions(demo_store, assistant)
    assert len(expected) == 3
    assert all(text.endswith("star: last good") for text in expected)
    with (
        ViewerServer(ViewerOptions(store=demo_store, port=0)) as viewer,
        launched(chromium) as browser,
    ):
        w = watched_page(browser, viewer.base, width=width)
        page = w.page
        page.goto(viewer.url)
        page.locator(f'a[href="history/{assistant}.html"]').click()
        captions = page.locator("figure.vw-figure figcaption")
        assert captions.all_inner_texts() == expected
        for i in range(captions.count()):
            caption = captions.nth(i)
            assert caption.is_visible()
            box = caption.evaluate(
                "e => ({scroll: e.scrollWidth, client: e.clientWidth,"
                " right: e.getBoundingClientRect().right, view: window.innerWidth,"
                " overflow: getComputedStyle(e).overflow})"
            )
            assert box["scroll"] <= box["client"], box
            assert box["right"] <= box["view"], box
        screenshot(page, f"viewer-history-{width}.png", full_page=True)
        assert w.outside == [], w.outside
