"""``evalkit demo``: a draft-vs-prod comparison end to end on the embedded emulator.

The story: an outbound Urdu appointment reminder is built and published (prod = v1): it answers
in Nastaliq script and asks the caller to confirm the slot with a yes or no. Then someone
"simplifies" the draft prompt (v2): it loses the Nastaliq and confirmation lines and gains a
polite close. evalkit runs the same grid of personas x contacts x repeats against prod (on a
temporary clone made from its snapshot, since the service returns only the draft's config) and
against the draft, grades both with the demo scorecard (deterministic checks and the emulator's
judge), compares them with intervals, executes ``notebooks/compare_draft_prod.ipynb`` on the
stored runs, and writes ``evalkit-demo/report.html``. The same seed gives the same report.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .api import Client
from .compare import Comparison, SequentialPlan
from .data import bundled_path, scorecards_path
from .emulator import EmulatorServer, EmulatorSettings, serve
from .flows import DraftVsProd, DraftVsProdOptions, draft_vs_prod
from .grading import Judge
from .grid import Grid, load_personas
from .report import NotebookRun, execute_notebook
from .runner import RunOptions, run_grid
from .store import Run
from .targets import ConfigSnapshot, SnapshotStore, Target
from .tuning import (
    OptimizeOptions,
    OptimizeResult,
    Proposer,
    TuneOptions,
    TuneResult,
    optimize,
    tune,
)

__all__ = [
    "CONTACTS",
    "CONTEXT",
    "DEMO_PERSONAS",
    "DRAFT_INSTRUCTIONS",
    "PROD_INSTRUCTIONS",
    "DemoResult",
    "DemoService",
    "demo_grid",
    "demo_scorecard",
    "offline_nights",
    "offline_optimize",
    "offline_runs",
    "offline_tune",
    "run_demo",
]

logger = logging.getLogger("evalkit.demo")

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


class DemoService:
    """The embedded emulator with the demo's assistant: prod = v1 (published), draft = v2.

    A context manager; ``client``, ``assistant_id`` and ``judge`` (the emulated judge) are
    ready inside it. A snapshot of v1 is recorded under ``store`` so prod can run on a clone.
    """

    def __init__(
        self,
        store: str | Path,
        *,
        seed: int = 7,
        time_scale: float = TIME_SCALE,
        turn_delay: float = TURN_DELAY,
    ):
        self.store = Path(store)
        self.seed = seed
        self.time_scale = time_scale
        self.turn_delay = turn_delay
        self._stack = contextlib.ExitStack()
        self.emulator: EmulatorServer
        self.client: Client
        self.assistant_id: str
        self.judge: Judge

    def __enter__(self) -> DemoService:
        try:
            settings = EmulatorSettings(
                time_scale=self.time_scale,
                seed=self.seed,
                turn_delay=self.turn_delay,
                min_ceiling_s=CEILING_FLOOR_S,
            )
            self.emulator = self._stack.enter_context(serve(settings=settings))
            self.client = self._stack.enter_context(
                Client(self.emulator.base_url, self.emulator.api_key)
            )
            self.judge = Judge(
                model="emulator-judge",
                base_url=self.emulator.judge_base_url,
                cache_dir=self.store / ".judge-cache",
            )
            self.assistant_id = self._set_up_assistant()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()

    def _set_up_assistant(self) -> str:
        built = self.emulator.build(
            "Clinic appointment reminder",
            {"context": CONTEXT, "sampleRows": CONTACTS[:1]},
            PROD_INSTRUCTIONS,
            initial_greeting=True,
        )
        assistant_id = str(built["realtimeAssistantId"])
        assistant = next(a for a in self.client.list_assistants() if a.id == assistant_id)
        SnapshotStore(self.store).save(ConfigSnapshot.from_assistant(assistant))  # v1, for prod
        self.emulator.publish(assistant_id)
        config = assistant.config.to_json()
        config["agent"]["instructions"] = DRAFT_INSTRUCTIONS
        config["agent"]["greetingInstructions"] = GREETING
        self.client.update_assistant(assistant_id, config=config)
        logger.info("demo assistant %s: prod v1 published, draft v2 saved", assistant_id)
        return assistant_id

    def set_draft_prompt(self, instructions: str) -> None:
        """Save ``instructions`` as the draft's prompt (a new draft version if they changed)."""
        assistant = next(a for a in self.client.list_assistants() if a.id == self.assistant_id)
        config = assistant.config.to_json()
        if config["agent"].get("instructions") == instructions:
            return
        config["agent"]["instructions"] = instructions
        self.client.update_assistant(self.assistant_id, config=config)

    def run(
        self,
        grid: Grid,
        *,
        target: Target = "draft",
        run_id: str | None = None,
        options: RunOptions | None = None,
    ) -> Run:
        """Run ``grid`` on the demo assistant's ``target`` into the demo's store (``options``:
        None is 16 conversations at once, no progress bar)."""
        return run_grid(
            grid,
            self.assistant_id,
            client=self.client,
            target=target,
            store=self.store,
            run_id=run_id,
            options=options or RunOptions(concurrency=16, progress=False),
        )

    def draft_vs_prod(
        self,
        grid: Grid,
        *,
        progress: bool | None = None,
        sequential: bool = False,
    ) -> DraftVsProd:
        """Run ``grid`` on prod and on the draft, grade and compare (``sequential``: in waves
        of one repeat per cell, the grid's repeats at most, stopping at the deciding look)."""
        plan = SequentialPlan(grid.repeats) if sequential else None
        return draft_vs_prod(
            grid,
            self.assistant_id,
            demo_scorecard(),
            client=self.client,
            judge=self.judge,
            store=self.store,
            options=DraftVsProdOptions(
                run=RunOptions(concurrency=16, progress=progress), sequential=plan
            ),
        )


