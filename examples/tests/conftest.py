"""Fixtures of the example assistant's eval suite (``pytest examples/tests``).

On the embedded emulator (no ``EVALKIT_BASE_URL``) the session builds the demo's Urdu clinic
appointment reminder, publishes it as prod (version 1), and saves the prompt of
``examples/assistant.yaml`` as the draft: the change under test adds a farewell. Against a
service, set ``EVALKIT_ASSISTANT_ID`` to the assistant to test (its draft against its prod; a
config snapshot of prod's version must be in the store, see ``evalkit snapshot``).

Every fixture is session-scoped: the runs are recorded once (and shared by pytest-xdist
workers), and each family is computed once for all the tests that assert a part of it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from evalkit import Grid, Scorecard, load_personas
from evalkit.data import bundled_path
from evalkit.demo import CONTACTS, CONTEXT, PROD_INSTRUCTIONS
from evalkit.runner import RunOptions
from evalkit.store import Run, local_folder
from evalkit.targets import ConfigSnapshot, SnapshotStore
from evalkit.testing import Family, Service, family, pass_rates, record

EXAMPLES = Path(__file__).resolve().parent.parent
PERSONAS = (
    "cooperative",
    "busy-hangs-up",
    "confused-elderly",
    "code-switching",
    "do-not-call",
    "hostile",
)
#: The rules whose pass rate the draft must hold at 80% or more.
KEY_RULES = ("urdu-script", "asks-for-customer", "names-clinic", "no-placeholders")
QUIET = RunOptions(concurrency=16, progress=False)


def build_example_assistant(service: Service, store: str) -> str:
    """The demo's reminder on the emulator: prod = version 1 (published, its config kept as
    a snapshot so prod can run on a clone), draft = ``examples/assistant.yaml``'s prompt."""
    built = service.emulator.build(
        "Clinic appointment reminder",
        {"context": CONTEXT, "sampleRows": CONTACTS[:1]},
        PROD_INSTRUCTIONS,
        initial_greeting=True,
    )
    assistant_id = str(built["realtimeAssistantId"])
    example = yaml.safe_load((EXAMPLES / "assistant.yaml").read_text(encoding="utf-8"))
    with service.client() as client:
        assistant = next(a for a in client.list_assistants() if a.id == assistant_id)
        SnapshotStore(local_folder(store)).save(ConfigSnapshot.from_assistant(assistant))
        service.emulator.publish(assistant_id)
        config = assistant.config.to_json()
        config["agent"]["instructions"] = example["agent"]["instructions"]
        client.update_assistant(assistant_id, config=config)
    return assistant_id


@pytest.fixture(scope="session")
def assistant_id(evalkit_service: Service, evalkit_store: str) -> str:
    given = os.environ.get("EVALKIT_ASSISTANT_ID")
    if given:
        return given
    return str(
        evalkit_service.once(
            "example-assistant", lambda: build_example_assistant(evalkit_service, evalkit_store)
        )
    )


@pytest.fixture(scope="session")
def grid() -> Grid:
    """The demo's grid: six personas x three contacts x three repeats (54 conversations)."""
    personas = [p for p in load_personas(bundled_path("personas")) if p.label in PERSONAS]
    return Grid(personas, variables=CONTACTS, contexts=[CONTEXT], repeats=3)


@pytest.fixture(scope="session")
def scorecard() -> Scorecard:
    return Scorecard.load("appointment-reminder-ur")


@pytest.fixture(scope="session")
def prod(grid: Grid, assistant_id: str, evalkit_client, evalkit_store: str) -> Run:
    return record(
        grid, assistant_id, "prod", client=evalkit_client, store=evalkit_store, options=QUIET
    )


@pytest.fixture(scope="session")
def draft(grid: Grid, assistant_id: str, evalkit_client, evalkit_store: str) -> Run:
    return record(
        grid, assistant_id, "draft", client=evalkit_client, store=evalkit_store, options=QUIET
    )


@pytest.fixture(scope="session")
def by_persona(prod: Run, draft: Run, scorecard: Scorecard, evalkit_judge) -> Family:
    """Draft against prod persona by persona, one Holm family of six."""
    return family(
        prod,
        draft,
        by="persona",
        margin=5.0,
        scorecard=scorecard,
        parts=PERSONAS,
        judge=evalkit_judge,
    )


@pytest.fixture(scope="session")
def by_rule(prod: Run, draft: Run, scorecard: Scorecard, evalkit_judge) -> Family:
    """Draft against prod rule by rule, one Holm family of every rule graded."""
    return family(prod, draft, by="rule", margin=5.0, scorecard=scorecard, judge=evalkit_judge)


@pytest.fixture(scope="session")
def rates(draft: Run, scorecard: Scorecard, evalkit_judge) -> Family:
    """The draft's pass rates of the key rules against 80%, one Holm family."""
    return pass_rates(
        draft, at_least=0.8, rules=KEY_RULES, scorecard=scorecard, judge=evalkit_judge
    )
