"""Benchmark: deterministic grading of a large run vs merely loading its turns.

Targets (issue 9): 100k conversations / ~1M turns graded with the demo scorecard's
deterministic rules (``judge=False``) in under 20 s, and at most 3x the time to load the turns.

The run is synthesised straight into parquet with the store's schemas (an empty run made by
``RunWriter``, then its two tables replaced, keeping the freshness stamp), from phrase pools
like the emulator's: Nastaliq agents (some drifting to Roman Urdu), Roman Urdu callers, names
spoken in Urdu script for Roman contact values, a few unresolved tokens and repeats.

Usage::

    python benchmarks/bench_grading.py                       # 100k conversations
    python benchmarks/bench_grading.py --conversations 20000 --repeat 3
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from evalkit.grading import (
    JUDGE_PROMPT_VERSION,
    GradeOptions,
    JudgeTask,
    JudgeVerdict,
    Scorecard,
    grade_run,
)
from evalkit.store import (
    CONVERSATIONS_SCHEMA,
    TURNS_SCHEMA,
    Run,
    RunWriter,
    identity_hash,
    load_run,
)

ROOT = Path(__file__).resolve().parent.parent
CONTACTS = [
    {"customer_name": "Ayesha Khan", "clinic_name": "Shifa Clinic"},
    {"customer_name": "Bilal Ahmed", "clinic_name": "Shifa Clinic"},
    {"customer_name": "Fatima Noor", "clinic_name": "Al-Noor Hospital"},
]
URDU_NAMES = ["عائشہ خان", "بلال احمد", "فاطمہ نور"]
URDU_CLINICS = ["شیفا کلینک", "شیفا کلینک", "ال نور ہسپتال"]
AGENT_UR = [
    "السلام علیکم {name}، میں {clinic} سے ثنا بات کر رہی ہوں۔",
    "آپ کی اپائنٹمنٹ ۱۴ نومبر کو شام 5 بجے ڈاکٹر فاروق کے ساتھ ہے۔ کیا آپ آئیں گی؟",
    "جی بہت شکریہ، ہم آپ کا انتظار کریں گے۔",
    "معذرت، میں دوبارہ بتاتی ہوں: آپ کی اپائنٹمنٹ کل ہے۔",
    "شکریہ، اللہ حافظ۔",
    "آپ JazzCash یا بینک سے فیس ادا کر سکتی ہیں۔",
    "آپ کا کمرہ نمبر {{room_number}} ہے۔",
]
AGENT_RU = [
    "Assalam o alaikum {name}, main {clinic} se Sana baat kar rahi hoon.",
    "Aap ki appointment 14 November ko 5 baje hai. Kya aap aayengi?",
    "Bohat shukriya, Allah hafiz.",
]
CALLER = [
    "جی ہاں",
    "Jee, bol rahi hoon",
    "Haan theek hai",
    "Dobara bataiye?",
    "Nahi, main busy hoon",
    "ok shukriya",
]


def _texts(rng: np.random.Generator, n_conv: int, turns_per: np.ndarray) -> tuple[list[str], ...]:
    """Agent and caller lines per turn, vectorised over a pool of rendered variants."""
    contact = rng.integers(0, len(CONTACTS), n_conv)
    drift = rng.random(n_conv) < 0.1
    pools: list[list[str]] = []
    for c in range(len(CONTACTS)):
        ur = [
            t.replace("{name}", URDU_NAMES[c]).replace("{clinic}", URDU_CLINICS[c])
            for t in AGENT_UR
        ]
        ru = [
            t.replace("{name}", CONTACTS[c]["customer_name"]).replace(
                "{clinic}", CONTACTS[c]["clinic_name"]
            )
            for t in AGENT_RU
        ]
        pools.append(ur + ru)
    flat = [line for pool in pools for line in pool]
    width = len(pools[0])
    return contact, drift, np.array(flat, dtype=object), np.array(CALLER, dtype=object), width


def synthesise(store: Path, n_conv: int, seed: int, distinct: bool = False) -> Path:
    """A run of ``n_conv`` done conversations (~10 turns each) written as parquet; with
    ``distinct``, each turn text ends with its conversation's number (grading works per
    distinct text: this is its worst case)."""
    rng = np.random.default_rng(seed)
    manifest = {"identity": identity_hash({"bench-grading": n_conv}), "assistant_id": "asst_b"}
    with RunWriter.create(store, "bench", manifest, fsync=False) as writer:
        run = writer.finalize()
    stamp = pq.read_schema(run.path / "turns.parquet").metadata
    turns_per = rng.integers(8, 13, n_conv)
    contact, drift, agent_pool, caller_pool, width = _texts(rng, n_conv, turns_per)
    conv_of_turn = np.repeat(np.arange(n_conv), turns_per)
    starts = np.repeat(np.cumsum(turns_per) - turns_per, turns_per)
    index = np.arange(len(conv_of_turn)) - starts + 1
    is_agent = index % 2 == 1
    n_ur, n_ru = len(AGENT_UR), len(AGENT_RU)
    ur_line = np.where(index == 1, 0, rng.integers(1, n_ur - 1, len(index)))
    ur_line = np.where(rng.random(len(index)) < 0.01, n_ur - 1, ur_line)  # unresolved token
    ru_line = n_ur + np.where(index == 1, 0, rng.integers(1, n_ru, len(index)))
    line = np.where(drift[conv_of_turn], ru_line, ur_line) + contact[conv_of_turn] * width
    text = np.where(
        is_agent, agent_pool[line], caller_pool[rng.integers(0, len(CALLER), len(index))]
    )
    if distinct:
        text = np.char.add(text.astype(str), (" " + conv_of_turn.astype(str)).astype(str))
        text = text.astype(object)
    ids = np.char.add("c", np.char.zfill(np.arange(n_conv).astype(str), 7)).astype(object)
    turns = pa.table(
        {
            "run_id": pa.array(np.full(len(index), "bench", dtype=object), pa.large_string()),
            "conversation_id": pa.array(ids[conv_of_turn], pa.large_string()),
            "index": pa.array(index, pa.int64()),
            "role": pa.array(
                np.where(is_agent, "agent", "caller").astype(object), pa.large_string()
            ),
            "text": pa.array(text, pa.large_string()),
        },
        schema=TURNS_SCHEMA,
    )
    variables = np.array([json.dumps(c, ensure_ascii=False) for c in CONTACTS], dtype=object)
    personas = np.array(["cooperative", "busy-hangs-up", "wrong-person", "hostile"], dtype=object)
    now = datetime(2026, 11, 1, tzinfo=UTC)
    columns = {
        "run_id": np.full(n_conv, "bench", dtype=object),
        "conversation_id": ids,
        "cell_id": np.char.add("cell", (np.arange(n_conv) // 3).astype(str)).astype(object),
        "repeat": np.arange(n_conv) % 3,
        "persona_label": personas[np.arange(n_conv) % len(personas)],
        "variables": variables[contact],
        "status": np.full(n_conv, "done", dtype=object),
        "attempts": np.ones(n_conv, dtype=np.int64),
        "n_turns": turns_per.astype(np.int64),
        "ended_by": np.where(turns_per % 2 == 1, "agent", "caller").astype(object),
        "started_at": pa.array([now] * n_conv, pa.timestamp("us", tz="UTC")),
        "finished_at": pa.array([now] * n_conv, pa.timestamp("us", tz="UTC")),
        "target": np.full(n_conv, "draft", dtype=object),
    }
    arrays = []
    for field in CONVERSATIONS_SCHEMA:
        value = columns.get(field.name)
        arrays.append(
            pa.nulls(n_conv, field.type) if value is None else pa.array(value, field.type)
        )
    conversations = pa.Table.from_arrays(arrays, schema=CONVERSATIONS_SCHEMA)
    pq.write_table(turns.replace_schema_metadata(stamp), run.path / "turns.parquet")
    pq.write_table(conversations.replace_schema_metadata(stamp), run.path / "conversations.parquet")
    return run.path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--distinct", action="store_true", help="every conversation's texts distinct (worst case)"
    )
    parser.add_argument(
        "--regex-pattern",
        action="append",
        help="a regex rule timed alone against a bare RE2 match over the turns (repeatable; "
        "default: a capturing group, the same without, a lookaround)",
    )
    parser.add_argument(
        "--regex-only", action="store_true", help="time the regex rules only (faster)"
    )
    args = parser.parse_args()
    card = Scorecard.load(ROOT / "scorecards" / "appointment-reminder-ur.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        path = synthesise(Path(tmp), args.conversations, args.seed, args.distinct)
        print(f"synthesised in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        if args.regex_only:
            regex_rows(load_run(path), args.repeat, args.regex_pattern or REGEX_PATTERNS)
            return
        loads, grades = [], []
        for _ in range(args.repeat):
            gc.collect()
            t0 = time.perf_counter()
            run = load_run(path)
            turns = run.turns
            loads.append(time.perf_counter() - t0)
            run.conversations  # noqa: B018  (grading reads both; loaded here, not timed)
            t0 = time.perf_counter()
            result = grade_run(run, card, judge=False, options=GradeOptions(reuse=False))
            grades.append(time.perf_counter() - t0)
        load, grade = statistics.median(loads), statistics.median(grades)
        rules = len(card.deterministic_rules)
        print(f"run: {args.conversations} conversations, {len(turns)} turns")
        print(f"load turns:              {load:6.2f} s (median of {args.repeat})")
        print(f"grade ({rules} checks, judge=False, stored): {grade:6.2f} s")
        print(f"ratio grade / load:      {grade / load:6.2f}x  (target <= 3x, < 20 s)")
        print(result.summary[["rule_id", "pass", "fail", "na"]].to_string(index=False))
        regex_rows(run, args.repeat, args.regex_pattern or REGEX_PATTERNS)
        # the whole scorecard, judged rules included, graded once; then graded again (cached)
        judge = InstantJudge()
        t0 = time.perf_counter()
        grade_run(load_run(path), card, judge=judge)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = grade_run(load_run(path), card, judge=judge)
        cached = time.perf_counter() - t0
        print(f"grade all {len(card.rules)} rules (judged by an in-process judge): {first:6.2f} s")
        print(
            f"cached re-grade (judged rules included, fresh load_run): {cached:6.2f} s "
            f"(target < 2 s); {len(again.frame)} grades, {judge.calls} judge tasks in all"
        )


#: RE2 with a capturing group, the same without one, and a lookbehind (the backtracking engine)
REGEX_PATTERNS = (r"(haan|nahi|jee)", r"(?:haan|nahi|jee)", r"(?<=main )busy|(?<!dobara )bataiye")
#: the baseline drops lookarounds, which RE2 cannot run
_RE2_BASELINE = re.compile(r"\(\?<?[=!][^)]*\)")


def regex_rows(run: Run, repeat: int, patterns: Sequence[str]) -> None:
    """Each regex rule graded alone against a bare ``match_substring_regex`` over every turn."""
    text = pa.chunked_array([pa.array(run.turns["text"], pa.large_string())])
    for number, pattern in enumerate(patterns):
        card = Scorecard.from_dict(
            {
                "rubricVersionId": f"bench-regex-{number}",
                "rules": [
                    {
                        "ruleId": "r",
                        "title": "regex",
                        "points": 100,
                        "check": {"type": "regex", "pattern": pattern, "speaker": "caller"},
                    }
                ],
            }
        )
        bare_times, rule_times = [], []
        for _ in range(repeat):
            t0 = time.perf_counter()
            pc.match_substring_regex(text, "(?i)" + _RE2_BASELINE.sub("", pattern))
            bare_times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            try:
                graded = grade_run(run, card, judge=False, options=GradeOptions(save=False))
            except Exception as exc:  # the "before" of a pattern that used to crash
                print(f"regex {pattern!r}: {type(exc).__name__}: {exc}")
                break
            rule_times.append(time.perf_counter() - t0)
        else:
            bare, rule = statistics.median(bare_times), statistics.median(rule_times)
            counts = graded.frame["verdict"].value_counts().to_dict()
            print(
                f"regex {pattern!r}: grade {rule:6.2f} s, bare RE2 match {bare:5.2f} s "
                f"({rule / bare:5.1f}x); verdicts {counts}"
            )


class InstantJudge:
    """A JudgeBackend that answers at once (the benchmark measures evalkit, not a model)."""

    model = "instant-judge"

    def __init__(self) -> None:
        self.calls = 0

    async def ajudge(self, tasks: Sequence[JudgeTask]) -> list[JudgeVerdict]:
        self.calls += len(tasks)
        return [
            JudgeVerdict(
                t.conversation_id,
                r.rule_id,
                t.sample,
                "pass",
                "ok",
                1,
                self.model,
                JUDGE_PROMPT_VERSION,
            )
            for t in tasks
            for r in t.rules
        ]


if __name__ == "__main__":
    main()
