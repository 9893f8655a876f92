"""The LLM judge: any OpenAI-compatible ``POST {base_url}/chat/completions`` endpoint.

One call per task (a transcript and the rules still to decide on it), at most
``options.concurrency`` at once. The answer is validated (:mod:`._judge_parse`); a malformed
answer or a failed call is tried again up to ``options.attempts`` times, then every rule of
the task becomes verdict ``error`` with the reason (never ``fail``), and :meth:`Judge.ajudge`
still returns normally. Once a task has failed for want of a reachable endpoint (connection
errors, 5xx, a missed deadline), one call probes it and the other tasks wait for that probe
(:mod:`._judge_probe`); when it fails they become ``error`` at once, so a judge that is down or
trickling bytes costs a few deadlines in all, not one (or ``attempts``) per task.

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

The key is a :class:`~evalkit.api._config.Secret`: it goes only into the ``Authorization``
header, and no repr, log line, verdict, exception or pickle holds it (a pickled judge whose key
came from ``EVALKIT_JUDGE_API_KEY`` reads it from the environment again when unpickled; one
given as an argument is dropped).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import threading
import weakref
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from .._util import redact_text, run_sync
from ..api import ApiError
from ..api._config import Secret
from ._judge_cache import CachedVerdict, JudgeCache, cache_key
from ._judge_config import API_KEY_ENV, JudgeOptions, JudgeStats, resolve_endpoint
from ._judge_http import (
    RESPONSE_FORMAT_REFUSED,
    CallDeadlineExceeded,
    content_of,
    is_outage,
    post_chat,
    retryable,
    token_count,
)
from ._judge_parse import AnswerVerdict, MalformedAnswer, parse_answer
from ._judge_probe import ProbeGate
from ._judge_prompt import build_messages, response_format
from ._judge_types import JUDGE_PROMPT_VERSION, JudgedRule, JudgeTask, JudgeVerdict

__all__ = ["Judge"]

logger = logging.getLogger("evalkit.grading.judge")

#: A task's position, the task, and the rules still to ask about.
_Work = tuple[int, JudgeTask, tuple[JudgedRule, ...]]


@dataclass(eq=False)
class _Shared:
    """What a judge and its copies share: counters, what the endpoint showed, the bound."""

    rng: random.Random
    lock: threading.Lock = field(default_factory=threading.Lock)
    calls: int = 0
    cache_hits: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    response_format_refused: bool = False
    endpoint_down: bool = False
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


@dataclass(slots=True)
class _Usage:
    prompt: int | None = None
    completion: int | None = None

    def add(self, usage: Any) -> None:
        if not isinstance(usage, Mapping):
            return
        for name in ("prompt", "completion"):
            value = usage.get(f"{name}_tokens")
            if isinstance(value, int) and not isinstance(value, bool):
                setattr(self, name, (getattr(self, name) or 0) + value)


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
    (see :meth:`_slots` for why not one pool).
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
        self._model, self._base_url = resolve_endpoint(model, base_url)
        self._api_key, self._key_from_env = _resolve_key(api_key)
        self.options = options or JudgeOptions()
        self.cache_dir: Path | None = Path(cache_dir) if cache_dir is not None else None
        self._http_client = http_client
        self._shared = _Shared(rng=self.options.policy.rng())

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
        return self._model

    @property
    def base_url(self) -> str:
        """The endpoint's base URL (``.../v1``); calls go to ``{base_url}/chat/completions``."""
        return self._base_url

    @property
    def has_api_key(self) -> bool:
        """Whether calls carry a bearer key."""
        return self._api_key is not None

    @property
    def stats(self) -> JudgeStats:
        """A snapshot of the counters (shared with copies made by :meth:`with_cache_dir`)."""
        s = self._shared
        with s.lock:
            return JudgeStats(s.calls, s.cache_hits, s.errors, s.prompt_tokens, s.completion_tokens)

    def with_cache_dir(self, path: str | os.PathLike[str] | None) -> Judge:
        """A copy that caches under ``path`` (``None``: no cache); it shares counters and limits."""
        copy = object.__new__(Judge)
        copy.__dict__.update(self.__dict__)
        copy.cache_dir = Path(path) if path is not None else None
        return copy

    def __repr__(self) -> str:
        key = "<set>" if self._api_key is not None else "None"
        return (
            f"Judge(model={self._model!r}, base_url={self._base_url!r}, api_key={key}, "
            f"concurrency={self.options.concurrency}, cache_dir={self.cache_dir!r})"
        )

    def __getstate__(self) -> dict[str, Any]:
        return {
            "model": self._model,
            "base_url": self._base_url,
            "key_from_env": self._key_from_env,
            "options": self.options,
            "cache_dir": self.cache_dir,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._model, self._base_url = state["model"], state["base_url"]
        self._api_key, self._key_from_env = (
            _resolve_key(None) if state["key_from_env"] else (None, False)
        )
        self.options, self.cache_dir = state["options"], state["cache_dir"]
        self._http_client = None
        self._shared = _Shared(rng=self.options.policy.rng())

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
            gate = ProbeGate(interval=self.options.timeout)
            async with self._slots(min(len(work), self.options.concurrency)) as slots:
                results = await asyncio.gather(
                    *(
                        self._judge_task(slots, sem, gate, task, rules, cache)
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
            task.transcript_hash, rule.rule_hash, self._model, JUDGE_PROMPT_VERSION, task.sample
        )

    def _from_cache(self, task: JudgeTask, rule: JudgedRule, hit: CachedVerdict) -> JudgeVerdict:
        return JudgeVerdict(
            conversation_id=task.conversation_id,
            rule_id=rule.rule_id,
            sample=task.sample,
            verdict=hit.verdict,
            rationale=hit.rationale,
            evidence_turn=hit.evidence_turn,
            model=self._model,
            prompt_version=JUDGE_PROMPT_VERSION,
            prompt_tokens=hit.prompt_tokens,
            completion_tokens=hit.completion_tokens,
            cached=True,
        )

    @contextlib.asynccontextmanager
    async def _slots(self, n: int) -> AsyncIterator[asyncio.Queue[httpx.AsyncClient]]:
        """``n`` HTTP slots: clients of one connection each, or the caller's client ``n`` times.

        Not one client of ``n`` connections: httpcore's pool scans its connections for every
        connection on every request (quadratic), which at 64 connections costs about 10 ms of
        CPU per call and caps throughput far below the endpoint's. One connection per client
        keeps every call O(1), and the slots still bound the connections to ``n``.
        """
        free: asyncio.Queue[httpx.AsyncClient] = asyncio.Queue()
        if self._http_client is not None:
            for _ in range(n):
                free.put_nowait(self._http_client)
            yield free
            return
        ssl_context = httpx.create_ssl_context()  # built once, not once per client
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        async with contextlib.AsyncExitStack() as stack:
            for _ in range(n):
                client = httpx.AsyncClient(
                    verify=ssl_context, limits=limits, timeout=self._transport_timeout
                )
                free.put_nowait(await stack.enter_async_context(client))
            yield free

    @property
    def _transport_timeout(self) -> float:
        """httpx's per-phase timeouts: a safety net just beyond the call's total deadline, so
        the deadline is what ends a slow call, with one reason."""
        return self.options.timeout + 1.0

    def _clean(self, text: str) -> str:
        if self._api_key is not None and self._api_key.reveal():
            text = text.replace(self._api_key.reveal(), "***")
        return redact_text(text)

    def _format_refused(self, exc: Exception) -> bool:
        """Whether ``exc`` refuses ``response_format`` under ``"auto"`` (then remembered)."""
        if not (
            self.options.use_response_format == "auto"
            and isinstance(exc, ApiError)
            and exc.status_code in RESPONSE_FORMAT_REFUSED
        ):
            return False
        if not self._shared.response_format_refused:
            logger.info(
                "the judge endpoint refused response_format (%s); parsing plain JSON from now on",
                exc.status_code,
            )
        self._shared.response_format_refused = True
        return True

    def _wants_response_format(self) -> bool:
        mode = self.options.use_response_format
        return mode is True or (mode == "auto" and not self._shared.response_format_refused)

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
        shared, options = self._shared, self.options
        limit = 1 if shared.endpoint_down else options.attempts
        usage = _Usage()
        ids = [r.rule_id for r in rules]
        turns = {index for index, _, _ in task.turns}
        attempt, reason = 0, ""
        probing = False
        try:
            while attempt < limit:
                if shared.endpoint_down:
                    admitted = await gate.admit(task)
                    if admitted == "down":
                        return self._errors(task, rules, self._down(attempt, reason, gate), usage)
                    probing = admitted == "probe"
                attempt += 1
                with_format = self._wants_response_format()
                try:
                    content = await self._call(http, task, rules, with_format, usage)
                    answer = parse_answer(content, ids, turns)
                except MalformedAnswer as exc:
                    probing = self._settle(gate, task, probing, up=True)
                    reason = f"malformed answer: {exc}"
                    logger.debug(
                        "judge answer for %s malformed (attempt %d/%d): %s",
                        task.conversation_id,
                        attempt,
                        limit,
                        exc,
                    )
                    continue
                except (ApiError, httpx.HTTPError, CallDeadlineExceeded) as exc:
                    if with_format and self._format_refused(exc):
                        probing = self._settle(gate, task, probing, up=True)
                        attempt -= 1  # a negotiation, not an attempt
                        continue
                    reason = self._clean(f"{type(exc).__name__}: {exc}")
                    outage = is_outage(exc)
                    was_down = shared.endpoint_down
                    probing = self._settle(gate, task, probing, up=not outage, reason=reason)
                    if outage:
                        self._looks_down(reason)
                    logger.debug(
                        "judge call for %s failed (attempt %d/%d): %s",
                        task.conversation_id,
                        attempt,
                        limit,
                        reason,
                    )
                    if attempt >= limit or not retryable(exc):
                        break
                    if was_down and isinstance(exc, CallDeadlineExceeded):
                        break  # a deadline missed again while down: waiting more proves nothing
                    policy = options.policy
                    await policy.async_sleep(policy.wait_for(attempt, exc, shared.rng))
                    continue
                probing = self._settle(gate, task, probing, up=True)
                return self._verdicts(task, rules, answer, usage)
        finally:
            self._settle(gate, task, probing, up=False, reason=reason)  # cancelled mid-probe
        return self._errors(task, rules, f"judge error after {attempt} attempt(s): {reason}", usage)

    @staticmethod
    def _settle(
        gate: ProbeGate, task: JudgeTask, probing: bool, *, up: bool, reason: str = ""
    ) -> bool:
        """Tell ``gate`` how ``task``'s probe went (when it was probing); False from then on."""
        if probing:
            gate.settle(task, up, reason)
        return False

    def _looks_down(self, reason: str) -> None:
        if not self._shared.endpoint_down:
            self._shared.endpoint_down = True
            logger.warning(
                "the judge endpoint looks down (%s); one call probes it while the other tasks "
                "wait, and they fail fast if the probe fails",
                reason,
            )

    @staticmethod
    def _down(attempt: int, reason: str, gate: ProbeGate) -> str:
        said = reason or gate.reason
        return (
            f"judge error after {attempt} attempt(s): {said}; the endpoint is down (a probe "
            "just failed), so this task was not asked: grade again once it answers"
        )

    async def _call(
        self,
        http: httpx.AsyncClient,
        task: JudgeTask,
        rules: tuple[JudgedRule, ...],
        with_format: bool,
        usage: _Usage,
    ) -> str:
        body: dict[str, Any] = {
            "model": self._model,
            "messages": build_messages(task, rules),
            "temperature": self.options.temperature,
        }
        if with_format:
            body["response_format"] = response_format(rules)
        self._shared.add(calls=1)
        response = await post_chat(
            http,
            self._base_url,
            body,
            api_key=self._api_key,
            deadline=self.options.timeout,
            max_bytes=self.options.max_response_bytes,
            transport_timeout=self._transport_timeout,
        )
        self._shared.endpoint_down = False
        content, reported = content_of(response)
        usage.add(reported)
        self._shared.add(
            prompt_tokens=token_count(reported, "prompt_tokens"),
            completion_tokens=token_count(reported, "completion_tokens"),
        )
        return content

    def _verdicts(
        self,
        task: JudgeTask,
        rules: tuple[JudgedRule, ...],
        answer: Mapping[str, AnswerVerdict],
        usage: _Usage,
    ) -> list[JudgeVerdict]:
        prompt, completion = _split(usage.prompt, len(rules)), _split(usage.completion, len(rules))
        return [
            JudgeVerdict(
                conversation_id=task.conversation_id,
                rule_id=rule.rule_id,
                sample=task.sample,
                verdict=answer[rule.rule_id].verdict,
                rationale=answer[rule.rule_id].reason,
                evidence_turn=answer[rule.rule_id].evidence_turn,
                model=self._model,
                prompt_version=JUDGE_PROMPT_VERSION,
                prompt_tokens=prompt[n],
                completion_tokens=completion[n],
            )
            for n, rule in enumerate(rules)
        ]

    def _errors(
        self, task: JudgeTask, rules: tuple[JudgedRule, ...], reason: str, usage: _Usage
    ) -> list[JudgeVerdict]:
        self._shared.add(errors=len(rules))
        prompt, completion = _split(usage.prompt, len(rules)), _split(usage.completion, len(rules))
        return [
            JudgeVerdict(
                conversation_id=task.conversation_id,
                rule_id=rule.rule_id,
                sample=task.sample,
                verdict="error",
                rationale=reason,
                evidence_turn=None,
                model=self._model,
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


def _resolve_key(api_key: str | Secret | None) -> tuple[Secret | None, bool]:
    """The key as a :class:`Secret` and whether it came from ``EVALKIT_JUDGE_API_KEY``."""
    if isinstance(api_key, Secret):
        return api_key, False
    if api_key is not None and api_key.strip():
        return Secret(api_key.strip()), False
    raw = (os.environ.get(API_KEY_ENV) or "").strip()
    return (Secret(raw), True) if raw else (None, False)


def _check_unique_rules(tasks: Sequence[JudgeTask]) -> None:
    for task in tasks:
        ids = [r.rule_id for r in task.rules]
        if len(set(ids)) != len(ids):
            raise ValueError(f"task {task.conversation_id!r} repeats a rule id: {ids}")
