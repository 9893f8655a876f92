"""Simulation flags on the emulator: the demo's well-behaved bundled personas raise none; a
deliberately broken persona (a fixture) is flagged in every conversation, and a comparison
can leave its conversations out, counted per side and said in a warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.api import Client
from evalkit.compare import CompareOptions, compare_grades
from evalkit.demo import CONTACTS, CONTEXT, DEMO_PERSONAS, PROD_INSTRUCTIONS
from evalkit.diagnose import simulation_flags
from evalkit.emulator import serve
from evalkit.grading import grade_run
from evalkit.grid import Grid, load_personas
from evalkit.runner import RunOptions, run_grid
from evalkit.store import Run

REPO = Path(__file__).resolve().parents[2]
BROKEN = Path(__file__).resolve().parent / "fixtures" / "broken-relaxed.yaml"
SCORECARD = REPO / "scorecards" / "appointment-reminder-ur.yaml"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Run]:
    store = tmp_path_factory.mktemp("runs")
    bundled = [p for p in load_personas(REPO / "personas") if p.label in DEMO_PERSONAS]
    grid = Grid(
        [*bundled, *load_personas(BROKEN)], variables=CONTACTS, contexts=[CONTEXT], repeats=3
    )
    with serve(time_scale=0.002, seed=7) as emu, Client(emu.base_url, emu.api_key) as client:
        built = emu.build(
            "reminder", {"context": CONTEXT, "sampleRows": CONTACTS[:1]}, PROD_INSTRUCTIONS,
            initial_greeting=True,
        )  # fmt: skip
        aid = built["realtimeAssistantId"]
        first = run_grid(
            grid,
            aid,
            client=client,
            store=store,
            run_id="a",
            options=RunOptions(concurrency=8, progress=False),
        )
        second = run_grid(
            grid,
            aid,
            client=client,
            store=store,
            run_id="b",
            options=RunOptions(concurrency=8, progress=False),
        )
    return first, second


@pytest.mark.slow
def test_well_behaved_personas_raise_no_flag_and_the_broken_one_is_flagged(
    runs: tuple[Run, Run],
) -> None:
    for run in runs:
        flags = simulation_flags(run)
        assert flags.attrs["checked"] == len(run.conversations) == 63
        labels = run.conversations.set_index("conversation_id")["persona_label"]
        flagged_labels = set(labels[flags["conversation_id"]])
        assert flagged_labels == {"broken-relaxed"}, flags.to_string()
        broken = set(labels[labels == "broken-relaxed"].index)
        busy = flags[flags["flag"] == "persona-not-shown"]
        assert set(busy["conversation_id"]) == broken  # every one of its 9 conversations
        assert busy["reason"].str.contains("declares 'busy'").all()
        assert (flags["run_id"] == run.run_id).all()


@pytest.mark.slow
def test_a_comparison_leaves_flagged_conversations_out_and_says_so(
    runs: tuple[Run, Run],
) -> None:
    grades = [grade_run(run, SCORECARD, judge=False).frame for run in runs]
    flags = [simulation_flags(run) for run in runs]
    import pandas as pd

    both = pd.concat(flags, ignore_index=True)
    plain = compare_grades(grades[0], grades[1])
    left_out = compare_grades(grades[0], grades[1], options=CompareOptions(exclude_flagged=both))
    row, before = left_out.summary.iloc[0], plain.summary.iloc[0]
    assert row["flagged_baseline"] == row["flagged_candidate"] == 9
    assert before["flagged_baseline"] == before["flagged_candidate"] == 0
    assert row["conversations_baseline"] == before["conversations_baseline"] - 9
    sentence = [w for w in left_out.warnings if "flagged simulations" in w]
    assert sentence == [
        "9 baseline and 9 candidate conversation(s) were left out as flagged simulations "
        "(persona-not-shown: 18); they are not in any score or interval."
    ]
    assert not any("flagged" in w for w in plain.warnings)
    # a flag of run "a" leaves out run "a"'s conversation only, though the ids are the same
    only_a = compare_grades(
        grades[0], grades[1], options=CompareOptions(exclude_flagged=flags[0])
    ).summary.iloc[0]
    assert (only_a["flagged_baseline"], only_a["flagged_candidate"]) == (9, 0)


@pytest.mark.slow
def test_flags_are_recorded_in_the_run_and_survive_a_resume(runs: tuple[Run, Run]) -> None:
    from evalkit.diagnose import record_flags, recorded_flags
    from evalkit.store import load_run

    run = runs[0]
    flags = record_flags(run)
    stored = recorded_flags(load_run(run.path))
    assert stored is not None
    assert stored["checked"] == 63
    assert stored["flagged"] == flags["conversation_id"].nunique() == 9
    assert set(stored["by_flag"]["persona-not-shown"]) == set(
        flags.loc[flags["flag"] == "persona-not-shown", "conversation_id"]
    )
    # a writer finalizing the run again (a resume with nothing left to run) keeps the note
    from evalkit.store import finalize_run

    finalize_run(run.path)
    assert recorded_flags(load_run(run.path)) == stored


@pytest.mark.slow
def test_the_pipeline_records_flags_of_each_graded_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Recorded and said once: grading the run again (a sweep's next wave, a replay over a
    store that holds the run) finds the same flags and says nothing more."""
    from evalkit.diagnose import recorded_flags
    from evalkit.flows import PipelineOptions, RunSpec, run_and_grade
    from evalkit.runner import RunOptions

    grid = Grid(load_personas(BROKEN), variables=CONTACTS, contexts=[CONTEXT], repeats=1)
    with serve(time_scale=0.002, seed=3) as emu, Client(emu.base_url, emu.api_key) as client:
        built = emu.build(
            "reminder", {"context": CONTEXT, "sampleRows": CONTACTS[:1]}, PROD_INSTRUCTIONS,
            initial_greeting=True,
        )  # fmt: skip
        said = []
        for _ in range(3):
            caplog.clear()
            with caplog.at_level("WARNING", logger="evalkit"):
                graded = run_and_grade(
                    grid,
                    built["realtimeAssistantId"],
                    SCORECARD,
                    RunSpec("draft", "flagged"),
                    client=client,
                    judge=False,
                    store=tmp_path,
                    options=PipelineOptions(run=RunOptions(concurrency=4, progress=False)),
                )
            said.append([r for r in caplog.messages if "flagged as suspect simulations" in r])
    stored = recorded_flags(graded.run)
    assert stored is not None
    assert stored["checked"] == 3
    assert stored["flagged"] == 3
    assert [len(lines) for lines in said] == [1, 0, 0]
    assert said[0][0].startswith("run flagged: 3 conversation(s) flagged")
