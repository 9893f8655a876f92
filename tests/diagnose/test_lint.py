"""Config lint: one config carrying every pitfall the spec describes, each found at its path;
a clean config gives nothing; no credential is echoed; the command's exit codes and JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from evalkit.api import PITFALL_RULES, Client
from evalkit.cli import app
from evalkit.diagnose import lint, lint_rules
from evalkit.emulator import EmulatorServer
from evalkit.emulator.dialogue._text import detect_register

from ..runner_fixtures import emulator_fixture

SECRET = "sk-live-VERYSECRETvalue-9f8e7d"
TTS_SECRET = "tts-key-ANOTHERsecret-1a2b"

CLEAN: dict[str, Any] = {
    "agent": {
        "instructions": "Speak Urdu in Nastaliq script. Remind {{name}} of {{date}}.",
        "initialGreeting": True,
        "greetingInstructions": "Greet {{name}} warmly.",
        "tools": [
            {
                "name": "book",
                "description": "Book a slot",
                "parameters": {"type": "object", "properties": {}},
                "execution": {"type": "tool_endpoint", "connectionId": "conn_1"},
            }
        ],
    },
    "noiseCancellation": {"enabled": True, "level": 0.1},
    "tts": {"default": {"provider": "serviceai", "voiceId": "v_8eelc901"}},
    "llm": {"default": {"provider": "vendor_f", "model": "gem-2.5-flash", "thinkingBudget": 0}},
    "grading": {
        "scorecard": {
            "rubricVersionId": "r1",
            "rules": [
                {"ruleId": "a", "title": "A", "points": 60},
                {"ruleId": "b", "title": "B", "points": 40},
            ],
        }
    },
}


def _pitfalls_config() -> dict[str, Any]:
    """A config with every pitfall of the table (LLM knobs split over two configs)."""
    return {
        "agent": {
            "instructions": "Aap Urdu mein baat karein. Remind {{name}} of {{appointment_date}}.",
            "greetingInstructions": "Say hello",
            "tools": [
                {
                    "name": "crm",
                    "description": "Look up the caller",
                    "parameters": {"type": "object", "properties": {}},
                    "timeout": 30,
                    "execution": {"type": "tool_endpoint"},
                }
            ],
        },
        "noiseCancellation": {"enabled": True, "level": 0.6},
        "stt": {"default": {"provider": "vendor_z"}},
        "tts": {"default": {"provider": "vendor_a", "apiKey": TTS_SECRET}},
        "llm": {
            "default": {
                "provider": "vendor_e",
                "model": "llm-oss-120b",
                "reasoningEffort": "none",
                "verbosity": "low",
                "thinkingBudget": 100,
                "thinkingLevel": "high",
                "apiKey": SECRET,
            }
        },
        "grading": {
            "scorecard": {
                "rubricVersionId": "r1",
                "rules": [
                    {"ruleId": "a", "title": "A", "points": 50},
                    {"ruleId": "a", "title": "A again", "points": 30},
                ],
            }
        },
    }


LLM_ONLY = {  # the rules one LLM block cannot show together with vendor_e's
    "agent": {"instructions": "English only."},
    "llm": {
        "default": {
            "provider": "vendor_f",
            "model": "gem-2.5-flash",
            "thinkingBudget": 99999,
            "reasoningEffort": "high",
        }
    },
}
UNKNOWN_MODEL = {
    "agent": {"instructions": "English only."},
    "llm": {"default": {"provider": "vendor_c", "model": "llm-9"}},
}
RECORDS = [{"name": "Ali", "appointment_date": "Monday"}, {"name": "Sara"}, {"name": ""}]

EXPECTED_PATHS = {
    "provider-unsupported": "stt.default.provider",
    "thinking-budget-ignored": "llm.default.thinkingBudget",
    "thinking-level-ignored": "llm.default.thinkingLevel",
    "verbosity-ignored": "llm.default.verbosity",
    "reasoning-effort-none-rejected": "llm.default.reasoningEffort",
    "tts-voice-missing": "tts.default.voiceId",
    "greeting-instructions-ignored": "agent.greetingInstructions",
    "urdu-without-nastaliq": "agent.instructions",
    "noise-cancellation-strong": "noiseCancellation.level",
    "tool-endpoint-without-connection": "agent.tools[0].execution.connectionId",
    "tool-timeout-ignored": "agent.tools[0].timeout",
    "scorecard-points": "grading.scorecard.rules",
    "scorecard-duplicate-rule": "grading.scorecard.rules[1].ruleId",
    "provider-api-key": "llm.default.apiKey",
    "variables-missing": "agent.instructions",
}


def test_every_pitfall_is_found_at_its_path() -> None:
    found = lint(_pitfalls_config(), variables=RECORDS)
    assert list(found.columns) == ["rule_id", "severity", "path", "message", "reason"]
    pairs = set(zip(found["rule_id"], found["path"], strict=True))
    for rule_id, path in EXPECTED_PATHS.items():
        assert (rule_id, path) in pairs, (rule_id, sorted(pairs))
    assert ("provider-api-key", "tts.default.apiKey") in pairs
    more = lint(LLM_ONLY)
    assert set(more["rule_id"]) == {"thinking-budget-range", "reasoning-effort-ignored"}
    assert set(lint(UNKNOWN_MODEL)["rule_id"]) == {"llm-model-unknown"}
    covered = set(found["rule_id"]) | set(more["rule_id"]) | {"llm-model-unknown"}
    assert covered == {rule.rule_id for rule in PITFALL_RULES}  # every row of the table tested
    # errors first; severities from the table; the reasons are the spec's words
    assert found["severity"].tolist() == sorted(
        found["severity"], key={"error": 0, "warning": 1, "info": 2}.get
    )
    reasons = dict(zip(found["rule_id"], found["reason"], strict=False))
    assert "fails at connect time" in reasons["tts-voice-missing"]
    assert "silently ignored" in reasons["verbosity-ignored"]
    assert "Roman Urdu" in reasons["urdu-without-nastaliq"]
    assert "not checked on create" in reasons["tool-endpoint-without-connection"]


def test_missing_variables_name_the_token_and_the_records() -> None:
    found = lint(_pitfalls_config(), variables=RECORDS)
    messages = found.loc[found["rule_id"] == "variables-missing", "message"].tolist()
    assert any("{{appointment_date}}" in m and "2 of 3" in m and "(2, 3)" in m for m in messages)
    assert any("{{name}}" in m and "1 of 3" in m for m in messages)  # "" is no value
    assert "variables-missing" not in set(lint(_pitfalls_config())["rule_id"])  # none given


def test_a_clean_config_has_no_findings() -> None:
    assert lint(CLEAN, variables=[{"name": "Ali", "date": "Monday"}]).empty
    assert list(lint(CLEAN).columns) == ["rule_id", "severity", "path", "message", "reason"]
    assert len(lint_rules()) == len(PITFALL_RULES)


def test_no_secret_is_echoed() -> None:
    found = lint(_pitfalls_config(), variables=RECORDS)
    text = found.to_json() + repr(found)
    for secret in (SECRET, TTS_SECRET):
        assert secret not in text
        assert secret[-6:] not in text


@pytest.mark.parametrize(
    "prompt",
    [
        "Speak Urdu.",
        "Speak Urdu in Nastaliq script.",
        "Answer in Urdu script, never Roman Urdu.",
        "Speak Urdu but do not use Nastaliq.",
        "آپ اردو میں بات کریں اور نستعلیق استعمال کریں",
        "آپ ایک مددگار ہیں",
        "English only, please.",
        "Roman Urdu is fine.",
    ],
)
def test_the_urdu_rule_agrees_with_the_emulator(prompt: str) -> None:
    """The emulator plays the spec's model: a Roman-Urdu register is what the rule warns of."""
    flagged = "urdu-without-nastaliq" in set(lint({"agent": {"instructions": prompt}})["rule_id"])
    assert flagged == (detect_register(prompt) == "ru")


