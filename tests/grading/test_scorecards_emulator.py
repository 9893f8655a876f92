"""The bundled scorecards grade real emulator runs sensibly: every deterministic rule passes
in some conversation and fails in another, across the bundled personas and two prompts per
scorecard (a well-written one and a careless one) - except the rules scorecards/README.md
lists as never failing against the emulator, with the reason."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from evalkit import load_personas
from evalkit.api import Client
from evalkit.emulator import serve
from evalkit.grading import Scorecard, grade_run
from evalkit.grid import Grid
from evalkit.runner import RunOptions, run_grid

from .scenarios import SCENARIOS

REPO = Path(__file__).resolve().parents[2]
# (scorecard, rule) that the emulator's dialogue engine never breaks; see scorecards/README.md
NEVER_FAILS = {
    ("appointment-reminder-ur.yaml", "names-clinic"),
    ("appointment-reminder-ur.yaml", "no-repetition"),
    ("appointment-reminder-ur.yaml", "short-call"),
    ("instalment-reminder-roman-ur.yaml", "no-threats"),
    ("support-line-en-ur.yaml", "names-company"),
    ("support-line-en-ur.yaml", "no-repetition"),
    ("support-line-en.yaml", "names-company"),
    ("support-line-en.yaml", "no-repetition"),
    ("support-line-en.yaml", "concise-turns"),
}
# (scorecard, rule) that passes only by chance against the emulator; see scorecards/README.md
RARELY_PASSES = {("instalment-reminder-roman-ur.yaml", "how-to-pay")}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    store = tmp_path_factory.mktemp("runs")
    personas = load_personas(REPO / "personas")
    frames = []
    with serve(time_scale=0.002, seed=5) as emu, Client(emu.base_url, emu.api_key) as client:
        for sc in SCENARIOS:
            for name, instructions, greeting in sc.variants:
                brief = {"context": sc.context, "sampleRows": sc.contacts[:1]}
                built = emu.build(sc.scorecard, brief, instructions, initial_greeting=greeting)
                grid = Grid(personas, variables=sc.contacts, contexts=[sc.context], repeats=1)
                run = run_grid(
                    grid, built["realtimeAssistantId"], client=client, store=store,
                    run_id=f"{Path(sc.scorecard).stem}-{name}",
                    # careless prompts leave tokens unresolved on purpose (no_placeholders)
                    options=RunOptions(progress=False, allow_missing_variables=True),
                )  # fmt: skip
                grades = grade_run(run, REPO / "scorecards" / sc.scorecard, judge=False)
                frames.append(grades.frame.assign(scorecard=sc.scorecard, variant=name))
    return pd.concat(frames, ignore_index=True)


@pytest.mark.slow
def test_every_deterministic_rule_passes_and_fails_somewhere(verdicts: pd.DataFrame) -> None:
    checked = verdicts[verdicts["grader"].str.startswith("check:")]
    seen = checked.groupby(["scorecard", "rule_id"])["verdict"].agg(set)
    assert len(seen) >= 25
    for (card, rule), found in seen.items():
        if (card, rule) not in RARELY_PASSES:
            assert "pass" in found, (card, rule)
        if (card, rule) not in NEVER_FAILS:
            assert "fail" in found, (card, rule)
        assert "error" not in found
    readme = (REPO / "scorecards" / "README.md").read_text(encoding="utf-8")
    for _card, rule in NEVER_FAILS | RARELY_PASSES:
        assert f"`{rule}`" in readme, rule


@pytest.mark.slow
def test_judged_rules_are_not_judged_and_one_row_per_conversation_rule(
    verdicts: pd.DataFrame,
) -> None:
    judged = verdicts[verdicts["grader"] == "not-judged"]
    assert (judged["verdict"] == "na").all()
    keys = verdicts[["scorecard", "variant", "conversation_id", "rule_id"]]
    assert not keys.duplicated().any()
    for card in {sc.scorecard for sc in SCENARIOS}:
        n_rules = len(Scorecard.load(REPO / "scorecards" / card).rules)
        rows = verdicts[verdicts["scorecard"] == card]
        assert (
            len(rows) == rows[["variant", "conversation_id"]].drop_duplicates().shape[0] * n_rules
        )


@pytest.mark.slow
def test_the_demo_regression_shows_in_the_scores(verdicts: pd.DataFrame) -> None:
    clinic = verdicts[verdicts["scorecard"] == "appointment-reminder-ur.yaml"]
    script = clinic[clinic["rule_id"] == "urdu-script"]
    rates = script.groupby("variant")["verdict"].apply(lambda v: (v == "pass").mean())
    assert rates["prod"] > 0.8 > 0.2 > rates["draft"]
