"""Issue 14, item 6: secrets under any spelling stay masked in files, reprs, pickles and errors."""

from __future__ import annotations

import copy
import logging
import pickle
import traceback
from pathlib import Path
from typing import Any

import pytest

from evalkit._exceptions import EvalkitError
from evalkit._util import redact, redact_text
from evalkit.api import (
    ApiConnectionError,
    ApiError,
    AsyncClient,
    AuthenticationError,
    BadRequestError,
    Client,
    ConfigurationError,
    InvalidRequestError,
    NotFoundError,
    PaymentRequiredError,
    PermissionDeniedError,
    Problem,
    RateLimitError,
    ServerError,
    ServiceUnavailableError,
    StreamDeadlineExceeded,
    StreamDropped,
    UnexpectedResponseError,
)
from evalkit.api._config import Secret
from evalkit.emulator import EmulatorServer
from evalkit.grid import PersonaError, load_personas
from evalkit.grid._personas import PersonaProblem
from evalkit.runner import RunOptions, run_grid
from evalkit.store import (
    CorruptRunError,
    IdentityMismatchError,
    RunExistsError,
    RunLockedError,
    RunNotFoundError,
    StoreError,
)
from evalkit.targets import Variant, resolve_target

from .runner_fixtures import emulator_fixture
from .runner_support import PERSONAS_DIR, build_reminder, make_grid

emu = emulator_fixture(time_scale=0.002, seed=33)

PROVIDER_KEY = "sk-prov-PLANTEDproviderKEY-0001"
SNAKE_KEY = "sk-snake-PLANTEDsnakeKEY-0002"
TOOL_TOKEN = "PLANTEDtoolBEARERtoken-0003"
VARIANT_KEY = "sk-variant-PLANTEDvariantKEY-0004"
HEADER_TOKEN = "PLANTEDxAuthTOKEN-0005"
KEY = "sk_api_PLANTED.project+key/with=odd~chars%2B0006"


def visible_part(secret: str) -> str:
    """What must never appear: everything but the last 4 characters the mask keeps."""
    return secret[:-4]


def secret_config(api_key: str) -> dict[str, Any]:
    return {
        "agent": {
            "instructions": "You remind {{name}} of an appointment on {{date}}. Say goodbye.",
            "initialGreeting": True,
            "tools": [
                {
                    "name": "lookup",
                    "description": "Looks the caller up",
                    "parameters": {"type": "object", "properties": {}},
                    "execution": {
                        "type": "tool_endpoint",
                        "connectionId": "conn_1",
                        "headers": {
                            "Authorization": f"Bearer {TOOL_TOKEN}",
                            "X-Auth-Token": HEADER_TOKEN,
                        },
                    },
                }
            ],
        },
        "llm": {
            "default": {
                "provider": "vendor_c",
                "model": "llm-5.4-mini",
                "apiKey": PROVIDER_KEY,
                "api_key": SNAKE_KEY,
            }
        },
        "notes": f"deployed with {api_key}",
    }


def assert_clean(text: str | bytes, *secrets: str, where: str = "") -> None:
    data = text.encode("utf-8", "backslashreplace") if isinstance(text, str) else text
    for secret in secrets:
        for form in (secret, visible_part(secret)):
            assert form.encode() not in data, f"{form!r} in clear in {where}"


# --------------------------------------------------------------------------- the redactor


@pytest.mark.parametrize(
    "key",
    [
        pytest.param("sk_api_abc.def+ghi/jkl=mnopqrst", id="dot-plus-slash-equals"),
        pytest.param("sk_api_abc%2Bdef%2Fghi~jklmnop", id="percent-tilde"),
        pytest.param("sk_api_" + "A1b2" * 12, id="plain"),
    ],
)
def test_a_project_key_with_odd_characters_is_masked_to_its_last_4(key: str) -> None:
    for text in (f"key={key}", f'{{"k": "{key}"}}', f"Bearer {key} tail", f"{key}."):
        out = redact_text(text)
        assert visible_part(key)[7:] not in out
        assert "…" in out


