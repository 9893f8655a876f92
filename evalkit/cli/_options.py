"""Options several commands share, spelled once (flag, metavar, help): ``--store``,
``--scorecard`` and ``--personas``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["PersonasOption", "ScorecardOption", "StoreOption"]

#: ``--store``: where runs live (default ``runs``).
StoreOption = Annotated[
    str,
    typer.Option(metavar="DIR|URL", help="Folder or URL (s3://bucket/prefix) holding runs."),
]
#: ``--scorecard/-s``: a scorecard file (required where used).
ScorecardOption = Annotated[
    Path, typer.Option("--scorecard", "-s", metavar="FILE", help="Scorecard file.")
]
#: ``--personas/-p``: a personas file or folder (default None: ./personas, else the bundled).
PersonasOption = Annotated[
    Path | None,
    typer.Option(
        "--personas",
        "-p",
        metavar="PATH",
        help="A personas YAML file or folder [default: ./personas, else the bundled ones].",
    ),
]
