"""A child process for the sequential comparison's kill test: draft vs prod in waves.

Usage: ``python tests/sequential_child.py SPEC_JSON`` (``store``, ``assistant_id``,
``personas``, ``repeats``, ``concurrency``); the service comes from ``EVALKIT_BASE_URL`` /
``EVALKIT_API_KEY``. Exit code 0 when the comparison finished.
"""

from __future__ import annotations

import json
import sys
from typing import Any

if __package__:
    from .runner_support import load_grid
else:
    from runner_support import load_grid


def run(spec: dict[str, Any]) -> Any:
    from evalkit.compare import SequentialPlan
    from evalkit.demo import demo_scorecard
    from evalkit.flows import DraftVsProdOptions, draft_vs_prod
    from evalkit.runner import RunOptions

    return draft_vs_prod(
        load_grid(spec["personas"], spec["repeats"]),
        spec["assistant_id"],
        demo_scorecard(),
        judge=False,
        store=spec["store"],
        options=DraftVsProdOptions(
            # the reminder grid's records do not fill the demo prompt's tokens: allowed, since
            # this child is about waves and a kill, not variables (issue 23's pre-run check)
            run=RunOptions(
                concurrency=spec["concurrency"], progress=False, allow_missing_variables=True
            ),
            sequential=SequentialPlan(spec["repeats"]),
        ),
    )


if __name__ == "__main__":
    run(json.loads(sys.argv[1]))