def test_a_url_password_is_masked_in_any_text() -> None:
    out = redact_text("GET https://alice:hunter2hunter2@host.example/v1/x and ftp://bob@h/")
    assert "hunter2" not in out
    assert "alice" not in out
    assert "bob@" not in out
    assert "https://…@host.example/v1/x" in out


@pytest.mark.parametrize(
    "key", ["apiKey", "api_key", "Authorization", "X-Auth-Token", "openai_api_key", "clientSecret"]
)
def test_credential_keys_of_any_spelling_are_masked(key: str) -> None:
    assert redact({"a": {key: "long-secret-value-9999"}}) == {"a": {key: "…9999"}}


@pytest.mark.parametrize("key", ["maxTokens", "max_tokens", "tokenizer", "model"])
def test_non_credential_keys_are_kept(key: str) -> None:
    assert redact({key: "value-kept-as-is"}) == {key: "value-kept-as-is"}


# --------------------------------------------------------------------------- Secret and clients


def test_a_secret_refuses_to_be_pickled_and_copies_keep_it() -> None:
    secret = Secret(KEY)
    with pytest.raises(TypeError, match="never pickled"):
        pickle.dumps(secret)
    assert copy.deepcopy(secret).reveal() == KEY
    assert copy.copy(secret) is secret


@pytest.mark.parametrize("cls", [Client, AsyncClient])
def test_client_settings_never_pickle_the_key(cls: type[Any]) -> None:
    client = cls("http://127.0.0.1:1/v1", KEY)
    for obj in (client._settings, client._settings.api_key):
        with pytest.raises(TypeError):
            pickle.dumps(obj)
    assert_clean(repr(client) + str(client._settings), KEY, where="repr")


def _frame_locals(exc: BaseException) -> list[Any]:
    values: list[Any] = []
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        values.extend(frame.f_locals.values())
    return values


