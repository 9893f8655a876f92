"""What the report tests read back from a figure: the row labels ``plots`` draws line by line."""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.text import Text

from evalkit.report import plots


def row_labels(ax: Axes) -> list[list[Text]]:
    """Each row's label as its line texts (top line first), top row first."""
    rows: dict[float, list[Text]] = {}
    for text in ax.texts:
        if text.get_gid() == plots.ROW_LABEL_GID:
            rows.setdefault(float(text.get_position()[1]), []).append(text)
    return [rows[y] for y in sorted(rows, reverse=True)]


def row_label_texts(ax: Axes) -> list[str]:
    """Each row's label as one string, its lines joined by newlines, top row first."""
    return ["\n".join(t.get_text() for t in row) for row in row_labels(ax)]
