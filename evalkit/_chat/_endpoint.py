"""One OpenAI-compatible chat-completions endpoint: where it is, its key, its limits, and the
one loop that asks it (the judge's, the proposer's, any later generator's).

Settings: what is not given comes from the user's environment variables
(:mod:`._settings`).

Every call has a total deadline (connect, send and every byte of the answer: an endpoint that
trickles one byte a second or never answers is abandoned then) and reads at most
``max_response_bytes`` of the answer as a stream (a longer one is abandoned unread), so memory
stays flat whatever an endpoint sends. :meth:`ChatEndpoint.aask` makes the attempts through the
one :class:`~evalkit.RetryPolicy` loop: a malformed answer is asked again at once, a failed call
after the policy's wait (``Retry-After`` honoured; 400, 401, 403 and 404 never retried), and
the breaker (:mod:`._breaker`) keeps an endpoint that looks down from being waited on by every
ask. Structured output: with ``response_format="auto"`` the first calls ask for the JSON schema
given; an endpoint that answers 400 (or 422) to that is remembered and asked without it.

The key is a :class:`~evalkit.api.Secret`: it goes only into the ``Authorization`` header; no
repr, log line, answer, exception or pickle holds it. A pickled endpoint whose key came from
the environment reads it from there again when unpickled; one given as an argument is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

import httpx

from .._util import redact_text
from ..api import USER_AGENT, ApiError, RetryDecision, RetryPolicy, Secret
from ._answers import MalformedAnswer
from ._breaker import Health, ProbeGate
from ._http import (
    RESPONSE_FORMAT_REFUSED,
    AnswerTooLarge,
    CallDeadlineExceeded,
    content_of,
    http_error,
    is_outage,
    post_bounded,
    retryable,
    token_count,
)
from ._settings import ChatEnv, resolve_endpoint, resolve_key

__all__ = ["ChatAnswer", "ChatCounts", "ChatEndpoint", "ChatLimits", "ChatRequest"]

T = TypeVar("T")
ResponseFormat = Literal["auto"] | bool


class ChatLimits(Protocol):
    """What an options object gives an endpoint (``JudgeOptions``, ``ProposerOptions``)."""

    @property
    def timeout(self) -> float: ...
    @property
    def max_response_bytes(self) -> int: ...
    @property
    def policy(self) -> RetryPolicy: ...


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One ask: the messages, the temperature, and the JSON schema to ask for (None: none)."""

    messages: list[dict[str, Any]]
    temperature: float = 0.0
    schema: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class ChatAnswer(Generic[T]):
    """What one ask got: ``value`` (None when no attempt gave a readable answer), the
    ``attempts`` made and HTTP ``calls`` sent (a format negotiation is a call, not an
    attempt), the ``malformed`` answers, each failed attempt's ``reasons`` (the key scrubbed),
    the tokens the endpoint reported over every attempt (None: it reported none), and
    ``held_back``: the breaker kept the last attempt from calling (the endpoint is down)."""

    value: T | None
    attempts: int
    calls: int
    malformed: int
    reasons: tuple[str, ...]
    prompt_tokens: int | None
    completion_tokens: int | None
    held_back: bool = False

    @property
    def reason(self) -> str:
        """The last failure's reason ("" when there was none)."""
        return self.reasons[-1] if self.reasons else ""


@dataclass(frozen=True, slots=True)
class ChatCounts:
    """An endpoint's counters: HTTP calls sent and the tokens reported."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _HeldBack(Exception):
    """The breaker kept an attempt from calling: the endpoint's probe just failed."""


@dataclass(eq=False)
class _State:
    """What an endpoint and its copies share at run time (never pickled)."""

    rng: random.Random
    health: Health = field(default_factory=Health)
    lock: threading.Lock = field(default_factory=threading.Lock)
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    format_refused: bool = False

    def add(self, calls: int = 0, prompt: int = 0, completion: int = 0) -> None:
        with self.lock:
            self.calls += calls
            self.prompt_tokens += prompt
            self.completion_tokens += completion


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