@pytest.mark.parametrize("cls", [Client, AsyncClient])
@pytest.mark.parametrize(
    "base_url",
    [
        pytest.param("ftp://host/v1", id="bad-scheme"),
        pytest.param("http://127.0.0.1:1/v2", id="bad-version"),
        pytest.param("http://[::1/v1", id="unparsable"),
    ],
)
def test_a_failed_construction_leaves_no_key_in_any_frame(cls: type[Any], base_url: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        cls(base_url, KEY)
    values = _frame_locals(caught.value)
    assert values, "the traceback has frames"
    assert not [v for v in values if isinstance(v, str) and KEY in v]
    shown = traceback.TracebackException.from_exception(caught.value, capture_locals=True)
    assert_clean("".join(shown.format()), KEY, where="traceback with locals")


@pytest.mark.parametrize(
    "base_url",
    ["http://user:hunter2pass@127.0.0.1:1/v1", "https://tokenonlyvalue@example.com/v1"],
)
def test_a_base_url_with_credentials_is_refused_without_showing_them(
    base_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ConfigurationError, match="must not carry credentials") as caught:
        Client(base_url, KEY)
    text = str(caught.value) + caplog.text
    assert "hunter2pass" not in text
    assert "tokenonlyvalue" not in text
    assert "user:" not in text


def test_a_base_url_from_the_environment_with_credentials_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EVALKIT_BASE_URL", "http://u:envpassword@127.0.0.1:1/v1")
    with pytest.raises(ConfigurationError) as caught:
        Client(api_key=KEY)
    assert "envpassword" not in str(caught.value)


# --------------------------------------------------------------------------- variants


def test_a_variant_hides_its_patch_credentials_in_repr_str_and_pickle() -> None:
    variant = Variant(
        "v",
        {
            "llm": {"default": {"apiKey": VARIANT_KEY, "api_key": SNAKE_KEY}},
            "tools": [{"headers": {"Authorization": f"Bearer {TOOL_TOKEN}"}}],
        },
    )
    secrets = (VARIANT_KEY, SNAKE_KEY, TOOL_TOKEN)
    for text in (repr(variant), str(variant), f"{variant}", repr([variant])):
        assert_clean(text, *secrets, where="variant text")
    blob = pickle.dumps(variant)
    assert_clean(blob, *secrets, where="variant pickle")
    back = pickle.loads(blob)
    assert back.name == "v"
    assert back.definition() == variant.definition()
    assert copy.deepcopy(variant).patch == variant.patch  # a copy keeps the real key


# --------------------------------------------------------------------------- errors


def _errors() -> list[EvalkitError]:
    api = [
        cls(400 + i, [f"bad {KEY}"], "Err", {"apiKey": PROVIDER_KEY}, method="GET", url="/x")
        for i, cls in enumerate(
            [
                ApiError,
                BadRequestError,
                AuthenticationError,
                PaymentRequiredError,
                PermissionDeniedError,
                NotFoundError,
                RateLimitError,
                ServiceUnavailableError,
                ServerError,
            ]
        )
    ]
    path = Path("/tmp/run")
    return [
        *api,
        ConfigurationError(f"no {KEY}"),
        InvalidRequestError([Problem("variables[0].a", "bad")], "grid"),
        ApiConnectionError("refused"),
        UnexpectedResponseError("odd"),
        StreamDropped("dropped", []),
        StreamDeadlineExceeded("late", []),
        PersonaError([PersonaProblem("p.yaml", "label", "missing")]),
        StoreError("disk full", path),
        RunNotFoundError("none", path),
        RunExistsError("exists", path),
        IdentityMismatchError(path, "a", "b", "grid changed"),
        RunLockedError("locked", path),
        CorruptRunError("corrupt", path),
    ]


def test_every_error_survives_a_pickle_round_trip_without_secrets() -> None:
    for exc in _errors():
        blob = pickle.dumps(exc)
        assert_clean(blob, KEY, PROVIDER_KEY, where=type(exc).__name__)
        back = pickle.loads(blob)
        assert type(back) is type(exc)
        assert str(back) == str(exc)
        assert back.__dict__ == exc.__dict__
        if isinstance(exc, ApiError):
            assert back.status_code == exc.status_code
            assert back.messages == exc.messages


# --------------------------------------------------------------------------- end to end


def test_a_run_writes_no_planted_secret_to_any_file_repr_or_pickle(
    emu: EmulatorServer, tmp_path: Path
) -> None:
    built = build_reminder(emu, config=secret_config(emu.api_key))
    assistant_id = str(built["realtimeAssistantId"])
    secrets = (PROVIDER_KEY, SNAKE_KEY, TOOL_TOKEN, HEADER_TOKEN, VARIANT_KEY, emu.api_key)
    grid = make_grid(load_personas(PERSONAS_DIR), 2, repeats=1)
    variant = Variant("keyed", {"llm": {"default": {"apiKey": VARIANT_KEY}}})
    with Client(emu.base_url, emu.api_key) as client:
        draft = run_grid(
            grid, assistant_id, client=client, store=tmp_path, options=RunOptions(progress=False)
        )
        clone = run_grid(
            grid,
            assistant_id,
            client=client,
            target=variant,
            store=tmp_path,
            options=RunOptions(progress=False),
        )
        listed = next(a for a in client.list_assistants() if a.id == assistant_id)
        reprs = [repr(client), repr(listed), str(listed), repr(listed.config), repr(variant)]
    assert set(draft.conversations["status"]) == {"done"}
    assert set(clone.conversations["status"]) == {"done"}

    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(".snapshots" in p.parts for p in files)
    assert any(p.name == "manifest.json" for p in files)
    for path in files:
        assert_clean(path.read_bytes(), *secrets, where=str(path))
    for text in reprs:
        assert_clean(text, *secrets, where="repr")
    assert_clean(pickle.dumps(variant), *secrets, where="pickle")
    resolved = _resolve(emu, assistant_id, variant, tmp_path)
    assert_clean(repr(resolved), *secrets, where="repr(ResolvedTarget)")


def _resolve(emu: EmulatorServer, assistant_id: str, variant: Variant, store: Path) -> Any:
    import asyncio

    from evalkit.targets import SnapshotStore

    async def go() -> Any:
        async with AsyncClient(emu.base_url, emu.api_key) as client:
            return await resolve_target(client, assistant_id, variant, SnapshotStore(store))

    return asyncio.run(go())
