"""A figure on a viewer page: the plot as an image, its caption as text under it.

Drawn into the PNG, a caption longer than the figure is wide was cut off at its edge (the
history's "... triangle: suspect night; star: last good" never showed); as HTML it wraps to
the page, and can be read aloud, selected and searched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from markupsafe import Markup

from .._util import render_html

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["captioned_figure"]


def captioned_figure(fig: Figure) -> Markup:
    """``fig`` as ``<figure>``: the image without its caption, the caption in ``<figcaption>``
    (the figure's room for the caption is given back to the plot)."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    from ..report.plots import CAPTION_GID, figure_to_img_tag

    captions = [t for t in fig.texts if t.get_gid() == CAPTION_GID]
    caption = " ".join(" ".join(t.get_text().split()) for t in captions)
    for text in captions:
        text.remove()
    engine = fig.get_layout_engine()
    if captions and isinstance(engine, ConstrainedLayoutEngine):
        engine.set(rect=(0, 0, 1, 1))
    return render_html(
        "view/figure.html", image=Markup(figure_to_img_tag(fig)), caption=caption or None
    )
