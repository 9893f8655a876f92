"""Evals as tests: assertions that are statistics, not coin flips.

Each assertion reads evalkit's own comparison of the evidence and ends in one of three ways:
it passes (the evidence shows the claim), fails with an ``AssertionError`` (the evidence shows
the opposite: the verdict line, the interval, what was left out, the rules and cells that
moved, where the report is), or has insufficient evidence, which is never a silent pass::

    from evalkit.testing import assert_not_worse, family, record

    prod = record(grid, assistant_id, "prod", client=client, store=store)
    draft = record(grid, assistant_id, "draft", client=client, store=store)
    assert_not_worse(prod, draft, margin=5, scorecard=card, judge=judge)

    personas = family(prod, draft, by="persona", scorecard=card, judge=judge)  # Holm
    assert_not_worse(personas["hostile"])

``assert_pass_rate`` (a rule's Wilson interval against a bar; :func:`pass_rates` for a
Holm family of rules), ``assert_latency`` (agent p95 against a bar or a baseline run),
``assert_improved`` and ``assert_no_regression`` (the nightly alarm rule) complete the set.
The pytest plugin (loaded by the ``pytest11`` entry point ``evalkit``) adds the fixtures
``evalkit_service``, ``evalkit_client``, ``evalkit_store`` and ``evalkit_judge``, the session
options, JUnit XML properties and a Markdown summary.
"""

from __future__ import annotations

from .._util import publish
from ._check import Check, CheckFailed, FamilyPlace, InsufficientEvidence, Outcome
from ._comparisons import assert_improved, assert_not_worse
from ._family import Family, FamilyKind, Part, family, pass_rates
from ._latency import assert_latency
from ._nightly import assert_no_regression
from ._options import INSUFFICIENT_MODES, AssertOptions, InsufficientMode
from ._pass_rate import assert_pass_rate
from ._record import record, run_id_for
from ._service import Service
from ._session import SessionError
from ._session import SessionSettings as SessionSettings
from ._session import open_service as open_service

__all__ = [
    "INSUFFICIENT_MODES",
    "AssertOptions",
    "Check",
    "CheckFailed",
    "Family",
    "FamilyKind",
    "FamilyPlace",
    "InsufficientEvidence",
    "InsufficientMode",
    "Outcome",
    "Part",
    "Service",
    "SessionError",
    "assert_improved",
    "assert_latency",
    "assert_no_regression",
    "assert_not_worse",
    "assert_pass_rate",
    "family",
    "pass_rates",
    "record",
    "run_id_for",
]

#: What evalkit's other modules (the pytest plugin, the suite calibration) import from here
#: that users need not: not public, not in the API snapshot.
_SIBLING_API = ("SessionSettings", "open_service")

publish(globals())
