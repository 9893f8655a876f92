"""Where a judge's model, endpoint and key come from, its options, and its counters."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final, Literal

from .._chat import ChatEnv
from ..api import ConfigurationError, RetryPolicy

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "JUDGE_ENV",
    "MODEL_ENV",
    "JudgeNotConfigured",
    "JudgeOptions",
    "JudgeStats",
]

MODEL_ENV: Final = "EVALKIT_JUDGE_MODEL"
BASE_URL_ENV: Final = "EVALKIT_JUDGE_BASE_URL"
API_KEY_ENV: Final = "EVALKIT_JUDGE_API_KEY"


class JudgeNotConfigured(ConfigurationError):
    """No judge model or endpoint was given, by argument or environment."""


#: Where a judge's settings come from (the model, the endpoint and the key, all optional
#: arguments of :class:`~evalkit.grading.Judge`).
JUDGE_ENV: Final = ChatEnv(
    what="judge",
    model_env=MODEL_ENV,
    base_url_env=BASE_URL_ENV,
    api_key_env=API_KEY_ENV,
    options="JudgeOptions",
    example="Judge(model=..., base_url=...)",
    error=JudgeNotConfigured,
    logger="evalkit.grading.judge",
)


#: The judge's attempts per task when neither ``max_attempts`` nor a ``retry`` policy says.
DEFAULT_ATTEMPTS: Final = 3
#: What a :class:`RetryPolicy` says when nobody chose its attempts (then it never conflicts).
_POLICY_DEFAULT_ATTEMPTS: Final = RetryPolicy().max_attempts


@dataclass(frozen=True, slots=True)
class JudgeOptions:
    """How a :class:`~evalkit.grading.Judge` calls its endpoint.

    ``timeout``: the total seconds of one call (connect, send, and every byte of the answer);
    past it the call is abandoned, retried as the policy says, and finally an ``error``
    verdict with the reason. ``max_response_bytes``: the most of an answer read (as a stream;
    1 MiB by default); a longer answer is abandoned, so memory stays flat whatever an endpoint
    sends, and counts as a malformed answer. ``max_attempts`` bounds the calls per task
    (malformed answers and failed calls alike); ``retry`` is the project's retry policy, used
    for the waits between failed calls (backoff, ``Retry-After``) and for which errors are
    worth another try. Attempts come from ``max_attempts`` when given, else from ``retry``'s
    ``max_attempts`` when a policy is given (``RetryPolicy(max_attempts=10)`` means 10), else
    3; giving both with different numbers is an error (a policy left at its default number
    of attempts takes ``max_attempts``). ``use_response_format``: ``"auto"`` asks for a JSON
    schema and falls back to plain JSON when the endpoint answers 400 to it; ``True`` always
    asks; ``False`` never does.
    """

    concurrency: int = 16
    max_attempts: int | None = None
    timeout: float = 120.0
    temperature: float = 0.0
    use_response_format: Literal["auto"] | bool = "auto"
    retry: RetryPolicy | None = None
    max_response_bytes: int = 1 << 20

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.max_attempts is not None and self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")
        if not self.timeout > 0:
            raise ValueError(f"timeout must be positive, got {self.timeout}")
        if self.max_response_bytes < 1:
            raise ValueError(
                f"max_response_bytes must be at least 1, got {self.max_response_bytes}"
            )
        if self.use_response_format not in ("auto", True, False):
            raise ValueError(
                f"use_response_format must be 'auto', True or False, got {self.use_response_format!r}"
            )
        chosen = self.retry.max_attempts if self.retry is not None else None
        if self.max_attempts is not None and chosen not in (
            None,
            self.max_attempts,
            _POLICY_DEFAULT_ATTEMPTS,
        ):
            raise ValueError(
                f"max_attempts={self.max_attempts} and retry=RetryPolicy(max_attempts={chosen}) "
                "disagree: give the number of attempts once"
            )

    @property
    def attempts(self) -> int:
        """Calls per task at most: ``max_attempts``, else the retry policy's, else 3."""
        if self.max_attempts is not None:
            return self.max_attempts
        return self.retry.max_attempts if self.retry is not None else DEFAULT_ATTEMPTS

    @property
    def policy(self) -> RetryPolicy:
        """The retry policy in use, making :attr:`attempts` attempts (the given one, else the
        default)."""
        if self.retry is None:
            return RetryPolicy(max_attempts=self.attempts)
        return replace(self.retry, max_attempts=self.attempts)


@dataclass(frozen=True, slots=True)
class JudgeStats:
    """A snapshot of a judge's counters.

    ``calls``: HTTP requests sent (retries included); ``cache_hits``: rule verdicts read from
    the cache; ``errors``: rule verdicts that ended as ``error``; tokens as the endpoint reported.
    """

    calls: int = 0
    cache_hits: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
