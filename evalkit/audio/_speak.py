"""``speak``: text to speech through E11, cached by content so a phrase is synthesized once.

The cache key is a hash of everything that shapes the audio: the service's base URL (another
service, or another emulator, may sound different), the text, the voice, the phrase
replacement config and the output format; never the API key. Cached audio lives under
``<store>/.audio/<hash><suffix>`` when ``store`` is given (a folder or a URL), else under the
user's cache folder (``EVALKIT_CACHE_DIR``, else ``~/.cache/evalkit``) in ``audio/``.
"""

from __future__ import annotations

import logging
import os
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from .._util import content_hash
from ..api import VOICE_IDS, Client
from ..store import StoreLike, StoreLocation, open_store
from ._audio import Audio, suffix

__all__ = ["AUDIO_DIR", "DEFAULT_VOICE", "SpeakOptions", "audio_cache_path", "speak"]

logger = logging.getLogger("evalkit.audio")

AUDIO_DIR: Final = ".audio"
#: The voice used when none is given or recorded: the first of E11's voices.
DEFAULT_VOICE: Final = VOICE_IDS[0]


@dataclass(frozen=True)
class SpeakOptions:
    """Options of :func:`speak`: the ``voice_id`` (None: :data:`DEFAULT_VOICE`), a
    ``phrase_replacement_config_id`` (E12) applied before synthesis, and the
    ``output_format`` (one of the service's, ``MP3_22050_32`` by default)."""

    voice_id: str | None = None
    phrase_replacement_config_id: str | None = None
    output_format: str = "MP3_22050_32"

    def __post_init__(self) -> None:
        suffix(self.output_format)  # an unknown format is refused before any call


def _default_cache() -> Path:
    base = os.environ.get("EVALKIT_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "evalkit"
    )
    return Path(base) / "audio"


def audio_cache_path(key: str, output_format: str, cache: StoreLike | None = None) -> StoreLocation:
    """Where the audio with content key ``key`` is cached."""
    folder = open_store(cache) / AUDIO_DIR if cache is not None else open_store(_default_cache())
    return folder / f"{key}{suffix(output_format)}"


def _read(path: StoreLocation) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError as exc:
        logger.warning("audio cache %s unreadable (%s); synthesizing again", path, exc)
        return None


def _write(path: StoreLocation, data: bytes) -> None:
    try:
        path.replace_bytes(data, durable=False)
    except OSError as exc:
        logger.warning("audio cache %s not written (%s)", path, exc)


def speak(
    text: str,
    *,
    client: Client | None = None,
    store: StoreLike | None = None,
    options: SpeakOptions | None = None,
) -> Audio:
    """Synthesize ``text`` with E11 and return it as :class:`Audio` (plays in Jupyter).

    ``client`` defaults to a :class:`Client` configured from the environment
    (``EVALKIT_BASE_URL``, ``EVALKIT_API_KEY``). The same request is answered from the cache
    without a call: under ``store`` (a store folder or URL) when given, else the user's cache.
    ``options`` (a :class:`SpeakOptions`): the voice, the phrase replacements and the output
    format. The text limit (2500) and the enums are checked before anything is sent.
    """
    opts = options or SpeakOptions()
    voice = opts.voice_id or DEFAULT_VOICE
    output_format = opts.output_format
    phrase_replacement_config_id = opts.phrase_replacement_config_id
    with ExitStack() as stack:
        api = client if client is not None else stack.enter_context(Client())
        key = content_hash(
            {
                "service": api.base_url,
                "text": text,
                "voice_id": voice,
                "phrase_replacement_config_id": phrase_replacement_config_id,
                "output_format": output_format,
            }
        )
        path = audio_cache_path(key, output_format, store)
        data = _read(path)
        if data is not None:
            return Audio(data, text, voice, output_format, phrase_replacement_config_id, True)
        data = api.text_to_speech(text, voice, output_format, phrase_replacement_config_id)
    _write(path, data)
    return Audio(data, text, voice, output_format, phrase_replacement_config_id, False)
