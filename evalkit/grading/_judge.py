"""The LLM judge: any OpenAI-compatible ``POST {base_url}/chat/completions`` endpoint
(a :class:`evalkit._chat.ChatEndpoint`, the proposer's kind).

One call per task (a transcript and the rules still to decide on it), at most
``options.concurrency`` at once. The answer is validated (:mod:`._judge_parse`); a malformed
answer or a failed call is tried again up to ``options.attempts`` times, then every rule of
the task becomes verdict ``error`` with the reason (never ``fail``), and :meth:`Judge.ajudge`
still returns normally. Once a task has failed for want of a reachable endpoint (connection
errors, 5xx, a missed deadline), one call probes it and the other tasks wait for that probe;
when it fails they become ``error`` at once. A deadline missed while the endpoint answered
nothing at all is itself that failed probe, so a judge that never answers costs one deadline
in all, not one (or ``attempts``) per task (:mod:`evalkit._chat._breaker`).

Deadline and size: each call has a total deadline, ``options.timeout`` (connect, send, and every
byte of the answer: an endpoint that trickles one byte a second or never answers is abandoned
then), and its answer is read as a stream up to ``options.max_response_bytes`` (a longer one
is abandoned unread, its connection closed), so memory stays flat whatever an endpoint sends.

Concurrency: an ``asyncio.Semaphore`` of ``options.concurrency`` (per event loop, shared by a
judge and its copies) bounds the calls in flight; each call borrows one of that many
single-connection HTTP clients.

Structured output: with ``use_response_format="auto"`` the first calls ask for a JSON schema;
an endpoint that answers 400 (or 422) to that is remembered (per judge and its copies) and
asked again without it, and its plain content is parsed.

Token usage: a call's ``usage.prompt_tokens`` and ``completion_tokens`` (summed over its
attempts, malformed answers included) are **split evenly** over the rules of that call (the
remainder to the first rules), so summing the verdicts of fresh calls gives the tokens spent.
A cached verdict carries the usage of the call that made it; sum only ``cached == False``.

The key is a :class:`~evalkit.api.Secret`: it goes only into the ``Authorization``
header, and no repr, log line, verdict, exception or pickle holds it (a pickled judge whose key
came from ``EVALKIT_JUDGE_API_KEY`` reads it from the environment again when unpickled; one
given as an argument is dropped).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from .._chat import ChatAnswer, ChatEndpoint, ChatRequest, ProbeGate
from .._util import run_sync
from ..api import Secret
from ._judge_cache import CachedVerdict, JudgeCache, cache_key
from ._judge_config import JUDGE_ENV, JudgeOptions, JudgeStats
from ._judge_parse import AnswerVerdict, parse_answer
from ._judge_prompt import build_messages, response_format
from ._judge_types import JUDGE_PROMPT_VERSION, JudgedRule, JudgeTask, JudgeVerdict

__all__ = ["Judge"]

logger = logging.getLogger("evalkit.grading.judge")

#: A task's position, the task, and the rules still to ask about.
_Work = tuple[int, JudgeTask, tuple[JudgedRule, ...]]


@dataclass(eq=False)
class _Shared:
    """What a judge and its copies share besides the endpoint: counters, the bound."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    cache_hits: int = 0
    errors: int = 0
    semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = field(
        default_factory=weakref.WeakKeyDictionary
    )

    def add(self, **counts: int) -> None:
        with self.lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)

    def semaphore(self, size: int) -> asyncio.Semaphore:
        """The running loop's semaphore (asyncio primitives belong to one loop)."""
        loop = asyncio.get_running_loop()
        with self.lock:
            sem = self.semaphores.get(loop)
            if sem is None:
                sem = self.semaphores[loop] = asyncio.Semaphore(size)
            return sem


def _split(total: int | None, n: int) -> list[int | None]:
    if total is None:
        return [None] * n
    base, extra = divmod(total, n)
    return [base + (1 if i < extra else 0) for i in range(n)]


