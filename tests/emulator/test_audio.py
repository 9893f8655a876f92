"""Synthesized audio: every E11 format decodes, with the right rate, length, loudness and voice."""

from __future__ import annotations

import io

import numpy as np
import numpy.typing as npt
import pytest
import soundfile as sf

from evalkit.api._limits import OUTPUT_FORMATS, VOICE_IDS
from evalkit.emulator._audio import (
    CHARS_PER_SECOND,
    apply_phrase_replacements,
    synthesize,
    ulaw_decode,
    ulaw_encode,
)

TEXT = "آپ کی اپائنٹمنٹ کل شام چار بجے ہے۔ کیا آپ تشریف لا سکیں گے؟"
MP3_BITRATES_MPEG2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]


def decode(data: bytes, output_format: str) -> tuple[npt.NDArray[np.float64], int]:
    """Decode with standard decoders: soundfile for containers, numpy for raw streams."""
    if output_format == "PCM_22050_16":
        return np.frombuffer(data, dtype="<i2").astype(np.float64) / 32768.0, 22050
    if output_format == "ULAW_8000_8":
        return ulaw_decode(data).astype(np.float64) / 32768.0, 8000
    samples, rate = sf.read(io.BytesIO(data), dtype="float64")
    return samples, rate


def mp3_header(data: bytes) -> tuple[int, int]:
    """(sample rate, kbps) from the first MPEG audio frame header."""
    i = data.index(b"\xff")
    while data[i + 1] & 0xE0 != 0xE0:
        i = data.index(b"\xff", i + 1)
    version_bits = (data[i + 1] >> 3) & 0x03
    assert version_bits == 0b10  # MPEG-2, which carries 22050 Hz
    assert (data[i + 1] >> 1) & 0x03 == 0b01  # Layer III
    rate = (22050, 24000, 16000)[(data[i + 2] >> 2) & 0x03]
    return rate, MP3_BITRATES_MPEG2[data[i + 2] >> 4]


@pytest.mark.parametrize("output_format", OUTPUT_FORMATS)
def test_every_format_decodes_with_its_rate_length_and_sound(output_format: str) -> None:
    data = synthesize(TEXT, "v_8eelc901", output_format)
    samples, rate = decode(data, output_format)
    assert rate == (8000 if output_format == "ULAW_8000_8" else 22050)
    expected = len(TEXT) / CHARS_PER_SECOND + 0.3
    assert samples.size / rate == pytest.approx(expected, rel=0.1)
    assert float(np.sqrt(np.mean(samples**2))) > 0.05
    assert float(np.max(np.abs(samples))) <= 1.0


@pytest.mark.parametrize(
    ("output_format", "subtype"), [("WAV_22050_16", "PCM_16"), ("WAV_22050_32", "PCM_32")]
)
def test_wav_sample_width(output_format: str, subtype: str) -> None:
    info = sf.info(io.BytesIO(synthesize("Hello", "v_kwmp7zxt", output_format)))
    assert (info.format, info.subtype, info.channels) == ("WAV", subtype, 1)


def test_ogg_is_vorbis() -> None:
    info = sf.info(io.BytesIO(synthesize("Hello", "v_kwmp7zxt", "OGG_22050_16")))
    assert (info.format, info.subtype, info.samplerate) == ("OGG", "VORBIS", 22050)


@pytest.mark.parametrize("kbps", [32, 64, 128])
def test_mp3_bit_rate(kbps: int) -> None:
    data = synthesize(TEXT, "v_yypgzenx", f"MP3_22050_{kbps}")
    assert mp3_header(data) == (22050, kbps)
    seconds = len(TEXT) / CHARS_PER_SECOND + 0.3
    assert len(data) * 8 / seconds / 1000 == pytest.approx(kbps, rel=0.15)


def test_ulaw_matches_libsndfile_decoder() -> None:
    data = synthesize(TEXT, "v_30s70t3a", "ULAW_8000_8")
    reference, rate = sf.read(
        io.BytesIO(data), format="RAW", subtype="ULAW", samplerate=8000, channels=1, dtype="int16"
    )
    assert rate == 8000
    np.testing.assert_array_equal(reference, ulaw_decode(data))


