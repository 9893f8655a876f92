"""A shipped notebook refuses parameters it does not have, by itself.

papermill only warns about an unknown ``-p`` name and runs on, so a misspelt gate
(``-p fail_on_regresion True``) would silently turn the gate off. The cell after each notebook's
parameters calls :func:`refuse_unknown_parameters`, which reads the cells papermill injected
from the kernel's input history and raises :class:`ReportError` naming the closest known name.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence

from .._util import closest_name
from ._notebooks import ReportError

__all__ = ["injected_parameters", "refuse_unknown_parameters"]

#: The first line of the cell papermill injects (its Python translator's comment).
PAPERMILL_HEADER = "# Parameters"


def injected_parameters(history: Sequence[str]) -> list[str]:
    """The names assigned in papermill's injected cells of an IPython input history."""
    names: list[str] = []
    for source in history:
        lines = str(source).splitlines()
        if not lines or lines[0].strip() != PAPERMILL_HEADER:
            continue
        try:
            tree = ast.parse(str(source))
        except SyntaxError:
            continue
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            names += [t.id for t in targets if isinstance(t, ast.Name) and t.id not in names]
    return names


def _kernel_history() -> list[str]:
    """The running IPython kernel's input history (empty outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return []
    shell = get_ipython()
    if shell is None:
        return []
    return [str(cell) for cell in shell.user_ns.get("In", [])]


def refuse_unknown_parameters(known: Iterable[str], history: Sequence[str] | None = None) -> None:
    """Raise :class:`ReportError` when papermill injected a parameter not in ``known``.

    ``history``: the input history to read (default: the running kernel's ``In``). The message
    names each unknown parameter with the closest known one, and lists the known ones.
    """
    names = sorted(set(known))
    cells = _kernel_history() if history is None else history
    unknown = [n for n in injected_parameters(cells) if n not in names]
    if not unknown:
        return
    said = []
    for name in unknown:
        guess = closest_name(name, names)
        said.append(f"{name!r} (did you mean {guess!r}?)" if guess else repr(name))
    raise ReportError(
        f"this notebook has no parameter {', '.join(said)}: papermill would only warn and run "
        f"on without it; its parameters are: {', '.join(names)}"
    )
