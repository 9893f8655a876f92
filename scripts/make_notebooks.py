"""Writes the notebooks (kept as a script so their cells are reviewed as code).

Run from the checkout's root: ``python scripts/make_notebooks.py`` writes ``notebooks/*.ipynb``.
A build script, kept out of ``notebooks/`` so the wheel (which takes that folder whole as
``evalkit/data/notebooks``) ships only the notebooks."""

import ast

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
    """The parameters cell, and the cell after it that refuses a parameter papermill injected
    but the notebook does not have (papermill only warns): a misspelt gate must fail."""
    c = new_code_cell(src)
    c.metadata["tags"] = ["parameters"]
    names = [t.id for node in ast.parse(src).body if isinstance(node, ast.Assign)
             for t in node.targets if isinstance(t, ast.Name)]
    listed = ",\n".join(f"    \"{name}\"" for name in names)
    guard = new_code_cell(
        "from evalkit.report import refuse_unknown_parameters\n\n"
        "# papermill only warns about an unknown -p name (a misspelt gate would pass): refuse it\n"
        f"refuse_unknown_parameters([\n{listed},\n])"
    )
    return c, guard


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
        *params('''# Parameters (papermill: -p name value; use -r for ids such as 0012)
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
use_labels = True          # judge-correct judged rules with the hand labels stored in the runs (if any)
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
    sequential=sequential, labels=use_labels))
comparison = outcome.comparison
display(Markdown(f"# {title}"))
display(comparison)
display(Markdown(outcome.judge_note))
display(Markdown(outcome.correction_note))"""),
        new_code_cell("""# a sequential comparison: where it stopped, why, and what it saved (nothing for a fixed one)
if outcome.sequential is not None:
    record = outcome.sequential
    display(Markdown("## Sequential looks"))
    display(Markdown(record.headline() + "."))
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
                             outcome.baseline_grades, outcome.candidate_grades,
                             options=diagnose.ClusterOptions(seed=seed))
display(Markdown("\\n".join(f"- {sentence}" for sentence in why.findings)))
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
            "## Agent latency\n\nHow long the agent took to answer (each agent turn's arrival minus the "
            "previous turn's), per side, with the p50 and p95 difference and its interval (a bootstrap "
            "over cells, then conversations). A run recorded before turn timing has none."
        ),
        new_code_cell("""from evalkit.compare import LatencyUnavailableError, compare_latency

try:
    latency = compare_latency(outcome.baseline, outcome.candidate)
except LatencyUnavailableError as exc:
    display(Markdown(f"No latency comparison: {exc}"))
else:
    display(latency)
    display(HTML(plots.figure_to_img_tag(plots.agent_latency([outcome.baseline, outcome.candidate]))))"""),
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
        *params('''# Parameters
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
from evalkit.report import RunBrowser, notebook_output_dir, plots
from IPython.display import Markdown, display

output_dir = notebook_output_dir("explore", output_dir)
if store is None:
    store = demo.offline_runs(output_dir, seed=seed, repeats=repeats)
run = evalkit.load_run(run_id, store=store)
card = grading.Scorecard.load(scorecard or demo.demo_scorecard())
grades = grading.grade_run(run, card, judge=judge)  # stored grades are reused when current
display(Markdown(f"# Run `{run.run_id}`"))
display(run)
display(plots.outcomes_by_status([run]))"""),
        new_code_cell("""display(grades)  # per-rule pass rates with intervals, conversations left out, graders
summary = grades.summary
Path(output_dir).mkdir(parents=True, exist_ok=True)
summary.to_parquet(Path(output_dir) / "rules.parquet", index=False)
print(f"per-rule summary in {Path(output_dir) / 'rules.parquet'}")"""),
        new_code_cell("""browser = RunBrowser(run, grades, page_size=page_size)
browser"""),
    ]
)

tune_prompt = nb(
    [
        notebook_only(
            "# Tune a prompt across variants\n\nWhich of several prompt variants beats the draft, "
            "and is the win real? This notebook runs every variant against the same grid in waves "
            "(variants clearly worse than the best stop early), picks the best on most of the "
            "cells and confirms it on held-out cells it was not picked on. Run it as it is for the "
            "offline demo (the embedded emulator and the bundled variants file, where one variant "
            "helps, one hurts and two do nothing), or give it an `assistant_id` and a `variants` "
            "file (the service from `EVALKIT_BASE_URL` / `EVALKIT_API_KEY`, the judge from "
            "`EVALKIT_JUDGE_*`)."
        ),
        *params('''# Parameters (papermill: -p name value; use -r for ids such as 0012)
assistant_id = None        # the assistant to tune; None: the offline demo
variants = None            # variants YAML file (None: the bundled examples/variants/urdu_reminder.yaml)
grid = None                # a grid definition JSON file (a run manifest's "grid"); None: personas x contacts x context
personas = None            # persona folder (None: the bundled personas)
contacts = None            # contacts CSV (None: the bundled sample)
context = None             # what the person picking up knows
scorecard = None           # scorecard file (None: the demo's Urdu appointment-reminder scorecard)
max_repeats = 4            # waves: repeats per cell for the variants still in
holdout = 0.3              # share of cells held out to confirm the winner
seed = 7
store = None               # where the runs go (None: output_dir/runs)
output_dir = None          # None: ./evalkit-output/tune (a temp folder when run beside the notebook)
title = "Tune a prompt across variants"'''),
        new_code_cell("""%matplotlib inline
import json
import logging
import evalkit
from evalkit import demo, tuning
from evalkit.data import bundled_path, contacts_path, personas_path
from evalkit.report import notebook_output_dir, plots, table_html
from IPython.display import HTML, Markdown, display

logging.basicConfig(level=logging.WARNING)
output_dir = notebook_output_dir("tune", output_dir)
if assistant_id is None:
    result = demo.offline_tune(output_dir, variants=variants, max_repeats=max_repeats,
                               holdout=holdout, seed=seed)
else:
    if grid is not None:
        with open(grid, encoding="utf-8") as fh:
            sweep_grid = evalkit.Grid.from_definition(json.load(fh))
    else:
        sweep_grid = evalkit.Grid(personas or personas_path(), variables=contacts or contacts_path(),
                                  contexts=[context] if context else None)
    result = evalkit.tune(
        sweep_grid, assistant_id, scorecard or demo.demo_scorecard(),
        variants=variants or bundled_path("examples") / "variants" / "urdu_reminder.yaml",
        store=store or f"{output_dir}/runs",
        options=evalkit.TuneOptions(max_repeats=max_repeats, holdout=holdout, seed=seed))
display(Markdown(f"# {title}"))
display(result)"""),
        new_markdown_cell(
            "## The arms against the control\n\nEach variant's difference in score over every "
            "cell with its interval adjusted for the number of variants; diamonds show the "
            "held-out cells alone. Neither is the winner's gain: the winner was chosen and "
            "confirmed on them. Its gain (the headline) comes from fresh repeats of every cell, "
            "run for the winner and the draft after the sweep (`fresh_difference`)."
        ),
        new_code_cell("""display(HTML(plots.figure_to_img_tag(plots.arm_forest(result))))
columns = ["variant", "conversations", "score", "score_low", "score_high", "difference",
           "difference_low", "difference_high", "holdout_difference", "holdout_low",
           "holdout_high", "fresh_difference", "fresh_low", "fresh_high", "verdict",
           "dropped_at", "confirmed", "note"]
display(HTML(table_html(result.leaderboard[columns], float_format="{:.1f}")))"""),
        new_markdown_cell(
            "## Waves\n\nConversations each variant spent after each wave; a variant clearly worse "
            "than the best stops."
        ),
        new_code_cell("""if not result.waves.empty:
    spent = result.waves.pivot(index="variant", columns="wave", values="conversations")
    display(HTML(table_html(spent.reset_index())))"""),
        new_markdown_cell("## The winner's change\n\nWhat promoting the winner would write to the draft."),
        new_code_cell("""import html as _html
display(HTML(f"<pre>{_html.escape(result.diff or 'no confirmed winner: nothing to promote')}</pre>"))
summary = tuning.write_tune_outputs(result, output_dir)
print(f"winner: {result.winner}; summary and tables in {summary.parent}")"""),
    ]
)

optimize_prompt = nb(
    [
        notebook_only(
            "# Optimise a prompt\n\nCan a proposer find a better prompt than the draft, and is "
            "the win real? Each round shows the current best's failures on the selection cells "
            "to a proposer, races its candidates against the draft (the clearly worse stop "
            "early) and carries the best forward; a winner is kept only when a closed test over "
            "every candidate tried confirms it on held-out cells. Run it as it is for the offline "
            "demo (the embedded emulator and its emulated proposer, whose edits help, do nothing "
            "or hurt), or give it an `assistant_id` and a proposer (`proposer_model` and "
            "`proposer_base_url`, key from `EVALKIT_PROPOSER_API_KEY`, or `refine=True`)."
        ),
        *params("""# Parameters (papermill: -p name value; use -r for ids such as 0012)
assistant_id = None        # the assistant whose draft to improve; None: the offline demo
proposer_model = None      # an OpenAI-compatible model (None: EVALKIT_PROPOSER_MODEL)
proposer_base_url = None   # its endpoint (None: EVALKIT_PROPOSER_BASE_URL)
refine = False             # True: each candidate is a refine build (E10)
rounds = 3                 # proposal rounds at most
candidates = 4             # candidates asked for per round
max_conversations = None   # the whole search's budget (None: no cap)
personas = None            # persona folder (None: the bundled personas)
contacts = None            # contacts CSV (None: the bundled sample)
context = None             # what the person picking up knows
scorecard = None           # scorecard file (None: the demo's Urdu appointment-reminder scorecard)
holdout = 0.3              # share of cells held out to confirm the winner
seed = 7
store = None               # where the runs go (None: output_dir/runs)
output_dir = None          # None: ./evalkit-output/optimize (a temp folder when run beside the notebook)
title = "Optimise a prompt\""""),
        new_code_cell("""%matplotlib inline
import json
import logging
import evalkit
from evalkit import demo, tuning
from evalkit.data import contacts_path, personas_path
from evalkit.report import notebook_output_dir, plots, table_html
from IPython.display import HTML, Markdown, display

logging.basicConfig(level=logging.WARNING)
output_dir = notebook_output_dir("optimize", output_dir)
if assistant_id is None:
    result = demo.offline_optimize(output_dir, rounds=rounds, candidates=candidates,
                                   max_conversations=max_conversations, holdout=holdout, seed=seed)
else:
    search_grid = evalkit.Grid(personas or personas_path(), variables=contacts or contacts_path(),
                               contexts=[context] if context else None)
    proposer = "refine" if refine else evalkit.Proposer(proposer_model, proposer_base_url)
    result = evalkit.optimize(
        search_grid, assistant_id, scorecard or demo.demo_scorecard(), proposer=proposer,
        store=store or f"{output_dir}/runs",
        options=evalkit.OptimizeOptions(rounds=rounds, candidates=candidates, holdout=holdout,
                                        max_conversations=max_conversations, seed=seed))
display(Markdown(f"# {title}"))
display(result)"""),
        new_markdown_cell(
            "## Score by round\n\nEach raced candidate's difference against the draft on the "
            "selection cells with its interval (hollow: dropped after a wave), the best so far, "
            "and the confirmed winner (a star)."
        ),
        new_code_cell("""display(HTML(plots.figure_to_img_tag(plots.optimize_rounds(result))))
display(HTML(table_html(result.progress, float_format="{:.1f}")))"""),
        new_markdown_cell(
            "## Lineage\n\nEvery candidate: its round, its parent, the proposer's reason, its "
            "difference against the draft on the selection cells (what the rounds raced on) and "
            "on the held-out cells (what confirmed the winner). The winner's gain in the "
            "headline comes from neither: from fresh repeats of every cell."
        ),
        new_code_cell("""columns = ["round", "candidate", "parent", "status", "conversations", "difference",
           "difference_low", "difference_high", "holdout_difference", "holdout_low",
           "holdout_high", "dropped_at", "verdict", "kept", "rationale"]
display(HTML(table_html(result.rounds[columns], float_format="{:.1f}", max_rows=200)))"""),
        new_markdown_cell("## The winner's change\n\nWhat promoting the winner would write to the draft."),
        new_code_cell("""import html as _html
display(HTML(f"<pre>{_html.escape(result.diff or 'no confirmed winner: nothing to promote')}</pre>"))
summary = output_dir / "optimize.json"
summary.write_text(json.dumps(result.to_dict(), indent=2, ensure_ascii=False, default=str), encoding="utf-8")
result.rounds.to_parquet(output_dir / "rounds.parquet")
print(f"winner: {result.winner.name if result.winner else None}; summary in {summary}")"""),
    ]
)

