"""Variants files: what they hold, and errors that name the entry and the field."""

from __future__ import annotations

import inspect
import pickle
from pathlib import Path

import pytest

from evalkit.targets import Variant
from evalkit.tuning import VariantsFileError, load_variants
from evalkit.tuning._variants import variant_specs


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "variants.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_patch_instructions_and_instruction_files(tmp_path: Path) -> None:
    (tmp_path / "prompt.txt").write_text("Be brief.\n", encoding="utf-8")
    path = write(
        tmp_path,
        """
- name: knob
  patch: {llm: {default: {reasoningEffort: low}}}
- name: prompt
  note: shorter
  instructions_file: prompt.txt
  patch: {agent: {initialGreeting: true}}
""",
    )
    specs = load_variants(path)
    assert specs[0].variant == Variant("knob", {"llm": {"default": {"reasoningEffort": "low"}}})
    assert specs[1].variant.patch == {
        "agent": {"initialGreeting": True, "instructions": "Be brief."}
    }
    assert specs[1].note == "shorter"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("variants: []", "non-empty list under 'variants'"),
        ("variants: [{note: x, patch: {a: 1}}]", r"variants\[0\]\.name: a non-empty string"),
        ("variants: [{name: a, patch: [1]}]", r"variants\[0\] \(a\)\.patch: must be a mapping"),
        ("variants: [{name: a}]", r"variants\[0\] \(a\): a variant needs a patch or instructions"),
        (
            "variants: [{name: a, instruction: x}]",
            r"variants\[0\] \(a\): unknown field 'instruction' \(did you mean 'instructions'\?\)",
        ),
        (
            "variants: [{name: a, instructions_file: nope.txt}]",
            r"variants\[0\] \(a\)\.instructions_file: cannot read",
        ),
        (
            "variants: [{name: draft, patch: {a: 1}}]",
            r"variants\[0\] \(draft\): a variant needs a name other than",
        ),
        ("variants: [{name: a, patch: {a: 1}}, {name: a, patch: {b: 1}}]", r"repeated: \['a'\]"),
        ("variants: [{name: a, patch: {a: 1}", "not valid YAML"),
    ],
)
def test_bad_files_name_the_entry_and_field(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(VariantsFileError, match=message):
        load_variants(write(tmp_path, text))


def test_variant_objects_are_accepted_and_credentials_stay_masked() -> None:
    secret = Variant("keyed", {"llm": {"default": {"apiKey": "sk-live-0123456789abcdef"}}})
    specs = variant_specs([secret])
    assert specs[0].variant is secret
    assert "0123456789ab" not in repr(specs[0])
    assert "0123456789ab" not in str(pickle.dumps(specs[0]))
    with pytest.raises(ValueError, match="unique"):
        variant_specs([secret, secret])


def test_evalkit_tune_stays_the_function_once_the_package_is_imported() -> None:
    import evalkit
    import evalkit.tuning as package

    assert evalkit.tune is package.tune
    assert inspect.isfunction(evalkit.tune)
    assert package.TuneOptions is evalkit.TuneOptions
    grid = evalkit.Grid([evalkit.Persona("caller", "Answers briefly.")])
    with pytest.raises(ValueError, match="at least one variant"):
        evalkit.tune(grid, "asst", "scorecards/appointment-reminder-ur.yaml", variants=[])


def test_the_command_refuses_a_bad_file_before_announcing_a_sweep(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evalkit.cli import app

    path = write(tmp_path, "variants:\n  - name: a\n    instrucions: hi\n")
    scorecard = Path(__file__).parents[2] / "scorecards" / "appointment-reminder-ur.yaml"
    args = ["tune", "-a", "x", "--variants", str(path), "-s", str(scorecard)]
    out = CliRunner().invoke(app, [*args, "--store", str(tmp_path / "runs")])
    assert out.exit_code == 1
    assert (
        "variants[0] (a): unknown field 'instrucions' (did you mean 'instructions'?)" in out.output
    )
    assert "sweep runs" not in out.output


def test_every_problem_of_a_file_is_reported_at_once(tmp_path: Path) -> None:
    """Issue 33, item 9: one problem at a time hid the duplicate name behind the first."""
    text = (
        "variants:\n"
        "  - {name: a, patch: {a: 1}}\n"
        "  - {name: a, instrutions: x}\n"
        "  - {name: b, patch: [1]}\n"
    )
    with pytest.raises(VariantsFileError) as caught:
        load_variants(write(tmp_path, text))
    message = str(caught.value)
    assert "3 problem(s)" in message
    assert "variants[1] (a): unknown field 'instrutions' (did you mean 'instructions'?)" in message
    assert "variants[2] (b).patch: must be a mapping" in message
    assert "repeated: ['a']" in message


def test_patch_values_are_checked_at_load_all_at_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 33, item 9: a bad value was found only when the arm's clone was saved, waves
    into a sweep. Every value a patch sets is checked against the config rules at load."""
    text = """
variants:
  - name: hot
    patch: {llm: {default: {reasoningEffort: hot, thinkingBudget: -5, temperature: hot}}}
  - name: typed
    patch:
      agent: {initialGreeting: "yes"}
      session: {ttl: 0, roomPrefix: 12345678901234567890123456789012345}
      noiseCancellation: {enabled: true, model: big}
  - name: named-provider
    patch: {llm: {default: {provider: vendor_e, model: llm-oss-120b, reasoningEffort: none}}}
  - name: typo
    patch: {llm: {default: {reasoningEfort: low}}, agnet: {instructions: x}}
  - name: fine
    patch: {llm: {default: {provider: vendor_c, model: llm-5.4-mini, reasoningEffort: low}}}
  - name: hot
    instructions: again
"""
    path = write(tmp_path, text)
    with (
        caplog.at_level("WARNING", logger="evalkit.tuning"),
        pytest.raises(VariantsFileError) as caught,
    ):
        load_variants(path)
    message = str(caught.value)
    assert message.startswith(f"variants file {path}: 10 problem(s):")
    for said in [
        "variants[0] (hot).patch.llm.default.reasoningEffort: must be one of none, low, "
        "medium, high, xhigh (what vendor_c and vendor_e take); got 'hot'",
        "variants[0] (hot).patch.llm.default.thinkingBudget: must be at least -1, got -5",
        "variants[1] (typed).patch.agent.initialGreeting: must be a boolean, got string",
        "variants[1] (typed).patch.session.ttl: must be at least 1, got 0",
        "variants[1] (typed).patch.session.roomPrefix: must be a string, got number",
        "variants[1] (typed).patch.noiseCancellation.model: must be one of nc_vf_s, nc_vf_l, "
        "nc_l; got 'big'",
        "variants[2] (named-provider).patch.llm.default.reasoningEffort: must be one of low, "
        "medium, high (what vendor_e takes); got 'none'",
        "variants[3] (typo).patch.llm.default.reasoningEfort: is not a field here; did you "
        "mean 'reasoningEffort'?",
        "variants[3] (typo).patch.agnet: is not a field here; did you mean 'agent'?",
        "names must be unique, repeated: ['hot']",
    ]:
        assert f"  - {said}\n" in message + "\n", said
    assert "fine" not in message
    # temperature is not in the spec: its type and range are not shown, so no rule is made up
    assert "temperature" not in message
    fixed = write(
        tmp_path, "variants:\n  - {name: a, patch: {llm: {default: {temperature: hot}}}}\n"
    )
    assert load_variants(fixed)[0].variant.name == "a"
    assert "variants[0] (a).patch.llm.default.temperature: is not a field the spec lists" in (
        caplog.text
    )
