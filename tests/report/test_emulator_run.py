"""The browser and plots on a real run made against the emulator (no grades yet: grading is
built in parallel, so the browser shows transcripts without rule verdicts)."""

from __future__ import annotations

from pathlib import Path

from evalkit.api import Client
from evalkit.data import bundled_path
from evalkit.demo import CONTACTS, CONTEXT, PROD_INSTRUCTIONS
from evalkit.emulator import serve
from evalkit.grid import Grid, load_personas
from evalkit.report import RunBrowser, plots
from evalkit.runner import RunOptions, run_grid


def test_real_run_browses_and_plots(tmp_path: Path) -> None:
    personas = [
        p for p in load_personas(bundled_path("personas")) if p.label in {"cooperative", "hostile"}
    ]
    grid = Grid(personas, variables=CONTACTS[:2], contexts=[CONTEXT], repeats=1)
    with serve(time_scale=0.002, seed=7) as emu, Client(emu.base_url, emu.api_key) as client:
        built = emu.build(
            "Clinic reminder",
            {"context": CONTEXT, "sampleRows": CONTACTS[:1]},
            PROD_INSTRUCTIONS,
            initial_greeting=True,
        )
        run = run_grid(
            grid,
            built["realtimeAssistantId"],
            client=client,
            store=tmp_path,
            run_id="r",
            options=RunOptions(progress=False),
        )
    browser = RunBrowser(run, page_size=2)
    assert len(browser.matches) == len(run.conversations) == 4
    browser.persona.value = "hostile"
    assert browser.matches
    assert " · hostile · " in browser.transcript_html.value
    assert 'dir="rtl"' in browser.transcript_html.value  # the prod prompt answers in Nastaliq
    fig = plots.turns_and_latency(run)
    done = int((run.conversations["status"] == "done").sum())
    assert f"n = {done} done conversations" in fig.texts[0].get_text()
    assert plots.figure_to_png(plots.outcomes_by_status(run)).startswith(b"\x89PNG")
