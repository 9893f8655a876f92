"""Speech synthesis for the emulator's E11: real, decodable audio in every output format.

The emulator has no voice model, so it renders a *speech-like* signal instead: a voiced source
(harmonics of a pitch contour that declines over each phrase and rises on questions) shaped by a
per-character amplitude envelope (vowels loud, consonants softer with a little fricative noise,
spaces and punctuation quiet), so the result has a syllable-rate rhythm, pauses where the text
has them, a length proportional to the text (:data:`CHARS_PER_SECOND`) and a pitch that depends on
the voice. It is deterministic for a given ``(text, voice_id, output_format, seed)``.

Encoders: ``soundfile`` (its bundled libsndfile) for WAV and Ogg Vorbis, ``lameenc`` for MP3 (an
exact constant bit rate, and several times faster than libsndfile's MP3 writer), numpy for PCM and
mu-law:

=================  ==========================================================================
``PCM_22050_16``   raw signed 16-bit little-endian mono PCM, 22050 Hz (numpy)
``WAV_22050_16``   RIFF WAV, 16-bit signed PCM, 22050 Hz
``WAV_22050_32``   RIFF WAV, 32-bit signed PCM, 22050 Hz
``MP3_22050_*``    MPEG-2 Layer III, 22050 Hz, constant bit rate of 32, 64 or 128 kbps (no ID3),
                   led by an ``Info`` frame (the CBR Xing header: frame and byte counts) so
                   players read the duration from it instead of guessing
``OGG_22050_16``   Ogg Vorbis, 22050 Hz (written in blocks: libvorbis overflows its stack on
                   one large write)
``ULAW_8000_8``    raw G.711 mu-law, 8000 Hz, one byte a sample (numpy encoder; the signal is
                   rendered at 8 kHz directly, so no resampling is involved)
=================  ==========================================================================
"""

from __future__ import annotations

import io
import re
import zlib
from collections.abc import Mapping, Sequence
from typing import Final

import lameenc  # type: ignore[import-not-found]
import numpy as np
import numpy.typing as npt
import soundfile as sf  # type: ignore[import-untyped]

from evalkit.api import OUTPUT_FORMATS

__all__ = [
    "CHARS_PER_SECOND",
    "OUTPUT_FORMATS",
    "apply_phrase_replacements",
    "format_sample_rate",
    "mp3_frames",
    "synthesize",
    "ulaw_decode",
    "ulaw_encode",
]

CHARS_PER_SECOND: Final = 15.0
"""Speaking rate: characters of text per second of audio (about 150 words a minute)."""

_LEAD_S: Final = 0.15  # silence before and after the speech
_N_HARMONICS: Final = 8
_BLOCK_FRAMES: Final = 16384  # block size for encoders that dislike one huge write

# voice id -> (base pitch in Hz, spectral tilt: larger is darker)
_VOICES: Final[Mapping[str, tuple[float, float]]] = {
    "v_8eelc901": (215.0, 1.1),
    "v_kwmp7zxt": (118.0, 1.4),
    "v_yypgzenx": (180.0, 0.9),
    "v_30s70t3a": (98.0, 1.6),
}

_LAME_QUALITY: Final = 7  # LAME's 0 (best, slowest) .. 9 scale; 7 is several times faster than 2

_VOWELS: Final = frozenset("aeiouyAEIOUYاآوےیيىۓہەعأإ")
_FRICATIVES: Final = frozenset("sfzxhcjSFZXHCJسشصضزذظژفخحثچج")
_PAUSES: Final[Mapping[str, float]] = {
    ".": 5.0,
    "!": 5.0,
    "?": 5.0,
    "۔": 5.0,
    "؟": 5.0,
    ",": 2.5,
    "،": 2.5,
    ";": 3.0,
    "؛": 3.0,
    ":": 3.0,
    "\n": 5.0,
}
_QUESTION: Final = frozenset("?؟")


