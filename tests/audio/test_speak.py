"""``speak``: real E11 calls to the emulator on loopback, audio bytes, phrase replacements,
and a content-addressed cache that answers without the service."""

from __future__ import annotations

from pathlib import Path

import pytest

import evalkit
from evalkit import Audio, Client, SpeakOptions, speak
from evalkit.api import BadRequestError, InvalidRequestError
from evalkit.emulator import serve

URDU = "آپ کی اپوائنٹمنٹ کل پانچ بجے ہے"


def test_speak_returns_real_audio_and_answers_again_from_the_cache(tmp_path: Path) -> None:
    with serve(seed=3) as emu, Client(emu.base_url, emu.api_key) as client:
        audio = speak(
            URDU,
            client=client,
            store=tmp_path / "store",
            options=SpeakOptions(voice_id="v_kwmp7zxt"),
        )
        assert isinstance(audio, Audio)
        assert not audio.cached
        assert audio.data[:3] == b"ID3" or audio.data[0] == 0xFF  # an MP3 stream
        assert len(audio.data) > 1000
        assert audio.mime_type == "audio/mpeg"
        wav = speak(
            URDU,
            client=client,
            store=tmp_path / "store",
            options=SpeakOptions(output_format="WAV_22050_16"),
        )
        assert wav.data[:4] == b"RIFF"
        assert wav.voice_id == "v_8eelc901"  # the default voice
        cached = sorted(p.name for p in (tmp_path / "store" / ".audio").iterdir())
        assert len(cached) == 2
        assert {Path(n).suffix for n in cached} == {".mp3", ".wav"}
    # the emulator is gone: the same request is answered from the cache, byte for byte
    with Client(emu.base_url, emu.api_key) as dead:
        again = speak(
            URDU,
            client=dead,
            store=tmp_path / "store",
            options=SpeakOptions(voice_id="v_kwmp7zxt"),
        )
    assert again.cached
    assert again.data == audio.data


def test_phrase_replacements_change_the_audio_and_the_cache_key(tmp_path: Path) -> None:
    with serve(seed=3) as emu, Client(emu.base_url, emu.api_key) as client:
        config = client.create_phrase_replacement_config({"اپوائنٹمنٹ": "ملاقات کا وقت"})
        plain = speak(URDU, client=client, store=tmp_path)
        replaced = speak(
            URDU,
            client=client,
            store=tmp_path,
            options=SpeakOptions(phrase_replacement_config_id=config.config_id),
        )
        assert not replaced.cached
        assert replaced.data != plain.data
        assert replaced.phrase_replacement_config_id == config.config_id
        with pytest.raises(evalkit.NotFoundError):
            speak(
                URDU,
                client=client,
                store=tmp_path,
                options=SpeakOptions(phrase_replacement_config_id="nope"),
            )


def test_bad_requests_are_refused_before_sending_and_display_inline(tmp_path: Path) -> None:
    with serve(seed=3) as emu, Client(emu.base_url, emu.api_key) as client:
        with pytest.raises((InvalidRequestError, BadRequestError), match="text"):
            speak("a" * 2501, client=client, store=tmp_path)
        with pytest.raises((InvalidRequestError, BadRequestError), match="voiceId"):
            speak(
                "salam",
                client=client,
                store=tmp_path,
                options=SpeakOptions(voice_id="v_nobody"),
            )
        with pytest.raises(ValueError, match="output_format"):
            speak(
                "salam",
                client=client,
                store=tmp_path,
                options=SpeakOptions(output_format="FLAC_44100"),
            )
        audio = speak("salam", client=client, store=tmp_path)
    page = audio._repr_html_()
    assert page.startswith("<audio controls")
    assert "data:audio/mpeg;base64," in page
    assert "salam" in repr(audio)
    assert emu.api_key not in repr(audio)
    assert audio.ipython().data == audio.data
