""":class:`Audio`: synthesized speech as bytes that play in Jupyter and in a web page."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Final

from .._util import render_html

__all__ = ["MIME_TYPES", "Audio", "mime_type", "suffix"]

#: Output format prefix -> (MIME type, file suffix). PCM and u-law are raw samples: a browser
#: cannot play them without a header, so pages offer MP3, Ogg or WAV.
MIME_TYPES: Final[dict[str, tuple[str, str]]] = {
    "MP3": ("audio/mpeg", ".mp3"),
    "OGG": ("audio/ogg", ".ogg"),
    "WAV": ("audio/wav", ".wav"),
    "PCM": ("audio/L16;rate=22050", ".pcm"),
    "ULAW": ("audio/basic", ".ulaw"),
}


def _kind(output_format: str) -> tuple[str, str]:
    prefix = output_format.split("_", 1)[0].upper()
    if prefix not in MIME_TYPES:
        raise ValueError(
            f"output_format {output_format!r} is not one of the service's formats "
            f"({', '.join(sorted(MIME_TYPES))}_...)"
        )
    return MIME_TYPES[prefix]


def mime_type(output_format: str) -> str:
    """The MIME type of audio in ``output_format`` (``MP3_22050_32`` -> ``audio/mpeg``)."""
    return _kind(output_format)[0]


def suffix(output_format: str) -> str:
    """The file suffix of audio in ``output_format`` (``.mp3``, ``.ogg``, ``.wav``...)."""
    return _kind(output_format)[1]


@dataclass(frozen=True)
class Audio:
    """Speech from E11: :attr:`data` (the bytes), what was said and how.

    In Jupyter it displays as an ``<audio>`` player (the bytes inline, nothing fetched);
    :meth:`ipython` gives an ``IPython.display.Audio`` for code that wants one.
    """

    data: bytes = field(repr=False)
    text: str
    voice_id: str
    output_format: str
    phrase_replacement_config_id: str | None = None
    cached: bool = False

    @property
    def mime_type(self) -> str:
        return mime_type(self.output_format)

    def __len__(self) -> int:
        return len(self.data)

    def __repr__(self) -> str:
        said = self.text if len(self.text) <= 40 else self.text[:39] + "…"
        return (
            f"<Audio {self.output_format} {len(self.data)} bytes, voice {self.voice_id}: {said!r}>"
        )

    def data_uri(self) -> str:
        """The audio as a ``data:`` URI."""
        return f"data:{self.mime_type};base64,{base64.b64encode(self.data).decode('ascii')}"

    def html(self, *, autoplay: bool = False) -> str:
        """An ``<audio>`` player holding the bytes (template ``evalkit/templates/audio.html``)."""
        return render_html(
            "audio.html",
            src=self.data_uri(),
            mime_type=self.mime_type,
            title=self.text[:200],
            preload="metadata",
            autoplay=autoplay,
        )

    def _repr_html_(self) -> str:
        return self.html()

    def ipython(self) -> Any:
        """An ``IPython.display.Audio`` of the same bytes."""
        from IPython.display import Audio as IPythonAudio

        return IPythonAudio(data=self.data)  # type: ignore[no-untyped-call]