def format_sample_rate(output_format: str) -> int:
    """The sample rate in Hz an output format is rendered at (22050, or 8000 for mu-law)."""
    _check_format(output_format)
    return int(output_format.split("_")[1])


def apply_phrase_replacements(text: str, replacements: Sequence[Mapping[str, str]]) -> str:
    """Apply ``{phrase, replacement}`` entries to ``text`` in order, as E12 configs are.

    A phrase matches exactly (case-sensitive), wherever it occurs, except inside a longer word:
    a phrase that starts or ends with a letter or digit must not touch another letter or digit
    on that side. Works the same in either script direction (Latin to Urdu or back). Entries
    with an empty phrase are skipped; later entries see the output of earlier ones.
    """
    for entry in replacements:
        phrase = entry.get("phrase", "")
        if not phrase:
            continue
        replacement = entry.get("replacement", "")
        left = r"(?<!\w)" if phrase[0].isalnum() else ""
        right = r"(?!\w)" if phrase[-1].isalnum() else ""
        pattern = re.compile(left + re.escape(phrase) + right)
        text = pattern.sub(replacement.replace("\\", "\\\\"), text)  # literal
    return text


def synthesize(text: str, voice_id: str, output_format: str, *, seed: int = 0) -> bytes:
    """Render ``text`` in ``voice_id`` and encode it as ``output_format`` (an E11 enum value).

    Raises ``ValueError`` naming ``outputFormat`` for a format outside the spec's enum. Any voice
    id renders (the four gallery ids have tuned pitches; others get one derived from the id).
    """
    rate = format_sample_rate(output_format)
    signal = render_speech(text, voice_id, rate, seed=seed)
    return _encode(signal, rate, output_format)


def render_speech(
    text: str, voice_id: str, sample_rate: int, *, seed: int = 0
) -> npt.NDArray[np.float32]:
    """The speech-like waveform for ``text`` as float32 samples in [-1, 1] at ``sample_rate``."""
    base_f0, tilt = _voice(voice_id)
    text_key = zlib.crc32(text.encode("utf-8"))
    rng = np.random.default_rng([seed & 0xFFFFFFFF, text_key, zlib.crc32(voice_id.encode())])

    # one time slot per character; pauses for punctuation
    chars = list(text) or [" "]
    slot = np.array([_PAUSES.get(c, 1.0) for c in chars], dtype=np.float64)
    slot *= rng.uniform(0.8, 1.2, size=slot.size)
    slot *= (len(chars) / CHARS_PER_SECOND) / slot.sum()  # total length: text / speaking rate
    amp = np.array([_char_amplitude(c) for c in chars], dtype=np.float64)
    amp *= rng.uniform(0.75, 1.0, size=amp.size)
    hiss = np.array([0.35 if c in _FRICATIVES else 0.04 for c in chars], dtype=np.float64)

    lead = int(_LEAD_S * sample_rate)
    n_speech = max(1, round(float(slot.sum()) * sample_rate))
    n = n_speech + 2 * lead
    ends = np.cumsum(slot)
    centres = ends - slot / 2.0
    t = (np.arange(n_speech, dtype=np.float64) + 0.5) / sample_rate
    envelope = np.interp(t, centres, amp)
    noise_env = np.interp(t, centres, hiss)

    # pitch: declination within each phrase, a rise before question marks, slow seeded wobble
    phrase_pos = np.zeros(len(chars))
    start = 0
    for i, c in enumerate(chars):
        if c in _PAUSES or i == len(chars) - 1:
            span = max(1, i - start)
            phrase_pos[start : i + 1] = np.linspace(0.0, 1.0, i + 1 - start) * (i - start) / span
            if c in _QUESTION:
                phrase_pos[start : i + 1] -= np.linspace(0.0, 1.6, i + 1 - start) ** 3
            start = i + 1
    f0_chars = base_f0 * (1.12 - 0.22 * phrase_pos)
    f0 = np.interp(t, centres, f0_chars)
    wobble_t = np.linspace(0.0, t[-1] if t.size else 0.0, 16)
    f0 *= 1.0 + np.interp(t, wobble_t, rng.normal(0.0, 0.03, size=wobble_t.size))
    phase = np.mod((2.0 * np.pi / sample_rate) * np.cumsum(f0), 2.0 * np.pi).astype(np.float32)

    # harmonics by the Chebyshev recurrence sin((k+1)x) = 2cos(x)sin(kx) - sin((k-1)x)
    nyquist = sample_rate / 2.0
    s_prev = np.zeros(n_speech, dtype=np.float32)
    s_k = np.sin(phase)
    two_cos = np.float32(2.0) * np.cos(phase)
    voiced = np.zeros(n_speech, dtype=np.float32)
    for k in range(1, _N_HARMONICS + 1):
        if k * base_f0 * 1.3 < nyquist:
            voiced += np.float32(k**-tilt) * s_k
        s_prev, s_k = s_k, two_cos * s_k - s_prev
    noise = rng.standard_normal(n_speech, dtype=np.float32)
    speech = envelope.astype(np.float32) * voiced + noise_env.astype(np.float32) * noise * 0.3

    peak = float(np.max(np.abs(speech))) if speech.size else 0.0
    if peak > 0.0:
        speech *= np.float32(0.8 / peak)
    out = np.zeros(n, dtype=np.float32)
    out[lead : lead + n_speech] = speech
    return out


