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