class Judge:
    """An LLM judge over an OpenAI-compatible chat-completions endpoint (a ``JudgeBackend``).

    What is not given comes from ``EVALKIT_JUDGE_MODEL``, ``EVALKIT_JUDGE_BASE_URL`` and
    ``EVALKIT_JUDGE_API_KEY`` (the key is optional: a local endpoint may need none); a missing
    model or endpoint raises :class:`JudgeNotConfigured`. With ``cache_dir`` verdicts are
    cached on disk (content-addressed; errors are not cached). ``http_client`` lets a caller
    supply its own ``httpx.AsyncClient`` (used as is for every call, never closed); otherwise
    each :meth:`ajudge` opens ``min(tasks, options.concurrency)`` clients of one connection each
    (:meth:`evalkit._chat.ChatEndpoint.connections` says why not one pool).
    """

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | Secret | None = None,
        *,
        options: JudgeOptions | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self.options = options or JudgeOptions()
        self._endpoint = ChatEndpoint(
            model,
            base_url,
            api_key,
            env=JUDGE_ENV,
            limits=self.options,
            response_format=self.options.use_response_format,
            http_client=http_client,
        )
        self.cache_dir: Path | None = Path(cache_dir) if cache_dir is not None else None
        self._shared = _Shared()

    @classmethod
    def from_env(
        cls,
        *,
        options: JudgeOptions | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> Judge:
        """A judge configured by ``EVALKIT_JUDGE_*`` alone, or :class:`JudgeNotConfigured`."""
        return cls(options=options, cache_dir=cache_dir)

    # ------------------------------------------------------------------ properties

    @property
    def model(self) -> str:
        """The judge model's name, recorded on every verdict and part of the cache key."""
        return self._endpoint.model

    @property
    def base_url(self) -> str:
        """The endpoint's base URL (``.../v1``); calls go to ``{base_url}/chat/completions``."""
        return self._endpoint.base_url

    @property
    def has_api_key(self) -> bool:
        """Whether calls carry a bearer key."""
        return self._endpoint.has_api_key

    @property
    def stats(self) -> JudgeStats:
        """A snapshot of the counters (shared with copies made by :meth:`with_cache_dir`)."""
        counts, s = self._endpoint.counts, self._shared
        with s.lock:
            return JudgeStats(
                counts.calls, s.cache_hits, s.errors, counts.prompt_tokens, counts.completion_tokens
            )

    def with_cache_dir(self, path: str | os.PathLike[str] | None) -> Judge:
        """A copy that caches under ``path`` (``None``: no cache); it shares counters and limits."""
        copy = object.__new__(Judge)
        copy.__dict__.update(self.__dict__)
        copy.cache_dir = Path(path) if path is not None else None
        return copy

    def __repr__(self) -> str:
        key = "<set>" if self.has_api_key else "None"
        return (
            f"Judge(model={self.model!r}, base_url={self.base_url!r}, api_key={key}, "
            f"concurrency={self.options.concurrency}, cache_dir={self.cache_dir!r})"
        )

    def __getstate__(self) -> dict[str, Any]:
        # the endpoint pickles without its key (read from the environment again if it came
        # from there); counters and limits start afresh
        return {"endpoint": self._endpoint, "options": self.options, "cache_dir": self.cache_dir}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._endpoint, self.options = state["endpoint"], state["options"]
        self.cache_dir = state["cache_dir"]
        self._shared = _Shared()

    # ------------------------------------------------------------------ judging

    def judge(self, tasks: Iterable[JudgeTask]) -> list[JudgeVerdict]:
        """:meth:`ajudge` from synchronous code (also inside a running loop, e.g. Jupyter)."""
        task_list = list(tasks)
        return run_sync(lambda: self.ajudge(task_list))

    async def ajudge(self, tasks: Iterable[JudgeTask]) -> list[JudgeVerdict]:
        """One verdict per rule of every task, in task then rule order.

        Cached rules are answered from the cache; a task whose rules are all cached makes no
        call, one with some cached asks only for the rest. Never raises for a failed call.
        """
        task_list = list(tasks)
        _check_unique_rules(task_list)
        cache = JudgeCache(self.cache_dir) if self.cache_dir is not None else None
        answers: dict[tuple[int, str], JudgeVerdict] = {}
        work: list[_Work] = [(i, t, t.rules) for i, t in enumerate(task_list) if t.rules]
        if cache is not None:  # file reads off the event loop
            answers, work = await asyncio.to_thread(self._lookup, cache, task_list)
            self._shared.add(cache_hits=len(answers))
        if work:
            sem = self._shared.semaphore(self.options.concurrency)
            gate = self._endpoint.gate()
            slots = self._endpoint.connections(min(len(work), self.options.concurrency))
            async with slots as free:
                results = await asyncio.gather(
                    *(
                        self._judge_task(free, sem, gate, task, rules, cache)
                        for _, task, rules in work
                    )
                )
            for (i, _, _), verdicts in zip(work, results, strict=True):
                answers.update(((i, v.rule_id), v) for v in verdicts)
            self._log_errors([v for verdicts in results for v in verdicts])
        return [answers[(i, r.rule_id)] for i, t in enumerate(task_list) for r in t.rules]

    # ------------------------------------------------------------------ internals

    def _lookup(
        self, cache: JudgeCache, tasks: Sequence[JudgeTask]
    ) -> tuple[dict[tuple[int, str], JudgeVerdict], list[_Work]]:
        """The cached verdicts by (task position, rule id), and what is left to ask."""
        found: dict[tuple[int, str], JudgeVerdict] = {}
        work: list[_Work] = []
        for i, task in enumerate(tasks):
            missing = []
            for rule in task.rules:
                hit = cache.get(self._key(task, rule))
                if hit is None:
                    missing.append(rule)
                else:
                    found[(i, rule.rule_id)] = self._from_cache(task, rule, hit)
            if missing:
                work.append((i, task, tuple(missing)))
        return found, work

    def _key(self, task: JudgeTask, rule: JudgedRule) -> str:
        return cache_key(
            task.transcript_hash, rule.rule_hash, self.model, JUDGE_PROMPT_VERSION, task.sample
        )

    def _from_cache(self, task: JudgeTask, rule: JudgedRule, hit: CachedVerdict) -> JudgeVerdict:
        return JudgeVerdict(
            conversation_id=task.conversation_id,
            rule_id=rule.rule_id,
            sample=task.sample,
            verdict=hit.verdict,
            rationale=hit.rationale,
            evidence_turn=hit.evidence_turn,
            model=self.model,
            prompt_version=JUDGE_PROMPT_VERSION,
            prompt_tokens=hit.prompt_tokens,
            completion_tokens=hit.completion_tokens,
            cached=True,
        )

    async def _judge_task(
        self,
        slots: asyncio.Queue[httpx.AsyncClient],
        sem: asyncio.Semaphore,
        gate: ProbeGate,
        task: JudgeTask,
        rules: tuple[JudgedRule, ...],
        cache: JudgeCache | None,
    ) -> list[JudgeVerdict]:
        async with sem:
            http = slots.get_nowait()  # never empty: at most n tasks of this call hold sem
            try:
                verdicts = await self._attempts(http, gate, task, rules)
            finally:
                slots.put_nowait(http)
        if cache is not None and any(v.verdict != "error" for v in verdicts):
            await asyncio.to_thread(self._store, cache, task, rules, verdicts)  # file I/O
        return verdicts

    def _store(
        self,
        cache: JudgeCache,
        task: JudgeTask,
        rules: tuple[JudgedRule, ...],
        verdicts: Sequence[JudgeVerdict],
    ) -> None:
        for rule, verdict in zip(rules, verdicts, strict=True):
            if verdict.verdict != "error":
                cache.put(self._key(task, rule), verdict)

    async def _attempts(
        self,
        http: httpx.AsyncClient,
        gate: ProbeGate,
        task: JudgeTask,
        rules: tuple[JudgedRule, ...],
    ) -> list[JudgeVerdict]:
        """The task's verdicts: one ask of the endpoint (its attempts, retries and breaker),
        ``error`` verdicts with the reason when no attempt gave a well-formed answer."""
        ids = [r.rule_id for r in rules]
        turns = {index for index, _, _ in task.turns}
        request = ChatRequest(
            build_messages(task, rules), self.options.temperature, response_format(rules)
        )
        answer = await self._endpoint.aask(
            http, request, lambda content: parse_answer(content, ids, turns), gate=gate, asker=task
        )
        if answer.value is not None:
            return self._verdicts(task, rules, answer.value, answer)
        said = answer.reason or gate.reason
        reason = f"judge error after {answer.attempts} attempt(s): {said}"
        if answer.held_back:
            reason += (
                "; the endpoint is down (a probe just failed), so this task was not asked: "
                "grade again once it answers"
            )
        return self._errors(task, rules, reason, answer)

    def _verdicts(
        self,
        task: JudgeTask,
        rules: tuple[JudgedRule, ...],
        answer: Mapping[str, AnswerVerdict],
        usage: ChatAnswer[Any],
    ) -> list[JudgeVerdict]:
        prompt = _split(usage.prompt_tokens, len(rules))
        completion = _split(usage.completion_tokens, len(rules))
        return [
            JudgeVerdict(
                conversation_id=task.conversation_id,
                rule_id=rule.rule_id,
                sample=task.sample,
                verdict=answer[rule.rule_id].verdict,
                rationale=answer[rule.rule_id].reason,
                evidence_turn=answer[rule.rule_id].evidence_turn,
                model=self.model,
                prompt_version=JUDGE_PROMPT_VERSION,
                prompt_tokens=prompt[n],
                completion_tokens=completion[n],
            )
            for n, rule in enumerate(rules)
        ]

    def _errors(
        self,
        task: JudgeTask,
        rules: tuple[JudgedRule, ...],
        reason: str,
        usage: ChatAnswer[Any],
    ) -> list[JudgeVerdict]:
        self._shared.add(errors=len(rules))
        prompt = _split(usage.prompt_tokens, len(rules))
        completion = _split(usage.completion_tokens, len(rules))
        return [
            JudgeVerdict(
                conversation_id=task.conversation_id,
                rule_id=rule.rule_id,
                sample=task.sample,
                verdict="error",
                rationale=reason,
                evidence_turn=None,
                model=self.model,
                prompt_version=JUDGE_PROMPT_VERSION,
                prompt_tokens=prompt[n],
                completion_tokens=completion[n],
            )
            for n, rule in enumerate(rules)
        ]

    def _log_errors(self, verdicts: Sequence[JudgeVerdict]) -> None:
        errors = [v for v in verdicts if v.verdict == "error"]
        if errors:
            logger.warning(
                "judge: %d of %d rule verdicts are errors (first: %s)",
                len(errors),
                len(verdicts),
                errors[0].rationale,
            )


def _check_unique_rules(tasks: Sequence[JudgeTask]) -> None:
    for task in tasks:
        ids = [r.rule_id for r in task.rules]
        if len(set(ids)) != len(ids):
            raise ValueError(f"task {task.conversation_id!r} repeats a rule id: {ids}")
