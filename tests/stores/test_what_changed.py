"""What changed between a night and its series' last-known-good night, on the demo's offline
nights (the embedded emulator; the last night's "simplified" prompt): the prompt as diff hunks,
secrets redacted, `evalkit history --explain`, the viewer's page linked from the flagged point,
and a run without a snapshot named in the error."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit import demo
from evalkit.cli import app
from evalkit.flows import MissingSnapshotError, history, what_changed

from .series_store import write_night


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo.offline_nights(tmp_path_factory.mktemp("changes"), nights=3)


@pytest.mark.slow
def test_the_regressed_night_shows_the_prompt_hunks_against_the_last_good(nights: Path) -> None:
    frame = history(nights)
    assert frame["alarm"].iloc[-1] == "regressed"
    changes = what_changed(nights, "night-03")
    assert changes.attrs["against"] == "night-02"
    assert list(changes.columns) == ["kind", "path", "before", "after"]
    assert set(changes["kind"]) == {"prompt"}
    first = changes.iloc[0]
    assert first["path"].startswith("agent.instructions#hunk-1")
    assert "Nastaliq" in first["before"]
    assert "Nastaliq" not in (first["after"] or "")
    assert "shukriya" in changes.iloc[-1]["after"]
    assert what_changed(nights, "night-02", against="night-01").empty

    out = CliRunner().invoke(app, ["history", "--store", str(nights), "--explain", "night-03"])
    assert out.exit_code == 0, out.output
    assert "what changed from night-02 (before) to night-03 (after): 2 change(s)" in out.output
    assert "[prompt] agent.instructions#hunk-1" in out.output


@pytest.mark.slow
def test_the_viewer_links_the_flagged_night_to_what_changed(nights: Path, tmp_path: Path) -> None:
    from evalkit.view import write_bundle

    assistant = str(history(nights)["assistant_id"].iloc[0])
    write_bundle(nights, tmp_path / "site")
    page = (tmp_path / "site" / "history" / f"{assistant}.html").read_text(encoding="utf-8")
    assert 'href="../changes/night-03.html"' in page
    assert "night-03 (regressed): what changed" in page
    changes = (tmp_path / "site" / "changes" / "night-03.html").read_text(encoding="utf-8")
    assert "agent.instructions#hunk-1" in changes
    assert "Nastaliq" in changes


def test_a_run_without_a_snapshot_is_named(tmp_path: Path) -> None:
    write_night(tmp_path, "a", night=0)
    write_night(tmp_path, "b", night=1)
    with pytest.raises(MissingSnapshotError, match="run a has no config snapshot"):
        what_changed(tmp_path, "b", against="a")
    out = CliRunner().invoke(
        app, ["history", "--store", str(tmp_path), "--explain", "b", "--against", "a"]
    )
    assert out.exit_code == 1
    assert "run a has no config snapshot" in out.output


def test_hunks_name_their_sentences_and_absent_sides_are_said_not_nan(tmp_path: Path) -> None:
    """An inserted sentence has no text before it: None in the frame (not NaN), "(absent)"
    in print and in the viewer, and its path says where it goes instead of a reversed range."""
    before = "You are Sana. Greet the caller. Ask for a yes or no. Say goodbye."
    after = (
        "Always greet first. You are Sana. Greet warmly. Ask for a yes or no. Say goodbye. Thank."
    )
    write_night(tmp_path, "a", night=0, config={"agent": {"instructions": before}})
    late = {"agent": {"instructions": after}, "llm": {"default": {"verbosity": "low"}}}
    write_night(tmp_path, "b", night=1, config=late)
    changes = what_changed(tmp_path, "b", against="a")
    assert list(changes["path"]) == [
        "llm.default.verbosity",
        "agent.instructions#hunk-1 (insert a sentence at the start)",
        "agent.instructions#hunk-2 (replace sentence 2)",
        "agent.instructions#hunk-3 (insert a sentence after sentence 4)",
    ]
    assert changes["before"].iloc[0] is None
    assert changes["before"].iloc[3] is None
    assert changes["after"].iloc[3] == "Thank."

    out = CliRunner().invoke(
        app, ["history", "--store", str(tmp_path), "--explain", "b", "--against", "a"]
    )
    assert out.exit_code == 0, out.output
    assert "nan" not in out.output
    assert out.output.count("  - (absent)") == 3
    assert "[prompt] agent.instructions#hunk-2 (replace sentence 2)" in out.output

    removed = {"agent": {"instructions": "You are Sana. Ask for a yes or no. Say goodbye."}}
    write_night(tmp_path, "c", night=2, config=removed)
    gone = what_changed(tmp_path, "c", against="a")
    assert list(gone["path"]) == ["agent.instructions#hunk-1 (delete sentence 2)"]
    assert gone["after"].iloc[0] is None
    write_night(tmp_path, "d", night=3, config={"agent": {"instructions": "One. Two."}})
    assert (
        what_changed(tmp_path, "d", against="a")["path"].iloc[0].endswith("(replace sentences 1-4)")
    )
