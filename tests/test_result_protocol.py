"""The one result face: headline, summary DataFrame, to_dict, template HTML, short repr."""

from __future__ import annotations

from typing import Any

import pandas as pd

from evalkit._results import Result


class _Answer(Result):
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self._rows = rows

    def headline(self) -> str:
        return f"{len(self._rows)} rows <checked>"

    @property
    def summary(self) -> pd.DataFrame:
        return pd.DataFrame(self._rows)

    def to_dict(self) -> dict[str, Any]:
        return {"rows": self._rows}


def test_html_comes_from_the_template_and_is_escaped() -> None:
    html = _Answer([{"rule": "<b>x</b>", "pass_rate": 0.5}])._repr_html_()
    assert "&lt;checked&gt;" in html
    assert "<checked>" not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html
    assert "<th>pass_rate</th>" in html
    assert "<td>0.5</td>" in html
    assert ".ek-result" in html  # the one stylesheet travels with it


def test_repr_is_the_headline_and_empty_summary_draws_no_table() -> None:
    answer = _Answer([])
    assert repr(answer) == "<_Answer: 0 rows <checked>>"
    assert "<table" not in answer._repr_html_()


def test_promote_takes_the_client_as_design_names_it() -> None:
    """DESIGN names ``.promote(client)``: the client is promote's one argument (positional or
    ``client=``), ``dry_run`` keyword-only so a stray ``True`` is never taken for it."""
    import inspect

    from evalkit.tuning import OptimizeResult, TuneResult

    for method in (TuneResult.promote, OptimizeResult.promote):
        params = inspect.signature(method).parameters
        assert params["client"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, method
        assert params["client"].default is None
        assert params["dry_run"].kind is inspect.Parameter.KEYWORD_ONLY, method
