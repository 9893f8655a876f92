"""The demo's runs without its report: what the notebooks use when given no runs, and the
tune, optimize, caller-search and nightly stores the other notebooks and tests start from."""

from __future__ import annotations

from pathlib import Path

from ..data import bundled_path
from ..personas import FailureSearch, FindOptions, PersonaGenerator, find_failures
from ..runner import RunOptions
from ..tuning import (
    OptimizeOptions,
    OptimizeResult,
    Proposer,
    TuneOptions,
    TuneResult,
    optimize,
    tune,
)
from ._service import DemoService, fresh_store
from ._story import (
    DRAFT_INSTRUCTIONS,
    FULL_INSTRUCTIONS,
    LATENCY_MIN_EFFECT_S,
    PROD_INSTRUCTIONS,
    demo_grid,
    demo_scorecard,
)

__all__ = [
    "offline_find_failures",
    "offline_nights",
    "offline_optimize",
    "offline_runs",
    "offline_tune",
]


def offline_runs(
    output_dir: str | Path,
    *,
    seed: int = 7,
    repeats: int = 3,
    progress: bool | None = None,
    sequential: bool = False,
) -> Path:
    """Run the demo's grid on prod and draft in the embedded emulator, graded; return the store.

    What the notebooks use when they are given no runs: everything happens offline.
    ``sequential``: in waves, stopping at the first deciding look (``repeats`` at most).
    """
    with fresh_store(Path(output_dir) / "runs") as store, DemoService(store, seed=seed) as svc:
        svc.draft_vs_prod(demo_grid(repeats), progress=progress, sequential=sequential)
    return store


def offline_tune(
    output_dir: str | Path,
    *,
    variants: str | Path | None = None,
    max_repeats: int = 4,
    holdout: float = 0.3,
    seed: int = 7,
    progress: bool | None = None,
) -> TuneResult:
    """Sweep prompt variants of the demo's draft in the embedded emulator (``variants``: a
    YAML file; None: the bundled ``examples/variants/urdu_reminder.yaml``, where one variant
    helps, one hurts and two do nothing); runs go to ``output_dir/runs``."""
    file = variants or bundled_path("examples") / "variants" / "urdu_reminder.yaml"
    with fresh_store(Path(output_dir) / "runs") as store, DemoService(store, seed=seed) as svc:
        return tune(
            demo_grid(1),
            svc.assistant_id,
            demo_scorecard(),
            variants=file,
            client=svc.client,
            judge=svc.judge,
            store=store,
            options=TuneOptions(
                max_repeats=max_repeats,
                holdout=holdout,
                seed=seed,
                run_options=RunOptions(concurrency=16, progress=progress),
                latency_min_effect_s=LATENCY_MIN_EFFECT_S,
            ),
        )


def offline_optimize(
    output_dir: str | Path,
    *,
    rounds: int = 3,
    candidates: int = 4,
    max_conversations: int | None = None,
    holdout: float = 0.3,
    seed: int = 7,
    progress: bool | None = None,
) -> OptimizeResult:
    """Search for a better prompt for the demo's draft in the embedded emulator, with the
    emulated proposer (its remedies help, do nothing or hurt); runs go to
    ``output_dir/runs``."""
    with fresh_store(Path(output_dir) / "runs") as store, DemoService(store, seed=seed) as svc:
        return optimize(
            demo_grid(1),
            svc.assistant_id,
            demo_scorecard(),
            proposer=Proposer("emulator-proposer", svc.emulator.proposer_base_url),
            client=svc.client,
            judge=svc.judge,
            store=store,
            options=OptimizeOptions(
                rounds=rounds,
                candidates=candidates,
                max_conversations=max_conversations,
                holdout=holdout,
                seed=seed,
                run_options=RunOptions(concurrency=16, progress=progress),
            ),
        )


def offline_find_failures(
    output_dir: str | Path,
    *,
    rounds: int = 3,
    per_round: int = 8,
    threshold: float = 0.25,
    max_conversations: int | None = None,
    seed: int = 7,
    progress: bool | None = None,
) -> FailureSearch:
    """Search for the callers that break the demo's draft in the embedded emulator, with its
    planted weaknesses (draft behaviours that give way for callers with certain traits, never
    shown to the generator) and the emulated persona generator; the draft asks for every
    behaviour the scorecard checks, so what fails is what was planted (and the scripted
    agent's own slips). Runs and the search's records go to ``output_dir/runs`` (prefix
    ``search``)."""
    with (
        fresh_store(Path(output_dir) / "runs") as store,
        DemoService(store, seed=seed, planted_weaknesses=True) as svc,
    ):
        svc.set_draft_prompt(FULL_INSTRUCTIONS)
        return find_failures(
            demo_grid(1),
            svc.assistant_id,
            demo_scorecard(),
            generator=PersonaGenerator("emulator-generator", svc.emulator.generator_base_url),
            client=svc.client,
            judge=svc.judge,
            store=store,
            options=FindOptions(
                rounds=rounds,
                per_round=per_round,
                records_per_persona=2,
                threshold=threshold,
                max_conversations=max_conversations,
                confirm_repeats=4,
                seed=seed,
                run_options=RunOptions(concurrency=16, progress=progress),
                run_prefix="search",
            ),
        )


def offline_nights(
    output_dir: str | Path, *, nights: int = 4, seed: int = 7, repeats: int = 2
) -> Path:
    """A store of ``nights`` nightly runs of the demo's grid in the embedded emulator, graded
    with the demo scorecard (its judged rules by the emulated judge); return the store.

    Every night runs the draft. It holds prod's prompt until the last night, when the
    "simplified" prompt lands, so the trend shows a regression against the last-known-good
    night. Run ids are ``night-01``...
    """
    if nights < 2:
        raise ValueError(f"nights must be at least 2 (a trend needs a night before), not {nights}")
    from ..grading import grade_run

    with fresh_store(Path(output_dir) / "runs") as store, DemoService(store, seed=seed) as svc:
        for night in range(1, nights + 1):
            svc.set_draft_prompt(DRAFT_INSTRUCTIONS if night == nights else PROD_INSTRUCTIONS)
            run = svc.run(demo_grid(repeats), run_id=f"night-{night:02d}")
            grade_run(run, demo_scorecard(), judge=svc.judge)
    return store
