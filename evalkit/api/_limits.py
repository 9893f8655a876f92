"""The service's documented limits and enumerations, in one place.

Every number here comes from the spec's Limits table or a field's notes; the emulator and the
client's pre-send validation both read them from here.
"""

from __future__ import annotations

from typing import Final

MAX_CONTEXT_CHARS: Final = 8000
MAX_VARIABLE_KEY_CHARS: Final = 64
MAX_VARIABLES_JSON_CHARS: Final = 3000  # the JSON must be *under* this
MAX_OWNER_FEEDBACK_CHARS: Final = 2000
MAX_TTS_TEXT_CHARS: Final = 2500
MAX_PHRASE_REPLACEMENTS: Final = 1000
MAX_ROOM_PREFIX_CHARS: Final = 32
MIN_SESSION_TTL_S: Final = 1
DEFAULT_SESSION_TTL_S: Final = 600
THINKING_BUDGET_RANGE: Final = (-1, 24576)
SCORECARD_TOTAL_POINTS: Final = 100
KEEPALIVE_INTERVAL_S: Final = 15.0
SIMULATION_CEILING_S: Final = 300.0
API_KEY_PREFIX: Final = "sk_api_"
RATE_LIMIT_MESSAGE: Final = "Rate limit exceeded, please try again later"

VOICE_IDS: Final = ("v_8eelc901", "v_kwmp7zxt", "v_yypgzenx", "v_30s70t3a")
OUTPUT_FORMATS: Final = (
    "PCM_22050_16",
    "WAV_22050_16",
    "WAV_22050_32",
    "MP3_22050_32",
    "MP3_22050_64",
    "MP3_22050_128",
    "OGG_22050_16",
    "ULAW_8000_8",
)
NOISE_CANCELLATION_MODELS: Final = ("nc_vf_s", "nc_vf_l", "nc_l")
TOOL_EXECUTION_TYPES: Final = ("client_rpc", "tool_endpoint")

STT_MODELS: Final[dict[str, tuple[str, ...] | None]] = {
    "vendor_a": ("stt-rt-v4", "stt-rt-v5"),
    "vendor_b": ("nv-3", "nv-2"),
    "vendor_c": None,  # only a default (`asr-1`) is documented
    "vendor_d": ("asr-large-v3-turbo", "asr-large-v3", "distil-asr-large-v3-en"),
    "serviceai": ("large-v3",),
}
TTS_PROVIDERS: Final = ("serviceai", "vendor_c", "vendor_a")
LLM_MODELS: Final[dict[str, tuple[str, ...]]] = {
    "vendor_f": ("gem-3.5-flash", "gem-3.1-flash-lite", "gem-2.5-flash"),
    "vendor_c": ("llm-5.4-nano", "llm-5.4-mini", "llm-4o-mini"),
    "vendor_e": ("llm-oss-120b",),
    "vendor_d": ("vendor_c/llm-oss-120b", "vendor_c/llm-oss-20b"),
}
TTS_VOICE_REQUIRED: Final = ("serviceai", "vendor_a")
"""TTS providers whose block needs a voiceId (without one it is stored and fails at connect)."""

LLM_KNOBS: Final[dict[str, dict[str, tuple[str, tuple[str, ...] | None]]]] = {
    "thinkingLevel": {"vendor_f": ("gem-3", ("minimal", "low", "medium", "high"))},
    "thinkingBudget": {"vendor_f": ("gem-2.5", None)},  # its range is THINKING_BUDGET_RANGE
    "reasoningEffort": {
        "vendor_c": ("llm-5", ("none", "low", "medium", "high", "xhigh")),
        "vendor_e": ("", ("low", "medium", "high")),
    },
    "verbosity": {"vendor_c": ("llm-5", ("low", "medium", "high"))},
}
"""LLM knob -> {provider that takes it: (model prefix that takes it, "" for every model; the
values the provider accepts, None for any)}. Elsewhere the knob is silently ignored."""