class ChatEndpoint:
    """An OpenAI-compatible ``POST {base_url}/chat/completions`` endpoint (module docstring).

    ``limits`` (read at every call) gives the deadline, the size cap and the retry policy
    (its ``max_attempts``: the attempts of one ask); ``response_format`` says whether to ask
    for the JSON schema of a request (``"auto"``: until the endpoint refuses it); an
    ``http_client`` given is used as is for every call and never closed.
    """

    def __init__(
        self,
        model: str | None,
        base_url: str | None,
        api_key: str | Secret | None,
        *,
        env: ChatEnv,
        limits: ChatLimits,
        response_format: ResponseFormat = False,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self.env = env
        self.limits = limits
        self.response_format = response_format
        self._model, self._base_url = resolve_endpoint(model, base_url, env)
        self._api_key, self._key_from_env = resolve_key(api_key, env)
        self._http_client = http_client
        self._state = _State(rng=limits.policy.rng())

    # ------------------------------------------------------------------ what it is

    @property
    def model(self) -> str:
        return self._model

    @property
    def base_url(self) -> str:
        """The base URL (``.../v1``); calls go to ``{base_url}/chat/completions``."""
        return self._base_url

    @property
    def has_api_key(self) -> bool:
        return self._api_key is not None

    @property
    def counts(self) -> ChatCounts:
        """A snapshot of the calls sent and the tokens reported (shared with copies)."""
        s = self._state
        with s.lock:
            return ChatCounts(s.calls, s.prompt_tokens, s.completion_tokens)

    @property
    def looks_down(self) -> bool:
        return self._state.health.down

    def __repr__(self) -> str:
        key = "<set>" if self._api_key is not None else "None"
        return (
            f"ChatEndpoint({self.env.what}, model={self._model!r}, base_url={self._base_url!r}, "
            f"api_key={key})"
        )

    def __getstate__(self) -> dict[str, Any]:
        return {
            "env": self.env,
            "limits": self.limits,
            "response_format": self.response_format,
            "model": self._model,
            "base_url": self._base_url,
            "key_from_env": self._key_from_env,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.env, self.limits = state["env"], state["limits"]
        self.response_format = state["response_format"]
        self._model, self._base_url = state["model"], state["base_url"]
        self._api_key, self._key_from_env = (
            resolve_key(None, self.env) if state["key_from_env"] else (None, False)
        )
        self._http_client = None
        self._state = _State(rng=self.limits.policy.rng())

    def clean(self, text: str) -> str:
        """``text`` with the key (and anything that looks like a secret) masked."""
        if self._api_key is not None and self._api_key.reveal():
            text = text.replace(self._api_key.reveal(), "***")
        return redact_text(text)

    def gate(self) -> ProbeGate:
        """A batch's probe gate (one per batch of concurrent asks, one event loop)."""
        return ProbeGate(interval=self.limits.timeout)

    @property
    def transport_timeout(self) -> float:
        """httpx's per-phase timeouts: a safety net just beyond the call's total deadline, so
        the deadline is what ends a slow call, with one reason."""
        return self.limits.timeout + 1.0

    @contextlib.asynccontextmanager
    async def connections(self, n: int) -> AsyncIterator[asyncio.Queue[httpx.AsyncClient]]:
        """``n`` HTTP slots: clients of one connection each, or the given client ``n`` times.

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
                    verify=ssl_context, limits=limits, timeout=self.transport_timeout
                )
                free.put_nowait(await stack.enter_async_context(client))
            yield free

    # ------------------------------------------------------------------ asking

    async def aask(
        self,
        http: httpx.AsyncClient,
        request: ChatRequest,
        read: Callable[[str], T],
        *,
        gate: ProbeGate | None = None,
        asker: object = None,
    ) -> ChatAnswer[T]:
        """Ask until ``read`` (which raises :class:`MalformedAnswer` for an answer that is not
        what was asked for) takes an answer, or the attempts are spent; never raises for a
        failed call or a malformed answer (they are counted in the :class:`ChatAnswer`).

        ``gate``: the batch's :class:`ProbeGate` (None: one of this ask's own); ``asker``:
        who asks, as the gate knows it (the task whose probe failed may probe again).
        """
        gate = gate if gate is not None else self.gate()
        health, policy = self._state.health, self.limits.policy
        usage = _Usage()
        reasons: list[str] = []
        tally = {"attempts": 0, "calls": 0, "malformed": 0}
        final = False  # a missed deadline after which waiting more proves nothing
        probing = False

        async def attempt(n: int) -> T:
            nonlocal final, probing
            if health.down:
                admitted = await gate.admit(asker)
                if admitted == "down":
                    raise _HeldBack
                probing = admitted == "probe"
            tally["attempts"] = n
            started = time.monotonic()
            try:
                content = await self._complete(http, request, usage, tally)
                value = read(content)
            except MalformedAnswer as exc:
                probing = _settle(gate, asker, probing, up=True)
                tally["malformed"] += 1
                reasons.append(f"malformed answer: {exc}")
                self._log_failure(n, reasons[-1])
                raise
            except (ApiError, httpx.HTTPError, CallDeadlineExceeded) as exc:
                reason = self.clean(f"{type(exc).__name__}: {exc}")
                reasons.append(reason)
                outage = is_outage(exc)
                was_down = health.down
                probing = _settle(gate, asker, probing, up=not outage, reason=reason)
                if isinstance(exc, CallDeadlineExceeded):
                    silent = health.silent_since(started)
                    if silent:  # the missed deadline is itself the failed probe
                        gate.settle(asker, False, reason)
                    final = silent or was_down
                if outage:
                    self._looks_down(reason)
                self._log_failure(n, reason)
                raise
            probing = _settle(gate, asker, probing, up=True)
            return value

        def decide(exc: Exception) -> RetryDecision:
            if isinstance(exc, MalformedAnswer):
                return "now"
            if isinstance(exc, _HeldBack) or final or not retryable(exc):
                return "stop"
            return "wait"

        value: T | None = None
        held_back = False
        try:
            value = await policy.arun(
                attempt,
                decide=decide,
                attempts=1 if health.down else policy.max_attempts,
                rng=self._state.rng,
            )
        except _HeldBack:
            held_back = True
        except (MalformedAnswer, ApiError, httpx.HTTPError, CallDeadlineExceeded):
            pass  # counted in reasons
        finally:
            _settle(gate, asker, probing, up=False, reason=reasons[-1] if reasons else "")
        return ChatAnswer(
            value=value,
            attempts=tally["attempts"],
            calls=tally["calls"],
            malformed=tally["malformed"],
            reasons=tuple(reasons),
            prompt_tokens=usage.prompt,
            completion_tokens=usage.completion,
            held_back=held_back,
        )

    async def _complete(
        self,
        http: httpx.AsyncClient,
        request: ChatRequest,
        usage: _Usage,
        tally: dict[str, int],
    ) -> str:
        """One attempt's content: a call, and a second without ``response_format`` when the
        endpoint refuses it (a negotiation, not another attempt)."""
        body: dict[str, Any] = {
            "model": self._model,
            "messages": request.messages,
            "temperature": request.temperature,
        }
        with_format = request.schema is not None and self._wants_response_format()
        try:
            tally["calls"] += 1
            response = await self._post(
                http, {**body, "response_format": request.schema} if with_format else body
            )
        except ApiError as exc:
            if not (with_format and self._format_refused(exc)):
                raise
            tally["calls"] += 1
            response = await self._post(http, body)
        content, reported = content_of(response)
        usage.add(reported)
        self._state.add(
            prompt=token_count(reported, "prompt_tokens"),
            completion=token_count(reported, "completion_tokens"),
        )
        return content

    async def _post(self, http: httpx.AsyncClient, body: Mapping[str, Any]) -> httpx.Response:
        """POST ``body`` within the deadline, reading at most ``max_response_bytes``; the
        status's :class:`~evalkit.api.ApiError` for an error answer."""
        limits, env = self.limits, self.env
        headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
        if self._api_key is not None:
            headers["Authorization"] = f"Bearer {self._api_key.reveal()}"
        request = http.build_request(
            "POST",
            f"{self._base_url}/chat/completions",
            content=json.dumps(body, ensure_ascii=False).encode(),
            headers=headers,
            timeout=self.transport_timeout,
        )
        self._state.add(calls=1)
        health = self._state.health
        try:
            async with asyncio.timeout(limits.timeout):
                response = await post_bounded(
                    http, request, limits.max_response_bytes, f"{env.options}.max_response_bytes"
                )
        except TimeoutError:
            raise CallDeadlineExceeded(limits.timeout, env.what, f"{env.options}.timeout") from None
        except AnswerTooLarge:
            health.answered(ok=True)
            raise
        health.answered(ok=response.status_code < 400)
        if response.status_code >= 400:
            raise http_error(response)
        return response

    # ------------------------------------------------------------------ internals

    def _wants_response_format(self) -> bool:
        mode = self.response_format
        return mode is True or (mode == "auto" and not self._state.format_refused)

    def _format_refused(self, exc: ApiError) -> bool:
        """Whether ``exc`` refuses ``response_format`` under ``"auto"`` (then remembered)."""
        if not (self.response_format == "auto" and exc.status_code in RESPONSE_FORMAT_REFUSED):
            return False
        if not self._state.format_refused:
            logging.getLogger(self.env.logger).info(
                "the %s endpoint refused response_format (%s); parsing plain JSON from now on",
                self.env.what,
                exc.status_code,
            )
        self._state.format_refused = True
        return True

    def _looks_down(self, reason: str) -> None:
        health = self._state.health
        with health.lock:
            was, health.down = health.down, True
        if not was:
            logging.getLogger(self.env.logger).warning(
                "the %s endpoint looks down (%s); one call probes it while the other asks "
                "wait, and they fail fast if the probe fails",
                self.env.what,
                reason,
            )

    def _log_failure(self, attempt: int, reason: str) -> None:
        logging.getLogger(self.env.logger).debug(
            "%s call failed (attempt %d/%d): %s",
            self.env.what,
            attempt,
            self.limits.policy.max_attempts,
            reason,
        )


def _settle(gate: ProbeGate, asker: object, probing: bool, *, up: bool, reason: str = "") -> bool:
    """Tell ``gate`` how ``asker``'s probe went (when it was probing); False from then on."""
    if probing:
        gate.settle(asker, up, reason)
    return False
