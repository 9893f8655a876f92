"""The notebooks in ``notebooks/``: their shape as committed, and real runs with papermill.

Static checks (fast): one cell tagged ``parameters``, kernelspec ``python3``, no committed
outputs, the generated notebooks equal what ``scripts/make_notebooks.py`` writes, an unknown parameter
refused. Executions (slow): each notebook runs in a real ``python3`` kernel with its
defaults against the embedded emulator (offline), from a copy under ``tmp_path`` with the kernel
in ``tmp_path`` (as ``evalkit report`` runs it in the caller's folder), so the default outputs
land in ``tmp_path/evalkit-output/<notebook>``; the side outputs are read back; the compare
notebook with ``fail_on_regression`` makes papermill exit non-zero; progress under papermill is a
few lines. Run as papermill runs it from a checkout, a notebook leaves ``git status`` clean.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalkit.report import NotebookRun, ReportError, check_parameters, execute_notebook

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
ALL = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
GENERATED = (
    "compare_draft_prod.ipynb",
    "explore_run.ipynb",
    "find_failures.ipynb",
    "nightly_trend.ipynb",
    "optimize_prompt.ipynb",
    "tune_prompt.ipynb",
)
EXECUTION_TIMEOUT = 480.0
#: "prod: 5 of 54 (9%): 5 done" -> the progress's description ("prod")
PROGRESS_LINE = re.compile(r"^(?P<what>.+?): (?:\d+ of \d+|finished after|stopped after)")


def _load(name: str) -> dict[str, Any]:
    book: dict[str, Any] = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
    return book


def _code_cells(book: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in book["cells"] if c["cell_type"] == "code"]


def _copy(name: str, folder: Path) -> Path:
    """A copy of the notebook in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(NOTEBOOKS / name, folder / name))


def _execute(name: str, folder: Path, parameters: dict[str, Any] | None = None) -> NotebookRun:
    """Run a copy kept in ``folder/notebooks`` with the kernel in ``folder``."""
    source = _copy(name, folder / "notebooks")
    return execute_notebook(
        source,
        parameters or {},
        output=folder / "notebooks" / f"executed-{name}",
        html=folder / f"{source.stem}.html",
        timeout=EXECUTION_TIMEOUT,
        cwd=folder,
    )


def _outputs(run: NotebookRun, notebook: str) -> Path:
    """Where a run with the default ``output_dir`` wrote: ``<kernel cwd>/evalkit-output/...``."""
    return run.notebook.parent.parent / "evalkit-output" / notebook


def _stderr_lines(executed: Path) -> list[str]:
    book = json.loads(executed.read_text(encoding="utf-8"))
    text = "".join(
        "".join(out["text"])
        for cell in book["cells"]
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream" and out.get("name") == "stderr"
    )
    return text.splitlines()


def _errors(executed: Path) -> list[dict[str, Any]]:
    book = json.loads(executed.read_text(encoding="utf-8"))
    return [
        out
        for cell in book["cells"]
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]


@pytest.fixture(autouse=True)
def _progress_as_papermill_sees_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """No forced progress mode and no live front end leak into the kernels started here."""
    for name in ("EVALKIT_PROGRESS", "JPY_SESSION_NAME", "VSCODE_PID"):
        monkeypatch.delenv(name, raising=False)


# --------------------------------------------------------------------------- as committed
def test_the_three_notebooks_are_there() -> None:
    assert {"compare_draft_prod.ipynb", "explore_run.ipynb", "refine_loop.ipynb"} <= set(ALL)


