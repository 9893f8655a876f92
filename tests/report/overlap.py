"""Where a figure's drawn texts collide: every pair of text boxes that overlap, and every box
that runs past the figure's edge, measured by matplotlib's own renderer (Agg).

Only texts that are drawn count (a tick label outside the view is laid out but never drawn);
a rotated text is its rotated box, not the axis-aligned box around it (which would make
neighbouring slanted tick labels collide when their letters do not).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Affine2D

#: Pixels each box is shrunk by before comparing.
_TOUCH_PX = 0.5


@dataclass(frozen=True)
class Placed:
    """A drawn text and its box (corners in display pixels)."""

    text: str
    corners: np.ndarray  # shape (4, 2), shrunk by _TOUCH_PX: boxes that only touch do not overlap

    def overlaps(self, other: Placed) -> bool:
        """True unless an edge of one box separates the two (separating axis theorem, for
        convex polygons)."""
        for corners in (self.corners, other.corners):
            for edge in np.roll(corners, -1, axis=0) - corners:
                axis = np.array([-edge[1], edge[0]])
                mine, theirs = self.corners @ axis, other.corners @ axis
                if mine.max() <= theirs.min() or theirs.max() <= mine.min():
                    return False
        return True

    def __str__(self) -> str:
        low, high = self.corners.min(axis=0), self.corners.max(axis=0)
        where = f"x {low[0]:.0f}-{high[0]:.0f}, y {low[1]:.0f}-{high[1]:.0f} px"
        return f"{' / '.join(self.text.split(chr(10)))!r} ({where})"


@contextmanager
def _recording() -> Iterator[list[Text]]:
    """Every Text drawn while inside (Text.draw wrapped; restored after)."""
    drawn: list[Text] = []
    original = Text.draw

    def draw(self: Text, renderer: RendererAgg) -> None:
        if self.get_visible() and self.get_text().strip():
            drawn.append(self)
        original(self, renderer)

    Text.draw = draw  # type: ignore[method-assign]
    try:
        yield drawn
    finally:
        Text.draw = original  # type: ignore[method-assign]


def _corners(text: Text, renderer: RendererAgg) -> np.ndarray:
    """The text's own box (an annotation's arrow and a text's bbox patch left out), rotated
    with the text."""
    angle = text.get_rotation() % 360
    if angle % 90 == 0:
        box = Text.get_window_extent(text, renderer)
        x0, y0, x1, y1 = box.x0, box.y0, box.x1, box.y1
        return np.array([[x0, y0], [x0, y1], [x1, y1], [x1, y0]])
    # the text-aligned box matplotlib draws a bbox patch in (Text.update_bbox_position_size)
    posx, posy = text._get_xy_display()
    _, _, ((x, y), (w, h)) = text._get_layout(renderer)
    unit = np.array([[0, 0], [0, h], [w, h], [w, 0]], dtype=float)
    return Affine2D().rotate_deg(angle).translate(posx + x, posy + y).transform(unit)


def _shrunk(corners: np.ndarray) -> np.ndarray:
    """The box ``_TOUCH_PX`` smaller on every side (corners in the order ``_corners`` gives:
    lower left, upper left, upper right, lower right of the text)."""
    along = corners[3] - corners[0]
    up = corners[1] - corners[0]
    u = along / max(float(np.linalg.norm(along)), 1e-9) * _TOUCH_PX
    v = up / max(float(np.linalg.norm(up)), 1e-9) * _TOUCH_PX
    return corners + np.array([u + v, u - v, -u - v, v - u])


def drawn_texts(fig: Figure) -> list[Placed]:
    """The figure's drawn texts with their boxes, as the PNG renders them (Agg, its dpi)."""
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    with _recording() as drawn:
        canvas.draw()
    renderer = canvas.get_renderer()
    return [Placed(t.get_text(), _shrunk(_corners(t, renderer))) for t in dict.fromkeys(drawn)]


def collisions(fig: Figure) -> list[str]:
    """Each pair of drawn texts whose boxes overlap, and each box past the figure's edge."""
    placed = drawn_texts(fig)
    width, height = fig.bbox.width, fig.bbox.height
    problems = []
    for item in placed:
        low, high = item.corners.min(axis=0), item.corners.max(axis=0)
        if low[0] < 0 or low[1] < 0 or high[0] > width or high[1] > height:
            problems.append(f"{item} runs past the figure's edge ({width:.0f} x {height:.0f} px)")
    for a, b in itertools.combinations(placed, 2):
        if a.overlaps(b):
            problems.append(f"{a} overlaps {b}")
    return problems
