"""``evalkit demo``'s whole story: draft vs prod on the embedded emulator, graded, compared,
and the comparison notebook executed into ``report.html``; and the biased-judge variant, where
queue labels correct a lenient judge."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..compare import Comparison
from ..data import bundled_path
from ..flows import DraftVsProd
from ..grading import Judge
from ..report import NotebookRun, execute_notebook
from ._service import DemoService, fresh_store
from ._story import NOTEBOOK, demo_grid, demo_scorecard

__all__ = ["BiasedJudgeDemo", "DemoResult", "run_biased_judge_demo", "run_demo"]


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
    with fresh_store(out / "runs") as store, DemoService(store, seed=seed) as service:
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
    from ..compare import compare_grades
    from ..grading import GradeOptions, LabelOptions, Scorecard, grade_run, label_queue
    from ..store import Label

    card = Scorecard.validate(demo_scorecard())
    judged = [rule.rule_id for rule in card.judged_rules]
    with fresh_store(Path(output_dir) / "runs") as store, DemoService(store, seed=seed) as svc:
        svc.emulator.admin(
            "PUT", "/judge", {"falsePassRate": false_pass, "rules": judged, "seed": seed}
        )
        result = svc.draft_vs_prod(demo_grid(repeats), progress=progress)
        exact = Judge(model="exact", base_url=svc.emulator.judge_base_url)
        truth = [
            grade_run(run, card, judge=exact, options=GradeOptions(save=False)).frame
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
