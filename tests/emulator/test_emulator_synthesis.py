"""E11 text to speech and E12 phrase replacement configs."""

from __future__ import annotations

import httpx
import pytest

from evalkit.api._limits import OUTPUT_FORMATS, RATE_LIMIT_MESSAGE
from evalkit.emulator import EmulatorServer, serve

from .helpers import client_for

TTS = "/synthesis/text-to-speech"
PHRASES = "/synthesis/phrase-replacement-config"
EXPECTED_TYPES = {
    "PCM": "audio/L16;rate=22050",
    "WAV": "audio/wav",
    "MP3": "audio/mpeg",
    "OGG": "audio/ogg",
    "ULAW": "audio/basic",
}


@pytest.mark.parametrize("output_format", OUTPUT_FORMATS)
def test_every_format_returns_audio_bytes(client: httpx.Client, output_format: str) -> None:
    body = {
        "text": "Salam, kal appointment hai.",
        "voiceId": "v_kwmp7zxt",
        "outputFormat": output_format,
    }
    response = client.post(TTS, json=body)
    assert response.status_code == 200
    kind = output_format.split("_")[0]
    assert response.headers["content-type"] == EXPECTED_TYPES[kind]
    audio = response.content
    assert len(audio) > 100
    if kind == "WAV":
        assert audio[:4] == b"RIFF"
        assert audio[8:12] == b"WAVE"
    elif kind == "OGG":
        assert audio[:4] == b"OggS"
    elif kind == "MP3":
        assert audio[:3] == b"ID3" or (audio[0] == 0xFF and audio[1] & 0xE0 == 0xE0)
    elif kind == "PCM":
        assert len(audio) % 2 == 0


def test_default_format_is_mp3_and_voice_is_required(client: httpx.Client) -> None:
    response = client.post(TTS, json={"text": "hello", "voiceId": "v_8eelc901"})
    assert response.headers["content-type"] == "audio/mpeg"
    missing = client.post(TTS, json={"text": "hello"})
    assert missing.status_code == 400
    assert set(missing.json()) == {"message"}
    assert "voiceId" in missing.json()["message"]


def test_tts_validation_failures_are_message_objects(client: httpx.Client) -> None:
    for body, field in (
        ({"text": "x" * 2501, "voiceId": "v_8eelc901"}, "text"),
        ({"text": "x", "voiceId": "nobody"}, "voiceId"),
        ({"text": "x", "voiceId": "v_8eelc901", "outputFormat": "FLAC"}, "outputFormat"),
        ({"voiceId": "v_8eelc901"}, "text"),
    ):
        response = client.post(TTS, json=body)
        assert response.status_code == 400
        assert set(response.json()) == {"message"}
        assert isinstance(response.json()["message"], str)
        assert field in response.json()["message"]
    unknown = client.post(
        TTS, json={"text": "x", "voiceId": "v_8eelc901", "phraseReplacementConfigId": "nope"}
    )
    assert unknown.status_code == 404
    assert set(unknown.json()) == {"message"}


def test_phrase_replacements_are_applied_before_synthesis(client: httpx.Client) -> None:
    pairs = [
        {"phrase": "Dr.", "replacement": "ڈاکٹر صاحب"},
        {"phrase": "OK", "replacement": "ٹھیک ہے"},
    ]
    created = client.post(PHRASES, json={"phraseReplacements": pairs})
    assert created.status_code == 201
    config = created.json()
    assert set(config) == {"configId", "phraseReplacements"}
    assert config["phraseReplacements"] == pairs
    base = {"voiceId": "v_yypgzenx", "outputFormat": "PCM_22050_16"}
    replaced = client.post(
        TTS, json={**base, "text": "Dr. Khan, OK", "phraseReplacementConfigId": config["configId"]}
    ).content
    direct = client.post(TTS, json={**base, "text": "ڈاکٹر صاحب Khan, ٹھیک ہے"}).content
    plain = client.post(TTS, json={**base, "text": "Dr. Khan, OK"}).content
    assert replaced == direct
    assert replaced != plain


def test_phrase_replacement_limits(client: httpx.Client) -> None:
    ok = [{"phrase": f"p{i}", "replacement": "r"} for i in range(1000)]
    assert client.post(PHRASES, json={"phraseReplacements": ok}).status_code == 201
    too_many = client.post(
        PHRASES, json={"phraseReplacements": [*ok, {"phrase": "x", "replacement": "y"}]}
    )
    assert too_many.status_code == 400
    assert set(too_many.json()) == {"message"}
    assert "phraseReplacements" in too_many.json()["message"]
    for body in ({}, {"phraseReplacements": "x"}, {"phraseReplacements": [{"phrase": 1}]}):
        assert client.post(PHRASES, json=body).status_code == 400


def test_configs_of_other_projects_are_not_found(emu: EmulatorServer, client: httpx.Client) -> None:
    config_id = client.post(
        PHRASES, json={"phraseReplacements": [{"phrase": "a", "replacement": "b"}]}
    ).json()["configId"]
    with client_for(emu, emu.new_project()["apiKey"]) as stranger:
        response = stranger.post(
            TTS, json={"text": "a", "voiceId": "v_8eelc901", "phraseReplacementConfigId": config_id}
        )
    assert response.status_code == 404


def test_synthesis_rate_limit() -> None:
    with serve(time_scale=1.0) as emu, client_for(emu) as c:
        emu.set_synthesis_limit(2)
        body = {"text": "a", "voiceId": "v_8eelc901", "outputFormat": "ULAW_8000_8"}
        assert c.post(TTS, json=body).status_code == 200
        assert c.post(PHRASES, json={"phraseReplacements": []}).status_code == 201
        limited = c.post(TTS, json=body)
        assert limited.status_code == 429
        assert limited.json() == {"message": RATE_LIMIT_MESSAGE}
        assert int(limited.headers["retry-after"]) >= 1
        other = emu.new_project()["apiKey"]
        with client_for(emu, other) as fresh:
            assert fresh.post(TTS, json=body).status_code == 200  # the cap is per project


@pytest.mark.parametrize("text", ["", " ", "\n\t  "], ids=["empty", "space", "blanks"])
def test_blank_text_is_a_clear_400(client: httpx.Client, text: str) -> None:
    response = client.post(TTS, json={"text": text, "voiceId": "v_8eelc901"})
    assert response.status_code == 400
    assert "text" in response.json()["message"]
    assert "something to say" in response.json()["message"]
