"""``--pricing FILE`` and ``--max-cost``: load the price table, and say what a command is
expected to run and spend before it starts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from ..api import Client
    from ..runner import Pricing

__all__ = ["MaxCostOption", "PricingOption", "announce", "assistant_llms", "load_pricing"]

PricingOption = Annotated[
    Path | None,
    typer.Option(
        "--pricing",
        metavar="FILE",
        help="Price table (see examples/pricing.yaml): print the expected cost before "
        "starting and record each run's cost.",
    ),
]
MaxCostOption = Annotated[
    float | None,
    typer.Option(
        "--max-cost",
        min=0.0,
        metavar="AMOUNT",
        help="Stop starting conversations once this much is spent (needs --pricing; partial, "
        "resumable).",
    ),
]


def load_pricing(path: Path | None, max_cost: float | None = None) -> Pricing | None:
    """The price table at ``path`` (None: none); a bad table or ``--max-cost`` without one is
    refused before anything runs."""
    if path is None:
        if max_cost is not None:
            raise typer.BadParameter(
                "--max-cost needs a price table: add --pricing FILE", param_hint="--max-cost"
            )
        return None
    from ..runner import Pricing, PricingError

    try:
        return Pricing.load(path)
    except PricingError as exc:
        raise typer.BadParameter(str(exc), param_hint="--pricing") from None


def assistant_llms(
    client: Client, assistant_id: str, patches: Sequence[Mapping[str, Any] | None] = (None,)
) -> list[str | None]:
    """``provider/model`` of the assistant's draft config under each patch (for an estimate;
    None where it cannot be read)."""
    from ..runner import llm_of
    from ..targets import merge_patch

    try:
        config = next(a for a in client.list_assistants() if a.id == assistant_id).config.to_json()
    except Exception:  # an estimate never stops a command: the run reports its own errors
        return [None for _ in patches]
    return [llm_of(merge_patch(config, patch) if patch else config) for patch in patches]


def announce(
    conversations: float,
    pricing: Pricing | None,
    priced: Sequence[tuple[str | None, float]] = (),
    *,
    bound: str = "",
) -> None:
    """Print ``expected: N conversations, about USD X`` on stderr. ``priced``: (llm,
    conversations) pairs to price (the sides or arms); ``bound``: "at most " and the like."""
    n = round(conversations)
    line = f"expected: {bound}{n} conversation(s)"
    if pricing is not None:
        from ..runner import DEFAULT_MINUTES, DEFAULT_TURNS

        cost = sum(pricing.expected_cost(llm, count) for llm, count in priced)
        unpriced = sorted({str(llm) for llm, _ in priced if pricing.simulation_price(llm) is None})
        line += (
            f", about {pricing.money(cost)} (at {DEFAULT_TURNS} turns and {DEFAULT_MINUTES:g} min "
            "each)"
        )
        if unpriced:
            line += f"; no price for {', '.join(unpriced)}"
    typer.echo(line, err=True)
