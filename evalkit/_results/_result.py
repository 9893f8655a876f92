"""The one face of every result a flow returns (DESIGN.md "Results and calling convention").

``headline()`` is one sentence, ``summary`` a DataFrame (the one meaning of the word),
``to_dict()`` JSON-ready, ``_repr_html_`` rendered from a template, ``__repr__`` short.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

from .._util import render_html, stylesheet

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Result"]


class Result(ABC):
    """Base of every result type: subclasses give ``headline``, ``summary`` and ``to_dict``;
    the HTML comes from ``template`` (default: a headline over the summary table)."""

    #: the template in ``evalkit/templates/`` that draws this result
    template: ClassVar[str] = "result.html"

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

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.headline()}>"
