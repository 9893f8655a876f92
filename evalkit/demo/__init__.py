"""``evalkit demo`` and the offline stores built on it: a draft-vs-prod comparison end to end on
the embedded emulator.

The story: an outbound Urdu appointment reminder is built and published (prod = v1): it answers
in Nastaliq script and asks the caller to confirm the slot with a yes or no. Then someone
"simplifies" the draft prompt (v2): it loses the Nastaliq and confirmation lines and gains a
polite close. evalkit runs the same grid of personas x contacts x repeats against prod (on a
temporary clone made from its snapshot, since the service returns only the draft's config) and
against the draft, grades both with the demo scorecard (deterministic checks and the emulator's
judge), compares them with intervals, executes the bundled ``compare_draft_prod.ipynb`` on the
stored runs, and writes ``evalkit-demo/report.html``. The same seed gives the same report.
"""

from __future__ import annotations

from .._util import publish
from ._offline import (
    offline_find_failures,
    offline_nights,
    offline_optimize,
    offline_runs,
    offline_tune,
)
from ._report import DemoResult, run_demo
from ._report import run_biased_judge_demo as run_biased_judge_demo
from ._service import DemoService
from ._service import build_demo_assistant as build_demo_assistant
from ._story import (
    CONTACTS,
    CONTEXT,
    DEMO_PERSONAS,
    DRAFT_INSTRUCTIONS,
    GREETING,
    PROD_INSTRUCTIONS,
    demo_grid,
    demo_scorecard,
)

__all__ = [
    "CONTACTS",
    "CONTEXT",
    "DEMO_PERSONAS",
    "DRAFT_INSTRUCTIONS",
    "GREETING",
    "PROD_INSTRUCTIONS",
    "DemoResult",
    "DemoService",
    "demo_grid",
    "demo_scorecard",
    "offline_find_failures",
    "offline_nights",
    "offline_optimize",
    "offline_runs",
    "offline_tune",
    "run_demo",
]

#: What the command line and the emulator's ``--demo-assistant`` use that users need not.
_SIBLING_API = ("build_demo_assistant", "run_biased_judge_demo")

publish(globals())
