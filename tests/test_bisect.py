"""bisect on the emulator: the demo's prod (good) against its draft plus a harmless knob change
(llm.default.verbosity); bisect must name the instructions hunk that drops Nastaliq, not the
knob, with every clone deleted. Bad input is refused naming what is wrong."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli import app
from evalkit.demo import DRAFT_INSTRUCTIONS, DemoService, demo_grid, demo_scorecard
from evalkit.flows import BisectError, BisectOptions, bisect
from evalkit.flows._bisect_search import find_culprit, worst_case_tests
from evalkit.grading import grade_run
from evalkit.runner import RunOptions
from evalkit.targets import find_clones

from .runner_support import reap, wait_for_child, wait_idle

ROOT = Path(__file__).resolve().parents[1]


def test_the_search_halves_to_one_culprit_and_reports_an_interacting_pair() -> None:
    tried: list[tuple[int, ...]] = []

    def one(subset: tuple[int, ...]) -> bool:
        tried.append(subset)
        return 5 in subset

    assert find_culprit(range(8), one) == (5,)
    assert len(tried) <= 4  # three halvings and the check of the change left
    assert worst_case_tests(8) == 10
    assert find_culprit(range(8), lambda s: {1, 6} <= set(s)) == (1, 6)  # neither alone


@pytest.mark.slow
def test_bisect_names_the_hunk_that_drops_nastaliq_not_the_knob(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "runs"
    with DemoService(store, seed=7) as svc:
        opts = RunOptions(concurrency=16, progress=False)
        grid = demo_grid(2)
        good = svc.run(grid, target="prod", run_id="good", options=opts)
        assistant = next(a for a in svc.client.list_assistants() if a.id == svc.assistant_id)
        config = assistant.config.to_json()
        config["agent"]["instructions"] = DRAFT_INSTRUCTIONS
        config.setdefault("llm", {}).setdefault("default", {})["verbosity"] = "low"
        svc.client.update_assistant(svc.assistant_id, config=config)
        bad = svc.run(grid, target="draft", run_id="bad", options=opts)
        for run in (good, bad):
            grade_run(run, demo_scorecard(), judge=False)
        with pytest.raises(BisectError, match="over the budget of 10"):
            bisect(
                "good",
                "bad",
                demo_scorecard(),
                client=svc.client,
                judge=False,
                store=store,
                options=BisectOptions(max_conversations=10),
            )
        with pytest.raises(
            BisectError, match="the good run bad is not better than the bad run good"
        ):
            bisect("bad", "good", demo_scorecard(), client=svc.client, judge=False, store=store)
        monkeypatch.setenv("EVALKIT_BASE_URL", svc.emulator.base_url)
        monkeypatch.setenv("EVALKIT_API_KEY", svc.emulator.api_key)
        refused = CliRunner().invoke(
            app,
            [
                *("bisect", "good", "bad", "-s", str(demo_scorecard()), "--store", str(store)),
                *("--max-conversations", "10", "--no-judge"),
            ],
        )
        assert refused.exit_code == 1, refused.output
        assert "over the budget of 10" in refused.output
        assert "expected: " in refused.output  # announced before the refusal
        assert "worst case: " in refused.output
        seen: list[dict[str, object]] = []
        result = bisect(
            "good", "bad", demo_scorecard(), client=svc.client, judge=False, store=store,
            options=BisectOptions(on_step=seen.append),
        )  # fmt: skip
        assert find_clones(svc.client.list_assistants()) == []
    paths = list(result.culprit["path"])
    assert len(paths) == 1, result.steps
    assert paths[0].startswith("agent.instructions#hunk-1")
    assert "Nastaliq" in result.culprit["before"].iloc[0]
    assert result.changes >= 3  # two hunks and the knob (at least)
    assert len(seen) == len(result.steps) >= 1
    assert "agent.instructions#hunk-1" in result.headline()
    assert repr(result).startswith("<BisectResult: the change that carries the regression")
    assert result.to_dict()["culprit"][0]["kind"] == "prompt"


#: the command line in a child whose Ctrl-C raises KeyboardInterrupt even under a parent that
#: ignores SIGINT (pytest-xdist workers do, and a child inherits it)
_CLI = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from evalkit.cli import main; main()"
)


def _scratch_runs(tmp: Path) -> list[Path]:
    """The journals of the runs bisect tried so far in its scratch stores under ``tmp``."""
    return list(tmp.glob("evalkit-bisect-*/*/journal.jsonl"))


@pytest.mark.slow
def test_ctrl_c_during_bisect_leaves_no_scratch_store_and_no_clone(tmp_path: Path) -> None:
    """A real Ctrl-C (SIGINT to an ``evalkit bisect`` child) while a configuration runs: the
    interrupted run finalizes before the scratch store (transcripts) is deleted, so none is
    left under the temporary folder, and the clone is deleted."""
    store, tmp = tmp_path / "runs", tmp_path / "tmp"
    tmp.mkdir()
    with DemoService(store, seed=7) as svc:
        opts = RunOptions(concurrency=16, progress=False)
        grid = demo_grid(2)
        good = svc.run(grid, target="prod", run_id="good", options=opts)
        assistant = next(a for a in svc.client.list_assistants() if a.id == svc.assistant_id)
        config = assistant.config.to_json()
        config["agent"]["instructions"] = DRAFT_INSTRUCTIONS
        svc.client.update_assistant(svc.assistant_id, config=config)
        bad = svc.run(grid, target="draft", run_id="bad", options=opts)
        for run in (good, bad):
            grade_run(run, demo_scorecard(), judge=False)
        env = {
            **os.environ,
            "EVALKIT_BASE_URL": svc.emulator.base_url,
            "EVALKIT_API_KEY": svc.emulator.api_key,
            "TMPDIR": str(tmp),
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": str(ROOT),
        }
        argv = ["bisect", "good", "bad", "-s", str(demo_scorecard()), "--store", str(store)]
        child = subprocess.Popen(
            [sys.executable, "-c", _CLI, *argv, "--no-judge"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        try:
            wait_for_child(
                child,
                lambda: _scratch_runs(tmp) and svc.emulator.stats()["active"] >= 1,
                "a configuration running into the scratch store",
            )
            child.send_signal(signal.SIGINT)
            out, err = child.communicate(timeout=60)
        finally:
            reap(child)
        assert child.returncode == 130, f"{out}\n{err}"
        assert "interrupted (Ctrl-C)" in err
        assert "Traceback" not in err
        wait_idle(svc.emulator)
        assert find_clones(svc.client.list_assistants()) == []
    assert list(tmp.glob("evalkit-bisect-*")) == [], sorted(str(p) for p in tmp.rglob("*"))
