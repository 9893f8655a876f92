"""Plots: report-width PNGs with the expected text, n and left-out captions, no Urdu glyphs
without a font that has them, and no pyplot state."""

from __future__ import annotations

import base64
import io
import itertools
from collections.abc import Iterable

import matplotlib.image
import pandas as pd
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from evalkit.compare import Comparison, compare_grades
from evalkit.report import ArabicFont, _fonts, plots
from evalkit.stats import clopper_pearson_interval
from evalkit.store import Run
from tests.simulate import SyntheticTruth, synthetic_grades

from .figures import row_label_texts, row_labels
from .fixtures import NOT_DONE, PERSONAS
from .overlap import collisions


def texts(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


def caption(fig: Figure) -> str:
    (text,) = [t.get_text() for t in fig.texts if t.get_gid() == plots.CAPTION_GID]
    return text


def png_size(data: bytes) -> tuple[int, int]:
    image = matplotlib.image.imread(io.BytesIO(data), format="png")
    return image.shape[1], image.shape[0]


@pytest.fixture
def no_font(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_fonts, "find_arabic_font", lambda *a, **k: None)


def test_rule_forest_names_rules_adjustment_and_n(regressed: Comparison) -> None:
    fig = plots.rule_forest(regressed)
    ax = fig.axes[0]
    labels = row_label_texts(ax)
    assert len(labels) == len(regressed.by_rule)
    for rule_id in regressed.by_rule["rule_id"]:
        assert any(f"[{rule_id}]" in label for label in labels)
    assert "Bonferroni-adjusted" in ax.get_title()
    assert "regressed" in ax.get_title()
    min_effect = float(regressed.summary["min_effect"].iloc[0])
    assert f"±{min_effect:g}" in ax.get_title()
    row = regressed.summary.iloc[0]
    n = f"{row['conversations_baseline']} vs {row['conversations_candidate']} conversations"
    assert n in caption(fig)
    assert "left out" in caption(fig)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert set(regressed.by_rule["direction"].str.replace("_", " ")) <= set(legend)
    assert png_size(plots.figure_to_png(fig)) == (900, int(fig.get_figheight() * 100))


def test_rule_forest_colours_follow_direction(regressed: Comparison) -> None:
    fig = plots.rule_forest(regressed)
    ax = fig.axes[0]
    markers = [line for line in ax.get_lines() if line.get_marker() == "o"]
    directions = regressed.by_rule["direction"].tolist()
    assert len(markers) >= len(directions)
    colours = [line.get_color() for line in markers[: len(directions)]]
    for direction, colour in zip(directions, colours, strict=True):
        assert colour == plots._common.DIRECTION_COLORS[direction]


def test_very_long_rule_titles_are_wrapped_and_cut_after_four_lines() -> None:
    truth = SyntheticTruth.demo(seed=4)
    long = "The agent states the appointment date and time clearly and asks for a yes or no " * 3
    sides = []
    for seed, t in ((1, truth), (2, truth.shifted(-10))):
        grades = synthetic_grades(t, seed=seed)
        grades["title"] = long
        sides.append(grades)
    fig = plots.rule_forest(compare_grades(*sides))
    for label in row_label_texts(fig.axes[0]):
        lines = label.splitlines()
        assert len(lines) == 5  # four lines of title, then [rule id]
        assert all(len(line) <= 44 for line in lines[:4])
        assert lines[3].endswith("…")


def test_score_distributions_from_a_comparison(regressed: Comparison) -> None:
    fig = plots.score_distributions(regressed)
    ax = fig.axes[0]
    assert "regressed" in ax.get_title()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    cells = int(regressed.summary["cells_paired"].iloc[0])
    assert legend[0].startswith(f"baseline (n = {cells}")
    assert f"n = {cells} cells paired" in caption(fig)
    low = float(regressed.summary["score_candidate_low"].iloc[0])
    assert any(f"[{low:.1f}," in t for t in texts(fig))


def test_score_distributions_from_grades_counts_each_side(regressed: Comparison) -> None:
    truth = SyntheticTruth.demo(seed=5)
    prod = synthetic_grades(truth, seed=1)
    draft = synthetic_grades(truth.shifted(-15), seed=2)
    fig = plots.score_distributions(
        {"prod": prod, "draft": draft}, left_out={"draft": {"error": 3, "dropped": 2}}
    )
    n_prod = prod["conversation_id"].nunique()
    n_draft = draft["conversation_id"].nunique()
    text = caption(fig)
    assert f"n = {n_prod} vs {n_draft} conversations scored" in text
    assert "draft: 2 dropped, 3 error left out" in text
    heights = sum(p.get_height() for p in fig.axes[0].patches)
    assert heights == n_prod + n_draft


def test_heatmap_has_personas_records_and_left_out(prod_run: Run, no_font: None) -> None:
    fig = plots.persona_record_heatmap(prod_run.grades(), prod_run)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == list(PERSONAS)
    records = [t.get_text() for t in ax.get_xticklabels()]
    assert records == ["Ayesha Khan", "record 2", "Bilal Ahmed"]
    done = len(prod_run.conversations) - len(NOT_DONE)
    assert caption(fig) == f"n = {done} conversations scored; 1 dropped, 1 error left out"
    cell_ns = [t for t in texts(fig) if "n=" in t]
    assert sum(int(t.split("n=")[1]) for t in cell_ns) == done


def test_no_arabic_glyph_anywhere_without_a_font(
    prod_run: Run, draft_run: Run, regressed: Comparison, no_font: None
) -> None:
    figures = [
        plots.persona_record_heatmap(prod_run.grades(), prod_run),
        plots.rule_forest(regressed),
        plots.outcomes_by_status([prod_run, draft_run]),
        plots.turns_and_latency([prod_run, draft_run]),
    ]
    for fig in figures:
        assert not [t for t in texts(fig) if _fonts.has_arabic(t)]


def test_urdu_labels_are_kept_when_a_font_has_them(prod_run: Run, urdu_font: ArabicFont) -> None:
    fig = plots.persona_record_heatmap(prod_run.grades(), prod_run)
    labels = fig.axes[0].get_xticklabels()
    urdu = [t for t in labels if _fonts.has_arabic(t.get_text())]
    assert len(urdu) == 1
    assert urdu_font.family in urdu[0].get_fontfamily()
    assert_drawn_in_urdu_font(urdu[0], urdu_font)
    plots.figure_to_png(fig)


# --------------------------------------------------------------------------- rule titles
#: Rule id -> title: plain, Urdu inside English, all Urdu, and one no conversation applied to.
TITLES = {
    "rule-0": "The agent states the appointment date and time from the record",
    "rule-1": "The agent closes with a farewell (اللہ حافظ / خدا حافظ, in either script)",
    "rule-2": "ایجنٹ کال کے آخر میں شکریہ اور اللہ حافظ کہتا ہے",
    "rule-3": "With the wrong person, the agent reveals no appointment details and ends politely",
}
NEVER_APPLIES = "rule-3"


@pytest.fixture(scope="module")
def titled() -> Comparison:
    truth = SyntheticTruth.demo(seed=6)
    sides = []
    for seed, t in ((1, truth), (2, truth.shifted(-10))):
        grades = synthetic_grades(t, repeats=3, seed=seed)
        grades["title"] = grades["rule_id"].map(TITLES).fillna(grades["title"])
        never = grades["rule_id"] == NEVER_APPLIES
        grades.loc[never, "verdict"] = "na"
        grades.loc[never, "points_awarded"] = 0.0
        sides.append(grades)
    return compare_grades(*sides)


def _plain(label: str) -> str:
    """A label's text as a person reads it: no direction marks, lines joined."""
    return " ".join(label.replace(_fonts.LRM, "").replace(_fonts.RLM, "").split())


def _collapsed(chars: Iterable[str]) -> list[str]:
    return [ch for ch, _ in itertools.groupby(chars)]


def assert_drawn_in_urdu_font(label: Text, font: ArabicFont) -> None:
    """Every Arabic letter of ``label`` is drawn by ``font``, shaped, in right-to-left order.

    Uses matplotlib's own text layout (libraqm): the font each glyph came from, the glyph
    chosen (a joined letter is not the letter's isolated form), and the visual order.
    """
    from matplotlib import _text_helpers
    from matplotlib.font_manager import fontManager, get_font

    ft = get_font(fontManager._find_fonts_by_props(label.get_fontproperties()))
    for line in label.get_text().splitlines():
        if not _fonts.has_arabic(line):
            continue
        items = list(_text_helpers.layout(line, ft))
        arabic = [i for i in items if _fonts.has_arabic(i.char)]
        assert {i.ft_object.family_name for i in arabic} == {font.family}, line
        shaped = [i for i in arabic if i.glyph_index != i.ft_object.get_char_index(ord(i.char))]
        assert len(shaped) > len(arabic) / 2, f"{line!r}: letters not joined"
        # Nastaliq may draw one letter with several glyphs: compare letters, repeats collapsed
        (start, end), *_ = _fonts.arabic_runs(line)
        logical = _collapsed(ch for ch in line[start:end] if _fonts.has_arabic(ch))
        visual = _collapsed(i.char for i in arabic)
        assert visual[: len(logical)] == logical[::-1], f"{line!r}: not right to left"


def test_rule_forest_shows_every_title_beside_its_id(titled: Comparison) -> None:
    fig = plots.rule_forest(titled)
    labels = [_plain(label) for label in row_label_texts(fig.axes[0])]
    for rule_id, title in zip(titled.by_rule["rule_id"], titled.by_rule["title"], strict=True):
        assert f"{title} [{rule_id}]" in labels, (title, labels)


def test_rule_forest_draws_urdu_titles_in_nastaliq_shaped_right_to_left(
    titled: Comparison, urdu_font: ArabicFont
) -> None:
    fig = plots.rule_forest(titled)
    rows = [r for r in row_labels(fig.axes[0]) if any(_fonts.has_arabic(t.get_text()) for t in r)]
    assert len(rows) == 2  # the mixed title and the all-Urdu one
    for line in (t for row in rows for t in row if _fonts.has_arabic(t.get_text())):
        assert_drawn_in_urdu_font(line, urdu_font)
    (mixed,) = [row for row in rows if "farewell" in row[0].get_text()]
    assert any("اللہ حافظ / خدا حافظ" in t.get_text() for t in mixed)  # never split
    assert plots.figure_to_png(fig).startswith(b"\x89PNG")


@pytest.mark.parametrize("font", ["installed", "a Latin face first", "none"])
def test_rule_forest_labels_never_overlap(
    titled: Comparison, regressed: Comparison, font: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if font == "none":
        monkeypatch.setattr(_fonts, "find_arabic_font", lambda *a, **k: None)
    if font == "a Latin face first":  # as where Noto Sans is installed: Latin first, then Urdu
        monkeypatch.setattr(_fonts, "bundled_latin", lambda: "DejaVu Sans")
    for comparison in (titled, regressed):
        assert collisions(plots.rule_forest(comparison)) == []


def test_a_latin_line_beside_urdu_keeps_a_latin_line_height(
    titled: Comparison, urdu_font: ArabicFont
) -> None:
    rows = {row[-1].get_text(): row for row in row_labels(plots.rule_forest(titled).axes[0])}
    plain, mixed = rows["[rule-0]"], rows[f"{_fonts.LRM}[rule-1]"]

    def height(text: Text) -> float:
        return float(text.get_window_extent().height)

    urdu = next(t for t in mixed if _fonts.has_arabic(t.get_text()))
    assert height(mixed[-1]) == pytest.approx(height(plain[-1]))  # the id under an Urdu title
    assert height(mixed[0]) == pytest.approx(height(plain[0]))  # its Latin first line
    assert height(urdu) > 1.5 * height(plain[0])  # Nastaliq's lines are taller


def test_rule_forest_says_in_words_why_a_rule_was_not_compared(titled: Comparison) -> None:
    fig = plots.rule_forest(titled)
    ax = fig.axes[0]
    notes = [t.get_text() for t in ax.texts if t.get_gid() != plots.ROW_LABEL_GID]
    assert len(notes) == 1
    assert "applies to no conversation" in notes[0]
    assert "n/a in all" in " ".join(notes[0].split())


def test_rule_forest_without_an_urdu_font_keeps_the_latin_words(
    titled: Comparison, no_font: None
) -> None:
    fig = plots.rule_forest(titled)
    labels = [_plain(label) for label in row_label_texts(fig.axes[0])]
    assert not [label for label in labels if _fonts.has_arabic(label)]
    assert "The agent closes with a farewell (…, in either script) [rule-1]" in labels
    assert "(title in Urdu: no Urdu font installed to draw it) [rule-2]" in labels


def test_outcomes_by_status_counts_every_conversation(prod_run: Run, draft_run: Run) -> None:
    fig = plots.outcomes_by_status({"prod": prod_run, "draft": draft_run.conversations})
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["prod", "draft"]
    total = len(prod_run.conversations) + len(draft_run.conversations)
    assert caption(fig).startswith(f"n = {total} conversations in 2 run(s)")
    assert "2 dropped, 2 error not done" in caption(fig)
    assert sum(p.get_width() for p in ax.patches) == total


def test_turns_and_latency_uses_done_conversations(prod_run: Run, draft_run: Run) -> None:
    fig = plots.turns_and_latency([prod_run, draft_run])
    turns_ax, latency_ax = fig.axes
    done = sum(int((r.conversations["status"] == "done").sum()) for r in (prod_run, draft_run))
    assert caption(fig) == f"n = {done} done conversations; 2 dropped, 2 error left out"
    assert sum(p.get_height() for p in turns_ax.patches) == done
    assert [t.get_text() for t in latency_ax.get_yticklabels()] == ["prod", "draft"]
    assert "latency" in latency_ax.get_xlabel()


def test_png_and_img_tag_without_pyplot(regressed: Comparison) -> None:
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    fig = plots.rule_forest(regressed)
    tag = plots.figure_to_img_tag(fig)
    assert plt.get_fignums() == before
    prefix = 'src="data:image/png;base64,'
    assert tag.startswith("<img ")
    assert prefix in tag
    data = base64.b64decode(tag.split(prefix)[1].split('"')[0])
    assert data == plots.figure_to_png(fig)
    assert data.startswith(b"\x89PNG")
    assert 'alt="Per-rule differences' in tag


FINDINGS = (
    "persona",
    "rule_id",
    "failures",
    "decided",
    "rate",
    "rate_low",
    "rate_high",
    "reported",
)


def _findings(rows: int) -> pd.DataFrame:
    """Confirmed pairs: persona ``p<i>`` failing ``rule`` i of 8 fresh times, reported above 5."""
    frame: list[dict[str, object]] = []
    for i in range(rows):
        low, high = clopper_pearson_interval(i % 9, 8)
        frame.append(
            {"persona": f"p{i}", "rule_id": "rule", "failures": i % 9, "decided": 8,
             "rate": (i % 9) / 8, "rate_low": low, "rate_high": high, "reported": i % 9 > 5}
        )  # fmt: skip
    return pd.DataFrame(frame, columns=[*FINDINGS])


def test_failure_rates_shows_each_pair_with_its_counts_and_the_threshold() -> None:
    fig = plots.failure_rates(_findings(9), threshold=0.25)
    shown = texts(fig)
    assert "p8 · rule (8/8)" in shown
    assert "p0 · rule (0/8)" in shown
    assert any("3 of 9 pair(s) shown above 25%" in t for t in shown)
    assert (
        caption(fig)
        == "n = 72 fresh verdicts over 9 confirmed pair(s) of 9 persona(s); none left out"
    )
    assert collisions(fig) == []


def test_failure_rates_says_how_many_pairs_it_left_out_and_when_there_were_none() -> None:
    fig = plots.failure_rates(_findings(40), threshold=0.25, max_rows=30)
    assert caption(fig).endswith("; 10 more pair(s) left out")
    # the reported pairs come first, so none of them is among the ones left out
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert len(labels) == 30
    reported = [f"p{i} · rule ({i % 9}/8)" for i in range(40) if i % 9 > 5]
    assert set(reported) <= set(labels)
    empty = plots.failure_rates(_findings(0), threshold=0.25)
    assert "no pair was confirmed" in texts(empty)
    assert caption(empty).startswith("n = 0 fresh verdicts over 0 confirmed pair(s)")
