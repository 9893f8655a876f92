"""What the assistant's prompt asks for: the feature table, the topic and purpose words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ._noise import NoiseModel
from ._text import mentions

__all__ = ["FEATURES", "PURPOSE_WORDS", "TOPICS", "Feature", "detect_features", "topic_of"]


@dataclass(frozen=True, slots=True)
class Feature:
    """A behaviour a prompt can ask for, and how often it happens with and without asking.

    ``followed`` and ``unprompted`` name :class:`NoiseModel` fields.
    """

    name: str
    keywords: tuple[str, ...]
    followed: str
    unprompted: str
    effect: str

    def rate(self, noise: NoiseModel, instructed: bool) -> float:
        """The probability the behaviour happens in a call."""
        value: float = getattr(noise, self.followed if instructed else self.unprompted)
        return value


FEATURES: Final[tuple[Feature, ...]] = (
    Feature(
        "confirm",
        (
            r"confirm\w*",
            r"yes[\s/-]*or[\s/-]*no",
            r"verif\w*",
            r"tasdeeq",
            r"haan ya nahi",
            r"تصدیق",
            r"ہاں یا نہیں",
            r"کنفرم",
        ),
        "follow",
        "confirm_unasked",
        "states the key fact and asks for a yes or no (a vague prompt: confirm_vague)",
    ),
    Feature(
        "objections",
        (
            r"objections?",
            r"objects?",
            r"do[\s-]not[\s-]call",
            r"dnc",
            r"not interested",
            r"refus\w*",
            r"angry",
            r"upset",
            r"hostile",
            r"complain\w*",
            r"apologi[sz]\w*",
            r"maafi",
            r"maazrat",
            r"معذرت",
            r"معافی",
            r"اعتراض",
            r"ناراض",
        ),
        "follow",
        "apologise_unasked",
        "apologises and ends politely when the caller objects, refuses or asks to be removed",
    ),
    Feature(
        "close",
        (
            r"goodbye",
            r"good bye",
            r"bye",
            r"thank\w*",
            r"close the call",
            r"wrap up",
            r"sign off",
            r"khuda hafiz",
            r"allah hafiz",
            r"shukriya",
            r"خدا حافظ",
            r"اللہ حافظ",
            r"شکریہ",
        ),
        "follow",
        "close_unasked",
        "closes politely (thanks, goodbye, Allah hafiz)",
    ),
    Feature(
        "callback",
        (
            r"call ?back",
            r"reschedul\w*",
            r"later time",
            r"another time",
            r"baad mein",
            r"بعد میں",
            r"دوبارہ کال",
        ),
        "callback_agree",
        "callback_agree_unasked",
        "agrees to the caller's time",
    ),
    Feature(
        "verify",
        (r"verif\w*", r"identity", r"speaking (?:to|with) the right", r"right person", r"شناخت"),
        "verify_identity",
        "verify_identity_unasked",
        "asks whether it is speaking with the record's name",
    ),
    Feature(
        "privacy",
        (
            r"privacy",
            r"private",
            r"third[\s-]part(?:y|ies)",
            r"relatives?",
            r"family members?",
            r"someone else",
            r"only with",
            r"raazdari",
            r"رازداری",
        ),
        "follow",
        "privacy_unasked",
        "shares the record's details only with its person: a greeting that states the purpose "
        "asks for the person first; a relative or a child is told nothing",
    ),
    Feature(
        "emergency",
        (r"emergenc(?:y|ies)", r"1122", r"ambulance", r"chest pain", r"ایمرجنسی"),
        "follow",
        "emergency_unasked",
        "stops the call's business and sends a caller in a medical emergency to 1122",
    ),
    Feature(
        "stay_in_role",
        (
            r"(?:stay|remain|keep)\w* in (?:your |this |the )?role",
            r"your role",
            r"prompt injection",
            r"jailbreak\w*",
            r"manipulat\w*",
        ),
        "follow",
        "stay_in_role_unasked",
        "declines a caller's order to ignore its instructions",
    ),
    Feature(
        "confidential",
        (r"confidential\w*", r"secret", r"خفیہ"),
        "follow",
        "confidential_unasked",
        "declines to read out its instructions",
    ),
    Feature(
        "keep_language",
        (
            r"always (?:answer|reply|respond|speak)\w* in",
            r"(?:stay|keep)\w* (?:in|to) urdu",
            r"only in urdu",
            r"sirf urdu",
            r"ہمیشہ اردو",
        ),
        "follow",
        "keep_language_unasked",
        "keeps to its language when the caller mixes in English or speaks Roman Urdu",
    ),
    Feature(
        "abuse",
        (
            r"abus(?:e|ive)",
            r"insults?",
            r"harass\w*",
            r"gaali",
            r"badtameezi",
            r"گالی",
            r"بدتمیزی",
        ),
        "follow",
        "abuse_unasked",
        "warns an abusive caller and ends the call itself (an objections line: apologises "
        "and ends)",
    ),
)

PURPOSE_WORDS: Final = (
    r"purpose",
    r"reason",
    r"why you(?:'re| are) calling",
    r"calling about",
    r"mention\w*",
    r"remind\w*",
    r"maqsad",
    r"مقصد",
)

TOPICS: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    (
        "appointment",
        (
            r"appointments?",
            r"clinic",
            r"doctors?",
            r"check-?ups?",
            r"consultation",
            r"mulaqat",
            r"اپائنٹمنٹ",
            r"ملاقات",
            r"کلینک",
        ),
    ),
    (
        "payment",
        (
            r"payments?",
            r"bills?",
            r"dues?",
            r"amount",
            r"installments?",
            r"invoice",
            r"balance",
            r"outstanding",
            r"qist",
            r"ادائیگی",
            r"بل",
            r"قسط",
        ),
    ),
    (
        "delivery",
        (
            r"deliver\w*",
            r"(?<!in )orders?",
            r"parcels?",
            r"shipments?",
            r"courier",
            r"ڈیلیوری",
            r"آرڈر",
        ),
    ),
    ("renewal", (r"renew\w*", r"subscriptions?", r"expir\w*", r"policy", r"تجدید", r"سبسکرپشن")),
    ("survey", (r"survey", r"feedback", r"ratings?", r"satisf\w*", r"رائے", r"سروے")),
)


def detect_features(text: str) -> frozenset[str]:
    """The features a prompt's text asks for."""
    return frozenset(f.name for f in FEATURES if mentions(text, f.keywords))


def topic_of(text: str) -> str:
    """The call's topic (first matching row of :data:`TOPICS`), else ``"generic"``."""
    return next((topic for topic, words in TOPICS if mentions(text, words)), "generic")
