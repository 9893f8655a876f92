"""Targets against a real emulator: draft, prod (itself or a clone from a snapshot), variants,
merge patches, redacted snapshots, and clones deleted on every exit path."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalkit._util import MASK
from evalkit.api import AsyncClient, Client
from evalkit.emulator import EmulatorServer
from evalkit.grid import Grid, Persona, load_personas
from evalkit.runner import RunAborted, RunOptions, arun_grid, run_grid
from evalkit.store import load_run
from evalkit.targets import (
    ConfigSnapshot,
    SnapshotStore,
    TargetError,
    Variant,
    merge_patch,
    redact_config,
    strip_redacted_keys,
)

from .runner_fixtures import emulator_fixture
from .runner_support import (
    INSTRUCTIONS,
    PERSONAS_DIR,
    Tap,
    assistant_ids,
    build_reminder,
    make_grid,
    replace_request,
    wait_idle,
)
from .waiting import await_until

PROVIDER_KEY = "sk-provider-secret-9f8e7d6c5b4a1234"
ENGLISH = INSTRUCTIONS
NASTALIQ = (
    "Aap {{name}} ko {{date}} ki appointment yaad dilayen. Urdu mein baat karein, Nastaliq "
    "script mein likhein. Confirm yes or no."
)
ARABIC = re.compile(r"[\u0600-\u06FF]")


# --------------------------------------------------------------------------- fixtures, helpers


emu = emulator_fixture(time_scale=0.005, seed=21)


@pytest.fixture(scope="module")
def personas() -> list[Persona]:
    # callers that write Latin letters, so Arabic script in agent turns comes from the prompt
    return [p for p in load_personas(PERSONAS_DIR) if p.label != "urdu-script"]


def build(emu: EmulatorServer, instructions: str = ENGLISH) -> tuple[str, dict[str, Any]]:
    """A new assistant (version 1) whose LLM block carries a provider key; id and config."""
    config = {
        "agent": {"instructions": instructions, "initialGreeting": True},
        "llm": {
            "default": {
                "provider": "vendor_c",
                "model": "llm-5.4-mini",
                "verbosity": "low",
                "apiKey": PROVIDER_KEY,
            }
        },
    }
    built = build_reminder(emu, instructions, context="Clinic reminders", config=config)
    return str(built["realtimeAssistantId"]), built["config"]


def edit(emu: EmulatorServer, assistant_id: str, instructions: str) -> int:
    """Save a new draft with other instructions; the new version."""
    client = Client(emu.base_url, emu.api_key)
    current = next(a for a in client.list_assistants() if a.id == assistant_id)
    config = current.config.to_json()
    config["agent"]["instructions"] = instructions
    answer = client.update_assistant(assistant_id, config=config)
    return int(answer["version"])


def grid(personas: list[Persona], n: int = 4) -> Grid:
    return make_grid(personas, n, repeats=1)


def run_tapped(
    emu: EmulatorServer,
    assistant_id: str,
    target: Any,
    g: Grid,
    store: Path,
    rewrite: Callable[[httpx.Request, int], httpx.Request] | None = None,
    run_id: str | None = None,
    **kw: Any,
) -> tuple[Any, Tap]:
    tap = Tap(rewrite)

    async def go() -> Any:
        async with AsyncClient(emu.base_url, emu.api_key, transport=tap) as client:
            return await arun_grid(
                g,
                assistant_id,
                client=client,
                target=target,
                store=store,
                options=RunOptions(progress=False, **kw),
                run_id=run_id,
            )

    return asyncio.run(go()), tap


def arabic_share(run: Any) -> float:
    """Share of conversations whose agent turns contain Arabic-script letters."""
    turns = run.turns[run.turns["role"] == "agent"]
    has = turns.groupby("conversation_id")["text"].apply(lambda t: bool(ARABIC.search(" ".join(t))))
    return float(has.mean())


def no_secret_on_disk(store: Path) -> None:
    for path in store.rglob("*"):
        if path.is_file():
            assert PROVIDER_KEY.encode() not in path.read_bytes(), path


# --------------------------------------------------------------------------- draft and prod


def test_draft_runs_the_assistant_itself_and_records_a_snapshot(
    emu: EmulatorServer, personas: list[Persona], tmp_path: Path
) -> None:
    assistant, _ = build(emu)
    run, tap = run_tapped(emu, assistant, "draft", grid(personas), tmp_path)
    assert tap.created() == []
    assert tap.deleted() == []
    assert tap.simulated_on() == {assistant}
    assert run.manifest["target"] == "draft"
    assert run.manifest["on_clone"] is False
    assert run.manifest["assistant_version"] == 1
    assert set(run.conversations["target"]) == {"draft"}
    assert SnapshotStore(tmp_path).versions(assistant) == [1]
    no_secret_on_disk(tmp_path)


def test_prod_of_an_unpublished_assistant_is_the_assistant_itself(
    emu: EmulatorServer, personas: list[Persona], tmp_path: Path
) -> None:
    assistant, _ = build(emu)
    run, tap = run_tapped(emu, assistant, "prod", grid(personas), tmp_path)
    assert tap.created() == []
    assert tap.simulated_on() == {assistant}
    assert run.manifest["target"] == "prod"
    assert run.manifest["on_clone"] is False
    assert set(run.conversations["target"]) == {"prod"}
    assert set(run.conversations["assistant_version"]) == {1}


def test_prod_equal_to_draft_is_the_assistant_itself(
    emu: EmulatorServer, personas: list[Persona], tmp_path: Path
) -> None:
    assistant, _ = build(emu)
    edit(emu, assistant, NASTALIQ)
    emu.publish(assistant)  # prod = draft = version 2
    run, tap = run_tapped(emu, assistant, "prod", grid(personas), tmp_path)
    assert tap.created() == []
    assert tap.simulated_on() == {assistant}
    assert run.manifest["on_clone"] is False
    assert set(run.conversations["assistant_version"]) == {2}


def test_prod_behind_draft_runs_on_a_clone_of_the_snapshot_then_deletes_it(
    emu: EmulatorServer, personas: list[Persona], tmp_path: Path
) -> None:
    assistant, v1_config = build(emu, NASTALIQ)
    # a draft run records the snapshot of version 1, which is then published
    run_grid(grid(personas, 1), assistant, client=Client(emu.base_url, emu.api_key), store=tmp_path)
    emu.publish(assistant)
    assert edit(emu, assistant, ENGLISH) == 2
    before = assistant_ids(emu)

    prod, tap = run_tapped(emu, assistant, "prod", grid(personas), tmp_path)
    draft, _ = run_tapped(emu, assistant, "draft", grid(personas), tmp_path)

    (created,) = tap.created()
    expected = json.loads(json.dumps(v1_config))
    del expected["llm"]["default"]["apiKey"]  # redacted in the snapshot: billed via the service
    assert created["config"] == expected
    assert created.get("public") in (None, False)
    (clone,) = tap.deleted()
    assert clone != assistant
    assert tap.simulated_on() == {clone}
    assert assistant_ids(emu) == before  # the clone is gone
    assert prod.manifest["on_clone"] is True
    assert prod.manifest["assistant_version"] == 1
    assert set(prod.conversations["assistant_version"]) == {1}
    assert set(prod.conversations["target"]) == {"prod"}
    assert set(prod.conversations["status"]) == {"done"}
    # behaviour: prod (v1) speaks Nastaliq, the draft (v2) English
    assert arabic_share(prod) >= 0.5
    assert arabic_share(draft) == 0.0
    no_secret_on_disk(tmp_path)


def test_prod_behind_draft_without_a_snapshot_is_refused(
    emu: EmulatorServer, personas: list[Persona], tmp_path: Path
) -> None:
    assistant, _ = build(emu)
    emu.publish(assistant)
    edit(emu, assistant, NASTALIQ)
    before, started = assistant_ids(emu), emu.stats()["started"]
    with pytest.raises(TargetError) as info:
        run_tapped(emu, assistant, "prod", grid(personas), tmp_path, run_id="never")
    message = str(info.value)
    assert "evalkit snapshot" in message
    assert assistant in message
    assert "version 1" in message
    assert emu.stats()["started"] == started
    assert assistant_ids(emu) == before
    assert not (tmp_path / "never").exists()


def test_unknown_target_and_assistant_are_refused(
    emu: EmulatorServer, personas: list[Persona], tmp_path: Path
) -> None:
    assistant, _ = build(emu)
    with pytest.raises(TargetError, match="draft"):
        run_tapped(emu, assistant, "staging", grid(personas, 1), tmp_path)
    with pytest.raises(TargetError, match="not among"):
        run_tapped(emu, "00000000-0000-4000-8000-000000000000", "draft", grid(personas), tmp_path)


# --------------------------------------------------------------------------- variants


def test_variant_with_instructions_runs_on_a_deleted_clone(
    emu: EmulatorServer, personas: list[Persona], tmp_path: Path
) -> None:
    assistant, config = build(emu, ENGLISH)
    before = assistant_ids(emu)
    variant = Variant.with_instructions("nastaliq", NASTALIQ)
    run, tap = run_tapped(emu, assistant, variant, grid(personas), tmp_path)

    (created,) = tap.created()
    assert created["config"]["agent"] == {**config["agent"], "instructions": NASTALIQ}
    assert created["config"]["llm"]["default"]["model"] == "llm-5.4-mini"
    assert "apiKey" not in created["config"]["llm"]["default"]
    (clone,) = tap.deleted()
    assert tap.simulated_on() == {clone}
    assert clone != assistant
    assert assistant_ids(emu) == before
    assert run.manifest["target"] == "nastaliq"
    assert run.manifest["on_clone"] is True
    assert run.manifest["variant"]["patch"] == {"agent": {"instructions": NASTALIQ}}
    assert set(run.conversations["target"]) == {"nastaliq"}
    assert arabic_share(run) >= 0.5
    # the assistant itself is untouched
    assert [v["version"] for v in emu.versions(assistant)] == [1]


def test_variant_with_llm_merges_into_llm_default(
    emu: EmulatorServer, personas: list[Persona], tmp_path: Path
) -> None:
    assistant, config = build(emu)
    before = assistant_ids(emu)
    variant = Variant.with_llm("nano", model="llm-5.4-nano", verbosity=None, reasoningEffort="low")
    run, tap = run_tapped(emu, assistant, variant, grid(personas, 2), tmp_path)
    (created,) = tap.created()
    assert created["config"]["llm"] == {
        "default": {"provider": "vendor_c", "model": "llm-5.4-nano", "reasoningEffort": "low"}
    }
    assert created["config"]["agent"] == config["agent"]
    assert len(tap.deleted()) == 1
    assert assistant_ids(emu) == before
    assert set(run.conversations["status"]) == {"done"}


def test_variant_on_prod_patches_the_prod_snapshot(
    emu: EmulatorServer, personas: list[Persona], tmp_path: Path
) -> None:
    assistant, _ = build(emu, NASTALIQ)
    SnapshotStore(tmp_path).save(
        ConfigSnapshot.from_assistant(
            next(
                a for a in Client(emu.base_url, emu.api_key).list_assistants() if a.id == assistant
            )
        )
    )
    emu.publish(assistant)
    edit(emu, assistant, ENGLISH)
    variant = Variant("prod-nano", {"llm": {"default": {"model": "llm-5.4-nano"}}}, base="prod")
    run, tap = run_tapped(emu, assistant, variant, grid(personas, 2), tmp_path)
    (created,) = tap.created()
    assert created["config"]["agent"]["instructions"] == NASTALIQ
    assert created["config"]["llm"]["default"]["model"] == "llm-5.4-nano"
    assert run.manifest["assistant_version"] == 1
    assert len(tap.deleted()) == 1


def test_variant_arguments_are_checked() -> None:
    for name in ("", "draft", "prod"):
        with pytest.raises(ValueError, match="name"):
            Variant(name)
    with pytest.raises(ValueError, match="base"):
        Variant("x", {}, base="staging")  # type: ignore[arg-type]
    assert Variant.with_instructions("v", "Hi").patch == {"agent": {"instructions": "Hi"}}
    assert Variant.with_llm("v", model="m").patch == {"llm": {"default": {"model": "m"}}}
    secret = Variant("v", {"llm": {"default": {"apiKey": PROVIDER_KEY}}}).definition()
    assert PROVIDER_KEY not in json.dumps(secret)


# --------------------------------------------------------------------------- merge patch


RFC7386_EXAMPLES: list[tuple[Any, Any, Any]] = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("target", "patch", "expected"), RFC7386_EXAMPLES)
def test_merge_patch_follows_rfc_7386(target: Any, patch: Any, expected: Any) -> None:
    target_copy, patch_copy = json.loads(json.dumps(target)), json.loads(json.dumps(patch))
    assert merge_patch(target, patch) == expected
    assert target == target_copy
    assert patch == patch_copy


def test_merge_patch_result_does_not_alias_the_patch() -> None:
    patch: dict[str, Any] = {"tools": [{"name": "x"}], "agent": {"instructions": "new"}}
    result = merge_patch({"agent": {"instructions": "old", "initialGreeting": True}}, patch)
    result["tools"][0]["name"] = "changed"
    assert patch["tools"][0]["name"] == "x"
    assert result["agent"] == {"instructions": "new", "initialGreeting": True}


# --------------------------------------------------------------------------- redaction


def test_redact_config_keeps_the_last_four_characters_of_every_api_key() -> None:
    config: dict[str, Any] = {
        "llm": {"default": {"provider": "vendor_c", "apiKey": PROVIDER_KEY}},
        "stt": {"provider": "vendor_a", "apiKey": "short"},
        "tools": [{"headers": {"apiKey": "another-long-key-5678"}}],
        "agent": {"instructions": "use sk_api_abcdefghijklmnop for tests"},
    }
    redacted = redact_config(config)
    assert redacted["llm"]["default"] == {"provider": "vendor_c", "apiKey": MASK + "1234"}
    assert redacted["stt"]["apiKey"] == MASK
    assert redacted["tools"][0]["headers"]["apiKey"] == MASK + "5678"
    assert "sk_api_abcdefghijklmnop" not in json.dumps(redacted)
    assert config["llm"]["default"]["apiKey"] == PROVIDER_KEY  # the input is untouched
    stripped = strip_redacted_keys(redacted)
    assert "apiKey" not in stripped["llm"]["default"]
    assert "apiKey" not in stripped["stt"]
    assert "apiKey" not in stripped["tools"][0]["headers"]
    assert stripped["llm"]["default"]["provider"] == "vendor_c"
    # a key given in full (for example in a variant's patch) is kept
    assert strip_redacted_keys({"apiKey": "full-key"}) == {"apiKey": "full-key"}


def test_snapshots_on_disk_are_redacted(
    emu: EmulatorServer, personas: list[Persona], tmp_path: Path
) -> None:
    assistant, _ = build(emu)
    run = run_grid(
        grid(personas, 1), assistant, client=Client(emu.base_url, emu.api_key), store=tmp_path
    )
    snap = SnapshotStore(tmp_path).load(assistant, 1)
    assert snap is not None
    assert snap.config["llm"]["default"]["apiKey"] == MASK + PROVIDER_KEY[-4:]
    assert run.manifest["config_snapshot"]["config"]["llm"]["default"]["apiKey"].endswith("1234")
    assert SnapshotStore(tmp_path).load(assistant, 7) is None
    no_secret_on_disk(tmp_path)


# --------------------------------------------------------------------------- clones on failure


def test_clone_is_deleted_when_the_run_aborts(
    emu: EmulatorServer, personas: list[Persona], tmp_path: Path
) -> None:
    """The third simulate request reaches the emulator with a bad key: a real 401."""

    def revoke(request: httpx.Request, n: int) -> httpx.Request:
        if n < 3:
            return request
        return replace_request(request, headers={"Authorization": "Bearer sk_api_revoked"})

    assistant, _ = build(emu)
    before = assistant_ids(emu)
    with pytest.raises(RunAborted):
        run_tapped(
            emu,
            assistant,
            Variant.with_instructions("v", NASTALIQ),
            grid(personas),
            tmp_path,
            revoke,
            run_id="aborted",
            concurrency=1,
        )
    assert assistant_ids(emu) == before
    assert len(load_run("aborted", store=tmp_path).conversations) == 2


# turns take 0.2 s each: a run is still streaming when it is cancelled
slow_emu = emulator_fixture(time_scale=0.02, seed=4, turn_delay=10.0)


async def test_clone_is_deleted_and_streams_closed_when_the_run_is_cancelled(
    slow_emu: EmulatorServer, personas: list[Persona], tmp_path: Path
) -> None:
    assistant, _ = await asyncio.to_thread(build, slow_emu)
    before = await asyncio.to_thread(assistant_ids, slow_emu)
    async with AsyncClient(slow_emu.base_url, slow_emu.api_key) as client:
        task = asyncio.create_task(
            arun_grid(
                grid(personas, 6),
                assistant,
                client=client,
                target=Variant.with_instructions("slow", NASTALIQ),
                store=tmp_path,
                run_id="cancelled",
                options=RunOptions(concurrency=4, progress=False),
            )
        )

        def four_streams_open() -> bool:
            assert not task.done()
            return bool(slow_emu.stats()["active"] >= 4)

        await await_until(four_streams_open, 10, what="four streams open", interval=0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await client.list_assistants()  # the caller's client stays usable
    assert await asyncio.to_thread(assistant_ids, slow_emu) == before
    await asyncio.to_thread(wait_idle, slow_emu, 5)  # no stream left open after cancellation
    run = load_run("cancelled", store=tmp_path)
    assert run.manifest["outcome"] == "interrupted"
