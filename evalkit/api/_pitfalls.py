"""The spec's silent failures and ignored knobs, as a table of rules over an assistant config.

Each :class:`PitfallRule` is one row: an id, a severity, the spec's own words for why it
matters (``reason``), and a function that finds it in a config (camelCase JSON, read leniently:
a config the service would refuse is still linted, never a crash). ``error``: the call or the
save fails (at connect, at call time, or with a 400); ``warning``: it runs, not the way the
config says; ``info``: worth knowing.

:func:`config_pitfalls` runs the table; :func:`evalkit.lint` presents it as a DataFrame and
the runner logs it for the config a run uses. No finding echoes a credential's value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from .._util import is_secret_key, redact_text
from . import _limits as L
from ._tokens import missing_variables, prompt_tokens

__all__ = ["PITFALL_RULES", "Pitfall", "PitfallRule", "config_pitfalls", "prompt_language"]

Severity = Literal["error", "warning", "info"]
Found = Iterator[tuple[str, str]]  # (path, message)
PitfallRecords = Sequence[Mapping[str, Any] | None] | None


@dataclass(frozen=True, slots=True)
class Pitfall:
    """One finding: which rule, how bad, where (a dotted path), what, and the spec's reason."""

    rule_id: str
    severity: Severity
    path: str
    message: str
    reason: str


@dataclass(frozen=True, slots=True)
class PitfallRule:
    """A row of the table: ``find(config, records)`` yields ``(path, message)`` per finding."""

    rule_id: str
    severity: Severity
    reason: str
    find: Callable[[Mapping[str, Any], PitfallRecords], Found]


# --------------------------------------------------------------------------- reading a config


