"""The text-overlap checker finds what it should: texts drawn over each other, a text past the
figure's edge; and not what it should not: texts that only touch, slanted labels whose
letters are apart, texts never drawn, a text's bbox patch or an annotation's arrow."""

from __future__ import annotations

from matplotlib.figure import Figure

from .overlap import collisions, drawn_texts


def _figure() -> Figure:
    fig = Figure(figsize=(4, 3), dpi=100)
    fig.subplots()
    return fig


def test_two_texts_over_each_other_collide() -> None:
    fig = _figure()
    fig.text(0.3, 0.5, "first line of a label")
    fig.text(0.32, 0.51, "[rule-id]")
    (problem,) = collisions(fig)
    assert "'first line of a label'" in problem
    assert "overlaps '[rule-id]'" in problem


def test_a_text_past_the_edge_is_reported() -> None:
    fig = _figure()
    fig.text(0.8, 0.5, "a caption longer than the figure is wide")
    (problem,) = collisions(fig)
    assert "runs past the figure's edge (400 x 300 px)" in problem


def test_texts_that_only_touch_do_not_collide() -> None:
    fig = _figure()
    upper = fig.text(0.2, 0.5, "upper", va="bottom")
    fig.canvas.draw()  # a first draw: the extents below are where the texts land
    height = upper.get_window_extent().height / fig.bbox.height
    fig.text(0.2, 0.5 - height, "lower", va="bottom")
    assert collisions(fig) == []


def test_slanted_labels_are_their_rotated_boxes() -> None:
    fig = Figure(figsize=(4, 3), dpi=100, layout="constrained")
    ax = fig.subplots()
    ax.set_xticks(range(10), [f"night-{i:02d}" for i in range(10)], rotation=45, ha="right")
    ax.set_xlim(-0.5, 9.5)
    texts = {t.text: t.corners for t in drawn_texts(fig)}
    first, second = texts["night-00"], texts["night-01"]
    # their upright boxes overlap, their letters do not
    assert first[:, 0].max() > second[:, 0].min()
    assert first[:, 1].max() > second[:, 1].min()
    assert collisions(fig) == []


def test_what_is_not_drawn_is_not_checked() -> None:
    fig = _figure()
    ax = fig.axes[0]
    ax.set_yticks([0, 1, 5], ["zero", "one", "outside the view"])
    ax.set_ylim(-0.5, 1.5)
    hidden = ax.text(0.5, 0.5, "hidden")
    hidden.set_visible(False)
    ax.text(0.5, 0.5, "shown")
    assert {t.text for t in drawn_texts(fig)} >= {"zero", "one", "shown"}
    assert {"outside the view", "hidden"} & {t.text for t in drawn_texts(fig)} == set()


def test_a_bbox_patch_and_an_arrow_are_not_text() -> None:
    fig = _figure()
    ax = fig.axes[0]
    ax.text(0.2, 0.5, "boxed", bbox={"boxstyle": "round,pad=2"})
    ax.annotate("note", (0.2, 0.5), xytext=(0.6, 0.5), arrowprops={"arrowstyle": "->"})
    assert collisions(fig) == []
