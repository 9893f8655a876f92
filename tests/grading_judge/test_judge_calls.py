"""The judge against a real OpenAI-compatible server on loopback: answers, failures, fallback."""

from __future__ import annotations

import json
import socket

import httpx
import pytest

from evalkit.api import RetryPolicy
from evalkit.grading._judge import Judge
from evalkit.grading._judge_types import JUDGE_PROMPT_VERSION

from .fake_llm import USAGE, read_prompt
from .helpers import MODEL, Endpoint, make_judge, options, task


async def test_valid_answers_give_one_verdict_per_rule_in_order(endpoint: Endpoint) -> None:
    judge = make_judge(endpoint)
    tasks = [task("c1", "r1", "r2"), task("c2", "r3"), task("c3", "r1", "r2", "r3", sample=2)]
    verdicts = await judge.ajudge(tasks)
    assert [(v.conversation_id, v.rule_id, v.sample) for v in verdicts] == [
        ("c1", "r1", 0),
        ("c1", "r2", 0),
        ("c2", "r3", 0),
        ("c3", "r1", 2),
        ("c3", "r2", 2),
        ("c3", "r3", 2),
    ]
    assert {v.verdict for v in verdicts} == {"pass"}
    assert all(v.evidence_turn == 1 and v.rationale == "seen" for v in verdicts)
    assert all(v.model == MODEL and v.prompt_version == JUDGE_PROMPT_VERSION for v in verdicts)
    assert not any(v.cached for v in verdicts)
    assert endpoint.fake.calls == 3
    assert judge.stats.calls == 3
    assert judge.stats.errors == 0


async def test_fail_and_na_verdicts_come_through(endpoint: Endpoint) -> None:
    endpoint.fake.verdict = "fail"
    [failed] = await make_judge(endpoint).ajudge([task("c1", "r1")])
    endpoint.fake.verdict = "na"
    [not_applicable] = await make_judge(endpoint).ajudge([task("c1", "r1")])
    assert (failed.verdict, not_applicable.verdict) == ("fail", "na")


async def test_request_is_temperature_zero_with_a_schema_and_the_wire_format(
    endpoint: Endpoint,
) -> None:
    await make_judge(endpoint).ajudge([task("c1", "r1", "r2")])
    [body] = endpoint.fake.bodies
    assert body["model"] == MODEL
    assert body["temperature"] == 0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    schema = body["response_format"]
    assert schema["type"] == "json_schema"
    items = schema["json_schema"]["schema"]["properties"]["verdicts"]["items"]
    assert items["properties"]["rule_id"]["enum"] == ["r1", "r2"]
    payload = read_prompt(body)
    assert payload["transcript"][0] == {"turn": 1, "role": "agent", "text": "Hello from c1"}
    assert [r["rule_id"] for r in payload["rules"]] == ["r1", "r2"]
    assert "Authorization" not in endpoint.fake.headers[0]
    assert "authorization" not in endpoint.fake.headers[0]


async def test_token_usage_is_split_evenly_over_the_rules_of_a_call(endpoint: Endpoint) -> None:
    judge = make_judge(endpoint)
    verdicts = await judge.ajudge([task("c1", "r1", "r2", "r3")])
    prompt = [v.prompt_tokens for v in verdicts]
    completion = [v.completion_tokens for v in verdicts]
    assert sum(p or 0 for p in prompt) == USAGE["prompt_tokens"]
    assert sum(c or 0 for c in completion) == USAGE["completion_tokens"]
    assert max(p or 0 for p in prompt) - min(p or 0 for p in prompt) <= 1
    assert judge.stats.prompt_tokens == USAGE["prompt_tokens"]


async def test_garbage_is_retried_a_bounded_number_of_times_then_error(endpoint: Endpoint) -> None:
    endpoint.fake.behaviour = "garbage"
    judge = make_judge(endpoint, options(max_attempts=3))
    verdicts = await judge.ajudge([task("c1", "r1", "r2")])
    assert endpoint.fake.calls == 3
    assert [v.verdict for v in verdicts] == ["error", "error"]
    assert all("malformed" in v.rationale and "3 attempt" in v.rationale for v in verdicts)
    assert judge.stats.errors == 2
    # the tokens spent on the malformed answers are still accounted for
    assert sum(v.prompt_tokens or 0 for v in verdicts) == 3 * USAGE["prompt_tokens"]


