"""Figures as PNG bytes and as ``<img>`` tags with a base64 data URI (for static reports)."""

from __future__ import annotations

import base64
import io

from matplotlib.figure import Figure

from ..._util import render_html

__all__ = ["figure_to_img_tag", "figure_to_png"]


def figure_to_png(fig: Figure, dpi: int = 100) -> bytes:
    """``fig`` rendered as PNG bytes (Agg; no display, no pyplot)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()


def figure_to_img_tag(fig: Figure, alt: str = "", dpi: int = 100) -> str:
    """An ``<img>`` tag holding ``fig`` as a PNG data URI, scaled to the report's width."""
    data = base64.b64encode(figure_to_png(fig, dpi)).decode("ascii")
    return render_html("img.html", alt=alt or _title(fig), src=f"data:image/png;base64,{data}")


def _title(fig: Figure) -> str:
    for ax in fig.axes:
        for loc in ("center", "left", "right"):
            if ax.get_title(loc):
                return " ".join(ax.get_title(loc).split())
    return "plot"
