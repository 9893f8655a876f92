"""Synthetic stored runs with grades, for the report tests (seeded, written under tmp_path)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa

from evalkit.store import (
    GRADES_SCHEMA,
    ConversationRecord,
    Run,
    RunWriter,
    TurnRecord,
    dump_variables,
    identity_hash,
)

T0 = datetime(2026, 11, 1, 9, 30, tzinfo=UTC)
PERSONAS = ("cooperative", "busy", "hostile")
RECORDS = (
    {"customer_name": "Ayesha Khan", "slot": "5 baje"},
    {"customer_name": "عائشہ خان", "slot": "11 baje"},
    {"customer_name": "Bilal Ahmed", "slot": "3 baje"},
)
URDU_AGENT = "السلام علیکم عائشہ، کل شام پانچ بجے آپ کی اپائنٹمنٹ ہے۔ کیا آپ تصدیق کرتی ہیں؟"
HOSTILE = "<script>alert('x')</script> stop calling me"
RULES = (
    ("urdu-script", "Agent answers in Urdu (Nastaliq) script, never in Roman Urdu, the whole call"),
    ("confirm", "Asks the caller to confirm the slot with a yes or no"),
    ("polite-close", "Closes politely with shukriya"),
)
#: conversation number -> status other than done
NOT_DONE = {4: "error", 9: "dropped"}


@dataclass(frozen=True)
class RunSpec:
    """What to write: a run id, its target, the pass probability and the seed."""

    run_id: str
    target: str
    p_pass: float = 0.8
    seed: int = 0
    repeats: int = 2


def _turns(persona: str, number: int) -> list[TurnRecord]:
    caller = HOSTILE if persona == "hostile" else f"Ji, theek hai. (call {number})"
    return [
        TurnRecord(1, "agent", URDU_AGENT),
        TurnRecord(2, "caller", caller),
        TurnRecord(3, "agent", "شکریہ، اللہ حافظ"),
    ]


def write_graded_run(store: Path, spec: RunSpec) -> Run:
    """A finalized run of personas x records x repeats with grades for done conversations."""
    rng = np.random.default_rng(spec.seed)
    writer = RunWriter.create(
        store,
        spec.run_id,
        {"identity": identity_hash({"grid": "report"}), "target": spec.target},
        fsync=False,
    )
    grades: list[dict[str, object]] = []
    number = 0
    for p, persona in enumerate(PERSONAS):
        for r, record in enumerate(RECORDS):
            for repeat in range(spec.repeats):
                status = NOT_DONE.get(number, "done")
                turns = _turns(persona, number) if status == "done" else []
                cid = f"c{number:03d}"
                cell = f"cell-{p}-{r}"
                writer.append(
                    ConversationRecord(
                        run_id=spec.run_id,
                        conversation_id=cid,
                        cell_id=cell,
                        repeat=repeat,
                        persona_label=persona,
                        variables=dump_variables(record),
                        status=status,
                        n_turns=len(turns),
                        ended_by="agent" if turns else None,
                        first_turn_s=0.2 + 0.1 * float(rng.random()) if turns else None,
                        duration_s=5.0,
                        started_at=T0 + timedelta(seconds=number),
                        finished_at=T0 + timedelta(seconds=number + 5),
                        target=spec.target,
                    ),
                    turns,
                )
                if status == "done":
                    grades += _grades(spec, cid, cell, persona, repeat, rng)
                number += 1
    run = writer.finalize()
    (run.path / "grades").mkdir()
    table = pa.Table.from_pylist(grades, schema=GRADES_SCHEMA)
    import pyarrow.parquet as pq

    pq.write_table(table, run.path / "grades" / "card.parquet")
    return run


def _grades(
    spec: RunSpec, cid: str, cell: str, persona: str, repeat: int, rng: np.random.Generator
) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for k, (rule_id, title) in enumerate(RULES):
        verdict = "pass" if rng.random() < spec.p_pass else "fail"
        if rule_id == "polite-close" and persona == "hostile":
            verdict = "na"
        rows.append(
            {
                "run_id": spec.run_id,
                "conversation_id": cid,
                "cell_id": cell,
                "persona_label": persona,
                "repeat": repeat,
                "rubric_version_id": "card-v1",
                "rule_id": rule_id,
                "title": title,
                "points": 10.0,
                "verdict": verdict,
                "points_awarded": {"pass": 10.0, "fail": 0.0}.get(verdict),
                "rationale": f"{rule_id} {verdict}: see turn {1 + 2 * (k % 2)} <b>bold</b>",
                "evidence_turn": 1 + 2 * (k % 2) if verdict != "na" else None,
                "grader": "deterministic",
            }
        )
    return rows