@pytest.mark.parametrize("behaviour", ["wrong_ids", "not_json"])
async def test_other_malformed_answers_become_errors(endpoint: Endpoint, behaviour: str) -> None:
    endpoint.fake.behaviour = behaviour
    verdicts = await make_judge(endpoint, options(max_attempts=2)).ajudge([task("c1", "r1", "r2")])
    assert endpoint.fake.calls == 2
    assert {v.verdict for v in verdicts} == {"error"}


async def test_a_malformed_answer_then_a_valid_one_succeeds(endpoint: Endpoint) -> None:
    endpoint.fake.script = ["garbage", "wrong_ids"]
    verdicts = await make_judge(endpoint).ajudge([task("c1", "r1", "r2")])
    assert [v.verdict for v in verdicts] == ["pass", "pass"]
    assert endpoint.fake.calls == 3


async def test_500s_make_errors_and_later_tasks_fail_fast(endpoint: Endpoint) -> None:
    endpoint.fake.behaviour = "error_500"
    judge = make_judge(endpoint, options(max_attempts=3, concurrency=1))
    verdicts = await judge.ajudge([task(f"c{i}", "r1") for i in range(5)])
    assert {v.verdict for v in verdicts} == {"error"}
    assert all("500" in v.rationale for v in verdicts)
    # the first task tries three times (its retries probe the endpoint that looks down); the
    # probe failed, so the other tasks fail fast without a call (issue 33, item 5)
    assert endpoint.fake.calls == 3
    endpoint.fake.behaviour = "valid"
    recovered = await judge.ajudge([task("c9", "r1"), task("c10", "r1")])
    assert [v.verdict for v in recovered] == ["pass", "pass"]


async def test_connection_refused_makes_errors_and_returns_normally() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    opts = options(max_attempts=2, concurrency=1)
    judge = Judge(MODEL, f"http://127.0.0.1:{port}/v1", options=opts)
    verdicts = await judge.ajudge([task("c1", "r1", "r2"), task("c2", "r1")])
    assert [v.verdict for v in verdicts] == ["error"] * 3
    assert all("ConnectError" in v.rationale for v in verdicts)
    assert judge.stats.calls == 2  # c2 fails fast: c1's probe of the endpoint failed
    assert judge.stats.errors == 3


async def test_unauthorized_is_not_retried(endpoint: Endpoint) -> None:
    endpoint.fake.behaviour = "unauthorized"
    verdicts = await make_judge(endpoint, options(max_attempts=3)).ajudge([task("c1", "r1")])
    assert endpoint.fake.calls == 1
    assert verdicts[0].verdict == "error"
    assert "401" in verdicts[0].rationale


async def test_rate_limit_waits_retry_after_between_attempts(endpoint: Endpoint) -> None:
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    endpoint.fake.script = ["rate_limited", "rate_limited"]
    retry = RetryPolicy(async_sleep=record)
    judge = make_judge(endpoint, options(retry=retry, max_attempts=3))
    verdicts = await judge.ajudge([task("c1", "r1")])
    assert verdicts[0].verdict == "pass"
    assert waits == [7.0, 7.0]
    assert endpoint.fake.calls == 3


async def test_a_slow_answer_times_out_into_an_error(endpoint: Endpoint) -> None:
    """A deadline missed while the endpoint answered nothing is not waited out again: the
    endpoint is down as far as anyone can tell (a retry would cost a second deadline)."""
    endpoint.fake.delay = 1.0
    judge = make_judge(endpoint, options(timeout=0.2, max_attempts=2))
    verdicts = await judge.ajudge([task("c1", "r1")])
    assert verdicts[0].verdict == "error"
    assert "within the 0.2 s deadline of a judge call" in verdicts[0].rationale
    assert "after 1 attempt(s)" in verdicts[0].rationale
    assert judge.stats.calls == 1


async def test_a_deadline_missed_while_others_are_answered_is_retried(endpoint: Endpoint) -> None:
    """One slow call of an endpoint that answers the others is a slow call, not an outage:
    it is retried as the policy says (and the retry probes the endpoint)."""
    endpoint.fake.stalls = {"Hello from c1": 1}
    endpoint.fake.stall_s = 3.0
    judge = make_judge(endpoint, options(timeout=0.5, max_attempts=2, concurrency=2))
    verdicts = await judge.ajudge([task("c1", "r1"), task("c2", "r1")])
    assert [v.verdict for v in verdicts] == ["pass", "pass"]
    assert judge.stats.calls == 3  # c1 twice (the first missed its deadline), c2 once


