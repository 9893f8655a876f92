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
PLOT_FUNCTIONS = frozenset(
    name
    for name in plots.__all__
    if callable(getattr(plots, name))
    and name not in {"conversation_scores", "figure_to_img_tag", "figure_to_png"}
)
#: An all-Urdu rule title ("the agent answers in Urdu (Nastaliq) script the whole call, never
#: in Roman Urdu") and a long one mixing Urdu into English.
URDU_TITLE = "ایجنٹ پوری کال میں اردو (نستعلیق) رسم الخط میں جواب دیتا ہے، رومن اردو میں نہیں"
MIXED_TITLE = (
    "When the caller says شکریہ or اللہ حافظ, the agent closes the call at once with a farewell "
    "in the same script (خدا حافظ), and never asks again whether the slot suits them"
)


@contextmanager
def recording() -> Iterator[list[tuple[str, Figure]]]:
    """Every figure a plot function of ``evalkit.report.plots`` draws while inside, with the
    function's name (the viewer imports them from there when it draws)."""
    drawn: list[tuple[str, Figure]] = []

    def recorded(name: str, draw: Callable[..., Figure]) -> Callable[..., Figure]:
        @functools.wraps(draw)
        def wrapper(*args: Any, **kwargs: Any) -> Figure:
            fig = draw(*args, **kwargs)
            drawn.append((name, fig))
            return fig

        return wrapper

    with pytest.MonkeyPatch.context() as patch:
        for name in sorted(PLOT_FUNCTIONS):
            patch.setattr(plots, name, recorded(name, getattr(plots, name)))
        yield drawn


@pytest.fixture(scope="module")
def compare_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's prod and draft, graded with the Urdu appointment-reminder scorecard."""
    return demo.offline_runs(tmp_path_factory.mktemp("compare"), repeats=2, progress=False)


@pytest.fixture(scope="module")
def nightly_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo.offline_nights(tmp_path_factory.mktemp("nightly"), nights=3, repeats=1)


def _compared(store: Path) -> flows.ComparisonOutcome:
    request = flows.ComparisonRequest(store=store, scorecard=demo.demo_scorecard())
    return flows.compare_request(request)


def _compare(compare_store: Path, tmp: Path) -> None:
    """compare_draft_prod.ipynb (the report `evalkit demo` writes)."""
    outcome = _compared(compare_store)
    comparison = outcome.comparison
    plots.rule_forest(comparison)
    plots.score_distributions(comparison)
    plots.persona_record_heatmap(outcome.candidate_grades, outcome.candidate)
    sides = [outcome.baseline, outcome.candidate]
    plots.outcomes_by_status(sides)
    plots.turns_and_latency(sides)
    plots.agent_latency(sides)


def _explore(compare_store: Path, tmp: Path) -> None:
    """explore_run.ipynb."""
    plots.outcomes_by_status([load_run("draft", store=compare_store)])


def _urdu(compare_store: Path, tmp: Path) -> None:
    """The compare report with Urdu in rule titles (one all Urdu) and in a contact record."""
    outcome = _compared(compare_store)
    base, cand = (g.frame.copy() for g in (outcome.baseline_grades, outcome.candidate_grades))
    for frame in (base, cand):
        frame.loc[frame["rule_id"] == "urdu-script", "title"] = URDU_TITLE
        frame.loc[frame["rule_id"] == "no-repetition", "title"] = MIXED_TITLE
    plots.rule_forest(compare_grades(base, cand))
    urdu_run = write_graded_run(tmp / "urdu-records", RunSpec("urdu", "draft", seed=3))
    plots.persona_record_heatmap(urdu_run.grades(), urdu_run)


def _sequential(compare_store: Path, tmp: Path) -> None:
    """compare_draft_prod.ipynb with sequential = True."""
    store = demo.offline_runs(tmp, repeats=3, sequential=True, progress=False)
    record = _compared(store).sequential
    assert record is not None
    plots.sequential_looks(
        record.looks, min_effect=record.plan.min_effect, max_conversations=record.max_conversations
    )


def _tune(compare_store: Path, tmp: Path) -> None:
    """tune_prompt.ipynb."""
    plots.arm_forest(demo.offline_tune(tmp, max_repeats=2, progress=False))


def _optimize(compare_store: Path, tmp: Path) -> None:
    """optimize_prompt.ipynb."""
    plots.optimize_rounds(demo.offline_optimize(tmp, rounds=2, candidates=3, progress=False))


def _find_failures(compare_store: Path, tmp: Path) -> None:
    """find_failures.ipynb."""
    search = demo.offline_find_failures(tmp, rounds=2, per_round=6, progress=False)
    plots.failure_rates(search.findings, threshold=float(search.decision["threshold"]))


def _viewer(compare_store: Path, tmp: Path, nightly_store: Path) -> None:
    """The viewer's compare page and history page."""
    compare_page(Pages(Site(compare_store), live=False), "prod", "draft")
    assistant = str(load_run("night-01", store=nightly_store).manifest["assistant_id"])
    history_page(Pages(Site(nightly_store), live=False), assistant)


def _nightly(compare_store: Path, tmp: Path, nightly_store: Path) -> None:
    """nightly_trend.ipynb."""
    trend = flows.nightly_trend(nightly_store)
    plots.score_trend(trend.by_run, labels=dict(trend.series_labels))


#: Where figures are shown -> how they are drawn there, and the plot functions it draws.
PLACES: dict[str, tuple[Callable[..., None], frozenset[str]]] = {
    "compare": (
        _compare,
        frozenset(
            {"rule_forest", "score_distributions", "persona_record_heatmap"}
            | {"outcomes_by_status", "turns_and_latency", "agent_latency"}
        ),
    ),
    "explore": (_explore, frozenset({"outcomes_by_status"})),
    "urdu": (_urdu, frozenset({"rule_forest", "persona_record_heatmap"})),
    "sequential": (_sequential, frozenset({"sequential_looks"})),
    "tune": (_tune, frozenset({"arm_forest"})),
    "optimize": (_optimize, frozenset({"optimize_rounds"})),
    "nightly": (_nightly, frozenset({"score_trend"})),
    "find_failures": (_find_failures, frozenset({"failure_rates"})),
    "viewer": (_viewer, frozenset({"rule_forest", "agent_latency", "score_trend"})),
}


@pytest.mark.parametrize("place", PLACES)
def test_no_two_texts_of_a_shipped_plot_overlap(
    place: str, compare_store: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    if _fonts.find_arabic_font() is None:
        pytest.fail("no font draws Urdu: the Urdu labels would be Latin stand-ins")
    draw, expected = PLACES[place]
    extra = [request.getfixturevalue("nightly_store")] if place in ("nightly", "viewer") else []
    with recording() as figures:
        draw(compare_store, tmp_path, *extra)
    assert {name for name, _ in figures} == expected
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


def test_every_plot_the_notebooks_and_the_viewer_draw_is_checked() -> None:
    notebooks, viewer = _notebook_plots(), _viewer_plots()
    assert {"rule_forest", "score_trend"} <= notebooks  # the scan finds the calls
    assert {"rule_forest", "agent_latency", "score_trend"} <= viewer
    report = set().union(*(plots for place, (_, plots) in PLACES.items() if place != "viewer"))
    assert notebooks - report == set()
    assert viewer - PLACES["viewer"][1] == set()
