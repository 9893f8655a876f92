"""The RunBrowser's label and play controls: mark a rule's verdict on the shown conversation
right or wrong (stored in the run's labels table), and hear an agent turn in the assistant's
voice (E11 through :func:`evalkit.speak`, cached under the run's store).

Callbacks only set widget values (:attr:`status`, :attr:`player`); nothing is printed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..api import ApiError, Client, ConfigurationError
from ..store import LABEL_VALUES, Label, Run, StoreError

if TYPE_CHECKING:
    import ipywidgets

__all__ = ["BrowserControls", "run_voice"]

_RIGHT = "right"


def run_voice(manifest: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The voice (``config.tts.default.voiceId`` of the run's config snapshot) and the phrase
    replacement config (``phrase_replacement_config_id``) a run recorded, when present."""
    snapshot = manifest.get("config_snapshot")
    config = snapshot.get("config") if isinstance(snapshot, Mapping) else None
    tts = config.get("tts") if isinstance(config, Mapping) else None
    default = tts.get("default") if isinstance(tts, Mapping) else None
    voice = default.get("voiceId") if isinstance(default, Mapping) else None
    phrase = manifest.get("phrase_replacement_config_id")
    return (
        voice if isinstance(voice, str) else None,
        phrase if isinstance(phrase, str) else None,
    )


class BrowserControls:
    """Label and play widgets for one run; :meth:`show` points them at a conversation."""

    def __init__(
        self,
        run: Run,
        grades_of: Callable[[str], pd.DataFrame],
        turns_of: Callable[[str], pd.DataFrame],
        client: Client | None = None,
    ) -> None:
        import ipywidgets as w

        self.run = run
        self._grades_of = grades_of
        self._turns_of = turns_of
        self._client = client
        self.conversation_id: str | None = None
        layout = w.Layout(width="auto", min_width="0")
        self.label_rule = w.Dropdown(options=[], description="rule", layout=layout)
        self.label_value = w.Dropdown(
            options=[("judge right", _RIGHT), *((f"should be {v}", v) for v in LABEL_VALUES)],
            description="label",
            layout=layout,
        )
        self.label_note = w.Text(placeholder="note (optional)", layout=layout)
        self.save_button = w.Button(description="Save label", layout=w.Layout(width="auto"))
        self.play_turn = w.Dropdown(options=[], description="turn", layout=layout)
        self.play_button = w.Button(description="▶ play", layout=w.Layout(width="auto"))
        self.status = w.Label()
        self.player = w.HTML()
        self.save_button.on_click(lambda _: self.save())
        self.play_button.on_click(lambda _: self.play())
        self.widget: ipywidgets.VBox = w.VBox(
            [
                w.HBox([self.label_rule, self.label_value, self.label_note, self.save_button]),
                w.HBox([self.play_turn, self.play_button, self.player]),
                self.status,
            ]
        )

    def show(self, conversation_id: str | None) -> None:
        """Offer the rules and agent turns of ``conversation_id`` (None: nothing shown)."""
        self.conversation_id = conversation_id
        self.player.value = ""
        if conversation_id is None:
            self.label_rule.options, self.play_turn.options = [], []
            return
        grades = self._grades_of(conversation_id)
        self.label_rule.options = [
            (f"{r} ({v})", str(r))
            for r, v in zip(grades["rule_id"], grades["verdict"], strict=True)
        ]
        turns = self._turns_of(conversation_id)
        agent = turns[turns["role"] == "agent"]
        self.play_turn.options = [
            (f"{int(i)}: {str(t)[:50]}", int(i))
            for i, t in zip(agent["index"], agent["text"], strict=True)
        ]
        for dropdown in (self.label_rule, self.play_turn):
            options = dropdown.options
            dropdown.value = options[0][1] if options else None

    def save(self) -> None:
        """Store the label the widgets hold for the shown conversation."""
        cid, rule = self.conversation_id, self.label_rule.value
        if cid is None or not rule:
            self.status.value = "choose a conversation and a rule first"
            return
        grades = self._grades_of(cid)
        row = grades[grades["rule_id"] == rule]
        verdict = str(row["verdict"].iloc[0]) if len(row) else None
        value = verdict if self.label_value.value == _RIGHT else str(self.label_value.value)
        rubric = str(row["rubric_version_id"].iloc[0]) if len(row) else None
        try:
            self.run.add_labels(
                [Label(cid, str(rule), str(value), note=self.label_note.value,
                       rubric_version_id=rubric, judge_verdict=verdict)]
            )  # fmt: skip
        except (ValueError, StoreError) as exc:
            self.status.value = f"not saved: {exc}"
            return
        self.label_note.value = ""
        self.status.value = f"saved: {cid} · {rule} should be {value}"

    def play(self) -> None:
        """Synthesize the chosen agent turn and show a player for it."""
        from ..audio import SpeakOptions, speak

        cid, turn = self.conversation_id, self.play_turn.value
        if cid is None or turn is None:
            self.status.value = "choose an agent turn first"
            return
        turns = self._turns_of(cid)
        text = str(turns.loc[turns["index"] == turn, "text"].iloc[0])
        voice, phrase_config = run_voice(self.run.manifest)
        try:
            audio = speak(
                text,
                client=self._client,
                store=self.run.path.parent,
                options=SpeakOptions(voice_id=voice, phrase_replacement_config_id=phrase_config),
            )
        except (ApiError, ConfigurationError, StoreError, ValueError) as exc:
            self.status.value = f"cannot play: {exc}"
            return
        self.player.value = audio.html(autoplay=True)
        self.status.value = (
            f"turn {turn}: {len(audio.data)} bytes{' (cached)' if audio.cached else ''}"
        )
