"""Failure clusters of a stored run whose variables records hold contact names (the demo's
sample contacts: ``Fatima Noor``, ``Al-Noor Hospital``, ``Dr. Saleem``): no word of any record
value is a cluster label word, with or without ``conversations=`` (the records are read from
the run the grades were stored in), and the labels are still words of the failures."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from evalkit.demo import DemoService, demo_grid
from evalkit.diagnose import failure_clusters
from evalkit.flows import DraftVsProd


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> DraftVsProd:
    with DemoService(tmp_path_factory.mktemp("runs"), seed=7) as service:
        return service.draft_vs_prod(demo_grid(1), progress=False)


def _value_words(outcome: DraftVsProd) -> set[str]:
    records = outcome.candidate.manifest["grid"]["variables"]
    values = [str(v) for record in records for v in record.values()]
    return {w for v in values for w in re.findall(r"[^\W\d_]+", v.casefold())}


def _label_words(clusters: pd.DataFrame) -> list[set[str]]:
    return [set(label.split(" · ")) for label in clusters["label"]]


@pytest.mark.slow
@pytest.mark.parametrize("with_conversations", [False, True])
def test_no_record_value_is_a_label_word(outcome: DraftVsProd, with_conversations: bool) -> None:
    values = _value_words(outcome)
    assert {"fatima", "noor", "hospital", "saleem", "shifa", "clinic"} <= values
    clusters = failure_clusters(
        outcome.candidate_grades,
        outcome.candidate.turns,
        conversations=outcome.candidate.conversations if with_conversations else None,
    )
    assert len(clusters) >= 3
    labels = _label_words(clusters)
    assert not [words & values for words in labels if words & values], clusters["label"]
    # still the failures' own words: three per label, of the agent's Roman Urdu
    assert all(len(words) == 3 for words in labels), clusters["label"]
    assert set().union(*labels) & {"aadaab", "assalam", "alaikum", "bata", "dijiye", "batane"}


@pytest.mark.slow
def test_a_baseline_run_records_are_masked_too(outcome: DraftVsProd) -> None:
    values = _value_words(outcome)
    clusters = failure_clusters(
        outcome.candidate_grades,
        pd.concat([outcome.baseline.turns, outcome.candidate.turns], ignore_index=True),
        baseline=outcome.baseline_grades,
    )
    assert clusters["conversations_baseline"].sum() > 0
    assert not [w & values for w in _label_words(clusters) if w & values], clusters["label"]
