"""Writes the notebooks (kept as a script so their cells are reviewed as code)."""

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

KERNEL = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


def nb(cells):
    book = new_notebook(cells=cells, metadata=KERNEL)
    for number, cell in enumerate(book.cells, 1):
        cell["id"] = f"cell-{number}"
    return book


def params(src):
    c = new_code_cell(src)
    c.metadata["tags"] = ["parameters"]
    return c


def notebook_only(src):
    """How to use the notebook: shown in JupyterLab, left out of reports."""
    c = new_markdown_cell(src)
    c.metadata["tags"] = ["notebook-only"]
    return c


compare = nb(
    [
        notebook_only(
            "# Draft vs prod\n\nIs the draft better or worse than prod, and how sure are we? "
            "This notebook compares two stored runs of the same grid under one scorecard. "
            "Run it as it is to see the offline demo (the embedded emulator), or give it `store` "
            "and run ids, or an `assistant_id` to run the grid on prod and draft first "
            "(the service from `EVALKIT_BASE_URL` / `EVALKIT_API_KEY`, the judge from `EVALKIT_JUDGE_*`)."
        ),
        params('''# Parameters (papermill: -p name value; use -r for ids such as 0012)
store = None               # folder of runs holding baseline_run and candidate_run; None: the offline demo
baseline_run = "prod"
candidate_run = "draft"
assistant_id = None        # run the grid on prod and draft first (needs a configured service)
personas = None            # persona folder for assistant_id runs (None: the bundled personas)
contacts = None            # contacts CSV for assistant_id runs (None: the bundled sample)
context = None             # what the person picking up knows
repeats = 3                # repeats per cell (with sequential: at most)
sequential = False         # run in waves of one repeat per cell and stop at the first deciding look
scorecard = None           # scorecard file (None: the demo's Urdu appointment-reminder scorecard)
min_effect = 5.0           # points: smaller differences count as no difference
confidence = 0.95
seed = 7
output_dir = None          # None: ./evalkit-output/compare (a temp folder when run beside the notebook)
fail_on_regression = False
fail_unless_non_inferior = False  # raise unless the draft is shown not worse by more than min_effect
title = "Draft vs prod"'''),
        new_code_cell("""%matplotlib inline
import logging
import evalkit
from evalkit import demo, diagnose, flows
from evalkit.report import RunBrowser, notebook_output_dir, plots, rule_table, table_html
from IPython.display import HTML, Markdown, display

logging.basicConfig(level=logging.WARNING)
output_dir = notebook_output_dir("compare", output_dir)
if store is None and assistant_id is None:
    store = demo.offline_runs(output_dir, seed=seed, repeats=repeats, sequential=sequential)
elif store is None:
    store = f"{output_dir}/runs"
outcome = flows.compare_request(flows.ComparisonRequest(
    store=store, scorecard=scorecard or demo.demo_scorecard(), baseline_run=baseline_run,
    candidate_run=candidate_run, assistant_id=assistant_id, personas=personas, contacts=contacts,
    context=context, repeats=repeats, min_effect=min_effect, confidence=confidence,
    sequential=sequential))
comparison = outcome.comparison
display(Markdown(f"# {title}"))
display(comparison)
display(Markdown(outcome.judge_note))"""),
        new_code_cell("""# a sequential comparison: where it stopped, why, and what it saved (nothing for a fixed one)
if outcome.sequential is not None:
    record = outcome.sequential
    display(Markdown("## Sequential looks"))
    display(Markdown(record.sentence() + "."))
    display(HTML(plots.figure_to_img_tag(plots.sequential_looks(
        record.looks, min_effect=record.plan.min_effect, max_conversations=record.max_conversations))))
    display(HTML(table_html(record.looks)))"""),
        new_markdown_cell(
            "## Which rules moved\n\nPer-rule differences in pass rate (candidate minus baseline) with "
            "intervals adjusted for the number of rules compared at once."
        ),
        new_code_cell("""# figures as <img> tags: the report keeps each plot's title as its alt text
display(HTML(plots.figure_to_img_tag(plots.rule_forest(comparison))))
display(HTML(table_html(rule_table(comparison))))"""),
        new_markdown_cell(
            "## Why did it fail\n\nFor each rule that moved, the failing conversations grouped by what "
            "failed (their failing turn and the grader's reason, as character n-grams, so Nastaliq, "
            "Roman Urdu and English alike), with the failures per side and an example; then the "
            "conversations where the simulated caller, not the assistant, is suspect; then the lint "
            "findings of one config and not the other."
        ),
        new_code_cell("""why = diagnose.why_it_failed(comparison, outcome.baseline, outcome.candidate,
                             outcome.baseline_grades, outcome.candidate_grades, seed=seed)
display(Markdown("\\n".join(f"- {sentence}" for sentence in why.sentences())))
display(HTML(table_html(why.cluster_table(), max_rows=40)))
if len(why.flags):
    display(HTML(table_html(why.flag_counts)))
    display(HTML(table_html(why.flags[["side", "conversation_id", "flag", "reason"]], max_rows=20)))
if len(why.lint):
    display(HTML(table_html(why.lint)))"""),
        new_markdown_cell(
            "## Scores\n\nCell mean scores per side, then the candidate's mean score by persona and contact record."
        ),
        new_code_cell("""display(HTML(plots.figure_to_img_tag(plots.score_distributions(comparison))))
heatmap = plots.persona_record_heatmap(outcome.candidate_grades, outcome.candidate)
display(HTML(plots.figure_to_img_tag(heatmap)))"""),
        new_markdown_cell(
            "## Outcomes and timing\n\nConversations that did not end `done` are left out of every score; "
            "here is how many, and why."
        ),
        new_code_cell("""sides = [outcome.baseline, outcome.candidate]
display(HTML(plots.figure_to_img_tag(plots.outcomes_by_status(sides))))
display(HTML(plots.figure_to_img_tag(plots.turns_and_latency(sides))))"""),
        new_markdown_cell(
            "## Conversations side by side\n\nThe same cells on both sides, with each rule's verdict, "
            "its reason and the evidence turn."
        ),
        new_code_cell("""browser = RunBrowser(outcome.baseline, outcome.baseline_grades, comparison_run=outcome.candidate,
                     comparison_grades=outcome.candidate_grades, clusters=why.clusters)
display(HTML(browser.to_html(limit=1)))"""),
        new_code_cell("""summary = flows.write_outputs(outcome, output_dir)
print(f"verdict: {comparison.verdict}; summary and tables in {summary.parent}")
if fail_on_regression:
    outcome.fail_on_regression()
if fail_unless_non_inferior:
    outcome.fail_unless_non_inferior()"""),
    ]
)

