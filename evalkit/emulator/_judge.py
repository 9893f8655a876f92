"""The emulated LLM judge: an OpenAI-compatible chat-completions endpoint that reads evalkit's
judge prompt and decides each rule by recognising the dialogue engine's acts in the agent's
turns, so grading runs its whole judge path offline.

``POST /_emulator/judge/v1/chat/completions`` (model ``emulator-judge``, any bearer or none)
parses the last fenced JSON block of the last user message
(``{"transcript": [{"turn", "role", "text"}], "rules": [{"rule_id", "title", "criterion"}]}``)
and answers ``{"verdicts": [{"rule_id", "verdict", "reason", "evidence_turn"}]}`` as the
message content; ``GET /_emulator/judge/v1/models`` lists the model. Admin settings
``GET|PUT /_emulator/judge`` ``{flipRate, malformedRate, latency, seed, falsePassRate,
falseFailRate, rules}`` add seeded noise: a pass/fail verdict flips with ``flipRate``, a whole
answer is malformed with ``malformedRate``, and each call waits ``latency`` emulated seconds.
``falsePassRate`` / ``falseFailRate`` make the judge err in a known direction (a true fail
called pass, a true pass called fail) on ``rules`` (null: all), each error fixed by the seed,
the transcript and the rule, so a lenient judge is reproducible. Model ``exact`` is the same
judge with none of this: the ground truth tests and the demo compare against.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..api import Problem
from ._auth import authenticate
from ._bodies import read_json
from ._chat_wire import chat_completion, model_list, openai_error
from ._core import Emulator
from ._errors import raise_for_problems
from ._judge_state import JudgeSettings, JudgeState
from .dialogue import ACTS, recognise_acts

__all__ = [
    "ACT_PHRASES",
    "EXACT_MODEL",
    "JUDGE_MODEL",
    "RULE_ACTS",
    "RuleAct",
    "chat_completions",
    "decide",
    "judge_settings",
    "models",
]

JUDGE_MODEL: Final = "emulator-judge"
#: The same judge without noise or errors (ground truth).
EXACT_MODEL: Final = "exact"
_FENCE_RE: Final = re.compile(r"```(?:json)?[ \t]*\n(.*?)```", re.DOTALL)


@dataclass(frozen=True, slots=True)
class RuleAct:
    """A rule whose title or criterion mentions one of ``keywords`` is judged by ``act``.

    ``expected`` False: the rule passes when the act never happens (e.g. a token left
    unresolved). ``requires``: caller acts one of which must occur for the rule to apply.
    ``says``: what the rule asks of the agent, in the words a rationale uses, when the act's
    own meaning (:data:`ACT_PHRASES`) says something else (a date-and-time rule is judged by
    the act that states the call's purpose, but its rationale speaks of the date and time).
    """

    keywords: tuple[str, ...]
    act: str
    expected: bool = True
    requires: frozenset[str] = frozenset()
    says: str | None = None

    @property
    def phrase(self) -> str:
        """What the agent does when the act occurs, as a rationale says it."""
        return self.says or ACT_PHRASES[self.act]


ACT_PHRASES: Final[Mapping[str, str]] = {act.name: act.meaning for act in ACTS}
"""Every act of the dialogue engine in plain words (``states_purpose`` -> "states the purpose
of the call with its details"): rationales say these, never an act's internal name."""

RULE_ACTS: Final[tuple[RuleAct, ...]] = (
    RuleAct(
        ("do-not-call", "do not call", "dnc", "not to be called", "remove", "stop calling"),
        "honours_dnc",
        requires=frozenset({"requests_dnc"}),
    ),
    RuleAct(
        ("call back", "callback", "reschedul", "later time"),
        "agrees_callback",
        requires=frozenset({"requests_callback", "busy"}),
    ),
    RuleAct(
        ("next step", "reference number"), "gives_next_step", requires=frozenset({"complains"})
    ),
    RuleAct(
        ("placeholder", "token", "{{", "unresolved", "template variable"),
        "leaves_token_unresolved",
        False,
    ),
    RuleAct(("push", "persuad", "insist"), "pushes_on", False),
    RuleAct(
        ("wrong person", "wrong number", "not the customer"),
        "apologises",
        requires=frozenset({"says_wrong_person"}),
        says="apologises for calling the wrong person",
    ),
    RuleAct(
        ("date and time", "appointment time", "appointment date"),
        "states_purpose",
        says="states the appointment's date and time",
    ),
    RuleAct(("apolog", "sorry", "maazrat"), "apologises"),
    RuleAct(("right person", "speaking with", "verif"), "asks_identity"),
    RuleAct(("yes or no", "yes/no", "confirm"), "asks_confirmation"),
    RuleAct(("identity", "introduc", "who is calling", "its name"), "states_identity"),
    RuleAct(
        ("purpose", "reason for the call", "why it is calling", "why they are calling"),
        "states_purpose",
    ),
    RuleAct(("close", "goodbye", "thank", "allah hafiz", "sign off"), "closes_politely"),
    RuleAct(("price", "amount", "cost"), "states_price"),
    RuleAct(("anything else", "further help", "offers help"), "offers_help"),
)
_CONDITIONS: Final[tuple[tuple[tuple[str, ...], frozenset[str]], ...]] = (
    (
        ("object", "refus", "angry", "hostile", "upset", "complain"),
        frozenset({"objects", "requests_dnc", "complains"}),
    ),
    (("wrong person", "wrong number"), frozenset({"says_wrong_person"})),
)
"""Rules that apply only when the caller did one of the acts: (words in the rule, acts)."""


def _caller_never(acts: frozenset[str]) -> str:
    """Why a rule for a caller's act does not apply, e.g. "the caller never asks to be called
    back later or says they are busy"."""
    *others, last = [ACT_PHRASES[a] for a in sorted(acts)]
    return "the caller never " + (f"{', '.join(others)} or {last}" if others else last)


def _condition(text: str, caller_acts: frozenset[str]) -> str | None:
    for words, acts in _CONDITIONS:
        if any(w in text for w in words) and not acts & caller_acts:
            return _caller_never(acts)
    return None


def decide(
    transcript: Sequence[Mapping[str, Any]], title: str, criterion: str | None
) -> tuple[str, str, int | None]:
    """``(verdict, reason, evidence_turn)`` for one rule on one transcript; the reason speaks
    of what the rule asks, in words (:data:`ACT_PHRASES`, :attr:`RuleAct.says`)."""
    text = _applies_when(title, criterion)
    row = _rule_act(title.lower()) or _rule_act(text)
    if row is None:
        return "na", "cannot map this rule to anything the emulated judge recognises", None
    turns = [
        (int(t.get("turn") or i + 1), str(t.get("role")), str(t.get("text") or ""))
        for i, t in enumerate(transcript)
    ]
    caller_acts = frozenset().union(
        *(recognise_acts(txt, "caller") for _, role, txt in turns if role == "caller")
    )
    if row.requires and not row.requires & caller_acts:
        return "na", f"does not apply: {_caller_never(row.requires)}", None
    unmet = _condition(text, caller_acts)
    if unmet is not None:
        return "na", f"does not apply: {unmet}", None
    hits = [n for n, role, txt in turns if role == "agent" and row.act in recognise_acts(txt)]
    if hits:
        verdict = "pass" if row.expected else "fail"
        return verdict, f"in turn {hits[0]} the agent {row.phrase}", hits[0]
    return ("fail" if row.expected else "pass"), f"the agent never {row.phrase}", None


_NA_CLAUSE: Final = re.compile(r"[^.]*\b(?:answer|say|mark)\s+na\b[^.]*\.?", re.IGNORECASE)


def _applies_when(title: str, criterion: str | None) -> str:
    """The rule's text without its "Answer na if ..." sentences, which say when it does NOT
    apply and name acts that are not the one judged."""
    return _NA_CLAUSE.sub(" ", f"{title}. {criterion or ''}").lower()


def _rule_act(text: str) -> RuleAct | None:
    """The first row whose keywords ``text`` mentions (titles are read before criteria, whose
    "answer na if ..." clauses name other acts)."""
    return next((r for r in RULE_ACTS if any(k in text for k in r.keywords)), None)


_FLIPPED: Final = {"pass": "fail", "fail": "pass"}
_MALFORMED: Final = ('{"verdicts": [{"rule_id": ', "I think the agent did well overall.")


def _prompt(body: Any) -> tuple[str, dict[str, Any]] | str:
    """The whole prompt text and the parsed judge block, or what is wrong with the request."""
    if not isinstance(body, Mapping) or not isinstance(body.get("messages"), list):
        return "messages must be a list"
    texts: list[tuple[str, str]] = []
    for message in body["messages"]:
        if not isinstance(message, Mapping):
            return "every message must be an object"
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
        texts.append((str(message.get("role")), content if isinstance(content, str) else ""))
    users = [text for role, text in texts if role == "user"]
    blocks = _FENCE_RE.findall(users[-1]) if users else []
    if not blocks:
        return "the last user message has no fenced JSON block"
    try:
        block = json.loads(blocks[-1])
    except ValueError:
        return "the fenced JSON block is not valid JSON"
    if not (
        isinstance(block, Mapping)
        and isinstance(block.get("transcript"), list)
        and isinstance(block.get("rules"), list)
        and all(isinstance(t, Mapping) for t in block["transcript"])
        and all(isinstance(r, Mapping) for r in block["rules"])
    ):
        return "the JSON block must hold a transcript list and a rules list of objects"
    return "\n".join(text for _, text in texts), dict(block)


def _check_response_format(body: Mapping[str, Any]) -> str | None:
    fmt = body.get("response_format")
    if fmt is None:
        return None
    if not isinstance(fmt, Mapping) or fmt.get("type") not in (
        "json_schema",
        "json_object",
        "text",
    ):
        return "response_format.type must be json_schema, json_object or text"
    return None


async def chat_completions(emu: Emulator, request: Request) -> Response:
    """The emulated judge (model ``emulator-judge``; ``exact`` is the same judge without noise),
    OpenAI-compatible: it reads evalkit's judge prompt and answers ``{"verdicts": [{"rule_id",
    "verdict", "reason", "evidence_turn"}]}`` as the message content. Any bearer or none."""
    body = await read_json(request, emu.settings.max_body_bytes)
    model = body.get("model", JUDGE_MODEL) if isinstance(body, Mapping) else JUDGE_MODEL
    if model not in (JUDGE_MODEL, EXACT_MODEL):
        return openai_error(404, f"The model {model!r} does not exist", "model_not_found")
    exact = model == EXACT_MODEL
    parsed = _prompt(body)
    problem = parsed if isinstance(parsed, str) else _check_response_format(body)
    if problem is not None or isinstance(parsed, str):
        return openai_error(400, problem or "invalid request")
    prompt, block = parsed
    state: JudgeState = emu.judge
    malformed, flips = state.draws(len(block["rules"]))
    settings = state.settings
    if exact:
        malformed, flips = False, [False] * len(flips)
    if state.settings.latency > 0:
        await asyncio.sleep(emu.settings.scaled(state.settings.latency))
    if malformed:
        content = _MALFORMED[state.calls % len(_MALFORMED)]
    else:
        verdicts = []
        for rule, flip in zip(block["rules"], flips, strict=True):
            title, criterion = rule.get("title"), rule.get("criterion")
            verdict, reason, evidence = decide(
                block["transcript"],
                title if isinstance(title, str) else "",
                criterion if isinstance(criterion, str) else None,
            )
            if not exact and settings.errs(
                block["transcript"], rule.get("rule_id"), verdict, state.default_seed
            ):
                verdict = _FLIPPED.get(verdict, verdict)
            verdict = _FLIPPED.get(verdict, verdict) if flip else verdict
            verdicts.append(
                {
                    "rule_id": rule.get("rule_id"),
                    "verdict": verdict,
                    "reason": reason,
                    "evidence_turn": evidence,
                }
            )
        content = json.dumps({"verdicts": verdicts}, ensure_ascii=False)
    return chat_completion(
        completion_id=f"chatcmpl-emulator-{state.calls}",
        model=model,
        content=content,
        prompt=prompt,
    )


async def models(emu: Emulator, request: Request) -> Response:
    """The judge's models (OpenAI-compatible list)."""
    return model_list([JUDGE_MODEL, EXACT_MODEL])


_RATES: Final = (
    ("flipRate", "flip_rate"),
    ("malformedRate", "malformed_rate"),
    ("falsePassRate", "false_pass_rate"),
    ("falseFailRate", "false_fail_rate"),
)


def _settings_from_body(body: Any) -> JudgeSettings:
    if not isinstance(body, Mapping):
        raise_for_problems([Problem("body", "must be an object")])
    assert isinstance(body, Mapping)
    problems: list[Problem] = []
    values: dict[str, Any] = {}
    for key, name in _RATES:
        value = body.get(key, 0.0)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            problems.append(Problem(key, "must be a number from 0 to 1"))
        values[name] = float(value) if not problems else 0.0
    rules = body.get("rules")
    if rules is not None and (
        not isinstance(rules, list) or not all(isinstance(r, str) and r for r in rules)
    ):
        problems.append(Problem("rules", "must be a list of rule ids or null"))
    values["rules"] = tuple(rules) if isinstance(rules, list) and not problems else None
    latency = body.get("latency", 0.0)
    if (
        isinstance(latency, bool)
        or not isinstance(latency, int | float)
        or not (math.isfinite(latency) and latency >= 0)
    ):
        problems.append(Problem("latency", "must be a number of seconds >= 0"))
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        problems.append(Problem("seed", "must be an integer or null"))
    raise_for_problems(problems)
    return replace(JudgeSettings(), **values, latency=float(latency), seed=seed)


async def judge_settings(emu: Emulator, request: Request) -> Response:
    """The emulated judge's noise, ``{flipRate, malformedRate, latency, seed, falsePassRate,
    falseFailRate, rules}``: a pass/fail verdict flips with ``flipRate``, a whole answer is
    malformed with ``malformedRate``, each call waits ``latency`` emulated seconds;
    ``falsePassRate`` / ``falseFailRate`` make it err in a known direction on ``rules`` (null:
    all). A PUT replaces all."""
    authenticate(emu, request)
    if request.method == "PUT":
        emu.judge.configure(
            _settings_from_body(await read_json(request, emu.settings.max_body_bytes))
        )
    return JSONResponse(emu.judge.settings.to_json())
