"""Every async twin in one place, under the names of their sync flows (as ``redis.asyncio``
mirrors ``redis``, and httpx's ``AsyncClient`` has ``Client``'s methods)::

    from evalkit import aio

    async with aio.AsyncClient() as client:
        run = await aio.run_grid(grid, assistant_id, client=client)
        grades = await aio.grade_run(run, "scorecards/appointment-reminder-ur.yaml")
        outcome = await aio.draft_vs_prod(grid, assistant_id, scorecard, client=client)

``aio.<name>`` takes the same arguments as ``evalkit.<name>`` (or its package's sync flow)
and is a coroutine function; each also lives beside its sync flow as ``a<name>``
(``evalkit.runner.arun_grid``). ``lint`` and ``speak`` are sync only: one request each, with
the :class:`~evalkit.Client` they are given (``aio.AsyncClient`` has their calls as methods).
Names resolve on first use, so ``from evalkit import aio`` loads nothing else.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import AsyncClient
    from .flows import abisect as bisect
    from .flows import acompare_runs as compare_runs
    from .flows import acompare_runs_sequential as compare_runs_sequential
    from .flows import adraft_vs_prod as draft_vs_prod
    from .flows import arun_and_grade as run_and_grade
    from .grading import agrade_run as grade_run
    from .grading import agrade_transcripts as grade_transcripts
    from .personas import afind_failures as find_failures
    from .personas import agenerate_personas as generate_personas
    from .refine import arefine_and_wait as refine_and_wait
    from .refine import arefine_loop as refine_loop
    from .runner import arun_grid as run_grid
    from .tuning import aoptimize as optimize
    from .tuning import atune as tune

#: name -> (package, the twin's name there)
TWINS: dict[str, tuple[str, str]] = {
    "AsyncClient": ("api", "AsyncClient"),
    "bisect": ("flows", "abisect"),
    "compare_runs": ("flows", "acompare_runs"),
    "compare_runs_sequential": ("flows", "acompare_runs_sequential"),
    "draft_vs_prod": ("flows", "adraft_vs_prod"),
    "find_failures": ("personas", "afind_failures"),
    "generate_personas": ("personas", "agenerate_personas"),
    "grade_run": ("grading", "agrade_run"),
    "grade_transcripts": ("grading", "agrade_transcripts"),
    "optimize": ("tuning", "aoptimize"),
    "refine_and_wait": ("refine", "arefine_and_wait"),
    "refine_loop": ("refine", "arefine_loop"),
    "run_and_grade": ("flows", "arun_and_grade"),
    "run_grid": ("runner", "arun_grid"),
    "tune": ("tuning", "atune"),
}

#: Functions that call the service and have no twin, and why.
SYNC_ONLY: dict[str, str] = {
    "lint": "reads one config (E1) when given an assistant id; AsyncClient.list_assistants",
    "speak": "one E11 request, cached by content; AsyncClient.text_to_speech",
}

__all__ = [
    "AsyncClient",
    "bisect",
    "compare_runs",
    "compare_runs_sequential",
    "draft_vs_prod",
    "find_failures",
    "generate_personas",
    "grade_run",
    "grade_transcripts",
    "optimize",
    "refine_and_wait",
    "refine_loop",
    "run_and_grade",
    "run_grid",
    "tune",
]


def __getattr__(name: str) -> Any:
    found = TWINS.get(name)
    if found is None:
        raise AttributeError(f"module 'evalkit.aio' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{found[0]}", "evalkit"), found[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
