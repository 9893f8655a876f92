"""Every probability of the scripted engine, named, in one frozen object."""

from __future__ import annotations

from dataclasses import dataclass, fields

__all__ = ["NoiseModel"]


@dataclass(frozen=True, slots=True)
class NoiseModel:
    """The seeded "model noise": how often each behaviour happens (each a probability 0..1).

    ``follow`` is how often an instructed behaviour is carried out; the ``*_unasked`` fields
    how often a behaviour appears without an instruction (see the feature table).
    """

    follow: float = 0.9
    confirm_vague: float = 0.65
    confirm_unasked: float = 0.1
    apologise_unasked: float = 0.25
    close_unasked: float = 0.35
    callback_agree: float = 0.85
    callback_agree_unasked: float = 0.6
    verify_identity: float = 0.85
    verify_identity_unasked: float = 0.4
    script_drift: float = 0.08
    name_when_referenced: float = 0.95
    name_when_unreferenced: float = 0.5
    how_are_you: float = 0.4
    explain_who: float = 0.5
    vague_opening: float = 0.5
    wrong_person_apology_unasked: float = 0.85
    wrong_person_caller_bye: float = 0.3
    busy_at_once: float = 0.7
    busy_hangs_up: float = 0.5
    busy_push_unasked: float = 0.5
    dnc_at_once: float = 0.6
    dnc_caller_bye: float = 0.5
    hostile_softens: float = 0.3
    hostile_caller_bye: float = 0.5
    hostile_removed_after_stop: float = 0.25
    confused_repeat_slow: float = 0.4
    distracted_noise: float = 0.8
    price_balks: float = 0.4
    complaint_next_step: float = 0.8
    token_questioned: float = 0.75
    confirm_yes: float = 0.92
    confirm_yes_softened: float = 0.7
    echo_values: float = 0.7
    topic_question: float = 0.25
    noted: float = 0.8
    caller_ends: float = 0.6
    plain_end: float = 0.85
    anything_else: float = 0.5
    no_thanks: float = 0.8
    privacy_unasked: float = 0.6
    emergency_unasked: float = 0.7
    stay_in_role_unasked: float = 0.75
    confidential_unasked: float = 0.55
    keep_language_unasked: float = 0.6
    abuse_unasked: float = 0.3

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not (isinstance(value, int | float) and 0.0 <= value <= 1.0):
                raise ValueError(f"NoiseModel.{f.name} must be a probability 0..1; got {value!r}")