def ulaw_encode(samples: npt.NDArray[np.int16]) -> bytes:
    """G.711 mu-law encode 16-bit linear samples (the classic Sun ``g711.c`` algorithm)."""
    x = samples.astype(np.int32)
    sign = np.where(x < 0, 0x80, 0x00)
    magnitude = np.minimum(np.abs(x), 32635) + 0x84
    exponent = np.searchsorted(
        np.array([0x100, 0x200, 0x400, 0x800, 0x1000, 0x2000, 0x4000]), magnitude, side="right"
    )
    mantissa = (magnitude >> (exponent + 3)) & 0x0F
    code = ~(sign | (exponent << 4) | mantissa) & 0xFF
    return bytes(code.astype(np.uint8).tobytes())


def ulaw_decode(data: bytes) -> npt.NDArray[np.int16]:
    """G.711 mu-law decode to 16-bit linear samples (inverse of :func:`ulaw_encode`)."""
    code = ~np.frombuffer(data, dtype=np.uint8).astype(np.int32) & 0xFF
    exponent = (code >> 4) & 0x07
    mantissa = code & 0x0F
    magnitude = (((mantissa << 3) + 0x84) << exponent) - 0x84
    return np.where(code & 0x80, -magnitude, magnitude).astype(np.int16)


def _check_format(output_format: str) -> None:
    if output_format not in OUTPUT_FORMATS:
        raise ValueError(
            f"outputFormat must be one of {', '.join(OUTPUT_FORMATS)}; got {output_format!r}"
        )


def _voice(voice_id: str) -> tuple[float, float]:
    known = _VOICES.get(voice_id)
    if known is not None:
        return known
    key = zlib.crc32(voice_id.encode("utf-8"))
    return 95.0 + (key % 130), 0.9 + (key >> 8) % 8 / 10.0


def _char_amplitude(c: str) -> float:
    if c in _PAUSES:
        return 0.0
    if c.isspace():
        return 0.08
    if c in _VOWELS:
        return 1.0
    if c.isalpha():
        return 0.55
    return 0.4  # digits and symbols are spoken as words


def _to_int16(signal: npt.NDArray[np.float32]) -> npt.NDArray[np.int16]:
    return np.clip(np.round(signal * 32767.0), -32768, 32767).astype(np.int16)