@dataclass(frozen=True)
class DemoResult:
    """What the demo produced: the runs, grades and comparison, and the report."""

    result: DraftVsProd
    report: Path
    notebook: NotebookRun

    @property
    def comparison(self) -> Comparison:
        """The draft-vs-prod comparison."""
        return self.result.comparison


def _notebook_path() -> Path:
    return bundled_path("notebooks") / NOTEBOOK


@contextlib.contextmanager
def _fresh_store(store: Path) -> Iterator[Path]:
    """A demo store emptied first, so a second demo in the same folder starts clean."""
    if store.exists():
        shutil.rmtree(store)
    store.mkdir(parents=True)
    yield store


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
    with _fresh_store(Path(output_dir) / "runs") as store, DemoService(store, seed=seed) as svc:
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
    with _fresh_store(Path(output_dir) / "runs") as store, DemoService(store, seed=seed) as svc:
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
    with _fresh_store(Path(output_dir) / "runs") as store, DemoService(store, seed=seed) as svc:
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
    from .grading import grade_run

    with _fresh_store(Path(output_dir) / "runs") as store, DemoService(store, seed=seed) as svc:
        for night in range(1, nights + 1):
            svc.set_draft_prompt(DRAFT_INSTRUCTIONS if night == nights else PROD_INSTRUCTIONS)
            run = svc.run(demo_grid(repeats), run_id=f"night-{night:02d}")
            grade_run(run, demo_scorecard(), judge=svc.judge)
    return store


def run_demo(
    output_dir: str | Path = "evalkit-demo",
    repeats: int = 3,
    seed: int = 7,
    *,
    progress: bool | None = None,
    sequential: bool = False,
) -> DemoResult:
    """Run the whole demo offline and return its runs, comparison and report.

    ``sequential``: run in waves of one repeat per cell (``repeats`` at most) and stop at the
    first deciding look; the report then shows the looks and the conversations saved.
    """
    out = Path(output_dir)
    with _fresh_store(out / "runs") as store, DemoService(store, seed=seed) as service:
        result = service.draft_vs_prod(demo_grid(repeats), progress=progress, sequential=sequential)
    notebook = execute_notebook(
        _notebook_path(),
        {
            "store": str(store.resolve()),
            "baseline_run": "prod",
            "candidate_run": "draft",
            "output_dir": str((out / "output").resolve()),
            "title": "Draft vs prod: clinic appointment reminder (evalkit demo)",
        },
        html=out / "report.html",
        output=out / "output" / NOTEBOOK,
        timeout=600,
    )
    if notebook.html is None:
        raise RuntimeError(f"the report notebook produced no HTML: {notebook.error}")
    return DemoResult(result, notebook.html, notebook)


