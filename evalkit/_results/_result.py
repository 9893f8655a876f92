"""The one face of every result a flow returns (DESIGN.md "Results and calling convention").

``headline()`` is one sentence, ``summary`` a DataFrame (the one meaning of the word),
``to_dict()`` JSON-ready, ``_repr_html_`` rendered from a template, ``to_markdown()`` the same
answer for a CI job summary or a pull-request comment, ``__repr__`` short.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

from .._util import markdown_table, markdown_text, render_html, stylesheet

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Result"]


class Result(ABC):
    """Base of every result type: subclasses give ``headline``, ``summary`` and ``to_dict``;
    the HTML comes from ``template`` (default: a headline over the summary table)."""

    #: the template in ``evalkit/templates/`` that draws this result
    template: ClassVar[str] = "result.html"
    #: the ``summary`` columns :meth:`to_markdown` shows (None: all of them)
    _markdown_columns: ClassVar[tuple[str, ...] | None] = None

    @abstractmethod
    def headline(self) -> str:
        """One sentence: the answer."""

    @property
    @abstractmethod
    def summary(self) -> pd.DataFrame:
        """The answer as a table."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """Everything a report or a CI step needs, JSON-ready."""

    def html_context(self) -> dict[str, Any]:
        """What the template sees besides ``result``; subclasses add their tables."""
        return {}

    def _repr_html_(self) -> str:
        return render_html(
            self.template,
            result=self,
            kind=type(self).__name__,
            css=stylesheet(),
            **self.html_context(),
        )

    def _markdown_sections(self) -> list[str]:
        """The Markdown blocks under the headline; by default the ``summary`` table (its
        ``_markdown_columns``). Subclasses whose answer is more than one table override it."""
        table = markdown_table(self.summary, self._markdown_columns)
        return [table] if table else []

    def to_markdown(self) -> str:
        """The result as GitHub-flavoured Markdown: the kind and the headline in a line, then
        ``_markdown_sections`` (for a CI job summary or a pull-request comment)."""
        head = f"**{type(self).__name__}**: {markdown_text(self.headline())}"
        return "\n\n".join([head, *self._markdown_sections()]) + "\n"

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.headline()}>"
