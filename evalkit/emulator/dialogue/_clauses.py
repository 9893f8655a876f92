"""The key facts as one clause in each register ("your appointment with X is on ..."), and
the caller's own echo of them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

from ._data import load
from ._facts import Fact
from ._text import transliterate
from ._types import Register

__all__ = ["TOPIC_USES", "details", "echo"]

_CLAUSE_KINDS: Final = frozenset({"date", "time", "amount", "doctor", "order", "location"})


def details(facts: Sequence[Fact], org: str | None, topic: str, register: Register) -> str:
    """The facts (not name, agent or org) as one clause in ``register``."""
    by_kind: dict[str, str] = {}
    others: list[Fact] = []
    for fact in facts:
        if fact.kind in _CLAUSE_KINDS and fact.kind not in by_kind:
            by_kind[fact.kind] = fact.shown(register)
        else:
            others.append(fact)
    org = transliterate(org) if org and register == "ur" else org
    clause = _TOPIC_CLAUSES[topic](by_kind, org, register)
    language = load("language")
    leftovers: Mapping[str, str] = language["leftover"][register]
    extra = [leftovers[k].format(v) for k, v in by_kind.items() if k not in TOPIC_USES[topic]]
    other: str = language["other"][register]
    extra += [other.format(label=f.label(register), value=f.shown(register)) for f in others]
    sep = "، " if register == "ur" else ", "
    and_ = {"en": ", and ", "ru": ", aur ", "ur": "، اور "}[register]
    return clause + (and_ + sep.join(extra) if extra else "")


def _opt(value: str | None, template: str) -> str:
    return template.format(value) if value else ""


def _clause_appointment(k: Mapping[str, str], org: str | None, reg: Register) -> str:
    if reg == "en":
        when = _opt(k.get("date"), " on {}") + _opt(k.get("time"), " at {}")
        where = _opt(k.get("location"), " at {}")
        body = when + where
        return (
            "your appointment"
            + _opt(k.get("doctor"), " with {}")
            + (" is" + body if body else " is coming up")
        )
    if reg == "ru":
        body = (
            _opt(k.get("date"), " {} ko")
            + _opt(k.get("time"), " {}")
            + _opt(k.get("location"), " {} mein")
        )
        return (
            "aap ki appointment"
            + _opt(k.get("doctor"), " {} ke saath")
            + (body + " hai" if body else " jald hone wali hai")
        )
    body = (
        _opt(k.get("date"), " {} کو")
        + _opt(k.get("time"), " {}")
        + _opt(k.get("location"), " {} میں")
    )
    return (
        "آپ کی اپائنٹمنٹ"
        + _opt(k.get("doctor"), " {} کے ساتھ")
        + (body + " ہے" if body else " جلد ہونے والی ہے")
    )


def _clause_payment(k: Mapping[str, str], org: str | None, reg: Register) -> str:
    if reg == "en":
        return (
            "your payment"
            + _opt(k.get("amount"), " of {}")
            + " is due"
            + _opt(k.get("date"), " on {}")
        )
    if reg == "ru":
        return (
            "aap ki"
            + _opt(k.get("amount"), " {} ki")
            + " payment"
            + _opt(k.get("date"), " {} tak")
            + " due hai"
        )
    return (
        "آپ کی"
        + _opt(k.get("amount"), " {} کی")
        + " ادائیگی"
        + _opt(k.get("date"), " {} تک")
        + " واجب الادا ہے"
    )


def _clause_delivery(k: Mapping[str, str], org: str | None, reg: Register) -> str:
    if reg == "en":
        return (
            "your order"
            + _opt(k.get("order"), " {}")
            + " will be delivered"
            + _opt(k.get("date"), " on {}")
            + _opt(k.get("time"), " by {}")
            + _opt(k.get("location"), " to {}")
        )
    if reg == "ru":
        return (
            "aap ka order"
            + _opt(k.get("order"), " {}")
            + _opt(k.get("date"), " {} ko")
            + _opt(k.get("time"), " {} tak")
            + _opt(k.get("location"), " {} par")
            + " deliver hoga"
        )
    return (
        "آپ کا آرڈر"
        + _opt(k.get("order"), " {}")
        + _opt(k.get("date"), " {} کو")
        + _opt(k.get("time"), " {} تک")
        + _opt(k.get("location"), " {} پر")
        + " پہنچا دیا جائے گا"
    )


def _clause_renewal(k: Mapping[str, str], org: str | None, reg: Register) -> str:
    if reg == "en":
        return (
            "your subscription expires"
            + _opt(k.get("date"), " on {}")
            + (_opt(k.get("amount"), " and the renewal is {}") or " soon")
        )
    if reg == "ru":
        return (
            "aap ki subscription"
            + (_opt(k.get("date"), " {} ko") or " jald")
            + " expire ho rahi hai"
            + _opt(k.get("amount"), ", renewal {} ki hai")
        )
    return (
        "آپ کی سبسکرپشن"
        + (_opt(k.get("date"), " {} کو") or " جلد")
        + " ختم ہو رہی ہے"
        + _opt(k.get("amount"), "، تجدید کی رقم {} ہے")
    )


def _clause_survey(k: Mapping[str, str], org: str | None, reg: Register) -> str:
    if reg == "en":
        return "we'd love your feedback on your recent experience with " + (org or "us")
    if reg == "ru":
        return (
            "hum aap se "
            + (f"{org} ki" if org else "hamari")
            + " service ke baare mein raaye lena chahte hain"
        )
    return "ہم " + (f"{org} کی" if org else "ہماری") + " سروس کے بارے میں آپ کی رائے لینا چاہتے ہیں"


def _clause_generic(k: Mapping[str, str], org: str | None, reg: Register) -> str:
    if reg == "en":
        return "we have an update regarding your account" + _opt(org, " with {}")
    if reg == "ru":
        return "aap ke" + _opt(org, " {}") + " account ke baare mein ek update hai"
    return "آپ کے" + _opt(org, " {}") + " اکاؤنٹ کے بارے میں ایک اپڈیٹ ہے"


_TOPIC_CLAUSES: Final[Mapping[str, Callable[[Mapping[str, str], str | None, Register], str]]] = {
    "appointment": _clause_appointment,
    "payment": _clause_payment,
    "delivery": _clause_delivery,
    "renewal": _clause_renewal,
    "survey": _clause_survey,
    "generic": _clause_generic,
}
TOPIC_USES: Final[Mapping[str, frozenset[str]]] = {
    "appointment": frozenset({"date", "time", "doctor", "location"}),
    "payment": frozenset({"amount", "date"}),
    "delivery": frozenset({"order", "date", "time", "location"}),
    "renewal": frozenset({"date", "amount"}),
    "survey": frozenset(),
    "generic": frozenset(),
}


def echo(record: Mapping[str, Fact], topic: str, register: Register) -> str:
    """The caller's own record of the key facts, e.g. "12 March at 4 PM"."""
    uses = TOPIC_USES[topic] or frozenset({"date", "time", "amount"})
    order = ("amount", "date", "time")
    values = [record[k].shown(register) for k in order if k in uses and k in record]
    if len(values) == 2 and not ("amount" in uses and "amount" in record):  # date, time
        return values[0] + {"en": " at ", "ru": " ko ", "ur": " کو "}[register] + values[1]
    return ("، " if register == "ur" else ", ").join(values)
