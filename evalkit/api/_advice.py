"""What a save stores but a later call trips over: warnings about a config, not errors.

The spec lists mistakes the service does not refuse on save: an unsupported provider or a
value a provider rejects, a ``tool_endpoint`` tool without ``connectionId`` ("not checked on
create"), a knob the provider silently ignores, a TTS block without a voice. The client logs
them before sending (:func:`~._requests.check_request`). A rehearsal (E9) runs the stored
config on its providers, so there a provider's refusal is an error, its 400 before streaming
(``rehearsal=True``). The config must already be valid as a request
(:func:`~._requests.request_errors`): these read it without checking its shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import _limits as L
from ._problems import Problem, Severity

__all__ = ["config_advice"]


class _Advice:
    """Collects warnings; provider refusals are errors for a rehearsal."""

    def __init__(self, field: str, rehearsal: bool) -> None:
        self.field = field
        self.rehearsal = rehearsal
        self.problems: list[Problem] = []

    def warn(self, path: str, message: str) -> None:
        self.problems.append(Problem(f"{self.field}.{path}", message, "warning"))

    def refused(self, path: str, message: str) -> None:
        """A value the provider refuses when a call runs."""
        severity: Severity = "error" if self.rehearsal else "warning"
        self.problems.append(Problem(f"{self.field}.{path}", message, severity))

    def provider(self, block: Mapping[str, Any], path: str, known: Sequence[str]) -> str | None:
        """The block's provider when it is a supported one (otherwise refused)."""
        provider = block.get("provider")
        if provider in known:
            return str(provider)
        self.refused(f"{path}.provider", f"must be one of {', '.join(known)}; got {provider!r}")
        return None


def _default(config: Mapping[str, Any], block: str) -> Mapping[str, Any] | None:
    value = config.get(block)
    return value.get("default") if isinstance(value, Mapping) else None


def config_advice(
    config: Mapping[str, Any], field: str = "config", *, rehearsal: bool = False
) -> list[Problem]:
    """The warnings about a valid config (errors where ``rehearsal`` makes them so)."""
    advice = _Advice(field, rehearsal)
    _agent(advice, config["agent"])
    noise = config.get("noiseCancellation") or {}
    level = noise.get("level")
    if level is not None and level < 0:
        advice.warn("noiseCancellation.level", f"is a suppression strength; {level:g} is below 0")
    if (stt := _default(config, "stt")) is not None:
        _stt(advice, stt)
    if (tts := _default(config, "tts")) is not None:
        _tts(advice, tts)
    if (llm := _default(config, "llm")) is not None:
        _llm(advice, llm)
    return advice.problems


def _agent(advice: _Advice, agent: Mapping[str, Any]) -> None:
    if agent.get("greetingInstructions") is not None and not agent.get("initialGreeting"):
        advice.warn("agent.greetingInstructions", "is ignored unless initialGreeting is true")
    for i, tool in enumerate(agent.get("tools") or ()):
        execution = tool.get("execution") or {}
        if execution.get("type") == "tool_endpoint" and not execution.get("connectionId"):
            advice.warn(
                f"agent.tools[{i}].execution.connectionId",
                "is required for tool_endpoint tools; the tool is stored but its calls fail",
            )


def _stt(advice: _Advice, block: Mapping[str, Any]) -> None:
    provider = advice.provider(block, "stt.default", tuple(L.STT_MODELS))
    if provider is None:
        return
    models, model = L.STT_MODELS[provider], block.get("model")
    if models is not None and model is not None and model not in models:
        advice.warn("stt.default.model", f"must be one of {', '.join(models)}; got {model!r}")
    if provider == "serviceai" and "apiKey" in block:
        advice.warn("stt.default.apiKey", "serviceai has no apiKey field")


def _tts(advice: _Advice, block: Mapping[str, Any]) -> None:
    provider = advice.provider(block, "tts.default", L.TTS_PROVIDERS)
    if provider in L.TTS_VOICE_REQUIRED and not isinstance(block.get("voiceId"), str):
        advice.warn(
            "tts.default.voiceId",
            "is required by this provider; the block is stored but fails at connect time",
        )
    fmt = block.get("outputFormat")
    if provider == "serviceai" and fmt is not None and fmt not in L.OUTPUT_FORMATS:
        advice.warn(
            "tts.default.outputFormat",
            f"must be one of {', '.join(L.OUTPUT_FORMATS)}; got {fmt!r}",
        )


def _llm(advice: _Advice, block: Mapping[str, Any]) -> None:
    provider = advice.provider(block, "llm.default", tuple(L.LLM_MODELS))
    if provider is None:
        return
    model = str(block["model"])
    if model not in L.LLM_MODELS[provider]:
        models = ", ".join(L.LLM_MODELS[provider])
        advice.refused("llm.default.model", f"{model!r} is not a {provider} model ({models})")
    for knob, takers in L.LLM_KNOBS.items():
        value = block.get(knob)
        if value is None:
            continue
        prefix, allowed = takers.get(provider, (None, None))
        if prefix is None or not model.startswith(prefix):
            who = " and ".join(
                f"{p} {m}* models" if m else f"{p} models" for p, (m, _) in takers.items()
            )
            advice.warn(f"llm.default.{knob}", f"is ignored: only {who} take it")
        elif allowed is not None and value not in allowed:
            advice.refused(
                f"llm.default.{knob}", f"must be one of {', '.join(allowed)}; got {value!r}"
            )