@dataclass(frozen=True)
class BiasedJudgeDemo:
    """The biased-judge story: the lenient judge's comparison, the same runs corrected with
    queue labels, and the exact judge's comparison (the truth the labels stand for)."""

    judge_only: Comparison
    corrected: Comparison
    exact: Comparison
    labels: int  # per side
    false_pass: float

    def lines(self) -> list[str]:
        """Three verdict lines and what the labels did."""

        def line(name: str, comparison: Comparison) -> str:
            row = comparison.summary.iloc[0]
            return (
                f"{name:<26} {row['verdict']:<22} {row['difference']:+6.1f} points "
                f"[{row['difference_low']:+.1f}, {row['difference_high']:+.1f}]"
            )

        return [
            f"a judge that calls {self.false_pass:.0%} of true failures 'pass', and "
            f"{self.labels} queue labels a side:",
            line("judge alone", self.judge_only),
            line("judge-corrected (PPI++)", self.corrected),
            line("exact judge (the truth)", self.exact),
        ]


def run_biased_judge_demo(
    output_dir: str | Path = "evalkit-demo",
    *,
    repeats: int = 3,
    seed: int = 7,
    labels: int = 60,
    false_pass: float = 0.5,
    progress: bool | None = None,
) -> BiasedJudgeDemo:
    """The demo's draft vs prod graded by a lenient emulated judge (``false_pass`` of true
    failures called pass on every judged rule), which hides part of the regression; then
    ``labels`` pairs a side drawn by :func:`~evalkit.grading.label_queue` are labelled with the
    exact judge's verdicts (standing in for a person) and stored with their inclusion
    probabilities, and the comparison is judge-corrected with them."""
    from .compare import compare_grades
    from .grading import LabelOptions, Scorecard, grade_run, label_queue
    from .store import Label

    card = Scorecard.validate(demo_scorecard())
    judged = [rule.rule_id for rule in card.judged_rules]
    with _fresh_store(Path(output_dir) / "runs") as store, DemoService(store, seed=seed) as svc:
        svc.emulator.admin(
            "PUT", "/judge", {"falsePassRate": false_pass, "rules": judged, "seed": seed}
        )
        result = svc.draft_vs_prod(demo_grid(repeats), progress=progress)
        exact = Judge(model="exact", base_url=svc.emulator.judge_base_url)
        truth = [
            grade_run(run, card, exact, save=False).frame
            for run in (result.baseline, result.candidate)
        ]
        for i, (run, grades, true) in enumerate(
            zip((result.baseline, result.candidate), (result.baseline_grades,
                result.candidate_grades), truth, strict=True)
        ):  # fmt: skip
            queue = label_queue(grades, options=LabelOptions(n=labels, seed=seed + i))
            said = {
                (str(c), str(r)): str(v)
                for c, r, v in zip(
                    true["conversation_id"], true["rule_id"], true["verdict"], strict=True
                )
            }
            run.add_labels(
                Label(
                    conversation_id=str(row.conversation_id),
                    rule_id=str(row.rule_id),
                    label=said[(str(row.conversation_id), str(row.rule_id))],
                    labelled_by="exact judge (demo)",
                    rubric_version_id=card.rubric_version_id,
                    judge_verdict=str(row.verdict),
                    inclusion_probability=float(str(row.inclusion_probability)),
                )
                for row in queue.itertuples()
                if said.get((str(row.conversation_id), str(row.rule_id))) in ("pass", "fail", "na")
            )
        corrected = compare_grades(
            result.baseline_grades,
            result.candidate_grades,
            labels=(result.baseline.labels(), result.candidate.labels()),
        )
        return BiasedJudgeDemo(
            judge_only=result.comparison,
            corrected=corrected,
            exact=compare_grades(truth[0], truth[1]),
            labels=labels,
            false_pass=false_pass,
        )
