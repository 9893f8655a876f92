"""Checks of request bodies against the spec's limits and configuration rules.

Each ``check_*`` function takes plain JSON values (what would be sent) and returns every
:class:`Problem` it finds, each naming its field by a dotted path. Problems of severity
``"error"`` are what the service answers with 400; ``"warning"`` marks settings the service
accepts but that will not do what the user probably wants (a knob the provider ignores, a
TTS block without a voice). The client raises :class:`~evalkit.InvalidRequestError` on errors
before spending a request; the emulator turns the same problems into its 400 envelope.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from . import _limits as L

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a request body, at a dotted field path."""

    field: str
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


class _Checker:
    """Accumulates problems while walking a JSON value."""

    def __init__(self, *, rehearsal: bool = False) -> None:
        self.problems: list[Problem] = []
        # provider-side rejections (unknown provider, a value the provider refuses) are stored
        # by a save and fail when a call runs: warnings on save, errors for a rehearsal
        self.provider_severity: Severity = "error" if rehearsal else "warning"

    def provider_problem(self, field: str, message: str) -> None:
        (self.error if self.provider_severity == "error" else self.warn)(field, message)

    def error(self, field: str, message: str) -> None:
        self.problems.append(Problem(field, message))

    def warn(self, field: str, message: str) -> None:
        self.problems.append(Problem(field, message, "warning"))

    def object(self, value: Any, field: str) -> Mapping[str, Any] | None:
        if isinstance(value, Mapping):
            return value
        self.error(field, f"must be an object, got {type_name(value)}")
        return None

    def string(
        self,
        obj: Mapping[str, Any],
        key: str,
        field: str,
        *,
        required: bool,
        min_len: int = 0,
        max_len: int | None = None,
    ) -> str | None:
        if key not in obj:
            if required:
                self.error(field, "is required")
            return None
        value = obj[key]
        if not isinstance(value, str):
            self.error(field, f"must be a string, got {type_name(value)}")
            return None
        if len(value) < min_len:
            self.error(
                field,
                "must not be empty" if min_len == 1 else f"must have at least {min_len} characters",
            )
        if max_len is not None and len(value) > max_len:
            self.error(field, f"must be at most {max_len} characters, got {len(value)}")
        return value

    def boolean(self, obj: Mapping[str, Any], key: str, field: str, *, required: bool) -> None:
        if key not in obj:
            if required:
                self.error(field, "is required")
            return
        if not isinstance(obj[key], bool):
            self.error(field, f"must be a boolean, got {type_name(obj[key])}")

    def number(
        self,
        obj: Mapping[str, Any],
        key: str,
        field: str,
        *,
        integer: bool = False,
        minimum: float | None = None,
        maximum: float | None = None,
    ) -> float | None:
        if key not in obj:
            return None
        value = obj[key]
        if isinstance(value, float) and not math.isfinite(value):
            self.error(field, f"must be a finite number, got {value}")
            return None
        ok = _is_number(value) and (not integer or float(value).is_integer())
        if not ok:
            self.error(
                field, f"must be {'an integer' if integer else 'a number'}, got {type_name(value)}"
            )
            return None
        if minimum is not None and value < minimum:
            self.error(field, f"must be at least {_fmt(minimum)}, got {value}")
        if maximum is not None and value > maximum:
            self.error(field, f"must be at most {_fmt(maximum)}, got {value}")
        return float(value)

    def enum(
        self,
        obj: Mapping[str, Any],
        key: str,
        field: str,
        allowed: Sequence[str],
        *,
        severity: Severity = "error",
    ) -> None:
        if key not in obj:
            return
        value = obj[key]
        if value not in allowed:
            message = f"must be one of {', '.join(allowed)}; got {value!r}"
            (self.error if severity == "error" else self.warn)(field, message)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def type_name(value: Any, *, mapping: str = "object", sequence: str = "array") -> str:
    """The JSON type of ``value`` for messages (YAML callers pass ``mapping``/``sequence``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return mapping
    if isinstance(value, list | tuple):
        return sequence
    return type(value).__name__


def errors_only(problems: Sequence[Problem]) -> list[Problem]:
    """The problems that make the service answer 400."""
    return [p for p in problems if p.severity == "error"]


# --------------------------------------------------------------------------- scorecard


def check_scorecard(scorecard: Any, field: str = "scorecard") -> list[Problem]:
    """A scorecard: an object, >= 1 rule, unique rule ids, points totalling exactly 100."""
    c = _Checker()
    _scorecard(c, scorecard, field)
    return c.problems


def _scorecard(c: _Checker, scorecard: Any, field: str) -> None:
    sc = c.object(scorecard, field)
    if sc is None:
        return
    c.string(sc, "rubricVersionId", f"{field}.rubricVersionId", required=True, min_len=1)
    rules = sc.get("rules")
    if "rules" not in sc:
        c.error(f"{field}.rules", "is required")
        return
    if not isinstance(rules, list):
        c.error(f"{field}.rules", f"must be an array, got {type_name(rules)}")
        return
    if not rules:
        c.error(f"{field}.rules", "must have at least 1 rule")
        return
    seen: dict[str, int] = {}
    total = 0.0
    points_ok = True
    for i, raw in enumerate(rules):
        rf = f"{field}.rules[{i}]"
        rule = c.object(raw, rf)
        if rule is None:
            points_ok = False
            continue
        rule_id = c.string(rule, "ruleId", f"{rf}.ruleId", required=True, min_len=1)
        if rule_id:
            if rule_id in seen:
                c.error(f"{rf}.ruleId", f"duplicates rules[{seen[rule_id]}].ruleId {rule_id!r}")
            else:
                seen[rule_id] = i
        c.string(rule, "title", f"{rf}.title", required=True)
        if "points" not in rule:
            c.error(f"{rf}.points", "is required")
            points_ok = False
            continue
        pts = c.number(rule, "points", f"{rf}.points", minimum=0)
        if pts is None:
            points_ok = False
        else:
            total += pts
    if points_ok and round(total, 9) != L.SCORECARD_TOTAL_POINTS:
        c.error(
            f"{field}.rules",
            f"points must total exactly {L.SCORECARD_TOTAL_POINTS}, got {_fmt(round(total, 9))}",
        )


# --------------------------------------------------------------------------- assistant config


def check_assistant_config(
    config: Any, field: str = "config", *, rehearsal: bool = False
) -> list[Problem]:
    """An AssistantConfig, by the rules of the spec's configuration tables.

    A save stores provider-side mistakes (an unsupported provider, a value the provider
    rejects) and they fail when a call runs: they are warnings here, and errors with
    ``rehearsal=True`` (what E9 answers with its 400 before streaming).
    """
    c = _Checker(rehearsal=rehearsal)
    cfg = c.object(config, field)
    if cfg is None:
        return c.problems
    _agent(c, cfg.get("agent"), f"{field}.agent", present="agent" in cfg)
    if "grading" in cfg:
        grading = c.object(cfg["grading"], f"{field}.grading")
        if grading is not None and "scorecard" in grading:
            _scorecard(c, grading["scorecard"], f"{field}.grading.scorecard")
    if "noiseCancellation" in cfg:
        nc = c.object(cfg["noiseCancellation"], f"{field}.noiseCancellation")
        if nc is not None:
            f = f"{field}.noiseCancellation"
            c.boolean(nc, "enabled", f"{f}.enabled", required=True)
            c.enum(nc, "model", f"{f}.model", L.NOISE_CANCELLATION_MODELS)
            level = c.number(nc, "level", f"{f}.level")
            if level is not None and level < 0:
                c.warn(f"{f}.level", f"is a suppression strength; {level:g} is below 0")
    if "backgroundNoise" in cfg:
        bn = c.object(cfg["backgroundNoise"], f"{field}.backgroundNoise")
        if bn is not None:
            c.boolean(bn, "enabled", f"{field}.backgroundNoise.enabled", required=True)
    if "session" in cfg:
        session = c.object(cfg["session"], f"{field}.session")
        if session is not None:
            c.number(
                session, "ttl", f"{field}.session.ttl", integer=True, minimum=L.MIN_SESSION_TTL_S
            )
            c.string(
                session,
                "roomPrefix",
                f"{field}.session.roomPrefix",
                required=False,
                max_len=L.MAX_ROOM_PREFIX_CHARS,
            )
    for block, checker in (("stt", _stt), ("tts", _tts), ("llm", _llm)):
        if block in cfg:
            default = _default_block(c, cfg[block], f"{field}.{block}")
            if default is not None:
                checker(c, default, f"{field}.{block}.default")
    return c.problems


def _agent(c: _Checker, agent: Any, field: str, *, present: bool) -> None:
    if not present:
        c.error(field, "is required")
        return
    a = c.object(agent, field)
    if a is None:
        return
    c.string(a, "instructions", f"{field}.instructions", required=True, min_len=1)
    c.boolean(a, "initialGreeting", f"{field}.initialGreeting", required=False)
    c.string(a, "greetingInstructions", f"{field}.greetingInstructions", required=False)
    if "greetingInstructions" in a and not a.get("initialGreeting", False):
        c.warn(f"{field}.greetingInstructions", "is ignored unless initialGreeting is true")
    if "tools" in a:
        tools = a["tools"]
        if not isinstance(tools, list):
            c.error(f"{field}.tools", f"must be an array, got {type_name(tools)}")
            return
        for i, tool in enumerate(tools):
            _tool(c, tool, f"{field}.tools[{i}]")


def _tool(c: _Checker, raw: Any, field: str) -> None:
    tool = c.object(raw, field)
    if tool is None:
        return
    c.string(tool, "name", f"{field}.name", required=True, min_len=1)
    c.string(tool, "description", f"{field}.description", required=True, min_len=1)
    if "parameters" not in tool:
        c.error(f"{field}.parameters", "is required")
    else:
        params = c.object(tool["parameters"], f"{field}.parameters")
        if params is not None:
            c.string(params, "type", f"{field}.parameters.type", required=True)
            if "properties" not in params:
                c.error(f"{field}.parameters.properties", "is required")
            else:
                c.object(params["properties"], f"{field}.parameters.properties")
            if "required" in params:
                req = params["required"]
                if not isinstance(req, list) or not all(isinstance(x, str) for x in req):
                    c.error(f"{field}.parameters.required", "must be an array of strings")
    c.number(tool, "timeout", f"{field}.timeout", minimum=0)
    if "execution" in tool:
        ex = c.object(tool["execution"], f"{field}.execution")
        if ex is not None:
            if "type" not in ex:
                c.error(f"{field}.execution.type", "is required")
            else:
                c.enum(ex, "type", f"{field}.execution.type", L.TOOL_EXECUTION_TYPES)
            if ex.get("type") == "tool_endpoint" and not ex.get("connectionId"):
                # the spec: not checked on create; a missing id is an error result on the call
                c.warn(
                    f"{field}.execution.connectionId",
                    "is required for tool_endpoint tools; the tool is stored but its calls fail",
                )


def _default_block(c: _Checker, raw: Any, field: str) -> Mapping[str, Any] | None:
    block = c.object(raw, field)
    if block is None:
        return None
    for key in block:
        if key != "default":
            c.error(f"{field}.{key}", "is not supported; `default` is the only key")
    if "default" not in block:
        c.error(f"{field}.default", "is required")
        return None
    return c.object(block["default"], f"{field}.default")


def _provider(
    c: _Checker, block: Mapping[str, Any], field: str, allowed: Sequence[str]
) -> str | None:
    if "provider" not in block:
        c.error(f"{field}.provider", "is required")
        return None
    provider = block["provider"]
    if provider not in allowed:
        c.provider_problem(
            f"{field}.provider", f"must be one of {', '.join(allowed)}; got {provider!r}"
        )
        return None
    return str(provider)


def _stt(c: _Checker, block: Mapping[str, Any], field: str) -> None:
    provider = _provider(c, block, field, tuple(L.STT_MODELS))
    if provider is None:
        return
    models = L.STT_MODELS[provider]
    if models is not None:
        c.enum(block, "model", f"{field}.model", models, severity="warning")
    if provider == "serviceai" and "apiKey" in block:
        c.warn(f"{field}.apiKey", "serviceai has no apiKey field")


def _tts(c: _Checker, block: Mapping[str, Any], field: str) -> None:
    provider = _provider(c, block, field, L.TTS_PROVIDERS)
    if provider is None:
        return
    if provider in ("serviceai", "vendor_a") and not isinstance(block.get("voiceId"), str):
        c.warn(
            f"{field}.voiceId",
            "is required by this provider; the block is stored but fails at connect time",
        )
    if provider == "serviceai":
        c.enum(block, "outputFormat", f"{field}.outputFormat", L.OUTPUT_FORMATS, severity="warning")


def _llm(c: _Checker, block: Mapping[str, Any], field: str) -> None:
    provider = _provider(c, block, field, tuple(L.LLM_MODELS))
    model = c.string(block, "model", f"{field}.model", required=True, min_len=1)
    if provider is None:
        return
    if model is not None and model not in L.LLM_MODELS[provider]:
        c.warn(
            f"{field}.model",
            f"is not a documented {provider} model ({', '.join(L.LLM_MODELS[provider])})",
        )
    if "thinkingBudget" in block:
        lo, hi = L.THINKING_BUDGET_RANGE
        c.number(
            block, "thinkingBudget", f"{field}.thinkingBudget", integer=True, minimum=lo, maximum=hi
        )
        if provider != "vendor_f" or (model is not None and not model.startswith("gem-2.5")):
            c.warn(f"{field}.thinkingBudget", "is ignored: only vendor_f 2.5 models take it")
    if "thinkingLevel" in block:
        c.enum(
            block,
            "thinkingLevel",
            f"{field}.thinkingLevel",
            L.THINKING_LEVELS,
            severity=c.provider_severity,
        )
        if provider != "vendor_f" or (model is not None and not model.startswith("gem-3")):
            c.warn(f"{field}.thinkingLevel", "is ignored: only vendor_f 3.x models take it")
    if "reasoningEffort" in block:
        efforts = L.REASONING_EFFORTS.get(provider)
        if efforts is None:
            c.warn(f"{field}.reasoningEffort", f"is ignored by {provider}")
        else:
            c.enum(
                block,
                "reasoningEffort",
                f"{field}.reasoningEffort",
                efforts,
                severity=c.provider_severity,
            )
    if "verbosity" in block:
        if provider == "vendor_c":
            c.enum(
                block,
                "verbosity",
                f"{field}.verbosity",
                L.VERBOSITY_LEVELS,
                severity=c.provider_severity,
            )
        else:
            c.warn(f"{field}.verbosity", f"is ignored by {provider}")


# --------------------------------------------------------------------------- operations


def variables_json_length(variables: Mapping[str, Any]) -> int:
    """Length of the compact JSON text of a variables object, as the limit counts it."""
    return len(json.dumps(variables, ensure_ascii=False, separators=(",", ":"), allow_nan=False))


def check_simulate_body(body: Any) -> list[Problem]:
    """An E9 body: persona, context (<= 8000) and variables (keys <= 64, JSON < 3000)."""
    c = _Checker()
    b = c.object(body, "body")
    if b is None:
        return c.problems
    if "persona" in b:
        persona = c.object(b["persona"], "persona")
        if persona is not None:
            c.string(persona, "label", "persona.label", required=False)
            c.string(persona, "behavior", "persona.behavior", required=False)
            c.string(persona, "path", "persona.path", required=False)
    if b.get("context") is not None:
        c.string(b, "context", "context", required=False, max_len=L.MAX_CONTEXT_CHARS)
    if b.get("variables") is not None:
        _variables(c, b["variables"], "variables")
    return c.problems


def check_variables(variables: Any, field: str = "variables") -> list[Problem]:
    """A simulate variables object on its own (used by grids before any request)."""
    c = _Checker()
    _variables(c, variables, field)
    return c.problems


def check_context(context: Any, field: str = "context") -> list[Problem]:
    """A simulate context on its own (used by grids before any request)."""
    c = _Checker()
    if context is not None:
        c.string(
            {"context": context}, "context", field, required=False, max_len=L.MAX_CONTEXT_CHARS
        )
    return c.problems


def _variables(c: _Checker, raw: Any, field: str) -> None:
    variables = c.object(raw, field)
    if variables is None:
        return
    for key in variables:
        if not isinstance(key, str):
            c.error(f"{field}[{key!r}]", f"keys must be strings, got {type_name(key)}")
        elif len(key) > L.MAX_VARIABLE_KEY_CHARS:
            c.error(
                f"{field}.{key[:20]}…",
                f"key must be at most {L.MAX_VARIABLE_KEY_CHARS} characters, got {len(key)}",
            )
    try:
        length = variables_json_length(variables)
    except (TypeError, ValueError) as exc:
        c.error(field, f"must be JSON-serialisable (finite numbers, string keys): {exc}")
        return
    if length >= L.MAX_VARIABLES_JSON_CHARS:
        c.error(field, f"JSON must be under {L.MAX_VARIABLES_JSON_CHARS} characters, got {length}")


def check_refine_body(body: Any) -> list[Problem]:
    """An E10 body: ownerFeedback a string of at most 2000 characters."""
    c = _Checker()
    b = c.object(body, "body")
    if b is not None:
        c.string(
            b, "ownerFeedback", "ownerFeedback", required=True, max_len=L.MAX_OWNER_FEEDBACK_CHARS
        )
    return c.problems


def check_session_body(body: Any) -> list[Problem]:
    """An E6/E7/E8 body: participantName a non-empty string, roomName a string."""
    c = _Checker()
    b = c.object(body, "body")
    if b is not None:
        c.string(b, "participantName", "participantName", required=True, min_len=1)
        if b.get("roomName") is not None:
            c.string(b, "roomName", "roomName", required=False)
    return c.problems


def check_tts_body(body: Any) -> list[Problem]:
    """An E11 body: text <= 2500, voiceId and outputFormat from their enums."""
    c = _Checker()
    b = c.object(body, "body")
    if b is None:
        return c.problems
    c.string(b, "text", "text", required=True, max_len=L.MAX_TTS_TEXT_CHARS)
    c.enum(b, "voiceId", "voiceId", L.VOICE_IDS)
    c.enum(b, "outputFormat", "outputFormat", L.OUTPUT_FORMATS)
    if b.get("phraseReplacementConfigId") is not None:
        c.string(b, "phraseReplacementConfigId", "phraseReplacementConfigId", required=False)
    return c.problems


def check_phrase_replacements_body(body: Any) -> list[Problem]:
    """An E12 body: at most 1000 {phrase, replacement} string pairs."""
    c = _Checker()
    b = c.object(body, "body")
    if b is None:
        return c.problems
    items = b.get("phraseReplacements")
    if "phraseReplacements" not in b:
        c.error("phraseReplacements", "is required")
    elif not isinstance(items, list):
        c.error("phraseReplacements", f"must be an array, got {type_name(items)}")
    else:
        if len(items) > L.MAX_PHRASE_REPLACEMENTS:
            c.error(
                "phraseReplacements",
                f"must have at most {L.MAX_PHRASE_REPLACEMENTS} entries, got {len(items)}",
            )
        for i, raw in enumerate(items[: L.MAX_PHRASE_REPLACEMENTS + 1]):
            item = c.object(raw, f"phraseReplacements[{i}]")
            if item is not None:
                c.string(
                    item, "phrase", f"phraseReplacements[{i}].phrase", required=True, min_len=1
                )
                c.string(item, "replacement", f"phraseReplacements[{i}].replacement", required=True)
    return c.problems


def check_create_assistant_body(body: Any) -> list[Problem]:
    """An E2 body: name, optional description and public, and a valid config."""
    c = _Checker()
    b = c.object(body, "body")
    if b is None:
        return c.problems
    c.string(b, "name", "name", required=True, min_len=1)
    c.string(b, "description", "description", required=False)
    c.boolean(b, "public", "public", required=False)
    if "config" not in b:
        c.error("config", "is required")
    else:
        c.problems.extend(check_assistant_config(b["config"]))
    return c.problems


def check_update_assistant_body(body: Any) -> list[Problem]:
    """An E3 body: any partial assistant; the fields it carries are checked."""
    c = _Checker()
    b = c.object(body, "body")
    if b is None:
        return c.problems
    if "name" in b:
        c.string(b, "name", "name", required=True, min_len=1)
    c.string(b, "description", "description", required=False)
    c.boolean(b, "public", "public", required=False)
    if "config" in b:
        c.problems.extend(check_assistant_config(b["config"]))
    return c.problems