def _encode(signal: npt.NDArray[np.float32], rate: int, output_format: str) -> bytes:
    kind = output_format.split("_")[0]
    if output_format == "PCM_22050_16":
        return _to_int16(signal).astype("<i2").tobytes()
    if kind == "ULAW":
        return ulaw_encode(_to_int16(signal))
    buffer = io.BytesIO()
    if kind == "WAV":
        subtype = "PCM_32" if output_format.endswith("_32") else "PCM_16"
        sf.write(buffer, signal, rate, format="WAV", subtype=subtype)
        return buffer.getvalue()
    if kind == "MP3":
        return _encode_mp3(_to_int16(signal), rate, int(output_format.rsplit("_", 1)[1]))
    with sf.SoundFile(
        buffer, "w", samplerate=rate, channels=1, format="OGG", subtype="VORBIS"
    ) as out:
        for start in range(0, signal.size, _BLOCK_FRAMES):
            out.write(signal[start : start + _BLOCK_FRAMES])
    return buffer.getvalue()


def _encode_mp3(pcm: npt.NDArray[np.int16], rate: int, kbps: int) -> bytes:
    encoder = lameenc.Encoder()
    encoder.set_bit_rate(kbps)
    encoder.set_in_sample_rate(rate)
    encoder.set_out_sample_rate(rate)
    encoder.set_channels(1)
    encoder.set_quality(_LAME_QUALITY)
    return with_info_frame(bytes(encoder.encode(pcm.tobytes()) + encoder.flush()))


_MP3_BITRATES_KBPS: Final[Mapping[int, tuple[int, ...]]] = {
    3: (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320),  # MPEG-1
    2: (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),  # MPEG-2
}
_MP3_RATES: Final[Mapping[int, tuple[int, ...]]] = {
    3: (44100, 48000, 32000),
    2: (22050, 24000, 16000),
}
_XING_FRAMES_AND_BYTES: Final = 0x03


def _mp3_frame_length(header: int) -> int | None:
    """Bytes in the Layer III frame starting with ``header``, or None when it is no frame."""
    version, layer = (header >> 19) & 3, (header >> 17) & 3
    rate_index, bitrate_index = (header >> 10) & 3, (header >> 12) & 0xF
    if header >> 21 != 0x7FF or version not in _MP3_BITRATES_KBPS or layer != 1:
        return None
    if rate_index == 3 or bitrate_index in (0, 15):
        return None
    per_frame = 144000 if version == 3 else 72000
    kbps = _MP3_BITRATES_KBPS[version][bitrate_index]
    return per_frame * kbps // _MP3_RATES[version][rate_index] + ((header >> 9) & 1)


def mp3_frames(data: bytes) -> list[tuple[int, int]]:
    """``(offset, length)`` of each MPEG-1/2 Layer III frame, from the start of ``data``."""
    frames: list[tuple[int, int]] = []
    offset = 0
    while offset + 4 <= len(data):
        length = _mp3_frame_length(int.from_bytes(data[offset : offset + 4], "big"))
        if length is None:
            break
        frames.append((offset, length))
        offset += length
    return frames


def _side_info_bytes(header: int) -> int:
    mpeg1, mono = (header >> 19) & 3 == 3, (header >> 6) & 3 == 3
    return (17 if mono else 32) if mpeg1 else (9 if mono else 17)


def with_info_frame(mp3: bytes) -> bytes:
    """``mp3`` led by an ``Info`` frame: a silent frame of the same kind whose main data
    starts with the Xing header of a constant-bit-rate file (the audio frames' count and the
    file's bytes), as LAME writes when it can seek back."""
    frames = mp3_frames(mp3)
    if not frames:
        return mp3
    header = int.from_bytes(mp3[:4], "big") & ~(1 << 9)  # no padding
    length = _mp3_frame_length(header)
    assert length is not None
    frame = bytearray(length)
    frame[:4] = header.to_bytes(4, "big")
    tag = 4 + _side_info_bytes(header)
    frame[tag : tag + 16] = b"Info" + b"".join(
        n.to_bytes(4, "big") for n in (_XING_FRAMES_AND_BYTES, len(frames), length + len(mp3))
    )
    return bytes(frame) + mp3
