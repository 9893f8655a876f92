"""Prices and spend: the price table and its refusals, cost per run in the catalog and the
run summary, the expected cost printed before a run, and Budget(max_cost) stopping a run
cleanly at a spend, resumable."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from evalkit import Client, load_run
from evalkit.cli import app
from evalkit.emulator import EmulatorServer
from evalkit.grid import load_personas
from evalkit.runner import Budget, Pricing, PricingError, RunOptions, run_grid
from evalkit.store import catalog, list_runs

from .runner_fixtures import emulator_fixture
from .runner_support import PERSONAS_DIR, build_assistant, make_grid

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "pricing.yaml"
emu = emulator_fixture(time_scale=0.005, seed=31)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pricing.yaml"
    path.write_text(text)
    return path


def test_the_example_table_loads_and_prices() -> None:
    pricing = Pricing.load(EXAMPLE)
    assert pricing.currency == "USD"
    # 90 s and 10 turns on llm-5.4-mini: 1.5 min x 0.06 + 10 x 0.002
    assert pricing.conversation_cost("vendor_c/llm-5.4-mini", 90, 10) == pytest.approx(0.11)
    # another vendor_c model takes the provider's * row; an unpriced provider costs nothing
    assert pricing.simulation_price("vendor_c/llm-4o-mini") == {
        "per_minute": 0.07,
        "per_turn": 0.002,
    }
    assert pricing.conversation_cost("vendor_e/llm-oss-120b", 90, 10) == 0.0
    assert pricing.judge_cost("emulator-judge", 2000) == pytest.approx(0.001)
    same = Pricing(
        {"currency": "USD", "simulation": {"vendor_c/llm-5.4-mini": {"per_minute": 0.06}}}
    )
    assert same.expected_cost("vendor_c/llm-5.4-mini", 10, turns=4, minutes=2) == pytest.approx(1.2)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "currency: USD\nsimulation:\n  vendor_c/llm-5.4-mini: {per_minute: 0.1}\n"
            "  acme/llm-9: {per_minute: 0.1}\n",
            r"pricing.yaml, line 4: unknown provider 'acme'",
        ),
        (
            "simulation:\n  vendor_c/llm-5.4-mini:\n    per_minute: 0.1\n    per_turn: -0.5\n",
            r"pricing.yaml, line 4: vendor_c/llm-5.4-mini per_turn must be a price >= 0",
        ),
        ("judge:\n  j: {per_1k_tokens: -1}\n", r"line 2: j per_1k_tokens must be a price >= 0"),
        ("simulation:\n  vendor_c/llm-9: {per_minute: 1}\n", r"line 2: vendor_c has no model"),
        ("simulation:\n  vendor_c/*: {per_hour: 1}\n", r"line 2: unknown price 'per_hour'"),
        ("simulation:\n  vendor_c/*: {per_turn: cheap}\n", r"line 2: .* must be a number"),
        ("prices: {}\n", r"line 1: unknown key 'prices'"),
    ],
)
def test_bad_tables_are_refused_naming_the_line(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(PricingError, match=message):
        Pricing.load(write(tmp_path, body))


def test_a_dict_table_names_the_key() -> None:
    with pytest.raises(PricingError, match=r"simulation.nope/x: unknown provider 'nope'"):
        Pricing({"simulation": {"nope/x": {"per_turn": 1}}})


def test_max_cost_without_a_price_table_is_refused_before_anything_runs(
    emu: EmulatorServer, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match=r"Budget\.max_cost needs a price table"):
        RunOptions(budget=Budget(max_cost=1.0))
    before = emu.stats()["started"]
    client = Client(emu.base_url, emu.api_key)
    grid = make_grid(load_personas(PERSONAS_DIR), n=2, repeats=1)
    with pytest.raises(ValueError, match="max_cost needs a price table"):
        run_grid(
            grid,
            "asst_x",
            client=client,
            store=tmp_path,
            options=RunOptions(budget=Budget(max_cost=1.0)),
        )
    assert emu.stats()["started"] == before
    assert not any(tmp_path.iterdir())


def test_a_spend_cap_stops_the_run_cleanly_and_a_resume_finishes_it(
    emu: EmulatorServer, tmp_path: Path
) -> None:
    client = Client(emu.base_url, emu.api_key)
    assistant = build_assistant(emu)
    grid = make_grid(load_personas(PERSONAS_DIR), n=5, repeats=2)  # 20 conversations
    pricing = Pricing({"currency": "EUR", "simulation": {"vendor_c/*": {"per_turn": 0.01}}})
    capped = RunOptions(concurrency=2, budget=Budget(max_cost=0.2), pricing=pricing)
    first = run_grid(grid, assistant, client=client, store=tmp_path, run_id="r", options=capped)
    done = len(first.conversations)
    spent = pricing.conversations_cost(
        "vendor_c/llm-5.4-mini",
        zip(first.conversations["duration_s"], first.conversations["n_turns"], strict=True),
    )
    assert 0 < done < len(grid)
    assert spent >= 0.2  # it stopped because the cap was reached...
    # ...and only the conversations already in flight ran past it (at most one per stream)
    assert done <= 0.2 / 0.01 + 2
    assert first.manifest["outcome"] == "partial"
    assert first.manifest["cost"]["currency"] == "EUR"
    assert first.manifest["cost"]["total"] == pytest.approx(spent, abs=1e-6)
    second = run_grid(
        grid,
        assistant,
        client=client,
        store=tmp_path,
        run_id="r",
        options=RunOptions(pricing=pricing),
    )
    assert len(second.conversations) == len(grid)
    assert second.manifest["outcome"] == "complete"
    row = catalog(tmp_path).set_index("run_id").loc["r"]
    assert row["cost"] == pytest.approx(second.manifest["cost"]["total"])
    assert row["cost"] > first.manifest["cost"]["total"]
    assert list_runs(tmp_path).set_index("run_id").loc["r", "cost"] == pytest.approx(row["cost"])
    assert pricing.run_cost(load_run("r", tmp_path)).simulation == pytest.approx(row["cost"])
    assert "cost EUR " in load_run("r", tmp_path)._repr_html_()  # the run's summary


def test_runs_without_a_price_table_have_no_cost(emu: EmulatorServer, tmp_path: Path) -> None:
    client = Client(emu.base_url, emu.api_key)
    grid = make_grid(load_personas(PERSONAS_DIR), n=1, repeats=1)
    run_grid(
        grid,
        build_assistant(emu),
        client=client,
        store=tmp_path,
        run_id="free",
        options=RunOptions(progress=False),
    )
    assert "cost" not in load_run("free", tmp_path).manifest
    assert pd.isna(catalog(tmp_path)["cost"].iloc[0])


def test_the_cli_prints_the_expected_cost_first_and_the_spend_after(
    emu: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALKIT_BASE_URL", emu.base_url)
    monkeypatch.setenv("EVALKIT_API_KEY", emu.api_key)
    assistant = build_assistant(emu)
    runner = CliRunner()
    args = ["run", "-a", assistant, "--personas", str(PERSONAS_DIR), "--store", str(tmp_path)]
    refused = runner.invoke(app, [*args, "--max-cost", "1"])
    assert refused.exit_code == 2
    assert "--max-cost needs a price table" in refused.output
    bad = write(tmp_path, "simulation:\n  vendor_c/*: {per_turn: -1}\n")
    refused = runner.invoke(app, [*args, "--pricing", str(bad)])
    assert refused.exit_code == 2
    assert "line 2" in refused.output
    result = runner.invoke(app, [*args, "--pricing", str(EXAMPLE), "--run-id", "cli"])
    assert result.exit_code == 0, result.output
    n = len(list(PERSONAS_DIR.glob("*.yaml")))
    assert f"expected: {n} conversation(s), about USD " in result.output
    assert "; cost USD " in result.output
    assert result.output.index("expected:") < result.output.index("Run cli")