def test_lint_reads_files_and_assistant_mappings(tmp_path: Path) -> None:
    as_yaml = tmp_path / "assistant.yaml"
    as_yaml.write_text(yaml.safe_dump({"name": "x", "config": _pitfalls_config()}), "utf-8")
    as_json = tmp_path / "config.json"
    as_json.write_text(json.dumps(_pitfalls_config()), "utf-8")
    a, b = lint(as_yaml), lint(str(as_json))
    assert sorted(map(tuple, a.to_numpy().tolist())) == sorted(map(tuple, b.to_numpy().tolist()))
    assert "tts-voice-missing" in set(a["rule_id"])
    with pytest.raises(TypeError, match="lint takes"):
        lint(42)  # type: ignore[arg-type]


def test_a_file_that_does_not_parse_names_the_file_line_and_column(tmp_path: Path) -> None:
    broken_yaml = tmp_path / "broken.yaml"
    broken_yaml.write_text("agent:\n  instructions: [\n", "utf-8")
    broken_json = tmp_path / "broken.json"
    broken_json.write_text('{"agent": {"instructions": }}', "utf-8")
    with pytest.raises(ValueError, match=r"broken\.yaml, line 3, column 1: not valid YAML"):
        lint(broken_yaml)
    with pytest.raises(ValueError, match=r"broken\.json, line 1, column 28: not valid JSON"):
        lint(broken_json)
    out = CliRunner().invoke(app, ["lint", str(broken_yaml)])
    assert out.exit_code == 1
    assert "broken.yaml, line 3, column 1: not valid YAML" in out.output
    assert "Traceback" not in out.output


