"""``evalkit demo``: a draft-vs-prod comparison end to end on the embedded emulator.

The story: an outbound Urdu appointment reminder is built and published (prod = v1). Then
someone "simplifies" the draft prompt and drops the lines asking for Nastaliq script and for
a yes/no confirmation (v2). evalkit runs the same grid of personas x contacts against prod (on
a temporary clone made from its recorded snapshot, since the service returns only the draft's
config) and against the draft, stores both runs, and writes an HTML report.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from .api import Client
from .data import bundled_path
from .emulator import serve
from .grid import Grid, load_personas
from .report import write_runs_overview
from .runner import run_grid
from .store import Run

logger = logging.getLogger("evalkit.demo")

PROD_INSTRUCTIONS = (
    "You are Sana, an assistant for {{clinic_name}} calling {{customer_name}} about an appointment "
    "with {{doctor_name}} on {{appointment_date}} at {{appointment_time}}. Speak Urdu and always "
    "answer in Urdu (Nastaliq) script, never Roman Urdu. State the date and time and ask the "
    "caller to confirm with a yes or no. If the caller objects or asks not to be called, apologise "
    "and end the call politely. Close with shukriya and Allah hafiz."
)
# the regression: a shorter prompt that lost the script and confirmation lines
DRAFT_INSTRUCTIONS = (
    "You are Sana from {{clinic_name}}. Remind {{customer_name}} of the appointment with "
    "{{doctor_name}} on {{appointment_date}} at {{appointment_time}} in Urdu. Close with shukriya."
)
GREETING = "Greet the caller by name, say you are calling from the clinic, and state the purpose."
CONTEXT = (
    "A reminder call from the clinic where you booked a doctor's appointment last week; the caller "
    "knows your name and appointment details."
)
CONTACTS = [
    {
        "customer_name": "Ayesha Khan",
        "clinic_name": "Shifa Clinic",
        "doctor_name": "Dr. Farooq",
        "appointment_date": "14 November",
        "appointment_time": "5 baje",
    },
    {
        "customer_name": "Bilal Ahmed",
        "clinic_name": "Shifa Clinic",
        "doctor_name": "Dr. Nadia",
        "appointment_date": "15 November",
        "appointment_time": "11 baje",
    },
    {
        "customer_name": "Fatima Noor",
        "clinic_name": "Al-Noor Hospital",
        "doctor_name": "Dr. Saleem",
        "appointment_date": "16 November",
        "appointment_time": "3 baje",
    },
]
DEMO_PERSONAS = (
    "cooperative",
    "busy-hangs-up",
    "confused-elderly",
    "code-switching",
    "do-not-call",
    "hostile",
)


@dataclass(frozen=True)
class DemoResult:
    """What the demo produced: the two runs and the report's path."""

    prod: Run
    draft: Run
    report: Path


def run_demo(
    output_dir: str | Path = "evalkit-demo", repeats: int = 3, seed: int = 7
) -> DemoResult:
    """Run the whole demo offline and return its runs and report."""
    out = Path(output_dir)
    store = out / "runs"
    personas = [p for p in load_personas(bundled_path("personas")) if p.label in DEMO_PERSONAS]
    grid = Grid(personas, variables=CONTACTS, contexts=[CONTEXT], repeats=repeats)
    with serve(time_scale=0.002, seed=seed) as emu, Client(emu.base_url, emu.api_key) as client:
        built = emu.build(
            "Clinic appointment reminder",
            {"context": CONTEXT, "sampleRows": CONTACTS[:1]},
            PROD_INSTRUCTIONS,
            initial_greeting=True,
        )
        assistant_id = built["realtimeAssistantId"]
        # evalkit records a snapshot of every config it reads; read v1 now, while it is the draft
        run_grid(
            grid.sample(1, seed),
            assistant_id,
            client,
            store=store,
            run_id="warmup-v1",
            progress=False,
        )
        emu.publish(assistant_id)
        config = client.list_assistants()[0].config.to_json()
        config["agent"]["instructions"] = DRAFT_INSTRUCTIONS
        config["agent"]["greetingInstructions"] = GREETING
        client.update_assistant(assistant_id, config=config)
        logger.info("draft is now ahead of prod; running both")
        prod = run_grid(grid, assistant_id, client, target="prod", store=store, run_id="prod")
        draft = run_grid(grid, assistant_id, client, target="draft", store=store, run_id="draft")
    report = write_runs_overview(
        [prod, draft], out / "report.html", title="Draft vs prod: clinic reminder"
    )
    return DemoResult(prod, draft, report)