trend = nb(
    [
        notebook_only(
            "# Nightly trend\n\nHow did last night compare with the nights before? This notebook reads "
            "every graded run of a store (a folder or a bucket such as `s3://team-evals/nightly`, "
            "credentials from the usual AWS environment) and plots each run's score with its interval, "
            "marking its verdict against the night before and against the last-known-good run. "
            "Run it as it is to see four offline nights of the demo assistant (the embedded emulator)."
        ),
        *params('''# Parameters (papermill: -p name value; use -r for ids and URLs)
store = None               # folder or URL of runs (s3://bucket/prefix); None: four offline demo nights
assistant_id = None        # keep this assistant's runs (None: every run)
rubric = None              # rubric version id (None: the newest graded run's scorecard)
since = None               # keep runs started on or after this date (UTC), e.g. "2026-11-01"
target = None              # keep runs of this target ("prod", "draft"; None: all)
series = None              # the series picker: one series id (see the runs table); None: every series
min_effect = 5.0           # points: smaller differences count as no difference
confidence = 0.95
nights = 4                 # nights of the offline demo (only when store is None)
seed = 7
output_dir = None          # None: ./evalkit-output/trend (a temp folder when run beside the notebook)
fail_on_regression = False # raise when a series' newest run is a confirmed regression (the nightly rule)
title = "Nightly trend"'''),
        new_code_cell("""%matplotlib inline
import logging
from evalkit import demo, flows
from evalkit.flows import HistoryOptions
from evalkit.report import notebook_output_dir, plots, table_html
from IPython.display import HTML, Markdown, display

logging.basicConfig(level=logging.WARNING)
output_dir = notebook_output_dir("trend", output_dir)
if store is None:
    store = demo.offline_nights(output_dir, nights=nights, seed=seed)
options = HistoryOptions(assistant_id=assistant_id, rubric=rubric, since=since, target=target,
                         min_effect=min_effect, confidence=confidence)
trend = flows.nightly_trend(store, options=options)
shown = trend.by_run if series is None else trend.series_frame(series)
if series is not None and shown.empty:
    raise ValueError(f"series: {series!r} is not one of this store's series: {', '.join(trend.series)}")
display(Markdown(f"# {title}"))
display(Markdown(trend.markdown()))
display(HTML(table_html(trend.summary[["series", "label", "points", "run_id", "score", "alarm", "alarm_variance"]])))"""),
        new_markdown_cell(
            "## Score by run\n\nEach run's score (0-100) with its interval, one line per series (one "
            "assistant, target, scorecard, grid and variant; pick one with the `series` parameter). The "
            "marker's colour is the verdict against the run before; a triangle marks a suspect night, a "
            "ring a regression the nightly rule confirmed, a star the runs that were last-known-good."
        ),
        new_code_cell("""display(HTML(plots.figure_to_img_tag(plots.score_trend(shown, labels=dict(trend.series_labels)))))"""),
        new_markdown_cell(
            "## Runs\n\nOne row per graded run, series after series, oldest first; `note` says why a run "
            "is not compared (partial, a shard missing, the first of its series) and which shards were merged. "
            "`alarm_z` is the nightly rule's statistic against the good nights before the run; "
            "`alarm_variance` says which variance it used: within the night plus the series' "
            "between-night variance (and from how many nights), or within the night only while the "
            "series is short."
        ),
        new_code_cell("""columns = ["series", "run_id", "started_at", "target", "assistant_version", "conversations", "score",
           "score_low", "score_high", "verdict_vs_previous", "verdict_vs_last_good", "is_last_good",
           "alarm", "alarm_z", "alarm_variance", "note"]
display(HTML(table_html(shown[columns], max_rows=200)))"""),
        new_markdown_cell(
            "## What changed\n\nWhen the nightly rule confirmed a regression: what changed between that run "
            "and its series' last-known-good run (config keys, the prompt by hunk, grid, scorecard, judge)."
        ),
        new_code_cell("""regression = trend.regression
if regression is None:
    print("no confirmed regression: nothing to explain")
else:
    try:
        changes = flows.what_changed(store, regression["run_id"])
        print(f"{regression['run_id']} against {changes.attrs['against']}: {len(changes)} change(s)")
        display(HTML(table_html(changes, max_rows=200)))
    except flows.MissingSnapshotError as exc:
        print(exc)"""),
        new_markdown_cell(
            "## Rules in the newest run\n\nEach rule's score in the newest run, against the run before "
            "and against the last-known-good run."
        ),
        new_code_cell("""columns = ["rule_id", "conversations", "score", "score_low", "score_high",
           "verdict_vs_previous", "verdict_vs_last_good"]
display(HTML(table_html(trend.newest_rules(series)[columns], max_rows=200)))"""),
        new_code_cell("""written = trend.write(output_dir)
print(f"trend and history tables in {written.parent}")
if fail_on_regression:
    trend.fail_on_regression()"""),
    ]
)

