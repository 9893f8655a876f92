"""The judge's on-disk cache: re-judging makes no calls, errors are not cached, keys are exact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.grading._judge import Judge
from evalkit.grading._judge_cache import JudgeCache, cache_key
from evalkit.grading._judge_types import JUDGE_PROMPT_VERSION, JudgeTask, JudgeVerdict

from .fake_llm import read_prompt
from .helpers import MODEL, Endpoint, make_judge, options, task


def files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


async def test_a_second_run_makes_zero_calls(endpoint: Endpoint, tmp_path: Path) -> None:
    tasks = [task(f"c{i}", "r1", "r2", sample=i % 2) for i in range(6)]
    first = await make_judge(endpoint, cache_dir=tmp_path).ajudge(tasks)
    assert endpoint.fake.calls == 6
    judge = make_judge(endpoint, cache_dir=tmp_path)
    second = await judge.ajudge(tasks)
    assert endpoint.fake.calls == 6
    assert judge.stats.calls == 0
    assert judge.stats.cache_hits == 12
    assert all(v.cached for v in second)
    strip = [(v.conversation_id, v.rule_id, v.sample, v.verdict, v.rationale) for v in first]
    assert strip == [
        (v.conversation_id, v.rule_id, v.sample, v.verdict, v.rationale) for v in second
    ]
    # the tokens of the call that made a verdict travel with it
    assert [v.prompt_tokens for v in first] == [v.prompt_tokens for v in second]


async def test_entries_are_sharded_json_files(endpoint: Endpoint, tmp_path: Path) -> None:
    t = task("c1", "r1")
    await make_judge(endpoint, cache_dir=tmp_path).ajudge([t])
    key = cache_key(t.transcript_hash, "hash-r1", MODEL, JUDGE_PROMPT_VERSION, 0)
    path = tmp_path / key[:2] / f"{key}.json"
    assert json.loads(path.read_text())["verdict"] == "pass"
    assert files(tmp_path) == [path]  # no temp file left


async def test_errors_are_not_cached(endpoint: Endpoint, tmp_path: Path) -> None:
    endpoint.fake.behaviour = "garbage"
    judge = make_judge(endpoint, cache_dir=tmp_path)
    failed = await judge.ajudge([task("c1", "r1")])
    assert failed[0].verdict == "error"
    assert not files(tmp_path)
    endpoint.fake.behaviour = "valid"
    calls = endpoint.fake.calls
    again = await judge.ajudge([task("c1", "r1")])
    assert again[0].verdict == "pass"
    assert not again[0].cached
    assert endpoint.fake.calls == calls + 1


async def test_a_partly_cached_task_asks_only_for_the_rest(
    endpoint: Endpoint, tmp_path: Path
) -> None:
    judge = make_judge(endpoint, cache_dir=tmp_path)
    await judge.ajudge([task("c1", "r1")])
    verdicts = await judge.ajudge([task("c1", "r1", "r2", "r3")])
    assert [v.cached for v in verdicts] == [True, False, False]
    asked = [r["rule_id"] for r in read_prompt(endpoint.fake.bodies[-1])["rules"]]
    assert asked == ["r2", "r3"]
    assert endpoint.fake.calls == 2


CHANGED_TASKS = {
    "transcript": JudgeTask("c1", "other-hash", task("c1").turns, task("c1", "r1").rules),
    "rule": task("c1", "r9"),
    "sample": task("c1", "r1", sample=1),
}


@pytest.mark.parametrize("change", sorted(CHANGED_TASKS))
async def test_a_changed_transcript_rule_or_sample_misses_the_cache(
    endpoint: Endpoint, tmp_path: Path, change: str
) -> None:
    judge = make_judge(endpoint, cache_dir=tmp_path)
    await judge.ajudge([task("c1", "r1")])
    verdicts = await judge.ajudge([CHANGED_TASKS[change]])
    assert not verdicts[0].cached
    assert endpoint.fake.calls == 2


async def test_another_model_misses_the_cache(endpoint: Endpoint, tmp_path: Path) -> None:
    await make_judge(endpoint, cache_dir=tmp_path).ajudge([task("c1", "r1")])
    other = Judge("another-model", endpoint.base_url, options=options(), cache_dir=tmp_path)
    verdicts = await other.ajudge([task("c1", "r1")])
    assert not verdicts[0].cached
    assert verdicts[0].model == "another-model"
    assert endpoint.fake.calls == 2


def test_key_depends_on_every_component_and_is_unambiguous() -> None:
    parts = ("th", "rh", "m", JUDGE_PROMPT_VERSION, 0)
    keys = {
        cache_key(*parts),
        cache_key("th2", *parts[1:]),
        cache_key("th", "rh2", *parts[2:]),
        cache_key("th", "rh", "m2", *parts[3:]),
        cache_key("th", "rh", "m", "judge-prompt/2", 0),
        cache_key("th", "rh", "m", JUDGE_PROMPT_VERSION, 1),
        cache_key("t", "hrh", "m", JUDGE_PROMPT_VERSION, 0),  # no concatenation collisions
    }
    assert len(keys) == 7
    assert all(len(k) == 64 for k in keys)


def _verdict(verdict: str = "pass") -> JudgeVerdict:
    return JudgeVerdict("c", "r", 0, verdict, "why", 2, MODEL, JUDGE_PROMPT_VERSION, 10, 3)  # type: ignore[arg-type]


def test_an_unreadable_entry_is_a_miss(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    cache.put("ab" + "0" * 62, _verdict())
    assert cache.get("ab" + "0" * 62) is not None
    for garbage in (b"{truncated", b'{"verdict": "error", "rationale": "x"}', b"[]", b""):
        cache.path_for("ab" + "0" * 62).write_bytes(garbage)
        assert cache.get("ab" + "0" * 62) is None


def test_error_verdicts_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="error"):
        JudgeCache(tmp_path).put("cd" + "0" * 62, _verdict("error"))


async def test_with_cache_dir_copies_and_shares_counters(
    endpoint: Endpoint, tmp_path: Path
) -> None:
    judge = make_judge(endpoint)
    cached = judge.with_cache_dir(tmp_path)
    assert judge.cache_dir is None
    assert cached.cache_dir == tmp_path
    assert cached.model == judge.model
    await cached.ajudge([task("c1", "r1")])
    await cached.ajudge([task("c1", "r1")])
    assert judge.stats == cached.stats
    assert (judge.stats.calls, judge.stats.cache_hits) == (1, 1)
