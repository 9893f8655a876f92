"""The RunBrowser's label and play controls, driven through their widgets with no kernel:
a label lands in the run's labels table (and changes judge_agreement), a played turn is
real audio from the emulator's E11, a refused label is reported, not raised."""

from __future__ import annotations

from evalkit import Client
from evalkit.emulator import serve
from evalkit.grading import judge_agreement
from evalkit.report import RunBrowser
from evalkit.store import Run, load_run


def test_label_control_stores_a_label_that_judge_agreement_reads(prod_run: Run) -> None:
    browser = RunBrowser(prod_run, page_size=5)
    controls = browser.controls
    cid = browser.conversation.value
    assert controls.conversation_id == cid
    rule = controls.label_rule.options[0][1]
    verdict = prod_run.grades().set_index(["conversation_id", "rule_id"]).loc[(cid, rule)]
    wrong = next(v for v in ("pass", "fail", "na") if v != verdict["verdict"])
    controls.label_rule.value = rule
    controls.label_value.value = wrong
    controls.label_note.value = "listened: the judge missed it"
    controls.save_button.click()
    assert controls.status.value.startswith("saved:")
    stored = load_run(prod_run.path).labels()
    assert stored[["conversation_id", "rule_id", "label"]].values.tolist() == [[cid, rule, wrong]]
    assert stored["judge_verdict"].iloc[0] == verdict["verdict"]
    agreement = judge_agreement(load_run(prod_run.path)).set_index("rule_id")
    assert agreement.loc[rule, "agree"] == 0
    controls.label_value.value = "right"
    controls.save_button.click()
    agreement = judge_agreement(load_run(prod_run.path)).set_index("rule_id")
    assert agreement.loc[rule, "agree"] == 1  # the later label wins


def test_play_control_plays_real_audio_of_an_agent_turn(prod_run: Run) -> None:
    with serve(seed=5) as emu, Client(emu.base_url, emu.api_key) as client:
        browser = RunBrowser(prod_run, page_size=5, client=client)
        controls = browser.controls
        assert controls.play_turn.options  # agent turns of the shown conversation
        controls.play_button.click()
        assert "data:audio/mpeg;base64," in controls.player.value, controls.status.value
        assert "bytes" in controls.status.value
    browser.next_button.click()
    assert controls.player.value == ""  # another conversation: the player is cleared


def test_play_without_a_service_says_so(prod_run: Run, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("EVALKIT_BASE_URL", raising=False)
    monkeypatch.delenv("EVALKIT_API_KEY", raising=False)
    browser = RunBrowser(prod_run, page_size=5)
    browser.controls.play_button.click()
    assert browser.controls.status.value.startswith("cannot play:")
    assert browser.controls.player.value == ""
