"""`evalkit compare` takes the scorecard from the runs' stored grades when both share exactly
one, and otherwise says what to pass: several in common, none, the same rubric with other
rules, grades that kept no scorecard."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from evalkit.cli import app
from evalkit.demo import demo_scorecard, offline_runs
from evalkit.grading import Scorecard, grade_run, stored_scorecards
from evalkit.store import grades_path, load_run
from evalkit.store._manifest import MANIFEST_NAME, read_manifest, write_manifest

pytestmark = pytest.mark.slow

runner = CliRunner()
DEMO_RUBRIC = Scorecard.load(demo_scorecard()).rubric_version_id


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return offline_runs(tmp_path_factory.mktemp("demo"), repeats=1, progress=False)


@pytest.fixture
def store(demo_store: Path, tmp_path: Path) -> Path:
    """A copy of the demo store (prod and draft graded with the demo scorecard) to change."""
    copy = tmp_path / "runs"
    shutil.copytree(demo_store, copy)
    return copy


def _card(tmp_path: Path, rubric: str, *, points_moved: bool = False) -> Path:
    """The demo scorecard under another rubric version (or with a point moved between rules)."""
    data = yaml.safe_load(demo_scorecard().read_text(encoding="utf-8"))
    data["rubricVersionId"] = rubric
    if points_moved:
        data["rules"][0]["points"] += 1
        data["rules"][1]["points"] -= 1
    path = tmp_path / f"{rubric}-{points_moved}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def _ungraded_copy(store: Path, source: str, run_id: str) -> None:
    shutil.copytree(store / source, store / run_id)
    shutil.rmtree(store / run_id / "grades")
    manifest = read_manifest(store / run_id / MANIFEST_NAME)
    manifest["run_id"] = run_id
    manifest.pop("grades", None)
    write_manifest(store / run_id / MANIFEST_NAME, manifest)


def _compare(store: Path, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["compare", *args, "--store", str(store), "--json"])
    return result.exit_code, result.stdout, result.stderr


def test_the_one_scorecard_both_runs_are_graded_with_is_taken(store: Path) -> None:
    code, out, err = _compare(store, "prod", "draft")
    assert code == 0, err
    assert f"scorecard {DEMO_RUBRIC}, from the runs' stored grades" in err
    code, given, err = _compare(store, "prod", "draft", "-s", str(demo_scorecard()))
    assert code == 0, err
    assert "from the runs' stored grades" not in err
    taken, named = json.loads(out), json.loads(given)
    for key in ("verdict", "summary", "by_rule", "left_out"):
        assert taken[key] == named[key], key


def test_several_in_common_name_them_and_one_is_picked_by_its_rubric(
    store: Path, tmp_path: Path
) -> None:
    other = Scorecard.load(_card(tmp_path, "second-card"))
    for run_id in ("prod", "draft"):
        grade_run(load_run(run_id, store=store), other, judge=False)
    code, _, err = _compare(store, "prod", "draft")
    assert code == 2
    assert f"both graded with 2 scorecards ({DEMO_RUBRIC}, second-card)" in err
    assert f"-s {DEMO_RUBRIC}" in err
    code, out, err = _compare(store, "prod", "draft", "-s", "second-card", "--no-judge")
    assert code == 0, err
    assert "scorecard second-card, from the runs' stored grades" in err
    assert json.loads(out)["by_rule"]


def test_none_in_common_says_what_each_run_is_graded_with(store: Path, tmp_path: Path) -> None:
    _ungraded_copy(store, "draft", "draft-b")
    code, _, err = _compare(store, "prod", "draft-b")
    assert code == 2
    assert f"share no stored grades (prod: {DEMO_RUBRIC}; draft-b: nothing)" in err
    assert "pass --scorecard FILE" in err
    grade_run(load_run("draft-b", store=store), _card(tmp_path, "second-card"), judge=False)
    code, _, err = _compare(store, "prod", "draft-b")
    assert code == 2
    assert f"(prod: {DEMO_RUBRIC}; draft-b: second-card)" in err


def test_one_rubric_with_other_rules_on_each_side_is_refused(store: Path, tmp_path: Path) -> None:
    _ungraded_copy(store, "draft", "draft-b")
    moved = _card(tmp_path, DEMO_RUBRIC, points_moved=True)
    grade_run(load_run("draft-b", store=store), moved, judge=False)
    code, _, err = _compare(store, "prod", "draft-b")
    assert code == 2
    assert f"graded with different rules under {DEMO_RUBRIC}" in err


def test_grades_that_kept_no_scorecard_ask_for_the_file(store: Path) -> None:
    path = grades_path(load_run("draft", store=store).path, DEMO_RUBRIC)
    table = pq.read_table(str(path))
    kept = {k: v for k, v in table.schema.metadata.items() if k != b"evalkit.scorecard"}
    pq.write_table(table.replace_schema_metadata(kept), str(path))
    code, _, err = _compare(store, "prod", "draft")
    assert code == 2
    assert "keep no scorecard (graded by an older evalkit): pass --scorecard FILE" in err
    code, _, err = _compare(store, "prod", "draft", "-s", str(demo_scorecard()))
    assert code == 0, err


def test_a_sequential_run_on_an_assistant_needs_the_scorecard(store: Path) -> None:
    code, _, err = _compare(store, "prod", "draft", "--sequential", "--assistant", "a1")
    assert code == 2
    assert "--scorecard" in err
    assert "graded as they run" in err


def test_stored_grades_give_their_scorecard_back_whole(store: Path) -> None:
    card = Scorecard.load(demo_scorecard())
    kept = stored_scorecards(load_run("prod", store=store))
    assert list(kept) == [card.rubric_version_id]
    back = kept[card.rubric_version_id]
    assert back.content_hash == card.content_hash
    assert back.to_service() == card.to_service()  # titles in Urdu included
    assert any("اللہ حافظ" in rule.title for rule in back.rules)
