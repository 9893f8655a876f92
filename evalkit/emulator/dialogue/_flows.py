"""The default call: the opening, the caller's first reply, the purpose, the answer and the
close. Persona traits (``_traits``) take the call over or interrupt it between these steps."""

from __future__ import annotations

from ._clauses import echo
from ._data import load
from ._talk import NOTHING, Said, Talk, plain

__all__ = ["answer_and_close", "closes", "first_reply", "handles_objections", "open_call"]


def open_call(talk: Talk) -> bool:
    """The caller's hello (unless the agent greets first) and the agent's opening line.

    Returns whether the opening already stated the call's purpose.
    """
    scene, noise = talk.scene, talk.noise
    if not scene.greeting_on:
        talk.say("caller", talk.caller("hello_cold" if scene.cold else "hello"))
    if scene.literal_greeting is not None:
        literal = scene.literal_greeting
        talk.say("agent", talk.literal(literal))
        said = any(
            f.token in literal or (f.value and f.value in literal) for f in scene.details_facts
        )
        talk.details_said = said
        return said
    reg = talk.agent_register
    salutation = talk.agent("salutation")
    address = ""
    if talk.use_name and scene.name is not None:
        address = " " + scene.name.shown(reg) + {"en": "", "ru": " ji", "ur": " جی"}[reg]
    if scene.agent_name and scene.org:
        intro = talk.agent("intro_both")
    elif scene.org:
        intro = talk.agent("intro_org")
    elif scene.agent_name:
        intro = talk.agent("intro_agent")
    else:
        intro = talk.agent("intro_none")
    comma = "،" if reg == "ur" else ","
    opener = Said(f"{salutation.text}{address}{comma} {intro.text}", intro.acts)
    if scene.greeting_purpose and not withholds_purpose(talk):
        talk.say("agent", opener, talk.agent("purpose"))
        talk.details_said = True
        maybe_confirm(talk)
        return True
    if scene.name is not None and (
        scene.greeting_purpose
        or talk.follows("verify", noise.verify_identity, noise.verify_identity_unasked)
    ):
        talk.say("agent", opener, talk.agent("identity", name=scene.name.shown(reg)))
        talk.asked_identity = True
    elif talk.chance(noise.how_are_you):
        talk.say("agent", opener, talk.agent("how_are_you"))
        talk.asked_how = True
    else:
        talk.say("agent", opener)
    return False


def withholds_purpose(talk: Talk) -> bool:
    """Whether a prompt that keeps the details for the record's person holds back the purpose a
    greeting asks for, asking for the person first (drawn only for such a prompt)."""
    return "privacy" in talk.scene.features and talk.chance(talk.noise.follow)


def maybe_confirm(talk: Talk) -> None:
    """Ask for a yes or no, as often as the prompt and the noise model say."""
    scene, noise = talk.scene, talk.noise
    asks = talk.follows(
        "confirm", noise.confirm_vague if scene.vague else noise.follow, noise.confirm_unasked
    )
    if asks:
        talk.say("agent", talk.confirm_question())
        talk.asked_confirm = True


def handles_objections(talk: Talk) -> bool:
    """Whether the agent apologises and stops when the caller objects."""
    return talk.follows("objections", talk.noise.follow, talk.noise.apologise_unasked)


def closes(talk: Talk) -> bool:
    """Whether the agent closes politely."""
    return talk.follows("close", talk.noise.follow, talk.noise.close_unasked)


def first_reply(talk: Talk) -> None:
    """The caller's answer to the opening line."""
    scene = talk.scene
    if talk.asked_identity and "name" in scene.record:
        talk.say("caller", talk.caller("identity_yes"))
    elif talk.asked_how and not scene.cold:
        talk.say("caller", talk.caller("fine"))
    elif scene.cold:
        talk.say("caller", talk.caller("who"))
        if talk.chance(talk.noise.explain_who):
            talk.say("agent", talk.agent("explain_who"))
    elif scene.aware:
        talk.say("caller", talk.caller("aware"))
    else:
        talk.say("caller", talk.caller("ack_open"))


def state_purpose(talk: Talk) -> None:
    """The agent says why it calls (a vague prompt sometimes hedges first)."""
    if talk.scene.vague and talk.chance(talk.noise.vague_opening):
        talk.say("agent", talk.agent("vague_purpose"))
        talk.say("caller", talk.caller("what_about"))
    talk.say("agent", talk.agent("purpose"))
    talk.details_said = True
    maybe_confirm(talk)


def answer_and_close(talk: Talk) -> None:
    """The caller answers (or questions a token), then the agent wraps up."""
    scene, noise = talk.scene, talk.noise
    if talk.finished:
        if closes(talk):
            talk.say("agent", talk.agent("close"))
        return
    said = " ".join(text for role, text, _ in talk.lines if role == "agent")
    unresolved = [f for f in scene.details_facts if not f.resolved and f.token in said]
    if unresolved and talk.details_said and talk.chance(noise.token_questioned):
        fact = unresolved[0]
        reg = plain(talk.caller_register)
        label = load("language")["kind_label"][reg].get(fact.kind) or fact.label(reg)
        talk.say("caller", talk.caller("token", label=label, token=fact.token))
        talk.say("agent", talk.agent("token_sorry"))
        talk.say("caller", talk.caller("bye"))
        return
    confirmed = False
    if talk.asked_confirm:
        if talk.chance(noise.confirm_yes_softened if talk.softened else noise.confirm_yes):
            has_echo = bool(echo(scene.record, scene.topic, plain(talk.caller_register)))
            said_echo = (
                talk.caller("echo") if has_echo and talk.chance(noise.echo_values) else NOTHING
            )
            talk.say("caller", talk.caller("yes"), said_echo)
            confirmed = True
        else:
            talk.say("caller", talk.caller("unsure"))
    elif talk.chance(noise.topic_question):
        talk.say("caller", talk.caller(f"question_{scene.topic}"))
        talk.say("agent", talk.agent(f"answer_{scene.topic}"))
        talk.say("caller", talk.caller("ack"))
    else:
        talk.say("caller", talk.caller("ack"))
    wrap_up(talk, confirmed)


def wrap_up(talk: Talk, confirmed: bool) -> None:
    """The agent's last words (noted, close, anything else) and maybe the caller's goodbye."""
    noise = talk.noise
    noted = talk.agent("noted") if confirmed and talk.chance(noise.noted) else NOTHING
    if closes(talk):
        talk.say("agent", noted, talk.agent("close"))
        if talk.chance(noise.caller_ends):
            talk.say("caller", talk.caller("bye"))
    elif talk.chance(noise.plain_end):
        talk.say("agent", noted)
        talk.say("caller", talk.caller("bye" if noted.text else "bye_short"))
    else:
        last = "anything_else" if talk.chance(noise.anything_else) else "plain_end"
        talk.say("agent", noted, talk.agent(last))
        if talk.chance(noise.no_thanks):
            talk.say("caller", talk.caller("no_thanks"))