explore = nb(
    [
        notebook_only(
            "# Explore a run\n\nBrowse one run's conversations with their grades: filter by persona, "
            "rule, verdict, status or text. Run it as it is to explore the offline demo's draft run."
        ),
        params('''# Parameters
store = None             # folder of runs; None: the offline demo
run_id = "draft"
scorecard = None         # scorecard file (None: the demo scorecard); grades are read from the run when current
judge = None             # None: the stored grades (any judge) or EVALKIT_JUDGE_*; False: judged rules n/a
page_size = 10
repeats = 1              # repeats per cell of the offline demo's grid (only when store is None)
seed = 7
output_dir = None        # None: ./evalkit-output/explore (a temp folder when run beside the notebook)'''),
        new_code_cell("""%matplotlib inline
from pathlib import Path

import evalkit
from evalkit import demo, grading
from evalkit.report import RunBrowser, notebook_output_dir, plots, table_html
from IPython.display import HTML, Markdown, display

output_dir = notebook_output_dir("explore", output_dir)
if store is None:
    store = demo.offline_runs(output_dir, seed=seed, repeats=repeats)
run = evalkit.load_run(run_id, store=store)
card = grading.Scorecard.load(scorecard or demo.demo_scorecard())
grades = grading.grade_run(run, card, judge=judge)  # stored grades are reused when current
display(Markdown(f"# Run `{run.run_id}`"))
display(run)
display(plots.outcomes_by_status([run]))"""),
        new_code_cell("""summary = grades.summary()
Path(output_dir).mkdir(parents=True, exist_ok=True)
summary.to_parquet(Path(output_dir) / "rules.parquet", index=False)
display(HTML(table_html(summary, float_format="{:.2f}")))
print(f"per-rule summary in {Path(output_dir) / 'rules.parquet'}")"""),
        new_code_cell("""browser = RunBrowser(run, grades.frame, page_size=page_size)
browser"""),
    ]
)

nbformat.write(compare, "notebooks/compare_draft_prod.ipynb")
nbformat.write(explore, "notebooks/explore_run.ipynb")
