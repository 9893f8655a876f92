"""Prod run into a store at a URL (moto's S3 server on loopback): the snapshot of the version
now published was taken into the bucket on one machine (its own cache folder), and a job on
another machine (another cache folder, nothing on its disk) runs prod from it on a clone."""

from __future__ import annotations

from pathlib import Path

import pytest
import s3fs
from typer.testing import CliRunner

from evalkit.api import Client
from evalkit.cli import app
from evalkit.emulator import serve
from evalkit.runner import RunOptions, run_grid
from evalkit.targets import SnapshotStore, find_clones

from ..runner_support import build_assistant, load_grid


def test_prod_runs_from_the_snapshot_another_machine_took_into_the_bucket(
    bucket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve(time_scale=0.002, seed=5) as emu, Client(emu.base_url, emu.api_key) as client:
        assistant = build_assistant(emu)
        monkeypatch.setenv("EVALKIT_BASE_URL", emu.base_url)
        monkeypatch.setenv("EVALKIT_API_KEY", emu.api_key)
        monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "laptop"))
        taken = CliRunner().invoke(app, ["snapshot", "-a", assistant, "--store", bucket])
        assert taken.exit_code == 0, taken.output
        assert f"in {bucket}/.snapshots/" in taken.output
        emu.publish(assistant)  # v1 is prod; the draft moves on to v2
        found = next(a for a in client.list_assistants() if a.id == assistant)
        config = found.config.to_json()
        config["agent"]["instructions"] += " Keep it short."
        client.update_assistant(assistant, config=config)

        monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "ci-runner"))
        run = run_grid(
            load_grid(2, 1),
            assistant,
            target="prod",
            run_id="prod-1",
            client=client,
            store=bucket,
            options=RunOptions(progress=False, concurrency=4),
        )
        assert run.manifest["on_clone"] is True
        assert run.manifest["assistant_version"] == 1
        assert set(run.conversations["status"]) == {"done"}
        assert find_clones(client.list_assistants(), include_live=True) == []
    assert SnapshotStore(bucket).versions(assistant) == [1, 2]  # the run recorded the draft
    fs = s3fs.S3FileSystem(use_listings_cache=False)
    assert fs.exists(f"{bucket.removeprefix('s3://')}/.snapshots/{assistant}/v000001.json")
    assert not list(tmp_path.rglob("*.json"))  # neither machine kept a snapshot on its disk
