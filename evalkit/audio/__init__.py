"""Listening: ``speak(text)`` synthesizes speech through the service (E11), cached by content,
as an :class:`Audio` that plays in Jupyter; the viewer's play control uses the same path.

    audio = evalkit.speak("آپ کی اپوائنٹمنٹ کل پانچ بجے ہے", options=SpeakOptions(voice_id="v_8eelc901"))
    audio            # a player in Jupyter
    audio.data       # the bytes (MP3 by default)
"""

from __future__ import annotations

from .._util import publish
from ._audio import Audio
from ._speak import SpeakOptions, speak

__all__ = ["Audio", "SpeakOptions", "speak"]

# What evalkit's other packages take from here and users need not: not public, not in the API
# snapshot (``x as x`` marks each as re-exported for the type checker).
from ._speak import AUDIO_DIR as AUDIO_DIR

_SIBLING_API = ("AUDIO_DIR",)

publish(globals())
