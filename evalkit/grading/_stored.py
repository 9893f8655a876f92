"""The scorecards a stored run was graded with, read back from its grades files: each keeps
its scorecard in the parquet footer, so two graded runs compare again without the file."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping

from ..store import Run, StoreError, grades_metadata, grades_path
from ._scorecard import Scorecard

__all__ = ["SCORECARD_KEY", "scorecard_metadata", "stored_scorecards"]

logger = logging.getLogger("evalkit.grading")

#: Footer key of a grades file holding the scorecard it was graded with (its wire JSON).
SCORECARD_KEY = "evalkit.scorecard"


def scorecard_metadata(card: Scorecard) -> dict[str, str]:
    """The footer entries that let :func:`stored_scorecards` give ``card`` back."""
    return {SCORECARD_KEY: json.dumps(card.to_service(), ensure_ascii=False, sort_keys=True)}


def stored_scorecards(run: Run) -> dict[str, Scorecard]:
    """Each scorecard ``run``'s stored grades were made with, by rubric version id.

    A grades file that keeps no scorecard (written before grades kept theirs) or one that no
    longer matches the rules it was graded with is left out (logged at debug level).
    """
    graded = run.manifest.get("grades")
    found: dict[str, Scorecard] = {}
    for rubric in sorted(graded) if isinstance(graded, Mapping) else ():
        path = grades_path(run.path, str(rubric))
        try:
            meta = grades_metadata(path) if path.is_file() else {}
            card = Scorecard.from_dict(json.loads(meta[SCORECARD_KEY]), unknown_keys=True)
        except (KeyError, ValueError, StoreError) as exc:
            logger.debug("run %s: no scorecard kept with %s (%s)", run.run_id, path, exc)
            continue
        if card.rubric_version_id != rubric or card.content_hash != meta.get(
            "evalkit.scorecard_hash"
        ):
            logger.debug("run %s: the scorecard kept in %s is not its grades'", run.run_id, path)
            continue
        found[str(rubric)] = card
    return found
