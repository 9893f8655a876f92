"""The command line over a real emulator: run, runs, snapshot, emulator."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit import load_run
from evalkit.cli import app
from evalkit.emulator import serve
from evalkit.runner import RunOptions

from .cli_support import emulator_command, read_exports

PERSONAS = Path(__file__).resolve().parent.parent / "personas"


@pytest.fixture(scope="module")
def emu() -> Iterator[object]:
    with serve(time_scale=0.002, seed=11) as server:
        yield server


@pytest.fixture
def env(emu: object, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = {"EVALKIT_BASE_URL": emu.base_url, "EVALKIT_API_KEY": emu.api_key}  # type: ignore[attr-defined]
    for k, v in values.items():
        monkeypatch.setenv(k, v)
    return values


def _assistant(emu: object) -> str:
    built = emu.build(  # type: ignore[attr-defined]
        "CLI test",
        {"context": "a reminder", "sampleRows": [{"customer_name": "Ayesha"}]},
        "Remind {{customer_name}} in Urdu. Ask to confirm with yes or no.",
        initial_greeting=True,
    )
    return str(built["realtimeAssistantId"])


def test_run_then_resume_then_runs_listing(
    emu: object, env: dict[str, str], tmp_path: Path
) -> None:
    aid = _assistant(emu)
    csv = tmp_path / "contacts.csv"
    csv.write_text("customer_name,phone\nAyesha,0012\nBilal,0034\n", encoding="utf-8")
    store = tmp_path / "runs"
    args = [
        "run",
        "-a",
        aid,
        "-p",
        str(PERSONAS / "cooperative.yaml"),
        "--variables",
        str(csv),
        "--context",
        "A clinic reminder",
        "--repeats",
        "2",
        "--store",
        str(store),
        "--run-id",
        "cli-run",
    ]
    runner = CliRunner()
    first = runner.invoke(app, [*args, "--max-conversations", "3"])
    assert first.exit_code == 3, first.output  # partial: the budget stopped it
    assert len(load_run("cli-run", store).conversations) == 3
    second = runner.invoke(app, args)
    assert second.exit_code == 0, second.output
    run = load_run("cli-run", store)
    assert len(run.conversations) == 4
    assert run.conversations["conversation_id"].is_unique
    assert set(run.conversations["variables"].str.contains('"phone":"00')) == {
        True
    }  # ids keep zeros
    listing = runner.invoke(app, ["runs", "--store", str(store)])
    assert listing.exit_code == 0
    assert "cli-run" in listing.output
    assert env["EVALKIT_API_KEY"] not in first.output + second.output + listing.output


def test_snapshot_records_the_draft_version(
    emu: object, env: dict[str, str], tmp_path: Path
) -> None:
    aid = _assistant(emu)
    result = CliRunner().invoke(app, ["snapshot", "-a", aid, "--store", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "version 1" in result.output
    files = list((tmp_path / ".snapshots").rglob("v000001.json"))
    assert len(files) == 1
    assert env["EVALKIT_API_KEY"] not in files[0].read_text(encoding="utf-8")


def test_run_with_bad_shard_is_a_usage_error(env: dict[str, str], tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["run", "-a", "x", "--shard", "nope", "--store", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "INDEX/COUNT" in result.output


@pytest.mark.slow
def test_emulator_command_prints_settings_and_serves() -> None:
    with emulator_command("--time-scale", "0.01") as proc:
        settings = read_exports(proc)
        assert settings["EVALKIT_BASE_URL"].startswith("http://127.0.0.1:")
        assert settings["EVALKIT_BASE_URL"].endswith("/v1")
        assert settings["EVALKIT_API_KEY"].startswith("sk_api_")
        from evalkit import Client

        with Client(settings["EVALKIT_BASE_URL"], settings["EVALKIT_API_KEY"]) as client:
            assert client.list_assistants() == []


def test_clones_lists_and_deletes_only_evalkit_leftovers(
    emu: object, env: dict[str, str], caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    from evalkit import Client, Grid, load_personas, run_grid
    from evalkit.targets import CLONE_DESCRIPTION, CLONE_PREFIX

    config = {"agent": {"instructions": "Remind the caller in Urdu."}}
    with Client() as client:
        leftover = client.create_assistant(
            f"{CLONE_PREFIX} prod of X v1", config, description=f"{CLONE_DESCRIPTION} abc"
        )
        lookalike = client.create_assistant(f"{CLONE_PREFIX} by hand", config, description="mine")
        aid = _assistant(emu)
        grid = Grid(
            load_personas(PERSONAS / "cooperative.yaml"),
            contexts=["x"],
            variables=[{"customer_name": "b"}],
        )
        run_grid(grid, aid, client=client, store=tmp_path, options=RunOptions(progress=False))
    assert leftover.id in caplog.text  # the run warned about the leftover clone
    runner = CliRunner()
    listed = runner.invoke(app, ["clones"])
    assert listed.exit_code == 0, listed.output
    assert leftover.id in listed.output
    assert lookalike.id not in listed.output
    deleted = runner.invoke(app, ["clones", "--delete"])
    assert deleted.exit_code == 0, deleted.output
    with Client() as client:
        ids = {a.id for a in client.list_assistants()}
    assert leftover.id not in ids
    assert lookalike.id in ids


def test_run_a_variant_from_an_instructions_file(
    emu: object, env: dict[str, str], tmp_path: Path
) -> None:
    from evalkit import Client
    from evalkit.targets import find_clones

    aid = _assistant(emu)
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(
        "Aap {{customer_name}} ko Urdu mein, Nastaliq script mein yaad dilayen.", encoding="utf-8"
    )
    store = tmp_path / "runs"
    args = [
        "run",
        "--allow-missing-variables",  # a copy has no brief to fill {{customer_name}}
        "-a",
        aid,
        "-p",
        str(PERSONAS / "cooperative.yaml"),
        "--context",
        "reminder",
        "--store",
        str(store),
        "--run-id",
        "v",
        "--variant",
        "nastaliq",
        "--instructions",
        str(prompt),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    run = load_run("v", store)
    assert run.manifest["target"] == "nastaliq"
    assert run.manifest["on_clone"] is True
    assert run.manifest["variant"]["patch"]["agent"]["instructions"] == prompt.read_text(
        encoding="utf-8"
    )
    with Client() as client:
        assert aid in {a.id for a in client.list_assistants()}
        assert find_clones(client.list_assistants()) == []
    lonely = CliRunner().invoke(app, [*args[:-4], "--instructions", str(prompt)])
    assert lonely.exit_code == 2
    assert "--variant" in lonely.output