# --------------------------------------------------------------------------- the command


def test_command_exit_codes_and_json(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(_pitfalls_config()), "utf-8")
    warn_only = tmp_path / "warn.yaml"
    warn_only.write_text(
        yaml.safe_dump({"agent": {"instructions": "Speak Urdu.", "greetingInstructions": "Hi"}}),
        "utf-8",
    )
    clean = tmp_path / "clean.yaml"
    clean.write_text(yaml.safe_dump(CLEAN), "utf-8")
    runner = CliRunner()
    out = runner.invoke(app, ["lint", str(bad), "--json"])
    assert out.exit_code == 1  # errors always fail
    rows = json.loads(out.stdout)
    assert {r["rule_id"] for r in rows} >= set(EXPECTED_PATHS) - {"variables-missing"}
    assert SECRET not in out.output
    assert TTS_SECRET not in out.output
    assert runner.invoke(app, ["lint", str(warn_only)]).exit_code == 0
    strict = runner.invoke(app, ["lint", str(warn_only), "--strict"])
    assert strict.exit_code == 1
    assert "greeting-instructions-ignored  agent.greetingInstructions" in strict.stdout
    assert "ignored unless `initialGreeting` is true" in strict.stdout
    ok = runner.invoke(app, ["lint", str(clean), "--strict"])
    assert ok.exit_code == 0, ok.output
    assert "no findings" in ok.stdout
    csv = tmp_path / "vars.csv"
    csv.write_text("name\nAli\n", "utf-8")
    missing = runner.invoke(app, ["lint", str(clean), "--variables", str(csv), "--json"])
    assert missing.exit_code == 1
    assert [r["rule_id"] for r in json.loads(missing.stdout)] == ["variables-missing"]


emu = emulator_fixture(time_scale=0.01, seed=3)


def test_lint_an_assistant_by_id(emu: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    config = {**CLEAN, "agent": {**CLEAN["agent"], "instructions": "Speak Urdu please."}}
    config["llm"] = {"default": {"provider": "vendor_c", "model": "llm-4o-mini", "apiKey": SECRET}}
    with Client(emu.base_url, emu.api_key) as client:
        created = client.create_assistant("lint me", config)
        found = lint(created.id, client=client)
    assert set(found["rule_id"]) == {"urdu-without-nastaliq", "provider-api-key"}
    assert SECRET not in found.to_json()
    monkeypatch.setenv("EVALKIT_BASE_URL", emu.base_url)
    monkeypatch.setenv("EVALKIT_API_KEY", emu.api_key)
    out = CliRunner().invoke(app, ["lint", created.id, "--strict"])
    assert out.exit_code == 1
    assert "urdu-without-nastaliq" in out.stdout
    assert SECRET not in out.output
    unknown = CliRunner().invoke(app, ["lint", "00000000-0000-0000-0000-000000000000"])
    assert unknown.exit_code == 1
    assert "not among" in unknown.output
