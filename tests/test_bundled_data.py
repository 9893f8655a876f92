"""Bundled personas, scorecards, examples and notebooks by name, wherever evalkit takes such a
file, from a folder that has none of them (as from a wheel); and ``evalkit init`` copying them
into a project, whose copies then win."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli import app
from evalkit.data import bundled_names, bundled_path, contacts_path, copy_bundled, resolve
from evalkit.grading import Scorecard
from evalkit.grid import Grid, PersonaError, load_personas
from evalkit.report import notebook_parameters
from evalkit.runner import Pricing
from evalkit.tuning import load_variants

SCORECARD = "appointment-reminder-ur"


@pytest.fixture
def empty_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.mark.usefixtures("empty_folder")
@pytest.mark.parametrize(
    ("source", "kind", "relative"),
    [
        (SCORECARD, "scorecards", f"{SCORECARD}.yaml"),
        (f"{SCORECARD}.yaml", "scorecards", f"{SCORECARD}.yaml"),
        (f"scorecards/{SCORECARD}.yaml", "scorecards", f"{SCORECARD}.yaml"),  # README's spelling
        ("cooperative", "personas", "cooperative.yaml"),
        ("personas", "personas", "."),
        ("red-team", "personas", "red-team"),  # a folder of bundled personas by its name
        ("personas/red-team", "personas", "red-team"),
        ("contacts.csv", "examples", "contacts.csv"),
        ("examples/contacts.csv", "examples", "contacts.csv"),
        ("variants/urdu_reminder", "examples", "variants/urdu_reminder.yaml"),
        ("compare_draft_prod", "notebooks", "compare_draft_prod.ipynb"),
    ],
)
def test_a_name_means_the_bundled_file(source: str, kind: str, relative: str) -> None:
    found = resolve(source, kind)  # type: ignore[arg-type]
    assert found.resolve() == (bundled_path(kind) / relative).resolve()  # type: ignore[arg-type]


@pytest.mark.usefixtures("empty_folder")
@pytest.mark.parametrize("source", ["no-such-card", "../scorecards/appointment-reminder-ur", "/x"])
def test_an_unknown_name_is_refused_naming_the_bundled_ones(source: str) -> None:
    with pytest.raises(FileNotFoundError) as caught:
        resolve(source, "scorecards")
    assert caught.value.filename == source
    assert SCORECARD in str(caught.value.strerror)
    assert "support-line-en" in str(caught.value.strerror)


def test_a_path_that_exists_is_taken_as_it_is(tmp_path: Path) -> None:
    mine = tmp_path / f"{SCORECARD}.yaml"
    mine.write_text("name: mine\n", encoding="utf-8")
    assert resolve(mine, "scorecards") == mine


def test_every_loader_takes_a_bundled_name(empty_folder: Path) -> None:
    card = Scorecard.load(SCORECARD)
    assert card.rules
    assert [p.label for p in load_personas("cooperative")] == ["cooperative"]
    top = [name for name in bundled_names("personas") if "/" not in name]
    assert len(load_personas("personas")) == len(top)  # a folder's own files, not its subfolders
    red_team = load_personas("red-team")
    assert {f"red-team/{p.label}" for p in red_team} == set(bundled_names("personas")) - set(top)
    assert all("red-team" in p.tags for p in red_team)
    grid = Grid(["hostile", "do-not-call"], variables="contacts.csv", contexts=["A reminder."])
    rows = len(contacts_path().read_text(encoding="utf-8").strip().splitlines()) - 1
    assert len(list(grid.cells())) == 2 * rows
    assert Pricing.load("pricing.yaml") is not None
    assert load_variants("variants/urdu_reminder.yaml")
    assert "store" in notebook_parameters("compare_draft_prod")
    assert list(empty_folder.iterdir()) == []  # nothing was written where it ran


def test_a_missing_persona_name_is_a_persona_problem_naming_the_bundled_ones() -> None:
    with pytest.raises(PersonaError) as caught:
        load_personas(["cooperative", "no-such-persona"])
    assert "no-such-persona" in str(caught.value)
    assert "wrong-person" in str(caught.value)  # the bundled names are listed


def test_copy_bundled_writes_every_file_once_and_keeps_edits(empty_folder: Path) -> None:
    written = copy_bundled(".")
    kinds = ("personas", "scorecards", "examples", "notebooks")
    assert len([p for p in written if p.name != "README.md"]) == sum(
        len(bundled_names(kind)) for kind in kinds
    )
    mine = empty_folder / "scorecards" / f"{SCORECARD}.yaml"
    assert mine.read_bytes() == (bundled_path("scorecards") / mine.name).read_bytes()
    mine.write_text(mine.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert copy_bundled(".") == []  # files already there are kept
    assert mine.read_text(encoding="utf-8").endswith("# edited\n")
    # from the project, the name now means the project's copy
    assert resolve(SCORECARD, "scorecards").resolve() == mine.resolve()
    rewritten = copy_bundled(empty_folder, ("scorecards",), overwrite=True)
    assert mine in rewritten
    assert not mine.read_text(encoding="utf-8").endswith("# edited\n")


def test_init_command_copies_into_a_folder_and_says_what_it_kept(empty_folder: Path) -> None:
    runner = CliRunner()
    first = runner.invoke(app, ["init", "here"])
    assert first.exit_code == 0, first.output
    assert "26 personas, 5 scorecards, 6 examples, 7 notebooks" in first.output
    assert (empty_folder / "here" / "personas" / "red-team" / "minor-answers.yaml").is_file()
    assert (empty_folder / "here" / "examples" / "contacts.csv").is_file()
    assert (empty_folder / "here" / "notebooks" / "compare_draft_prod.ipynb").is_file()
    again = runner.invoke(app, ["init", "here"])
    assert again.exit_code == 0, again.output
    assert "0 personas, 0 scorecards, 0 examples, 0 notebooks" in again.output
    assert "kept 44 file(s) already there" in again.output


@pytest.mark.usefixtures("empty_folder")
def test_commands_take_bundled_names() -> None:
    runner = CliRunner()
    listed = runner.invoke(app, ["personas", "list", "-p", "hostile"])
    assert listed.exit_code == 0, listed.output
    assert listed.output.startswith("hostile ")
    bundled = runner.invoke(app, ["personas", "list"])
    assert "more in red-team/: 9 persona(s), --personas red-team" in bundled.output
    linted = runner.invoke(app, ["lint", "examples/assistant.yaml"])
    assert "no such file" not in linted.output, linted.output
    valid = runner.invoke(app, ["scorecard", "validate", SCORECARD])
    assert valid.exit_code == 0, valid.output
    assert "valid" in valid.output
    refused = runner.invoke(app, ["scorecard", "validate", "no-such-card"])
    assert refused.exit_code != 0
    assert "nor the name of a bundled scorecard" in refused.output
    assert SCORECARD in refused.output
