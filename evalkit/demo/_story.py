"""The demo's story as data: an Urdu clinic appointment reminder whose prod (v1) answers in
Nastaliq and asks for a yes or no, and a "simplified" draft (v2) that lost both lines and gained
a polite close; the contacts, personas, grid and scorecard it runs with, and the emulator's
pace."""

from __future__ import annotations

from pathlib import Path

from ..data import bundled_path, scorecards_path
from ..grid import Grid, load_personas

__all__ = [
    "CEILING_FLOOR_S",
    "CONTACTS",
    "CONTEXT",
    "DEMO_PERSONAS",
    "DRAFT_INSTRUCTIONS",
    "FULL_INSTRUCTIONS",
    "GREETING",
    "LATENCY_MIN_EFFECT_S",
    "NOTEBOOK",
    "PROD_INSTRUCTIONS",
    "TIME_SCALE",
    "TURN_DELAY",
    "demo_grid",
    "demo_scorecard",
]

PROD_INSTRUCTIONS = (
    "You are Sana, an assistant for {{clinic_name}} calling {{customer_name}} about an appointment "
    "with {{doctor_name}} on {{appointment_date}} at {{appointment_time}}. Speak Urdu and always "
    "answer in Urdu (Nastaliq) script, never Roman Urdu. State the date and time and ask the "
    "caller to confirm with a yes or no. If the caller objects or asks not to be called, apologise "
    "and end the call."
)
# the change under test: shorter, lost the script and confirmation lines, gained a polite close
DRAFT_INSTRUCTIONS = (
    "You are Sana from {{clinic_name}}. Remind {{customer_name}} of the appointment with "
    "{{doctor_name}} on {{appointment_date}} at {{appointment_time}} in Urdu. If the caller "
    "objects or asks not to be called, apologise and end the call. Always close the call "
    "politely with shukriya and Allah hafiz."
)
# a draft that asks for every behaviour the scorecard checks: on an emulator with planted
# weaknesses what fails is what was planted (the caller search's demo, tests and benchmark)
FULL_INSTRUCTIONS = (
    PROD_INSTRUCTIONS + " First ask whether you are speaking to the right person. If the caller "
    "asks for another time, agree to the caller's time and repeat it. Always close the call "
    "politely with shukriya and Allah hafiz."
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
NOTEBOOK = "compare_draft_prod.ipynb"
#: Emulated time: 0.002 makes a 15 s ping 30 ms and a 2-minute build a quarter of a second.
TIME_SCALE = 0.002
#: ...but a conversation may take up to a minute of real time before the ceiling ends it.
CEILING_FLOOR_S = 60.0
#: Emulated seconds an answer takes before the config scales it (0.1 s of real time at the
#: demo's time scale): enough for agent latency to show beside the score above the noise of a
#: busy machine, and to move with the model and reasoning knobs a variant changes.
TURN_DELAY = 50.0
#: The agent latency difference the demo's tune calls slower or faster (its answers take
#: about 0.1 s, where a real service's take a second or more and 0.25 s is the default).
LATENCY_MIN_EFFECT_S = 0.01


def demo_grid(repeats: int = 3) -> Grid:
    """The demo's grid: 6 bundled personas x 3 contacts x ``repeats`` (54 conversations at 3)."""
    personas = [p for p in load_personas(bundled_path("personas")) if p.label in DEMO_PERSONAS]
    return Grid(personas, variables=CONTACTS, contexts=[CONTEXT], repeats=repeats)


def demo_scorecard() -> Path:
    """The demo's scorecard file (Urdu appointment reminder)."""
    return scorecards_path() / "appointment-reminder-ur.yaml"
