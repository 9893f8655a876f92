"""HTML from Jinja2 templates only: one template set (``evalkit/templates/``) and one stylesheet
serve the report, the viewer, the static bundle and every ``_repr_html_``."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markupsafe import Markup

__all__ = ["environment", "render_html", "stylesheet"]


@functools.cache
def environment() -> Any:
    """The one Jinja2 environment over ``evalkit/templates`` (autoescaped; the viewer renders
    its pages with it too)."""
    import jinja2  # deferred: commands that never render HTML do not pay for it

    return jinja2.Environment(
        loader=jinja2.PackageLoader("evalkit", "templates"),
        autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )


def render_html(template: str, /, **context: Any) -> Markup:
    """Render ``evalkit/templates/<template>`` with ``context`` (autoescaped). The result is
    ``Markup``: a ``str`` that another template inserts as it is, never escaped twice."""
    from markupsafe import Markup

    return Markup(environment().get_template(template).render(**context))


@functools.cache
def stylesheet() -> str:
    """The one stylesheet (``evalkit/templates/evalkit.css``) as text."""
    from importlib import resources  # deferred like Jinja2: `evalkit --help` reads no file

    return resources.files("evalkit").joinpath("templates", "evalkit.css").read_text("utf-8")