@pytest.mark.parametrize("name", ALL)
def test_exactly_one_parameters_cell_and_it_is_code(name: str) -> None:
    book = _load(name)
    tagged = [c for c in book["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{name}: {len(tagged)} cells tagged parameters"
    assert tagged[0]["cell_type"] == "code"
    # papermill injects after it, so it must come before any cell that uses a parameter
    assert _code_cells(book)[0] is tagged[0]


@pytest.mark.parametrize("name", ALL)
def test_kernelspec_is_python3(name: str) -> None:
    spec = _load(name)["metadata"]["kernelspec"]
    assert spec["name"] == "python3"
    assert spec["language"] == "python"


@pytest.mark.parametrize("name", ALL)
def test_no_committed_outputs_or_execution_counts(name: str) -> None:
    book = _load(name)
    for cell in _code_cells(book):
        assert cell.get("outputs") == [], f"{name}: a cell has committed outputs"
        assert cell.get("execution_count") is None, f"{name}: a cell has an execution count"
    assert "papermill" not in book["metadata"], f"{name}: committed after a papermill run"
    assert "widgets" not in book["metadata"], f"{name}: committed widget state"


@pytest.mark.parametrize("name", ALL)
def test_parameters_include_output_dir_and_run_offline_by_default(name: str) -> None:
    from evalkit.report import notebook_parameters

    params = notebook_parameters(NOTEBOOKS / name)
    assert "output_dir" in params
    assert (
        params["output_dir"]["default"] == "None"
    )  # ./evalkit-output/<notebook>, or a temp folder
    # every default that names the service is None: the embedded emulator is used
    for target in ("store", "assistant_id", "assistant"):
        if target in params:
            assert params[target]["default"] == "None", f"{name}: {target} defaults to a service"


@pytest.mark.slow
def test_generated_notebooks_equal_what_the_script_writes(tmp_path: Path) -> None:
    (tmp_path / "notebooks").mkdir()
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_notebooks.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for name in GENERATED:
        written = (tmp_path / "notebooks" / name).read_text(encoding="utf-8")
        committed = (NOTEBOOKS / name).read_text(encoding="utf-8")
        assert written == committed, f"{name} is stale: run python scripts/make_notebooks.py"


@pytest.mark.parametrize("name", ALL)
def test_an_unknown_parameter_is_refused_listing_the_known_ones(name: str) -> None:
    from evalkit.report import notebook_parameters

    known = sorted(notebook_parameters(NOTEBOOKS / name))
    with pytest.raises(ReportError) as caught:
        check_parameters(NOTEBOOKS / name, {"output_dir": "x", "no_such_knob": 1})
    message = str(caught.value)
    assert "'no_such_knob'" in message
    assert all(k in message for k in known), message
    assert "output_dir" in message


def test_a_refused_parameter_runs_nothing(tmp_path: Path) -> None:
    source = _copy("compare_draft_prod.ipynb", tmp_path)
    with pytest.raises(ReportError, match="its parameters are"):
        execute_notebook(source, {"repeat": 2}, output=tmp_path / "out.ipynb")
    assert not (tmp_path / "out.ipynb").exists()
    assert not (tmp_path / "evalkit-output").exists()


# --------------------------------------------------------------------------- executed
@pytest.fixture(scope="module")
def compare_run(tmp_path_factory: pytest.TempPathFactory) -> NotebookRun:
    """The compare notebook run once with no parameters at all (its defaults)."""
    mp = pytest.MonkeyPatch()
    for name in (
        "JPY_SESSION_NAME",
        "VSCODE_PID",
        *(k for k in os.environ if k.startswith("EVALKIT_")),
    ):
        mp.delenv(name, raising=False)
    try:
        return _execute("compare_draft_prod.ipynb", tmp_path_factory.mktemp("compare"))
    finally:
        mp.undo()


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.timeout(600)
def test_compare_runs_with_defaults_and_writes_the_verdict(compare_run: NotebookRun) -> None:
    assert compare_run.ok, compare_run.error
    assert compare_run.exit_code == 0
    out = _outputs(compare_run, "compare")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["verdict"] == "regressed"  # the demo's draft lost its script and confirmation
    assert summary["baseline_run"] == "prod"
    assert summary["candidate_run"] == "draft"
    assert summary["summary"]["difference_low"] < summary["summary"]["difference_high"] < 0
    by_rule = pd.read_parquet(out / "by_rule.parquet")
    assert by_rule.set_index("rule_id").at["urdu-script", "direction"] == "regressed"
    assert {"by_cell.parquet", "by_persona.parquet", "grades.parquet"} <= {
        p.name for p in out.iterdir()
    }
    assert (out / "runs").is_dir()  # the offline demo's store went to output_dir too
    assert _errors(compare_run.notebook) == []


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.timeout(600)
def test_compare_report_html_is_static(compare_run: NotebookRun) -> None:
    assert compare_run.html is not None
    page = compare_run.html.read_text(encoding="utf-8")
    assert "regressed" in page
    assert page.count("<img") >= 4  # the plots, as PNG
    assert not re.search(r'(?:src|href)="https?://', page), "a resource from the network"
    assert "store = None" not in page  # inputs hidden


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.timeout(600)
def test_progress_under_papermill_is_a_few_lines(compare_run: NotebookRun) -> None:
    lines = _stderr_lines(compare_run.notebook)
    assert not any("\r" in line for line in lines), "a terminal bar in a notebook"
    assert not any("%|" in line for line in lines), "a tqdm bar under papermill"
    per_run = Counter(m["what"] for line in lines if (m := PROGRESS_LINE.match(line)))
    assert len(per_run) == 2, lines  # prod and draft each said something
    conversations = len(
        pd.read_parquet(_outputs(compare_run, "compare") / "grades.parquet")[
            "conversation_id"
        ].unique()
    )
    for what, count in per_run.items():
        assert 3 <= count <= 12, f"{what}: {count} lines"
    assert sum(per_run.values()) < conversations, "a line per update"
    assert sum("finished after" in line for line in lines) == 2
    assert len(lines) <= 26, lines  # nothing else floods stderr


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.timeout(600)
def test_fail_on_regression_makes_papermill_exit_non_zero(
    compare_run: NotebookRun, tmp_path: Path
) -> None:
    """As the nightly job runs it: papermill's CLI with ``-p fail_on_regression True``."""
    store = _outputs(compare_run, "compare") / "runs"
    source = _copy("compare_draft_prod.ipynb", tmp_path)
    executed = tmp_path / "executed.ipynb"
    command = [sys.executable, "-m", "papermill", str(source), str(executed)]
    command += ["-p", "fail_on_regression", "True", "-p", "store", str(store)]
    command += ["-p", "output_dir", str(tmp_path / "out"), "-k", "python3", "--no-progress-bar"]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=EXECUTION_TIMEOUT, check=False
    )
    assert done.returncode != 0, done.stdout + done.stderr
    errors = _errors(executed)
    assert [e["ename"] for e in errors] == ["Regression"]
    assert "regressed" in errors[0]["evalue"]
    # the side outputs were written before it raised, so CI keeps them
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["verdict"] == "regressed"


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.timeout(600)
def test_fail_on_regression_still_renders_the_report(
    compare_run: NotebookRun, tmp_path: Path
) -> None:
    store = _outputs(compare_run, "compare") / "runs"
    run = _execute(
        "compare_draft_prod.ipynb",
        tmp_path,
        {"store": str(store), "fail_on_regression": True, "output_dir": str(tmp_path / "o")},
    )
    assert not run.ok
    assert run.exit_code == 1
    assert run.error is not None
    assert "Regression" in run.error
    assert run.html is not None
    assert "regressed" in run.html.read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.timeout(600)
def test_explore_runs_with_defaults(tmp_path: Path) -> None:
    run = _execute("explore_run.ipynb", tmp_path)
    assert run.ok, run.error
    out = _outputs(run, "explore")
    rules = pd.read_parquet(out / "rules.parquet")
    assert "urdu-script" in set(rules["rule_id"])
    book = json.loads(run.notebook.read_text(encoding="utf-8"))
    mimes = [set(o.get("data", {})) for c in book["cells"] for o in c.get("outputs", [])]
    assert any("application/vnd.jupyter.widget-view+json" in m for m in mimes)  # the RunBrowser
    assert any("image/png" in m for m in mimes)
    per_run = Counter(
        m["what"] for line in _stderr_lines(run.notebook) if (m := PROGRESS_LINE.match(line))
    )
    assert per_run, "no progress shown"
    assert all(count <= 12 for count in per_run.values()), per_run


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.timeout(600)
def test_refine_loop_runs_with_defaults_and_writes_its_rounds(tmp_path: Path) -> None:
    run = _execute("refine_loop.ipynb", tmp_path)
    assert run.ok, run.error
    out = _outputs(run, "refine-loop")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    rounds = pd.read_parquet(out / "rounds.parquet")
    assert len(rounds) == len(summary["rounds"]) == 2  # round 0 (the draft) and one build
    assert summary["holdout_cells"], "no held-out cells"
    assert summary["stop_reason"]
    assert _errors(run.notebook) == []


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.timeout(600)
def test_find_failures_runs_with_defaults_and_writes_the_found_callers(tmp_path: Path) -> None:
    """The offline caller search (planted weaknesses, the emulated generator): its confirmed
    pairs with intervals, a planted weakness among the reported ones, the coverage by trait
    value, the pairs never tried, and the found callers as a persona folder where
    ``found_dir`` says, outside the checkout."""
    from evalkit.emulator.dialogue import WEAKNESSES, persona_traits
    from evalkit.grid import load_personas
    from evalkit.personas import TRAIT_AXES

    found_dir = tmp_path / "regression-personas"
    run = _execute("find_failures.ipynb", tmp_path, {"found_dir": str(found_dir)})
    assert run.ok, run.error
    assert _errors(run.notebook) == []
    out = _outputs(run, "find-failures")
    findings = pd.read_parquet(out / "findings.parquet")
    reported = findings[findings["reported"]]
    assert len(reported) >= 1
    assert (reported["p_adjusted"] <= 0.05).all()
    assert (reported["rate_low"] > 0.0).all()
    assert (
        (findings["rate_low"] <= findings["rate"]) & (findings["rate"] <= findings["rate_high"])
    ).all()
    assert (findings["decided"] >= findings["failures"]).all()
    # the callers with a reported failure are the persona folder, with their traits
    found = load_personas(found_dir)
    assert {p.label for p in found} == set(reported["persona"])
    assert all(p.traits and p.provenance for p in found)
    # at least one reported pair is a planted weakness: the caller has every trait of its row
    behaviours = {p.label: p.behavior for p in found}
    assert any(
        w.traits <= persona_traits({"behavior": behaviours[str(persona)]})
        for persona in reported["persona"]
        for w in WEAKNESSES
    )
    coverage = pd.read_parquet(out / "coverage.parquet")
    assert set(coverage["axis"]) == {a.name for a in TRAIT_AXES}
    summary = json.loads((out / "search.json").read_text(encoding="utf-8"))
    assert summary["conversations"] > 0
    assert len(summary["findings"]) == len(findings)
    book = json.loads(run.notebook.read_text(encoding="utf-8"))
    html = run.html.read_text(encoding="utf-8") if run.html else ""
    assert "data:image/png;base64" in html  # the confirmed pairs' plot
    said = "".join(
        "".join(o.get("text", ""))
        for c in book["cells"]
        for o in c.get("outputs", [])
        if o.get("output_type") == "stream"
    )
    assert f"{len(summary['untried'])} pair(s) of trait values never tried" in said
    assert summary["untried"], "the default search leaves some value pairs untried"
    assert f"{len(found)} persona file(s) for the regression grid in {found_dir}" in said
    assert ROOT not in found_dir.resolve().parents


# --------------------------------------------------------------------------- outputs never in the checkout
def test_default_outputs_go_under_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.report import notebook_output_dir

    monkeypatch.chdir(tmp_path)
    assert notebook_output_dir("explore") == tmp_path.resolve() / "evalkit-output" / "explore"
    assert notebook_output_dir("explore", tmp_path / "mine") == tmp_path / "mine"
    assert not (tmp_path / "evalkit-output").exists()  # choosing creates nothing


@pytest.mark.parametrize("where", ["notebooks", "root"])
def test_default_outputs_never_land_in_the_checkout(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.report import notebook_output_dir

    monkeypatch.chdir(NOTEBOOKS if where == "notebooks" else ROOT)
    chosen = notebook_output_dir("explore")
    try:
        assert ROOT not in chosen.resolve().parents, chosen
        assert chosen.is_dir()
        assert not any(chosen.iterdir())  # a fresh temp folder
    finally:
        shutil.rmtree(chosen, ignore_errors=True)


def test_default_outputs_never_land_beside_a_notebook_jupyterlab_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.report import notebook_output_dir

    monkeypatch.chdir(tmp_path)  # JupyterLab starts the kernel in the notebook's folder
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "explore_run.ipynb"))
    chosen = notebook_output_dir("explore")
    try:
        assert tmp_path.resolve() not in chosen.resolve().parents, chosen
    finally:
        shutil.rmtree(chosen, ignore_errors=True)


