"""compare_judges and `evalkit judge-drift` against the emulator: a biased judge against the
exact one on the same stored transcripts; agreement statistics at the boundaries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from evalkit.cli import ExitCode, app
from evalkit.demo import DemoService, demo_grid, demo_scorecard
from evalkit.flows import JudgeDrift, JudgeDriftOptions, compare_judges
from evalkit.grading import Judge
from evalkit.grading._agreement import judge_drift_table
from evalkit.runner import RunOptions

RULE = "asks-confirmation"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    store = tmp_path_factory.mktemp("drift") / "runs"
    store.mkdir()
    with DemoService(store, seed=3) as svc:
        run = svc.run(
            demo_grid(2),
            target="prod",
            run_id="prod",
            options=RunOptions(concurrency=8, progress=False),
        )
        svc.emulator.admin("PUT", "/judge", {"falsePassRate": 1.0, "rules": [RULE], "seed": 1})
        yield {"store": store, "run": run, "url": svc.emulator.judge_base_url}


def test_a_judge_that_passes_every_failure_shows_as_a_shift(world: dict[str, Any]) -> None:
    exact = Judge(model="exact", base_url=world["url"])
    biased = Judge(model="emulator-judge", base_url=world["url"])
    drift = compare_judges(
        world["run"], demo_scorecard(), exact, biased, options=JudgeDriftOptions(sample=30, seed=1)
    )
    assert isinstance(drift, JudgeDrift)
    assert drift.conversations == 30
    rules = drift.by_rule.set_index("rule_id")
    row = rules.loc[RULE]
    assert row["pass_rate_b"] == 1.0  # every failure called pass
    assert row["difference"] > 5
    assert row["difference_low"] > 0
    assert bool(row["shifted"])
    assert drift.shifted == [RULE]
    # the rules the bias left alone agree fully, with intervals that are not zero-width
    others = rules.drop(index=RULE)
    assert (others["agreement"] == 1.0).all()
    assert (others["agreement_high"] - others["agreement_low"] > 0).all()
    assert (others["difference_high"] - others["difference_low"] > 0).all()
    assert not others["shifted"].any()
    assert RULE in drift.headline()
    assert drift.to_dict()["shifted"] == [RULE]
    assert "JudgeDrift" in drift._repr_html_()
    same = compare_judges(
        world["run"], demo_scorecard(), exact, exact, options=JudgeDriftOptions(sample=30, seed=1)
    )
    assert same.shifted == []


def test_judge_drift_command_is_a_ci_gate(world: dict[str, Any], tmp_path: Path) -> None:
    env = {"EVALKIT_JUDGE_MODEL": "exact", "EVALKIT_JUDGE_BASE_URL": world["url"]}
    args = ["judge-drift", "prod", "--store", str(world["store"]), "-s", str(demo_scorecard())]
    args += ["--judge-model", "emulator-judge", "--judge-base-url", world["url"], "--sample", "30"]
    runner = CliRunner()
    shown = runner.invoke(app, args, env=env)
    assert shown.exit_code == 0, shown.output
    assert RULE in shown.output
    out = tmp_path / "drift.json"
    gated = runner.invoke(app, [*args, "--fail-on-shift", "--json", str(out)], env=env)
    assert gated.exit_code == int(ExitCode.JUDGE_SHIFTED), gated.output
    assert out.is_file()
    calm = runner.invoke(
        app, [*args[:-4], "--judge-model", "exact", "--fail-on-shift", "--sample", "30"], env=env
    )
    assert calm.exit_code == 0, calm.output


def test_constant_and_all_agreeing_judges_get_honest_statistics() -> None:
    ids = [f"c{i}" for i in range(10)]
    a = pd.DataFrame({"conversation_id": ids, "rule_id": "r", "verdict": "pass"})
    b = a.assign(verdict=["pass"] * 7 + ["fail"] * 3)
    table = judge_drift_table(a, b).iloc[0]
    assert np.isnan(table["kappa"])
    assert "one verdict" in table["kappa_note"]
    same = judge_drift_table(a, a).iloc[0]
    assert same["agreement"] == 1.0
    assert same["agreement_high"] > same["agreement_low"]
    assert same["difference_high"] > same["difference_low"]
    assert not same["shifted"]
