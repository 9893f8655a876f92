"""Emulator assistants per bundled scorecard: a well-written prompt and a careless one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalkit.demo import CONTACTS as CLINIC_CONTACTS
from evalkit.demo import CONTEXT as CLINIC_CONTEXT
from evalkit.demo import DRAFT_INSTRUCTIONS, PROD_INSTRUCTIONS


@dataclass(frozen=True)
class Scenario:
    """A scorecard file, the contacts and context, and (name, instructions, greeting) variants."""

    scorecard: str
    contacts: list[dict[str, Any]]
    context: str
    variants: tuple[tuple[str, str, bool], ...]


FINANCE = [
    {"customer_name": "Bilal Ahmed", "company_name": "Jubilee Finance", "amount_due": 15000,
     "due_date": "20 November"},
    {"customer_name": "Sara Malik", "company_name": "Jubilee Finance", "amount_due": 8500,
     "due_date": "25 November"},
]  # fmt: skip
SUPPORT = [
    {"customer_name": "Hina Raza", "company_name": "QuickShop", "order_id": "QS-4411"},
    {"customer_name": "Omar Shah", "company_name": "QuickShop", "order_id": "QS-9020"},
]

SCENARIOS = (
    Scenario(
        "appointment-reminder-ur.yaml",
        CLINIC_CONTACTS,
        CLINIC_CONTEXT,
        (
            ("prod", PROD_INSTRUCTIONS, True),
            ("draft", DRAFT_INSTRUCTIONS + " Mention {{room_number}}.", False),
        ),
    ),
    Scenario(
        "instalment-reminder-roman-ur.yaml",
        FINANCE,
        "An instalment reminder from the finance company.",
        (
            (
                "good",
                "You are Ali from {{company_name}}, calling {{customer_name}} in Roman Urdu "
                "about {{amount_due}} due on {{due_date}}. Confirm yes or no. Pay via JazzCash or "
                "the bank app. If the caller objects, apologise and end politely. Say shukriya.",
                True,
            ),
            (
                "careless",
                "Call {{customer_name}} in Urdu script (Nastaliq) about the payment of "
                "{{amount_due}} and {{late_fee}}. Threaten court if they refuse.",
                True,
            ),
        ),
    ),
    Scenario(
        "support-line-en-ur.yaml",
        SUPPORT,
        "An inbound call to the shop's support line about an order.",
        (
            (
                "good",
                "You are Zara, the support agent of {{company_name}}. Answer in the "
                "caller's language. Confirm the order number {{order_id}}. Apologise when the "
                "caller is angry and say thank you and goodbye at the end.",
                True,
            ),
            ("careless", "Support for orders {{ticket_ref}}.", False),
        ),
    ),
    Scenario(
        "support-line-en.yaml",
        SUPPORT,
        "An inbound call to the shop's support line about an order.",
        (
            (
                "good",
                "You are Zara, the support agent of {{company_name}}, speaking English. "
                "Confirm the order number {{order_id}}. Apologise when the caller is angry, and "
                "say thank you and goodbye at the end of every call.",
                True,
            ),
            ("careless", "Support line in Urdu script, Nastaliq. Ticket {{ticket_ref}}.", False),
        ),
    ),
)
