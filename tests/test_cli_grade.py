"""`evalkit scorecard validate`, `grade`, `compare` and `report` on a small offline demo store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli import app
from evalkit.data import bundled_path
from evalkit.demo import demo_scorecard, offline_runs

runner = CliRunner()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return offline_runs(tmp_path_factory.mktemp("demo"), repeats=2, progress=False)


def test_scorecard_validate_lists_every_problem_and_exits_1(tmp_path: Path) -> None:
    good = runner.invoke(app, ["scorecard", "validate", str(demo_scorecard())])
    assert good.exit_code == 0, good.output
    assert "valid" in good.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "rubricVersionId: x\nrules:\n"
        "  - {ruleId: a, title: A, points: 50, check: {type: regex, pattern: '('}}\n"
        "  - {ruleId: a, title: B, points: 20, check: {type: bogus}}\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["scorecard", "validate", str(bad)])
    assert result.exit_code == 1
    assert "4 problem(s)" in result.output
    for words in ("duplicate rule id", "total 70", "invalid regex", "bogus"):
        assert words in result.output
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_grade_prints_pass_rates_and_where_the_grades_went(store: Path, tmp_path: Path) -> None:
    own = tmp_path / "runs"
    shutil.copytree(store, own)  # --no-judge replaces the stored grades: not the shared store's
    result = runner.invoke(
        app, ["grade", "draft", "--store", str(own), "-s", str(demo_scorecard()), "--no-judge"]
    )
    assert result.exit_code == 0, result.output
    assert "urdu-script" in result.output
    assert "0%" in result.output  # the draft never answers in Nastaliq
    assert "grades in" in result.output


@pytest.mark.slow
def test_compare_writes_json_and_fails_on_regression_when_asked(
    store: Path, tmp_path: Path
) -> None:
    out = tmp_path / "comparison.json"
    args = ["compare", "prod", "draft", "--store", str(store), "-s", str(demo_scorecard())]
    result = runner.invoke(app, [*args, "-o", str(out)])
    assert result.exit_code == 0, result.output
    first = result.output.splitlines()[0]
    assert first.startswith(("regressed", "insufficient_evidence"))  # the verdict comes first
    assert "urdu-script" in result.output
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["verdict"] == first.split(":")[0]
    gated = runner.invoke(app, [*args, "-o", str(out), "--fail-on-regression", "--json"])
    assert json.loads(gated.output)["verdict"] == data["verdict"]
    assert gated.exit_code == (1 if data["verdict"] == "regressed" else 0)
    same = runner.invoke(
        app,
        [
            "compare",
            "draft",
            "draft",
            "--store",
            str(store),
            "-s",
            str(demo_scorecard()),
            "-o",
            str(out),
            "--fail-on-regression",
        ],
    )
    assert same.exit_code == 0, same.output
    assert not same.output.startswith(("regressed", "improved"))


def test_report_refuses_an_unknown_parameter_listing_the_known_ones(tmp_path: Path) -> None:
    notebook = bundled_path("notebooks") / "compare_draft_prod.ipynb"
    result = runner.invoke(
        app, ["report", str(notebook), "-p", "no_such", "1", "-o", str(tmp_path / "r.html")]
    )
    assert result.exit_code == 1
    assert "no parameter 'no_such'" in result.output
    assert "baseline_run" in result.output
    assert not (tmp_path / "r.html").exists()


def test_report_suggests_the_parameter_a_typo_meant(tmp_path: Path) -> None:
    notebook = bundled_path("notebooks") / "compare_draft_prod.ipynb"
    result = runner.invoke(app, ["report", str(notebook), "-p", "stor", "runs"])
    assert result.exit_code == 1
    assert "no parameter 'stor' (did you mean 'store'?)" in result.output


def test_report_refuses_a_secret_as_a_parameter(tmp_path: Path) -> None:
    notebook = bundled_path("notebooks") / "compare_draft_prod.ipynb"
    result = runner.invoke(
        app, ["report", str(notebook), "-p", "api_key", "sk_api_x", "-o", str(tmp_path / "r.html")]
    )
    assert result.exit_code == 1
    assert "sk_api_x" not in result.output


@pytest.mark.slow
def test_report_renders_html_even_when_the_notebook_fails(store: Path, tmp_path: Path) -> None:
    notebook = bundled_path("notebooks") / "compare_draft_prod.ipynb"
    html = tmp_path / "report.html"
    result = runner.invoke(
        app,
        [
            "report",
            str(notebook),
            "-p",
            "store",
            json.dumps(str(store)),
            "-r",
            "candidate_run",
            "no-such-run",
            "-p",
            "output_dir",
            json.dumps(str(tmp_path / "out")),
            "-o",
            str(html),
        ],
    )
    assert result.exit_code == 1
    assert "no-such-run" in result.output
    page = html.read_text(encoding="utf-8")
    assert "did not run to the end" in page


@pytest.mark.slow
def test_one_repeat_per_cell_gates_on_non_inferiority(tmp_path: Path) -> None:
    """README's first-hour path runs one repeat per cell: the gate still has an answer."""
    store = offline_runs(tmp_path / "demo", repeats=1, progress=False)
    args = ["compare", "prod", "draft", "--store", str(store), "-s", str(demo_scorecard())]
    out = ["-o", str(tmp_path / "c.json")]
    worse = runner.invoke(app, [*args, *out, "--fail-unless-non-inferior"])
    assert worse.exit_code == 1, worse.output
    assert "non-inferior: not shown" in worse.output
    assert "paired_cells" in (tmp_path / "c.json").read_text(encoding="utf-8")
    assert "nan" not in worse.output.splitlines()[0].lower()
    same = ["compare", "prod", "prod", "--store", str(store), "-s", str(demo_scorecard())]
    # a run against itself: no difference, and the variance floor keeps some width (the
    # repeats agree because they are the same), so a 10-point margin is shown
    fine = runner.invoke(app, [*same, *out, "--fail-unless-non-inferior", "--min-effect", "10"])
    assert fine.exit_code == 0, fine.output
    assert "non-inferior: yes" in fine.output


@pytest.mark.slow
def test_compare_writes_no_file_unless_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33, item 7: comparison.json in the working folder dirtied `git status`."""
    store = offline_runs(tmp_path / "demo", repeats=1, progress=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    args = ["compare", "prod", "draft", "--store", str(store), "-s", str(demo_scorecard())]
    shown = runner.invoke(app, args)
    assert shown.exit_code == 0, shown.output
    assert list(work.iterdir()) == []
    asked = runner.invoke(app, [*args, "-o", "out.json"])
    assert asked.exit_code == 0, asked.output
    assert [p.name for p in work.iterdir()] == ["out.json"]
