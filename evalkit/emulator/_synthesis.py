"""E11 text to speech and E12 phrase replacement configs.

Failures of these operations are shaped ``{"message": string}`` (validation problems joined
with "; "), and the per-project rate limit answers 429 with the spec's message and a
``Retry-After`` header. Emulator choices where the spec says "not shown": ``voiceId`` is
required and ``outputFormat`` defaults to ``MP3_22050_32``; an unknown
``phraseReplacementConfigId`` (or one of another project) answers 404.

Empty or blank ``text`` is a 400 (``text: must contain something to say``), not silence: the
spec caps the text's length but a request with nothing to say is a caller's mistake (an unset
template, a stripped line), and a clear error finds it sooner than a silent file would. Raw
PCM is served as ``audio/L16;rate=22050`` (mono, 16-bit samples, little-endian as the
``PCM_22050_16`` format's producers write it).
"""

from __future__ import annotations

import math

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..api import RATE_LIMIT_MESSAGE, PhraseReplacementBody
from ._audio import apply_phrase_replacements, synthesize
from ._auth import authenticate
from ._bodies import check_body, read_json
from ._core import Emulator
from ._errors import synthesis_error
from ._ids import derive_seed
from ._records import Project
from ._requests import EmulatorTextToSpeechBody

DEFAULT_OUTPUT_FORMAT = "MP3_22050_32"
CONTENT_TYPES: dict[str, str] = {
    "PCM": "audio/L16;rate=22050",
    "WAV": "audio/wav",
    "MP3": "audio/mpeg",
    "OGG": "audio/ogg",
    "ULAW": "audio/basic",
}


def content_type(output_format: str) -> str:
    """The media type of an output format (raw PCM is 16-bit little-endian; ULAW is G.711)."""
    return CONTENT_TYPES[output_format.split("_", 1)[0]]


def _rate_limit(emu: Emulator, project: Project) -> None:
    wait = emu.synthesis_limiter.hit(project.project_id)
    if wait is not None:
        headers = {"Retry-After": str(max(1, math.ceil(wait)))}
        raise synthesis_error(429, RATE_LIMIT_MESSAGE, headers)


async def text_to_speech(emu: Emulator, request: Request) -> Response:
    """POST /synthesis/text-to-speech: audio bytes, phrase replacements applied first."""
    project, _ = authenticate(emu, request)
    _rate_limit(emu, project)
    raw = await read_json(request, emu.settings.max_body_bytes, synthesis=True, required=True)
    body = check_body(raw, EmulatorTextToSpeechBody, synthesis=True)
    text: str = body["text"]
    config_id = body.get("phraseReplacementConfigId")
    if config_id is not None:
        config = emu.state.phrase_configs.get(config_id)
        if config is None or config.project_id != project.project_id:
            raise synthesis_error(404, f"Phrase replacement config not found: {config_id}")
        text = apply_phrase_replacements(text, config.phrase_replacements)
    voice_id: str = body["voiceId"]
    output_format: str = body.get("outputFormat") or DEFAULT_OUTPUT_FORMAT
    seed = derive_seed(emu.seed, "tts")
    audio = await anyio.to_thread.run_sync(
        lambda: synthesize(text, voice_id, output_format, seed=seed)
    )
    return Response(
        audio,
        media_type=content_type(output_format),
        headers={
            "Content-Disposition": f'attachment; filename="speech.{_extension(output_format)}"'
        },
    )


def _extension(output_format: str) -> str:
    kind = output_format.split("_", 1)[0]
    return {"PCM": "pcm", "WAV": "wav", "MP3": "mp3", "OGG": "ogg", "ULAW": "ulaw"}[kind]


async def create_phrase_config(emu: Emulator, request: Request) -> Response:
    """POST /synthesis/phrase-replacement-config: {configId, phraseReplacements}."""
    project, _ = authenticate(emu, request)
    _rate_limit(emu, project)
    raw = await read_json(request, emu.settings.max_body_bytes, synthesis=True, required=True)
    body = check_body(raw, PhraseReplacementBody, synthesis=True)
    config = emu.state.add_phrase_config(project, list(body["phraseReplacements"]))
    return JSONResponse(config.to_json(), status_code=201)