def _git_status() -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"{ROOT} is not a git checkout: {done.stderr.strip()}")
    return done.stdout


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.timeout(600)
@pytest.mark.parametrize("kernel_cwd", ["caller", "notebook folder"])
def test_papermill_on_the_checkouts_notebook_leaves_git_status_clean(
    kernel_cwd: str, tmp_path: Path
) -> None:
    """``papermill notebooks/explore_run.ipynb out.ipynb`` from a temp folder, and with the
    kernel in ``notebooks/`` (``--cwd``): nothing appears in the checkout."""
    before = _git_status()
    command = [sys.executable, "-m", "papermill", str(NOTEBOOKS / "explore_run.ipynb")]
    command += [str(tmp_path / "out.ipynb"), "-k", "python3", "--no-progress-bar"]
    if kernel_cwd == "notebook folder":
        command += ["--cwd", str(NOTEBOOKS)]
    done = subprocess.run(
        command,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=EXECUTION_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert _git_status() == before
    if kernel_cwd == "caller":
        assert (tmp_path / "evalkit-output" / "explore" / "rules.parquet").is_file()
    else:
        assert not (tmp_path / "evalkit-output").exists()
        # the notebook says where its outputs went: a temp folder outside the checkout
        book = json.loads((tmp_path / "out.ipynb").read_text(encoding="utf-8"))
        said = "".join(
            "".join(o.get("text", ""))
            for c in book["cells"]
            for o in c.get("outputs", [])
            if o.get("output_type") == "stream"
        )
        match = re.search(r"per-rule summary in (\S+rules\.parquet)", said)
        assert match, said
        written = Path(match.group(1))
        assert written.is_file()
        assert ROOT not in written.resolve().parents
        shutil.rmtree(written.parent, ignore_errors=True)


# --------------------------------------------------------------------------- nightly CI example
NIGHTLY = ROOT / "examples" / "nightly.yml"
SECRETS = ("EVALKIT_API_KEY", "EVALKIT_JUDGE_API_KEY")


def _workflow() -> dict[Any, Any]:
    import yaml

    loaded: dict[Any, Any] = yaml.safe_load(NIGHTLY.read_text(encoding="utf-8"))
    return loaded


def _steps() -> list[dict[str, Any]]:
    (job,) = _workflow()["jobs"].values()
    steps: list[dict[str, Any]] = job["steps"]
    return steps


def _report_step() -> dict[str, Any]:
    (step,) = [s for s in _steps() if "compare_draft_prod.ipynb" in s.get("run", "")]
    return step


def _notebook_args(command: str) -> dict[str, str]:
    """``-p/-r NAME VALUE`` pairs of the step's command (shell line continuations joined)."""
    import shlex

    words = shlex.split(command.replace("\\\n", " "))
    words = words[words.index("report") :]  # not mkdir's -p
    return {words[i + 1]: words[i + 2] for i, w in enumerate(words[:-2]) if w in ("-p", "-r")}


def test_nightly_is_a_scheduled_workflow() -> None:
    workflow = _workflow()
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert triggers["schedule"][0]["cron"]
    assert "workflow_dispatch" in triggers
    assert workflow["permissions"] == {"contents": "read"}


def test_nightly_runs_the_compare_notebook_failing_on_a_regression() -> None:
    step = _report_step()
    command = step["run"]
    assert "evalkit report notebooks/compare_draft_prod.ipynb" in command
    args = _notebook_args(command)
    assert args["fail_on_regression"] in ("true", "True")
    assert args["assistant_id"] == "$ASSISTANT_ID"
    check_parameters(NOTEBOOKS / "compare_draft_prod.ipynb", args)  # every name is known
    assert "-o" in command
    assert "report.html" in command
    assert "if" not in step  # a failure here fails the job


def test_nightly_keeps_notebook_and_report_also_when_it_failed() -> None:
    steps = _steps()
    report_at = steps.index(_report_step())
    (upload,) = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert steps.index(upload) > report_at
    assert "always()" in upload["if"]
    paths = upload["with"]["path"]
    assert "report.html" in paths
    assert "report.ipynb" in paths
    assert "summary.json" in paths or "output/*.json" in paths


def test_nightly_takes_keys_from_secrets_and_settings_from_vars() -> None:
    step = _report_step()
    env = step["env"]
    for name in SECRETS:
        assert env[name] == f"${{{{ secrets.{name} }}}}"
    for name in ("EVALKIT_BASE_URL", "EVALKIT_JUDGE_BASE_URL", "EVALKIT_JUDGE_MODEL"):
        assert env[name] == f"${{{{ vars.{name} }}}}"
    assert "vars.EVALKIT_ASSISTANT_ID" in env["ASSISTANT_ID"]


def test_nightly_writes_no_secret_inline() -> None:
    text = NIGHTLY.read_text(encoding="utf-8")
    assert not re.search(r"sk_[A-Za-z0-9_]{6,}|\b[0-9a-f]{32,}\b|Bearer ", text)
    for step in _steps():
        assert "secrets." not in step.get("run", ""), f"{step.get('name')}: a secret in a script"
        for key, value in step.get("with", {}).items():
            assert "secrets." not in str(value), f"{step.get('name')}: secret in with.{key}"
        for key, value in step.get("env", {}).items():
            if "KEY" in key or "TOKEN" in key or "SECRET" in key:
                assert re.fullmatch(r"\$\{\{ secrets\.[A-Z_]+ \}\}", value), key
            else:
                assert "secrets." not in value, f"{key} is not a secret's name but holds one"
    (job,) = _workflow()["jobs"].values()
    assert "secrets." not in json.dumps(job.get("env", {})), "secrets in every step's env"
    args = _notebook_args(_report_step()["run"])
    assert not any("key" in name.lower() for name in args)


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.timeout(900)
def test_nightly_step_against_the_emulator(tmp_path: Path) -> None:
    """The workflow's report step, run by bash as Actions runs it, against the embedded emulator
    as "the real service": a regression fails it, and the report, notebook and summary stay."""
    from evalkit.cli import app
    from evalkit.demo import DemoService

    # the workflow's step calls `evalkit report`: a removed command fails here, never skips
    assert any(c.name == "report" for c in app.registered_commands)
    work = tmp_path / "checkout"
    _copy("compare_draft_prod.ipynb", work / "notebooks")
    shim = tmp_path / "bin" / "evalkit"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m evalkit "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    out = work / "nightly"
    step = _report_step()
    with DemoService(tmp_path / "demo-store", seed=7) as service:
        # what the workflow's cache restores: the snapshot of prod's config
        shutil.copytree(tmp_path / "demo-store" / ".snapshots", out / "runs" / ".snapshots")
        env = {
            **os.environ,
            "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}",
            "OUT": str(out),
            "EVALKIT_BASE_URL": service.emulator.base_url,
            "EVALKIT_API_KEY": service.emulator.api_key,
            "EVALKIT_JUDGE_BASE_URL": service.emulator.judge_base_url,
            "EVALKIT_JUDGE_API_KEY": "judge-key-never-written",
            "EVALKIT_JUDGE_MODEL": "emulator-judge",
            "ASSISTANT_ID": service.assistant_id,
            "NIGHT": "1-1",
        }
        done = subprocess.run(
            ["bash", "-e", "-c", step["run"]],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=EXECUTION_TIMEOUT,
            check=False,
        )
    assert done.returncode == 1, done.stdout + done.stderr  # the demo's draft regressed
    assert "Regression" in done.stderr
    summary = json.loads((out / "output" / "summary.json").read_text(encoding="utf-8"))
    assert summary["verdict"] == "regressed"
    assert summary["candidate_run"] == "draft-1-1"
    for kept in (out / "report.html", out / "report.ipynb"):
        text = kept.read_text(encoding="utf-8")
        assert "judge-key-never-written" not in text
        assert service.emulator.api_key not in text
