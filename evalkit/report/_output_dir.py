"""Where a notebook writes its side outputs (summary.json, parquet tables, demo runs).

A notebook's ``output_dir`` parameter wins. Without one, outputs go to
``./evalkit-output/<notebook>`` under the kernel's working directory (``evalkit report`` runs the
kernel in the caller's), except where that would write beside the notebook or into evalkit's own
folder: when the working directory lies inside evalkit's checkout or installation (papermill
run with ``--cwd notebooks``, or JupyterLab opened on the repository), or is the folder of the
notebook JupyterLab is running (its ``JPY_SESSION_NAME``). Then a fresh temporary folder is used
and its path logged; the notebooks print where their outputs went.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

__all__ = ["OUTPUT_FOLDER", "notebook_output_dir"]

logger = logging.getLogger("evalkit.report")

#: The folder under the working directory that holds every notebook's outputs.
OUTPUT_FOLDER = "evalkit-output"


def _evalkit_root() -> Path:
    """The folder holding the ``evalkit`` package: the checkout, or site-packages."""
    return Path(__file__).resolve().parents[2]


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _running_notebooks_folder() -> Path | None:
    """The folder of the notebook this kernel runs, when JupyterLab says (absolute path)."""
    session = os.environ.get("JPY_SESSION_NAME", "")
    path = Path(session)
    return path.resolve().parent if session and path.is_absolute() else None


def notebook_output_dir(name: str, given: str | os.PathLike[str] | None = None) -> Path:
    """``given`` if set; else ``./evalkit-output/<name>``, or a fresh temp folder when that
    would be beside the running notebook or inside evalkit's own folder."""
    if given is not None and os.fspath(given) != "":
        return Path(given)
    cwd = Path.cwd().resolve()
    if _inside(cwd, _evalkit_root()) or cwd == _running_notebooks_folder():
        chosen = Path(tempfile.mkdtemp(prefix=f"evalkit-{name}-"))
        logger.info("outputs of %s go to %s, not beside the notebook", name, chosen)
        return chosen
    return cwd / OUTPUT_FOLDER / name