find_failures = nb(
    [
        notebook_only(
            "# Callers that break the draft\n\nWhich callers make the draft fail its scorecard, and "
            "is each failure real? Rounds of generated personas (drawn along trait axes, each "
            "checked before it runs) screen the draft; the most specific failing callers are "
            "re-run on fresh repeats, and a failure is reported only when those fresh "
            "conversations show its rate above a threshold. Run it as it is for the offline demo "
            "(the embedded emulator with planted weaknesses and its emulated persona generator), "
            "or give it an `assistant_id` and a generator (`generator_model` and "
            "`generator_base_url`, key from `EVALKIT_GENERATOR_API_KEY`; the service from "
            "`EVALKIT_BASE_URL` / `EVALKIT_API_KEY`, the judge from `EVALKIT_JUDGE_*`)."
        ),
        *params("""# Parameters (papermill: -p name value; use -r for ids such as 0012)
assistant_id = None        # the assistant whose draft to search; None: the offline demo
generator_model = None     # an OpenAI-compatible model (None: EVALKIT_GENERATOR_MODEL)
generator_base_url = None  # its endpoint (None: EVALKIT_GENERATOR_BASE_URL)
personas = None            # persona folder the found callers would join (None: the bundled personas)
contacts = None            # contacts CSV (None: the bundled sample)
context = None             # what the person picking up knows
scorecard = None           # scorecard file (None: the demo's Urdu appointment-reminder scorecard)
rounds = 3                 # rounds of generated personas at most
per_round = 8              # personas asked for per round
threshold = 0.25           # the failure rate a reported caller must be shown to exceed
max_conversations = None   # the whole search's budget (None: no cap)
seed = 7
store = None               # where the runs go (None: output_dir/runs; the offline demo always)
run_prefix = None          # the search's run ids; the same prefix on the same store resumes it
found_dir = None           # the found callers' persona folder (None: output_dir/found)
output_dir = None          # None: ./evalkit-output/find-failures (a temp folder when run beside the notebook)
title = "Callers that break the draft\""""),
        new_code_cell("""%matplotlib inline
import json
import logging
from pathlib import Path

import evalkit
from evalkit import demo
from evalkit.data import contacts_path, personas_path
from evalkit.personas import FindOptions, PersonaGenerator
from evalkit.report import notebook_output_dir, plots, table_html
from IPython.display import HTML, Markdown, display

logging.basicConfig(level=logging.WARNING)
output_dir = notebook_output_dir("find-failures", output_dir)
if assistant_id is None:
    search = demo.offline_find_failures(output_dir, rounds=rounds, per_round=per_round,
                                        threshold=threshold, max_conversations=max_conversations,
                                        seed=seed)
else:
    search_grid = evalkit.Grid(personas or personas_path(), variables=contacts or contacts_path(),
                               contexts=[context] if context else None)
    search = evalkit.find_failures(
        search_grid, assistant_id, scorecard or demo.demo_scorecard(),
        generator=PersonaGenerator(generator_model, generator_base_url),
        store=store or f"{output_dir}/runs",
        options=FindOptions(rounds=rounds, per_round=per_round, threshold=threshold,
                            max_conversations=max_conversations, seed=seed, run_prefix=run_prefix))
display(Markdown(f"# {title}"))
display(search)"""),
        new_markdown_cell(
            "## Confirmed failures\n\nEvery (persona, rule) pair re-run on fresh repeats: its "
            "failure rate on those conversations alone, with an exact interval, against the "
            "threshold. A pair is reported (filled) only when Holm's step-down over every pair "
            "the search tested shows its rate above the threshold; `rule_base_rate` is the "
            "rule's failure share over all screened conversations (a rule every caller fails is "
            "the draft's, not the caller's)."
        ),
        new_code_cell("""decision = search.decision
display(HTML(plots.figure_to_img_tag(plots.failure_rates(
    search.findings, threshold=float(decision["threshold"]),
    confidence=float(decision["confidence"])))))
columns = ["persona", "traits", "rule_id", "screen_failures", "screen_decided", "failures",
           "decided", "rate", "rate_low", "rate_high", "p_adjusted", "reported", "rule_base_rate",
           "example_conversation_id", "example"]
display(HTML(table_html(search.findings[columns], float_format="{:.2f}", max_rows=60)))"""),
        new_markdown_cell(
            "## Coverage\n\nPer trait value: the personas asked for, refused by the checks before "
            "running, dropped after screening (their caller did not behave as described), "
            "screened, failing a rule in screening, and reported."
        ),
        new_code_cell("""display(HTML(table_html(search.coverage, max_rows=60)))"""),
        new_markdown_cell(
            "## Never tried\n\nThe pairs of trait values no screened persona had: where this "
            "search did not look."
        ),
        new_code_cell("""print(f"{len(search.untried)} pair(s) of trait values never tried")
display(HTML(table_html(search.untried, max_rows=40)))"""),
        new_markdown_cell(
            "## Personas and rounds\n\nEvery persona asked for (kept, refused before running or "
            "dropped after screening, and why), then each round's counts."
        ),
        new_code_cell("""columns = ["round", "label", "status", "kind", "reason", "screen_failures", "kept_rules",
           "confirmed", "reported_rules"]
display(HTML(table_html(search.personas[columns], max_rows=80)))
display(HTML(table_html(search.rounds)))"""),
        new_markdown_cell(
            "## For the regression grid\n\nThe callers with a reported failure, as persona files: "
            "add the folder to the grid so the next draft is checked against them."
        ),
        new_code_cell("""found_dir = Path(found_dir) if found_dir else output_dir / "found"
written = search.write(found_dir)
summary = output_dir / "search.json"
summary.write_text(json.dumps(search.to_dict(), indent=2, ensure_ascii=False, default=str),
                   encoding="utf-8")
search.findings.to_parquet(output_dir / "findings.parquet")
search.coverage.to_parquet(output_dir / "coverage.parquet")
print(f"{len(written)} persona file(s) for the regression grid in {found_dir}; summary in {summary}")"""),
    ]
)

nbformat.write(compare, "notebooks/compare_draft_prod.ipynb")
nbformat.write(trend, "notebooks/nightly_trend.ipynb")
nbformat.write(explore, "notebooks/explore_run.ipynb")
nbformat.write(tune_prompt, "notebooks/tune_prompt.ipynb")
nbformat.write(optimize_prompt, "notebooks/optimize_prompt.ipynb")
nbformat.write(find_failures, "notebooks/find_failures.ipynb")
