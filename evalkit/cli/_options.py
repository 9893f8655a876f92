"""Options several commands share, spelled once (flag, metavar, help): ``--store``,
``--scorecard``, ``--personas``, the grid's ``--variables`` and ``--context``,
``--concurrency``, the held-out ``--seed``, ``--confirm-repeats`` and the judge's ``--judge-model`` / ``--no-judge``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = [
    "SAMPLE_CONTACTS",
    "ConcurrencyOption",
    "ConfirmRepeatsOption",
    "ContextOption",
    "HoldoutSeedOption",
    "JudgeModelOption",
    "NoJudgeOption",
    "PersonasOption",
    "ScorecardOption",
    "StoreOption",
    "VariablesOption",
]

#: The bundled sample contacts as a suggested command line spells them: the same words work
#: from a wheel (the bundled file), a checkout and a folder ``evalkit init`` filled (the copy).
SAMPLE_CONTACTS = "examples/contacts.csv"

#: ``--store``: where runs live (default ``runs``).
StoreOption = Annotated[
    str,
    typer.Option(metavar="DIR|URL", help="Folder or URL (s3://bucket/prefix) holding runs."),
]
#: ``--scorecard/-s``: a scorecard file or a bundled scorecard's name (required where used).
ScorecardOption = Annotated[
    Path,
    typer.Option(
        "--scorecard",
        "-s",
        metavar="FILE|NAME",
        help="Scorecard file, or a bundled scorecard by name (appointment-reminder-ur).",
    ),
]
#: ``--personas/-p``: a personas file or folder (default None: ./personas, else the bundled).
PersonasOption = Annotated[
    Path | None,
    typer.Option(
        "--personas",
        "-p",
        metavar="PATH",
        help="A personas YAML file or folder, or a bundled persona by name "
        "[default: ./personas, else the bundled ones].",
    ),
]
#: ``--variables``: a CSV of variable records (default None: no variables).
VariablesOption = Annotated[
    Path | None,
    typer.Option(
        "--variables",
        metavar="CSV",
        help="CSV of variable records (contacts), or a bundled example (contacts.csv).",
    ),
]
#: ``--context``: contexts the caller knows, repeatable (default None: no context).
ContextOption = Annotated[
    list[str] | None,
    typer.Option("--context", metavar="TEXT", help="A context the caller knows (repeatable)."),
]
#: ``--concurrency``: conversations at once (default 8).
ConcurrencyOption = Annotated[int, typer.Option(min=1, metavar="N", help="Conversations at once.")]
#: ``--seed``: the seed that picks the held-out cells (default 0).
HoldoutSeedOption = Annotated[int, typer.Option(metavar="N", help="Seed of the held-out cells.")]
#: ``--confirm-repeats``: fresh repeats a confirmed winner and the control run (default 2).
ConfirmRepeatsOption = Annotated[
    int,
    typer.Option(
        "--confirm-repeats",
        min=0,
        metavar="N",
        help="Fresh repeats of every cell a confirmed winner and the control run to measure "
        "its gain (0: none; the gain is then the selection-adjusted held-out difference).",
    ),
]
#: ``--judge-model``: the judge model (default None: from the environment).
JudgeModelOption = Annotated[
    str | None, typer.Option("--judge-model", metavar="MODEL", help="Judge model.")
]
#: ``--no-judge``: leave judged rules n/a (default False).
NoJudgeOption = Annotated[bool, typer.Option("--no-judge", help="Leave judged rules n/a.")]