def test_ulaw_codec_reference_points_and_round_trip() -> None:
    points = np.array([0, 32767, -32768, 1000, -1000], dtype=np.int16)
    assert ulaw_encode(points)[:3] == bytes([0xFF, 0x80, 0x00])
    ramp = np.linspace(-32768, 32767, 5001).astype(np.int16)
    decoded = ulaw_decode(ulaw_encode(ramp)).astype(np.int32)
    error = np.abs(decoded - ramp.astype(np.int32))
    assert np.all(error <= np.maximum(np.abs(ramp.astype(np.int32)) // 16, 8) + 1)


def test_duration_is_proportional_to_text() -> None:
    short, _ = decode(synthesize("a" * 50, "v_8eelc901", "PCM_22050_16"), "PCM_22050_16")
    long, _ = decode(synthesize("a" * 400, "v_8eelc901", "PCM_22050_16"), "PCM_22050_16")
    lead = int(0.3 * 22050)
    assert (long.size - lead) / (short.size - lead) == pytest.approx(8.0, rel=0.02)


def pitch(samples: npt.NDArray[np.float64], rate: int) -> float:
    """Fundamental frequency estimate by autocorrelation over 70..400 Hz."""
    middle = samples[samples.size // 3 : samples.size // 3 + rate // 5]
    corr = np.correlate(middle, middle, mode="full")[middle.size - 1 :]
    lo, hi = rate // 400, rate // 70
    return rate / (lo + int(np.argmax(corr[lo:hi])))


def test_voices_differ_in_pitch() -> None:
    text = "aaaa aaaa aaaa aaaa aaaa aaaa"
    pitches = {
        voice: pitch(decode(synthesize(text, voice, "PCM_22050_16"), "PCM_22050_16")[0], 22050)
        for voice in VOICE_IDS
    }
    assert len({round(p / 10) for p in pitches.values()}) == len(VOICE_IDS)
    assert pitches["v_kwmp7zxt"] < pitches["v_8eelc901"]
    assert pitches["v_30s70t3a"] < pitches["v_yypgzenx"]


def test_deterministic_per_seed() -> None:
    first = synthesize(TEXT, "v_8eelc901", "WAV_22050_16", seed=3)
    assert synthesize(TEXT, "v_8eelc901", "WAV_22050_16", seed=3) == first
    assert synthesize(TEXT, "v_8eelc901", "WAV_22050_16", seed=4) != first


def test_unknown_voice_still_renders_and_unknown_format_is_refused() -> None:
    assert synthesize("Hi", "custom_voice", "PCM_22050_16")
    with pytest.raises(ValueError, match="outputFormat"):
        synthesize("Hi", "v_8eelc901", "FLAC_48000_24")


@pytest.mark.parametrize("output_format", ["OGG_22050_16", "MP3_22050_128"])
def test_longest_text_encodes(output_format: str) -> None:
    text = (TEXT + " ") * (2500 // (len(TEXT) + 1))
    samples, rate = decode(synthesize(text, "v_kwmp7zxt", output_format), output_format)
    assert samples.size / rate == pytest.approx(len(text) / CHARS_PER_SECOND + 0.3, rel=0.05)


@pytest.mark.parametrize(
    ("text", "replacements", "expected"),
    [
        ("Call AI now", [{"phrase": "AI", "replacement": "اے آئی"}], "Call اے آئی now"),
        ("SAID it", [{"phrase": "AI", "replacement": "X"}], "SAID it"),
        ("شکریہ دوست", [{"phrase": "شکریہ", "replacement": "shukriya"}], "shukriya دوست"),
        (
            "Dr. Ali",
            [
                {"phrase": "Dr.", "replacement": "Doctor"},
                {"phrase": "Doctor", "replacement": "ڈاکٹر"},
            ],
            "ڈاکٹر Ali",
        ),
        (
            "a b",
            [{"phrase": "", "replacement": "x"}, {"phrase": "b", "replacement": r"\1\g<0>"}],
            r"a \1\g<0>",
        ),
        ("no match", [], "no match"),
    ],
)
def test_phrase_replacements(text: str, replacements: list[dict[str, str]], expected: str) -> None:
    assert apply_phrase_replacements(text, replacements) == expected


@pytest.mark.parametrize("kbps", [32, 64, 128])
def test_mp3_leads_with_an_info_frame_that_gives_the_duration(kbps: int) -> None:
    from evalkit.emulator._audio import mp3_frames

    data = synthesize(TEXT, "v_kwmp7zxt", f"MP3_22050_{kbps}")
    frames = mp3_frames(data)
    assert sum(length for _, length in frames) == len(data)  # nothing but whole frames
    side_info = 9  # MPEG-2 mono
    tag = data[4 + side_info : 4 + side_info + 16]
    assert tag[:4] == b"Info"
    flags, n_frames, n_bytes = (int.from_bytes(tag[i : i + 4], "big") for i in (4, 8, 12))
    assert flags & 0x3 == 0x3
    assert n_frames == len(frames) - 1
    assert n_bytes == len(data)
    tag_seconds = n_frames * 576 / 22050
    expected = len(TEXT) / 15.0 + 0.3  # the speaking rate plus lead-in and tail
    assert abs(tag_seconds - expected) < 0.15
    decoded = sf.info(io.BytesIO(data)).duration  # libsndfile (mpg123) skips the Info frame
    assert abs(decoded - tag_seconds) < 576 / 22050
