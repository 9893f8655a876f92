"""The assertions' calling convention: the evidence is positional, every option after it is
keyword-only (so ``assert_not_worse(prod, draft, 5)`` cannot mean a margin or a scorecard by
position), and the public ``Service`` names no private type in its signature."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from evalkit import testing
from evalkit.testing import Service

#: Each callable and its positional (evidence) parameters.
EVIDENCE: dict[str, tuple[str, ...]] = {
    "assert_not_worse": ("baseline", "candidate"),
    "assert_improved": ("baseline", "candidate"),
    "assert_pass_rate": ("grades", "rule"),
    "assert_latency": ("run",),
    "assert_no_regression": ("history_series",),
    "family": ("baseline", "candidate"),
    "pass_rates": ("grades",),
    "record": ("grid", "assistant_id", "target"),
}


@pytest.mark.parametrize("name", sorted(EVIDENCE))
def test_options_after_the_evidence_are_keyword_only(name: str) -> None:
    function: Callable[..., Any] = getattr(testing, name)
    parameters = inspect.signature(function).parameters.values()
    positional = tuple(p.name for p in parameters if p.kind is not p.KEYWORD_ONLY)
    assert positional == EVIDENCE[name]


def test_a_positional_margin_is_refused() -> None:
    with pytest.raises(TypeError, match="positional"):
        testing.assert_not_worse(None, None, 5.0)  # type: ignore[misc]


def test_service_takes_plain_values() -> None:
    signature = inspect.signature(Service)
    assert list(signature.parameters) == ["base_url", "api_key", "emulated"]
    service = Service("http://127.0.0.1:9/v1/", "sk_api_" + "x" * 24, emulated=True)
    assert service.base_url == "http://127.0.0.1:9/v1"
    assert "sk_api_" not in repr(service)
    # without a session's shared folder, once() makes a value once in this process
    made: list[int] = []
    assert service.once("value", lambda: made.append(1) or 41) == 41
    assert service.once("value", lambda: made.append(1) or 42) == 41
    assert made == [1]
