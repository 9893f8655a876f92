"""Configuration from arguments and ``EVALKIT_JUDGE_*``, and the key kept secret everywhere."""

from __future__ import annotations

import logging
import pickle

import pytest

from evalkit.api import ConfigurationError, EvalkitError, RetryPolicy
from evalkit.grading._judge import Judge
from evalkit.grading._judge_config import JudgeNotConfigured, JudgeOptions, JudgeStats
from evalkit.grading._judge_types import JudgeBackend

from .helpers import MODEL, Endpoint, options, task

KEY = "sk-judge-SECRET-do-not-leak-9876"


def test_from_env_reads_model_base_url_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_JUDGE_MODEL", "env-model")
    monkeypatch.setenv("EVALKIT_JUDGE_BASE_URL", "http://127.0.0.1:9/v1/")
    monkeypatch.setenv("EVALKIT_JUDGE_API_KEY", KEY)
    judge = Judge.from_env()
    assert (judge.model, judge.base_url, judge.has_api_key) == (
        "env-model",
        "http://127.0.0.1:9/v1",
        True,
    )


def test_arguments_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_JUDGE_MODEL", "env-model")
    monkeypatch.setenv("EVALKIT_JUDGE_BASE_URL", "http://127.0.0.1:9/v1")
    judge = Judge("arg-model", "http://127.0.0.1:10/v1/chat/completions")
    assert (judge.model, judge.base_url, judge.has_api_key) == (
        "arg-model",
        "http://127.0.0.1:10/v1",
        False,
    )


@pytest.mark.parametrize(
    ("env", "missing"),
    [
        ({}, ["EVALKIT_JUDGE_MODEL", "EVALKIT_JUDGE_BASE_URL"]),
        ({"EVALKIT_JUDGE_MODEL": "m"}, ["EVALKIT_JUDGE_BASE_URL"]),
        ({"EVALKIT_JUDGE_BASE_URL": "http://127.0.0.1:9/v1"}, ["EVALKIT_JUDGE_MODEL"]),
    ],
    ids=["nothing", "no-url", "no-model"],
)
def test_not_configured_names_what_to_set(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], missing: list[str]
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(JudgeNotConfigured) as info:
        Judge.from_env()
    assert isinstance(info.value, EvalkitError)
    assert isinstance(info.value, ConfigurationError)
    for name in missing:
        assert name in str(info.value)
    assert "EVALKIT_JUDGE_API_KEY" in str(info.value)


def test_a_non_http_base_url_is_refused() -> None:
    with pytest.raises(JudgeNotConfigured, match="http"):
        Judge("m", "localhost:8000/v1")


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        JudgeOptions(concurrency=0)
    with pytest.raises(ValueError, match="max_attempts"):
        JudgeOptions(max_attempts=0)
    with pytest.raises(ValueError, match="use_response_format"):
        JudgeOptions(use_response_format="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout"):
        JudgeOptions(timeout=0)
    with pytest.raises(ValueError, match="max_response_bytes"):
        JudgeOptions(max_response_bytes=0)
    assert JudgeOptions().temperature == 0
    assert JudgeOptions().concurrency == 16
    assert JudgeOptions().max_response_bytes == 1024 * 1024


def test_attempts_given_anywhere_are_honoured_and_a_disagreement_is_refused() -> None:
    assert JudgeOptions().attempts == 3
    assert JudgeOptions(max_attempts=5).attempts == 5
    assert JudgeOptions(retry=RetryPolicy(max_attempts=10)).attempts == 10
    assert JudgeOptions(retry=RetryPolicy(max_attempts=10), max_attempts=10).attempts == 10
    # a policy that did not choose its attempts (its default) takes max_attempts
    assert JudgeOptions(retry=RetryPolicy.no_wait(), max_attempts=2).attempts == 2
    with pytest.raises(
        ValueError, match=r"max_attempts=2 and retry=RetryPolicy\(max_attempts=10\)"
    ):
        JudgeOptions(retry=RetryPolicy(max_attempts=10), max_attempts=2)


async def test_a_retry_policy_of_10_attempts_makes_10_calls(endpoint: Endpoint) -> None:
    """Issue 21: ``JudgeOptions(retry=RetryPolicy(max_attempts=10))`` used to make 3."""
    endpoint.fake.behaviour = "error_500"
    opts = JudgeOptions(retry=RetryPolicy.no_wait(max_attempts=10), timeout=10.0)
    verdicts = await Judge(MODEL, endpoint.base_url, options=opts).ajudge([task("c1", "r1")])
    assert verdicts[0].verdict == "error"
    assert "after 10 attempt(s)" in verdicts[0].rationale
    assert endpoint.fake.calls == 10


def test_stats_is_a_frozen_snapshot() -> None:
    judge = Judge("m", "http://127.0.0.1:9/v1")
    stats = judge.stats
    assert stats == JudgeStats()
    with pytest.raises(AttributeError):
        stats.calls = 3  # type: ignore[misc]


async def test_the_key_is_sent_as_a_bearer_token(
    endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    await Judge(MODEL, endpoint.base_url, KEY, options=options()).ajudge([task("c1", "r1")])
    monkeypatch.setenv("EVALKIT_JUDGE_API_KEY", "from-env-key")
    await Judge(MODEL, endpoint.base_url, options=options()).ajudge([task("c1", "r1")])
    auth = [h.get("authorization") for h in endpoint.fake.headers]
    assert auth == [f"Bearer {KEY}", "Bearer from-env-key"]


async def test_the_key_never_shows_in_repr_logs_verdicts_or_pickles(
    endpoint: Endpoint, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    judge = Judge(MODEL, endpoint.base_url, KEY, options=options(max_attempts=2))
    endpoint.fake.behaviour = "unauthorized"  # the server echoes the Authorization header
    verdicts = await judge.ajudge([task("c1", "r1")])
    endpoint.fake.behaviour = "error_500"
    verdicts += await judge.ajudge([task("c2", "r1")])
    assert [v.verdict for v in verdicts] == ["error", "error"]
    assert endpoint.fake.headers[0]["authorization"] == f"Bearer {KEY}"  # it was really sent
    texts = [repr(judge), str(judge), repr(vars(judge)), repr(judge.options)]
    texts += [repr(v) for v in verdicts]
    texts += [r.getMessage() for r in caplog.records]
    assert caplog.records  # retries and errors were logged
    blob = pickle.dumps(judge)
    for text in texts:
        assert KEY not in text
        assert "SECRET" not in text
    assert KEY.encode() not in blob
    assert b"SECRET" not in blob


def test_unpickling_rereads_an_environment_key_and_drops_an_argument_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    given = Judge("m", "http://127.0.0.1:9/v1", KEY, options=JudgeOptions(concurrency=5))
    restored = pickle.loads(pickle.dumps(given))
    assert not restored.has_api_key
    assert restored.options.concurrency == 5
    monkeypatch.setenv("EVALKIT_JUDGE_API_KEY", KEY)
    from_env = Judge("m", "http://127.0.0.1:9/v1")
    blob = pickle.dumps(from_env)
    assert KEY.encode() not in blob
    assert pickle.loads(blob).has_api_key


def test_options_with_a_retry_policy_pickle() -> None:
    judge = Judge("m", "http://127.0.0.1:9/v1", options=JudgeOptions(retry=RetryPolicy(seed=3)))
    assert pickle.loads(pickle.dumps(judge)).options.retry.seed == 3


def test_a_judge_is_a_judge_backend() -> None:
    backend: JudgeBackend = Judge("m", "http://127.0.0.1:9/v1")  # checked by mypy
    assert backend.model == "m"
