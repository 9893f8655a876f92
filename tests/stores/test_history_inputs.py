"""history's bad inputs: an error naming the field, from Python and from `evalkit history`."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit
from evalkit.cli import app
from evalkit.flows import HistoryOptions


def test_a_since_that_is_not_a_date_names_the_field(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"since: 'yesterday' is not a date"):
        HistoryOptions(since="yesterday")
    out = CliRunner().invoke(app, ["history", "--store", str(tmp_path), "--since", "yesterday"])
    assert out.exit_code == 1
    assert "since: 'yesterday' is not a date or timestamp (e.g. 2026-11-01)" in out.output
    assert evalkit.history(
        tmp_path, options=HistoryOptions(since="2026-11-01")
    ).empty  # a date, with or without a zone
    since = HistoryOptions(since="2026-11-01T00:00:00+05:00")
    assert evalkit.history(tmp_path, options=since).empty


def test_history_options_refuse_a_negative_effect_and_a_confidence_outside_zero_one(
    tmp_path: Path,
) -> None:
    with pytest.raises(ValueError, match="min_effect must be >= 0 points, got -3"):
        HistoryOptions(min_effect=-3)
    with pytest.raises(ValueError, match=r"confidence must be in \(0.5, 1\), got 95"):
        HistoryOptions(confidence=95)
    out = CliRunner().invoke(app, ["history", "--store", str(tmp_path), "--min-effect", "-3"])
    assert out.exit_code == 1
    assert "min_effect must be >= 0 points" in out.output
