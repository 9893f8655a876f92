"""E11–E12 over loopback: audio in every output format that a standard decoder reads, phrase
replacement configs (created, limited to 1000 entries, applied during synthesis) and the
synthesis rate limit's exact message."""

from __future__ import annotations

import io
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
import soundfile as sf  # type: ignore[import-untyped]

from evalkit.api import (
    InvalidRequestError,
    PhraseReplacement,
    PhraseReplacementConfig,
    RateLimitError,
    RetryPolicy,
)
from evalkit.emulator import EmulatorServer
from tests.client_emulator.conftest import SEED, MakeApi, new_project, serving

VOICE = "v_yypgzenx"
TEXT = "السلام علیکم، آپ کا order کل پہنچے گا۔ Shukriya!"
RATE_LIMIT_MESSAGE = "Rate limit exceeded, please try again later"
# (container as soundfile names it, sample rate, libsndfile subtype or None when not fixed)
FORMATS: dict[str, tuple[str, int, str | None]] = {
    "PCM_22050_16": ("RAW", 22050, "PCM_16"),
    "WAV_22050_16": ("WAV", 22050, "PCM_16"),
    "WAV_22050_32": ("WAV", 22050, "PCM_32"),
    "MP3_22050_32": ("MP3", 22050, None),
    "MP3_22050_64": ("MP3", 22050, None),
    "MP3_22050_128": ("MP3", 22050, None),
    "OGG_22050_16": ("OGG", 22050, None),
    "ULAW_8000_8": ("RAW", 8000, "ULAW"),
}


@pytest.fixture(scope="module")
def emu() -> Iterator[EmulatorServer]:
    """This module's emulator at time scale 1: the synthesis rate window is a real minute, so
    the rate-limit test cannot slip past it; nothing else here depends on emulated time."""
    with serving(time_scale=1.0, seed=SEED) as server:
        yield server


def decode(audio: bytes, output_format: str) -> tuple[int, int]:
    """(frames, sample rate) as libsndfile reads the bytes; raw formats need their layout."""
    container, rate, subtype = FORMATS[output_format]
    source = io.BytesIO(audio)
    if container == "RAW":
        data, read_rate = sf.read(
            source, format="RAW", subtype=subtype, samplerate=rate, channels=1, endian="LITTLE"
        )
    else:
        info = sf.info(io.BytesIO(audio))
        assert info.format == container, info
        if subtype is not None:
            assert info.subtype == subtype, info
        data, read_rate = sf.read(source)
    return len(data), int(read_rate)


@pytest.mark.parametrize("output_format", list(FORMATS))
async def test_every_output_format_decodes(output_format: str, make_api: MakeApi) -> None:
    audio = await make_api().text_to_speech(TEXT, VOICE, output_format)
    assert isinstance(audio, bytes)
    assert audio
    frames, rate = decode(audio, output_format)
    assert frames > rate // 2  # at least half a second of sound for a sentence
    assert rate == FORMATS[output_format][1]
    if output_format.startswith("PCM"):
        assert len(audio) % 2 == 0
        assert frames == len(audio) // 2
    if output_format.startswith("ULAW"):
        assert frames == len(audio)


async def test_phrase_replacement_config_is_created(make_api: MakeApi) -> None:
    api = make_api()
    pairs = [
        {"phrase": "AKUH", "replacement": "آغا خان یونیورسٹی ہسپتال"},
        {"phrase": "شکریہ", "replacement": "Shukriya"},
    ]
    created = await api.create_phrase_replacement_config(pairs)
    assert isinstance(created, PhraseReplacementConfig)
    assert created.config_id
    assert [p.to_json() for p in created.phrase_replacements] == pairs
    from_mapping = await api.create_phrase_replacement_config({"Dr.": "Doctor"})
    assert from_mapping.phrase_replacements == [
        PhraseReplacement(phrase="Dr.", replacement="Doctor")
    ]
    assert from_mapping.config_id != created.config_id


async def test_phrase_replacements_are_applied(make_api: MakeApi) -> None:
    api = make_api()
    longer = "the Aga Khan University Hospital outpatient department on Stadium Road, Karachi"
    config = await api.create_phrase_replacement_config([{"phrase": "AKUH", "replacement": longer}])
    text = "Please come to AKUH tomorrow."
    plain = await api.text_to_speech(text, VOICE, "PCM_22050_16")
    replaced = await api.text_to_speech(text, VOICE, "PCM_22050_16", config.config_id)
    spelled_out = await api.text_to_speech(text.replace("AKUH", longer), VOICE, "PCM_22050_16")
    assert len(replaced) > 2 * len(plain)
    assert len(replaced) == len(spelled_out)


async def test_at_most_1000_phrase_replacements(make_api: MakeApi) -> None:
    api = make_api()
    entries: list[dict[str, Any]] = [
        {"phrase": f"p{i}", "replacement": f"r{i}"} for i in range(1000)
    ]
    stored = await api.create_phrase_replacement_config(entries)
    assert len(stored.phrase_replacements) == 1000
    sent = len(api.sent)
    with pytest.raises(InvalidRequestError) as caught:
        await api.create_phrase_replacement_config([*entries, {"phrase": "x", "replacement": "y"}])
    assert "phraseReplacements" in caught.value.fields
    assert len(api.sent) == sent


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"text": "a" * 2501}, "text"),
        ({"voice_id": "v_unknown"}, "voiceId"),
        ({"output_format": "FLAC_44100_16"}, "outputFormat"),
    ],
    ids=["text over 2500", "unknown voice", "unknown format"],
)
async def test_bad_synthesis_request_is_refused_before_sending(
    kwargs: dict[str, str], field: str, make_api: MakeApi
) -> None:
    api = make_api()
    args = {"text": TEXT, "voice_id": VOICE, "output_format": "MP3_22050_32", **kwargs}
    with pytest.raises(InvalidRequestError) as caught:
        await api.text_to_speech(**args)
    assert caught.value.fields == [field]
    assert api.sent == []


async def test_synthesis_rate_limit(make_api: MakeApi, emu: EmulatorServer) -> None:
    api = make_api(api_key=new_project(emu)["apiKey"], retry=RetryPolicy.never())
    previous = emu.admin("GET", "/synthesis-limit")["requestsPerMinute"]
    emu.set_synthesis_limit(1)
    try:
        assert await api.text_to_speech("Salaam.", VOICE, "MP3_22050_32")
        calls: dict[str, Callable[[], Awaitable[Any]]] = {
            "text-to-speech": lambda: api.text_to_speech("Salaam.", VOICE, "MP3_22050_32"),
            "phrase config": lambda: api.create_phrase_replacement_config({"a": "b"}),
        }
        for name, call in calls.items():
            with pytest.raises(RateLimitError) as caught:
                await call()
            assert caught.value.messages == [RATE_LIMIT_MESSAGE], name
            assert caught.value.error is None, name  # synthesis failures are {message} only
    finally:
        emu.set_synthesis_limit(previous)
