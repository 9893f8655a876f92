"""Issue 33, item 12: `evalkit sql QUERY --store` over a real store; a bad query lists the
views and their columns."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli import app
from evalkit.demo import offline_runs


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return offline_runs(tmp_path_factory.mktemp("demo"), repeats=1, progress=False)


def test_sql_prints_the_rows_of_a_query(demo_store: Path) -> None:
    query = "select run_id, count(*) as n from conversations group by run_id order by run_id"
    result = CliRunner().invoke(app, ["sql", query, "--store", str(demo_store)])
    assert result.exit_code == 0, result.output
    lines = result.output.split("\n")
    assert lines[0].split() == ["run_id", "n"]
    assert lines[1].split() == ["draft", "18"]
    assert lines[2].split() == ["prod", "18"]


def test_a_bad_query_lists_the_views_and_their_columns(demo_store: Path) -> None:
    result = CliRunner().invoke(
        app, ["sql", "select no_such_column from grades", "--store", str(demo_store)]
    )
    assert result.exit_code != 0
    assert "no_such_column" in result.output
    assert "views and their columns:" in result.output
    for view in ("runs:", "conversations:", "turns:", "grades:"):
        assert view in result.output
    assert "rule_id" in result.output