async def test_400_to_response_format_falls_back_to_plain_json_and_is_remembered(
    endpoint: Endpoint,
) -> None:
    endpoint.fake.behaviour = "no_response_format"
    judge = make_judge(endpoint, options(concurrency=1))
    verdicts = await judge.ajudge([task("c1", "r1"), task("c2", "r1", "r2")])
    assert [v.verdict for v in verdicts] == ["pass"] * 3
    with_format = ["response_format" in b for b in endpoint.fake.bodies]
    assert with_format == [True, False, False]
    await judge.ajudge([task("c3", "r1")])
    assert "response_format" not in endpoint.fake.bodies[-1]


async def test_response_format_false_never_asks_and_true_does_not_fall_back(
    endpoint: Endpoint,
) -> None:
    endpoint.fake.behaviour = "no_response_format"
    plain = make_judge(endpoint, options(use_response_format=False))
    assert [v.verdict for v in await plain.ajudge([task("c1", "r1")])] == ["pass"]
    assert "response_format" not in endpoint.fake.bodies[-1]
    forced = make_judge(endpoint, options(use_response_format=True, max_attempts=3))
    [verdict] = await forced.ajudge([task("c1", "r1")])
    assert verdict.verdict == "error"
    assert "400" in verdict.rationale
    assert all("response_format" in b for b in endpoint.fake.bodies[1:])
    assert endpoint.fake.calls == 2  # a 400 is not retried


async def test_concurrency_bound_is_respected(endpoint: Endpoint) -> None:
    endpoint.fake.delay = 0.15
    judge = make_judge(endpoint, options(concurrency=3))
    verdicts = await judge.ajudge([task(f"c{i}", "r1") for i in range(12)])
    assert len(verdicts) == 12
    assert endpoint.fake.max_in_flight == 3


def test_sync_judge_works_in_plain_code(endpoint: Endpoint) -> None:
    verdicts = make_judge(endpoint).judge([task("c1", "r1")])
    assert verdicts[0].verdict == "pass"


async def test_sync_judge_works_inside_a_running_loop(endpoint: Endpoint) -> None:
    judge = make_judge(endpoint)
    first = judge.judge([task("c1", "r1")])
    second = judge.judge([task("c2", "r1")])  # a second loop: the bound is per loop
    assert [first[0].verdict, second[0].verdict] == ["pass", "pass"]


async def test_empty_input_and_ruleless_tasks_make_no_call(endpoint: Endpoint) -> None:
    judge = make_judge(endpoint)
    assert await judge.ajudge([]) == []
    assert await judge.ajudge([task("c1")]) == []
    assert endpoint.fake.calls == 0


async def test_a_task_repeating_a_rule_id_is_refused(endpoint: Endpoint) -> None:
    with pytest.raises(ValueError, match="repeats a rule id"):
        await make_judge(endpoint).ajudge([task("c1", "r1", "r1")])


async def test_backticks_in_the_transcript_cannot_break_the_fence(endpoint: Endpoint) -> None:
    base = task("c1", "r1")
    tricky = type(base)(
        "c1", "th", ((1, "agent", "code ```json\n{} ``` end"), (2, "caller", "ok")), base.rules
    )
    verdicts = await make_judge(endpoint).ajudge([tricky])
    assert verdicts[0].verdict == "pass"
    payload = read_prompt(endpoint.fake.bodies[0])
    assert payload["transcript"][0]["text"] == "code ```json\n{} ``` end"
    assert json.dumps(payload)  # round-trips


async def test_a_callers_http_client_is_used_and_left_open(endpoint: Endpoint) -> None:
    async with httpx.AsyncClient(headers={"X-Caller": "yes"}) as http:
        judge = Judge(MODEL, endpoint.base_url, options=options(), http_client=http)
        verdicts = await judge.ajudge([task("c1", "r1"), task("c2", "r1")])
        assert [v.verdict for v in verdicts] == ["pass", "pass"]
        assert not http.is_closed
    assert all(h.get("x-caller") == "yes" for h in endpoint.fake.headers)
