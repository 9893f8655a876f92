"""No two texts of a shipped plot overlap, and none runs past its figure's edge: every plot the
report's notebooks and the viewer draw, drawn as they draw it, on the demo's runs (prod and
draft graded with the Urdu appointment-reminder scorecard, a sequential comparison, a tune, a
prompt search, nightly runs) and on Urdu titles and records, an all-Urdu title included. The
text boxes come from matplotlib's own renderer (``overlap.py``)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from matplotlib.figure import Figure

from evalkit import demo, flows
from evalkit.compare import compare_grades
from evalkit.report import _fonts, plots
from evalkit.store import load_run
from evalkit.view._compare_pages import compare_page, history_page
from evalkit.view._pages import Pages
from evalkit.view._site import Site

from .fixtures import RunSpec, write_graded_run
from .overlap import collisions

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
#: The plot functions (each returns a Figure).
PLOT_FUNCTIONS = frozenset(plots.__all__) - {
    "CAPTION_GID",
    "conversation_scores",
    "figure_to_img_tag",
    "figure_to_png",
}
#: Where the figures are shown: a notebook of the report, Urdu labels, the viewer.
PLACES = ("compare", "sequential", "explore", "tune", "optimize", "nightly", "urdu", "viewer")
#: An all-Urdu rule title ("the agent answers in Urdu (Nastaliq) script the whole call, never
#: in Roman Urdu") and a long one mixing Urdu into English.
URDU_TITLE = "ایجنٹ پوری کال میں اردو (نستعلیق) رسم الخط میں جواب دیتا ہے، رومن اردو میں نہیں"
MIXED_TITLE = (
    "When the caller says شکریہ or اللہ حافظ, the agent closes the call at once with a farewell "
    "in the same script (خدا حافظ), and never asks again whether the slot suits them"
)


class Drawn:
    """The figures drawn, by place, and the plot functions that drew them."""

    def __init__(self) -> None:
        self.figures: dict[str, list[tuple[str, Figure]]] = {place: [] for place in PLACES}
        self.called: dict[str, set[str]] = {place: set() for place in PLACES}
        self.place = PLACES[0]


@contextmanager
def recording(drawn: Drawn) -> Iterator[None]:
    """Every plot function of ``evalkit.report.plots`` records its figure under the current
    place (the viewer imports them from there when it draws)."""

    def recorded(name: str, draw: Callable[..., Figure]) -> Callable[..., Figure]:
        @functools.wraps(draw)
        def wrapper(*args: Any, **kwargs: Any) -> Figure:
            fig = draw(*args, **kwargs)
            drawn.figures[drawn.place].append((name, fig))
            drawn.called[drawn.place].add(name)
            return fig

        return wrapper

    with pytest.MonkeyPatch.context() as patch:
        for name in sorted(PLOT_FUNCTIONS):
            patch.setattr(plots, name, recorded(name, getattr(plots, name)))
        yield


def _report(drawn: Drawn, tmp: Path) -> None:
    """What the notebooks draw, with their calls, on the offline demo's data."""
    card = demo.demo_scorecard()
    drawn.place = "compare"  # compare_draft_prod.ipynb
    store = demo.offline_runs(tmp / "compare", repeats=2, progress=False)
    outcome = flows.compare_request(flows.ComparisonRequest(store=store, scorecard=card))
    comparison = outcome.comparison
    plots.rule_forest(comparison)
    plots.score_distributions(comparison)
    plots.persona_record_heatmap(outcome.candidate_grades, outcome.candidate)
    sides = [outcome.baseline, outcome.candidate]
    plots.outcomes_by_status(sides)
    plots.turns_and_latency(sides)
    plots.agent_latency(sides)
    drawn.place = "explore"  # explore_run.ipynb
    plots.outcomes_by_status([outcome.candidate])
    drawn.place = "viewer"
    compare_page(Pages(Site(store), live=False), "prod", "draft")
    drawn.place = "urdu"  # the same report with Urdu in titles and records
    base, cand = (g.frame.copy() for g in (outcome.baseline_grades, outcome.candidate_grades))
    for frame in (base, cand):
        frame.loc[frame["rule_id"] == "urdu-script", "title"] = URDU_TITLE
        frame.loc[frame["rule_id"] == "no-repetition", "title"] = MIXED_TITLE
    plots.rule_forest(compare_grades(base, cand))
    urdu_run = write_graded_run(tmp / "urdu-records", RunSpec("urdu", "draft", seed=3))
    plots.persona_record_heatmap(urdu_run.grades(), urdu_run)

    drawn.place = "sequential"  # compare_draft_prod.ipynb with sequential = True
    store = demo.offline_runs(tmp / "sequential", repeats=3, sequential=True, progress=False)
    outcome = flows.compare_request(flows.ComparisonRequest(store=store, scorecard=card))
    record = outcome.sequential
    assert record is not None
    plots.sequential_looks(
        record.looks, min_effect=record.plan.min_effect, max_conversations=record.max_conversations
    )
    drawn.place = "tune"  # tune_prompt.ipynb
    plots.arm_forest(demo.offline_tune(tmp / "tune", max_repeats=2, progress=False))
    drawn.place = "optimize"  # optimize_prompt.ipynb
    plots.optimize_rounds(
        demo.offline_optimize(tmp / "optimize", rounds=2, candidates=3, progress=False)
    )
    drawn.place = "nightly"  # nightly_trend.ipynb
    store = demo.offline_nights(tmp / "nightly", nights=3, repeats=1)
    trend = flows.nightly_trend(store)
    plots.score_trend(trend.by_run, labels=dict(trend.series_labels))
    drawn.place = "viewer"
    assistant = str(load_run("night-01", store=store).manifest["assistant_id"])
    history_page(Pages(Site(store), live=False), assistant)


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> Drawn:
    if _fonts.find_arabic_font() is None:
        pytest.fail("no font draws Urdu: the Urdu labels would be Latin stand-ins")
    result = Drawn()
    with recording(result):
        _report(result, tmp_path_factory.mktemp("shipped"))
    return result


@pytest.mark.parametrize("place", PLACES)
def test_no_two_texts_of_a_shipped_plot_overlap(drawn: Drawn, place: str) -> None:
    figures = drawn.figures[place]
    assert figures, f"nothing drawn for {place}"
    problems = [f"{name}: {problem}" for name, fig in figures for problem in collisions(fig)]
    assert problems == [], "\n".join(problems)


def _notebook_plots() -> set[str]:
    names = set()
    for notebook in sorted((REPO / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        names |= set(re.findall(r"\bplots\.(\w+)\(", code))
    return names & PLOT_FUNCTIONS


def _viewer_plots() -> set[str]:
    names = set()
    for module in sorted((REPO / "evalkit" / "view").glob("*.py")):
        for imported in re.findall(r"from \.\.report\.plots import ([\w, ]+)", module.read_text()):
            names |= {n.strip() for n in imported.split(",")}
    return names & PLOT_FUNCTIONS


def test_every_plot_the_notebooks_and_the_viewer_draw_is_checked(drawn: Drawn) -> None:
    notebooks, viewer = _notebook_plots(), _viewer_plots()
    assert {"rule_forest", "score_trend"} <= notebooks  # the scan finds the calls
    assert {"rule_forest", "agent_latency", "score_trend"} <= viewer
    report = set().union(*(drawn.called[p] for p in PLACES if p != "viewer"))
    assert notebooks - report == set()
    assert viewer - drawn.called["viewer"] == set()