def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _block(config: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    default = _obj(config.get(name)).get("default")
    return default if isinstance(default, Mapping) else None


def _llm(config: Mapping[str, Any]) -> tuple[str, str, Mapping[str, Any]] | None:
    block = _block(config, "llm")
    if block is None:
        return None
    return str(block.get("provider", "")), str(block.get("model", "")), block


def _tools(config: Mapping[str, Any]) -> Iterator[tuple[int, Mapping[str, Any]]]:
    tools = _obj(config.get("agent")).get("tools")
    if isinstance(tools, list):
        for i, tool in enumerate(tools):
            if isinstance(tool, Mapping):
                yield i, tool


# --------------------------------------------------------------------------- language

_URDU_RE: Final = re.compile(r"(?<!\w)(?:urdu|اردو)(?!\w)", re.IGNORECASE)
_NASTALIQ_RE: Final = re.compile(
    r"(?<!\w)(?:nastaliq|nastaleeq|nastaʿlīq|urdu script|arabic script|perso-arabic|"
    r"urdu rasm ul khat|اردو رسم الخط|رسم الخط|نستعلیق|اردو حروف)(?!\w)",
    re.IGNORECASE,
)
_NEGATION_BEFORE_RE: Final = re.compile(
    r"\b(?:not|never|don't|dont|doesn't|isn't|no longer|without|avoid)\s+(?:[\w'-]+\s+){0,4}$",
    re.IGNORECASE,
)
_NEGATION_AFTER_RE: Final = re.compile(r"^\s*(?:mat|nahi|nahin|na|نہ|مت|نہیں)(?!\w)")
_ARABIC_RE: Final = re.compile(r"[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]")
_LATIN_RE: Final = re.compile(r"[A-Za-z]")


def _mentions(pattern: re.Pattern[str], text: str) -> bool:
    for match in pattern.finditer(text):
        before = text[max(0, match.start() - 40) : match.start()]
        after = text[match.end() : match.end() + 10]
        if not (_NEGATION_BEFORE_RE.search(before) or _NEGATION_AFTER_RE.search(after)):
            return True
    return False


def prompt_language(instructions: str) -> Literal["urdu_script", "roman_urdu", "other"]:
    """What a prompt asks for: Urdu in Nastaliq script, Urdu without a script (the model tends
    to answer in Roman Urdu), or neither. A prompt is about Urdu when it says "Urdu" (not
    negated) or is mostly Arabic-script letters."""
    arabic = len(_ARABIC_RE.findall(instructions))
    latin = len(_LATIN_RE.findall(instructions))
    mostly_arabic = arabic + latin > 0 and arabic / (arabic + latin) >= 0.3
    if not (_mentions(_URDU_RE, instructions) or mostly_arabic):
        return "other"
    return "urdu_script" if _mentions(_NASTALIQ_RE, instructions) else "roman_urdu"


# --------------------------------------------------------------------------- the rules


def _unsupported_provider(config: Mapping[str, Any], _: PitfallRecords) -> Found:
    known = {"stt": tuple(L.STT_MODELS), "tts": L.TTS_PROVIDERS, "llm": tuple(L.LLM_MODELS)}
    for name, providers in known.items():
        block = _block(config, name)
        if block is not None and block.get("provider") not in providers:
            yield (
                f"{name}.default.provider",
                f"{block.get('provider')!r} is not a {name} provider ({', '.join(providers)})",
            )


def _unknown_llm_model(config: Mapping[str, Any], _: PitfallRecords) -> Found:
    llm = _llm(config)
    if llm is not None and llm[0] in L.LLM_MODELS and llm[1] not in L.LLM_MODELS[llm[0]]:
        models = ", ".join(L.LLM_MODELS[llm[0]])
        yield "llm.default.model", f"{llm[1]!r} is not a {llm[0]} model ({models})"


def _knob_ignored(knob: str, takes: Callable[[str, str], bool], who: str) -> Callable[..., Found]:
    def find(config: Mapping[str, Any], _: PitfallRecords) -> Found:
        llm = _llm(config)
        if llm is None or llm[2].get(knob) is None:
            return
        provider, model, _block = llm
        if provider in L.LLM_MODELS and not takes(provider, model):
            yield (
                f"llm.default.{knob}",
                f"is set for {provider} {model}, which does not take it (only {who}): ignored",
            )

    return find


def _is_gem25(provider: str, model: str) -> bool:
    return provider == "vendor_f" and model.startswith("gem-2.5") and "lite" not in model


def _thinking_budget_range(config: Mapping[str, Any], _: PitfallRecords) -> Found:
    llm = _llm(config)
    value = None if llm is None else llm[2].get("thinkingBudget")
    low, high = L.THINKING_BUDGET_RANGE
    if value is None or llm is None or not _is_gem25(llm[0], llm[1]):
        return
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        yield (
            "llm.default.thinkingBudget",
            f"must be an integer from {low} to {high}, got {value!r}",
        )


def _reasoning_none(config: Mapping[str, Any], _: PitfallRecords) -> Found:
    llm = _llm(config)
    if llm is not None and llm[0] == "vendor_e" and llm[2].get("reasoningEffort") == "none":
        yield "llm.default.reasoningEffort", "is 'none', which vendor_e rejects (low, medium, high)"


def _tts_voice(config: Mapping[str, Any], _: PitfallRecords) -> Found:
    block = _block(config, "tts")
    if block is None:
        return
    provider, voice = block.get("provider"), block.get("voiceId")
    required = provider in L.TTS_VOICE_REQUIRED
    usable = isinstance(voice, str) and voice.strip() != ""
    if (required and not usable) or (voice is not None and not usable):
        what = "missing" if voice is None else f"not a usable voice id ({voice!r})"
        yield "tts.default.voiceId", f"is {what} for TTS provider {provider}"


def _greeting_ignored(config: Mapping[str, Any], _: PitfallRecords) -> Found:
    agent = _obj(config.get("agent"))
    if agent.get("greetingInstructions") and agent.get("initialGreeting") is not True:
        yield (
            "agent.greetingInstructions",
            "is set but initialGreeting is not true: the assistant does not speak first, and "
            "the greeting is never used",
        )


def _urdu_script(config: Mapping[str, Any], _: PitfallRecords) -> Found:
    instructions = _obj(config.get("agent")).get("instructions")
    if isinstance(instructions, str) and prompt_language(instructions) == "roman_urdu":
        yield (
            "agent.instructions",
            "is about Urdu but does not ask for Nastaliq (Urdu) script: expect answers in "
            "Roman Urdu",
        )


def _noise_level(config: Mapping[str, Any], _: PitfallRecords) -> Found:
    noise = _obj(config.get("noiseCancellation"))
    level = noise.get("level")
    if noise.get("enabled") is True and isinstance(level, int | float) and level > 0.1:
        yield (
            "noiseCancellation.level",
            f"is {level:g}, stronger than the default 0.1: short Urdu backchannels may be clipped",
        )


def _connection_id(config: Mapping[str, Any], _: PitfallRecords) -> Found:
    for i, tool in _tools(config):
        execution = _obj(tool.get("execution"))
        if execution.get("type") == "tool_endpoint" and not execution.get("connectionId"):
            yield (
                f"agent.tools[{i}].execution.connectionId",
                f"tool {tool.get('name')!r} runs on a tool endpoint but has no connectionId: "
                "it is stored, and every call of it returns an error result",
            )


def _tool_timeout(config: Mapping[str, Any], _: PitfallRecords) -> Found:
    for i, tool in _tools(config):
        execution = _obj(tool.get("execution"))
        timeout = tool.get("timeout")
        if execution.get("type") == "tool_endpoint" and timeout is not None and timeout != 10:
            yield (
                f"agent.tools[{i}].timeout",
                f"is {timeout!r} on tool endpoint tool {tool.get('name')!r}: ignored, webhook "
                "tools always get 10 seconds",
            )


def _scorecard(config: Mapping[str, Any]) -> Any:
    return _obj(config.get("grading")).get("scorecard")


def _scorecard_points(config: Mapping[str, Any], _: PitfallRecords) -> Found:
    grading = _obj(config.get("grading"))
    if "scorecard" not in grading:
        return
    card = grading["scorecard"]
    if not isinstance(card, Mapping):
        yield "grading.scorecard", f"is not an object ({type(card).__name__})"
        return
    rules = card.get("rules")
    if not isinstance(rules, list) or not rules:
        yield "grading.scorecard.rules", "must hold at least one rule"
        return
    points = [r.get("points") for r in rules if isinstance(r, Mapping)]
    numbers = [p for p in points if isinstance(p, int | float) and not isinstance(p, bool)]
    total = sum(numbers)
    if len(numbers) != len(rules) or total != L.SCORECARD_TOTAL_POINTS:
        yield "grading.scorecard.rules", f"points total {total:g}, not 100"


def _scorecard_ids(config: Mapping[str, Any], _: PitfallRecords) -> Found:
    card = _scorecard(config)
    rules = card.get("rules") if isinstance(card, Mapping) else None
    if not isinstance(rules, list):
        return
    seen: dict[Any, int] = {}
    for i, rule in enumerate(rules):
        rule_id = rule.get("ruleId") if isinstance(rule, Mapping) else None
        if rule_id in seen:
            yield (
                f"grading.scorecard.rules[{i}].ruleId",
                f"{rule_id!r} repeats rules[{seen[rule_id]}]",
            )
        seen.setdefault(rule_id, i)


def _secrets(value: Any, path: str) -> Iterator[str]:
    if isinstance(value, Mapping):
        for key, inner in value.items():
            where = f"{path}.{key}" if path else str(key)
            if is_secret_key(str(key)) and isinstance(inner, str) and inner:
                yield where
            else:
                yield from _secrets(inner, where)
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _secrets(inner, f"{path}[{i}]")


def _provider_keys(config: Mapping[str, Any], _: PitfallRecords) -> Found:
    for path in _secrets(config, ""):
        yield (
            path,
            "holds a credential (value not shown) that anyone who can read the assistant sees",
        )


def _variables(config: Mapping[str, Any], records: PitfallRecords) -> Found:
    if records is None:
        return
    agent = _obj(config.get("agent"))
    texts = [agent.get("instructions")]
    if agent.get("initialGreeting") is True:
        texts.append(agent.get("greetingInstructions"))
    tokens = prompt_tokens(*(t for t in texts if isinstance(t, str)))
    missing = missing_variables(tokens, records)
    for name in missing.names:
        rows = missing.rows[name]
        yield (
            "agent.instructions",
            f"{{{{{name}}}}} has no value in {len(rows)} of {missing.records} variables "
            f"record(s) ({', '.join(map(str, rows[:8]))}{' ...' if len(rows) > 8 else ''}): "
            "the agent would say it out loud",
        )


_IGNORED = "A knob sent to a provider that does not take it is silently ignored."
_BAD_SETUP = (
    "A bad setup (for example an unsupported provider, or a bad body) fails as a plain JSON 400 "
    "before streaming starts."
)

PITFALL_RULES: Final[tuple[PitfallRule, ...]] = (
    PitfallRule("provider-unsupported", "error", _BAD_SETUP, _unsupported_provider),
    PitfallRule(
        "llm-model-unknown",
        "error",
        "LlmConfig: `provider` and `model` are required; each provider lists its model values. "
        + _BAD_SETUP,
        _unknown_llm_model,
    ),
    PitfallRule(
        "thinking-budget-ignored",
        "warning",
        "thinkingBudget: 2.5 models only, not the lite model. " + _IGNORED,
        _knob_ignored("thinkingBudget", _is_gem25, "vendor_f gem-2.5 models, not the lite one"),
    ),
    PitfallRule(
        "thinking-budget-range",
        "error",
        "thinkingBudget (integer, -1 to 24576; 0 turns thinking off, -1 lets the model decide).",
        _thinking_budget_range,
    ),
    PitfallRule(
        "thinking-level-ignored",
        "warning",
        "thinkingLevel (enum minimal, low, medium, high; 3.x models only). " + _IGNORED,
        _knob_ignored(
            "thinkingLevel",
            lambda p, m: p == "vendor_f" and m.startswith("gem-3"),
            "vendor_f gem-3.x models",
        ),
    ),
    PitfallRule(
        "verbosity-ignored",
        "warning",
        "verbosity (enum low, medium, high; 5.x models only); on vendor_e verbosity is "
        "unsupported. " + _IGNORED,
        _knob_ignored(
            "verbosity",
            lambda p, m: p == "vendor_c" and m.startswith("llm-5"),
            "vendor_c llm-5.x models",
        ),
    ),
    PitfallRule(
        "reasoning-effort-ignored",
        "warning",
        "reasoningEffort: vendor_c 5.x models and vendor_e; vendor_d has no reasoning or "
        "verbosity knobs. " + _IGNORED,
        _knob_ignored(
            "reasoningEffort",
            lambda p, m: (p == "vendor_c" and m.startswith("llm-5")) or p == "vendor_e",
            "vendor_c llm-5.x models and vendor_e",
        ),
    ),
    PitfallRule(
        "reasoning-effort-none-rejected",
        "error",
        "vendor_e reasoningEffort (enum low, medium, high; `none` is rejected by the provider).",
        _reasoning_none,
    ),
    PitfallRule(
        "tts-voice-missing",
        "error",
        "A TTS block without a usable `voiceId` is stored without error and fails at connect time.",
        _tts_voice,
    ),
    PitfallRule(
        "greeting-instructions-ignored",
        "warning",
        "greetingInstructions: how to greet; ignored unless `initialGreeting` is true.",
        _greeting_ignored,
    ),
    PitfallRule(
        "urdu-without-nastaliq",
        "warning",
        "For Urdu assistants the prompt should tell the model to answer in Nastaliq script, "
        "otherwise it tends to answer in Roman Urdu.",
        _urdu_script,
    ),
    PitfallRule(
        "noise-cancellation-strong",
        "warning",
        "noiseCancellation.level: suppression strength, default 0.1; the default is low "
        "because stronger settings clip short Urdu backchannels.",
        _noise_level,
    ),
    PitfallRule(
        "tool-endpoint-without-connection",
        "error",
        "`connectionId` is not checked on create. A missing or wrong id surfaces as an error "
        "result on the call, not as a 400.",
        _connection_id,
    ),
    PitfallRule(
        "tool-timeout-ignored",
        "warning",
        "timeout: seconds to wait for a client tool's handler; webhook tools always get 10 "
        "seconds.",
        _tool_timeout,
    ),
    PitfallRule(
        "scorecard-points",
        "error",
        "A `scorecard` that is not an object, or whose points do not total 100, gives 400.",
        _scorecard_points,
    ),
    PitfallRule(
        "scorecard-duplicate-rule",
        "error",
        "Scorecard: rule ids must be unique.",
        _scorecard_ids,
    ),
    PitfallRule(
        "provider-api-key",
        "warning",
        "apiKey: reads return the key verbatim, so anyone who can read the assistant can see "
        "it. When omitted, usage is billed through the service.",
        _provider_keys,
    ),
    PitfallRule(
        "variables-missing",
        "error",
        "variables: the contact record for this simulated call; the agent substitutes its "
        "tokens. A token with no value is left in the prompt as written.",
        _variables,
    ),
)
"""Every rule, one row each; :func:`config_pitfalls` runs them in this order."""


def config_pitfalls(
    config: Mapping[str, Any],
    records: PitfallRecords = None,
    rules: Sequence[PitfallRule] = PITFALL_RULES,
) -> list[Pitfall]:
    """The findings of ``rules`` on ``config`` (camelCase JSON). ``records``: the variables
    records a run would send (None: not known, so the ``variables-missing`` rule is skipped).
    Messages pass the one redactor, so no credential shaped text survives in them."""
    found: list[Pitfall] = []
    for rule in rules:
        for path, message in rule.find(config, records):
            found.append(
                Pitfall(rule.rule_id, rule.severity, path, redact_text(message), rule.reason)
            )
    return found
