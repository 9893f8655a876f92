"""Run a parameterised notebook with papermill and export a static HTML report.

Parameters are checked against papermill's ``inspect_notebook`` first (an unknown name is an
error that lists the known ones; a name that looks like a secret is refused: keys come from the
environment, never from parameters, so they never land in the executed notebook). Execution runs
``python -m papermill`` in a child process under an outer timeout (kernels can hang), with the
parameters passed as a YAML file so ``"0012"`` stays a string. The HTML is rendered from the
executed notebook even when execution failed: inputs hidden, widget state dropped, no script or
stylesheet from a CDN; evalkit's own page and fonts. A report is what the notebook shows, not how
to use it: cells tagged ``notebook-only`` (a notebook's instructions) and nbconvert's ``¶`` heading
anchors are left out.

The kernel runs in the caller's working directory (papermill's ``--cwd``), so a relative path
given as a parameter (``-p store runs``) means what it means in the caller's shell.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._exceptions import EvalkitError
from .._util import atomic_write_bytes, closest_name, is_secret_key
from ..data import resolve
from ._page import report_page

__all__ = [
    "NOTEBOOK_ONLY_TAG",
    "NotebookRun",
    "ReportError",
    "check_parameters",
    "execute_notebook",
    "export_html",
    "notebook_parameters",
]

logger = logging.getLogger("evalkit.report")

#: Mime types of live widgets: a static report keeps their text fallback instead.
_WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

#: Cells with this tag (how to use the notebook) show in JupyterLab, never in a report.
NOTEBOOK_ONLY_TAG = "notebook-only"


class ReportError(EvalkitError):
    """A notebook report cannot be made as asked (unknown parameter, missing notebook, ...)."""


@dataclass(frozen=True)
class NotebookRun:
    """How a notebook run ended: the executed notebook, its HTML report, and the outcome."""

    notebook: Path
    html: Path | None
    ok: bool
    error: str | None
    duration_s: float

    @property
    def exit_code(self) -> int:
        """0 when every cell ran, 1 when a cell raised, 124 when the outer timeout struck."""
        if self.ok:
            return 0
        return 124 if self.error and self.error.startswith("timed out") else 1


def _notebook_file(path: str | os.PathLike[str]) -> Path:
    """The notebook ``path`` names: a file, or a bundled notebook by name (``explore_run``)."""
    try:
        source = resolve(path, "notebooks")
    except FileNotFoundError as exc:
        raise ReportError(f"no notebook at {path}: {exc.strerror}") from None
    if not source.is_file():
        raise ReportError(f"no notebook at {source}")
    return source


def notebook_parameters(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The parameters of ``path``'s cell tagged ``parameters`` (papermill's inspection)."""
    import papermill

    source = _notebook_file(path)
    inspected: dict[str, dict[str, Any]] = papermill.inspect_notebook(str(source))
    return inspected


def _with_guess(name: str, known: Mapping[str, Any]) -> str:
    guess = closest_name(name, known)
    return f"{name!r} (did you mean {guess!r}?)" if guess is not None else repr(name)


def check_parameters(path: str | os.PathLike[str], parameters: Mapping[str, Any]) -> None:
    """Refuse unknown parameters (listing the known ones) and parameters that look secret."""
    known = notebook_parameters(path)
    unknown = sorted(set(parameters) - set(known))
    if unknown:
        listed = ", ".join(sorted(known)) or "(none: the notebook has no parameters cell)"
        named = ", ".join(_with_guess(name, known) for name in unknown)
        raise ReportError(
            f"{Path(path).name} has no parameter {named}; its parameters are: {listed}"
        )
    secret = sorted(name for name in parameters if is_secret_key(name) or "key" in name.lower())
    if secret:
        raise ReportError(
            f"parameter(s) {', '.join(secret)} look like secrets: pass keys through the "
            "environment (EVALKIT_API_KEY, EVALKIT_JUDGE_API_KEY), never as notebook parameters"
        )


def execute_notebook(
    path: str | os.PathLike[str],
    parameters: Mapping[str, Any] | None = None,
    *,
    output: str | os.PathLike[str] | None = None,
    html: str | os.PathLike[str] | None = None,
    timeout: float = 1800.0,
    kernel: str = "python3",
    cwd: str | os.PathLike[str] | None = None,
) -> NotebookRun:
    """Execute ``path`` with papermill, then export ``html`` (also when a cell failed).

    ``output`` is the executed notebook (default: beside ``html``, or a temp folder). The
    kernel runs in ``cwd`` (default: this process's working directory, never the notebook's
    folder), where relative paths in the parameters resolve. ``path`` may name a bundled
    notebook (``compare_draft_prod``).
    """
    source = _notebook_file(path)
    params = dict(parameters or {})
    check_parameters(source, params)
    out_html = Path(html) if html is not None else None
    if output is not None:
        executed = Path(output)
    elif out_html is not None:
        executed = out_html.with_suffix(".ipynb")
    else:
        executed = Path(tempfile.mkdtemp(prefix="evalkit-nb-")) / source.name
    executed.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    workdir = Path(cwd) if cwd is not None else Path.cwd()
    ok, error = _run_papermill(source, executed, params, timeout, kernel, workdir.resolve())
    if not ok and error and not error.startswith("timed out"):
        error = _cell_error(executed, error)
    duration = time.monotonic() - started
    if out_html is not None and executed.is_file():
        export_html(executed, out_html, title=_title(source, params))
    elif out_html is not None:
        out_html = None
    logger.info("notebook %s: %s in %.1fs", source.name, "ok" if ok else error, duration)
    return NotebookRun(executed, out_html, ok, error, duration)


def _run_papermill(
    source: Path,
    executed: Path,
    params: dict[str, Any],
    timeout: float,
    kernel: str,
    workdir: Path,
) -> tuple[bool, str | None]:
    with tempfile.NamedTemporaryFile(
        "w", suffix=".yaml", prefix="evalkit-params-", delete=False, encoding="utf-8"
    ) as fh:
        json.dump(params, fh, ensure_ascii=False)  # JSON is YAML: strings stay strings
        params_file = fh.name
    command = [
        sys.executable,
        "-m",
        "papermill",
        str(source),
        str(executed),
        "-f",
        params_file,
        "-k",
        kernel,
        "--cwd",
        str(workdir),
        "--no-progress-bar",
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "EVALKIT_IN_PAPERMILL": "1"}
    try:
        with subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            start_new_session=True,  # the kernel is our grandchild: kill the whole group
        ) as process:
            try:
                log, _ = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill_group(process)
                process.communicate()
                return False, f"timed out after {timeout:.0f}s"
    finally:
        Path(params_file).unlink(missing_ok=True)
    if process.returncode == 0:
        return True, None
    return False, _failure(log, process.returncode)


def _kill_group(process: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def _failure(log: str, code: int) -> str:
    """The last meaningful line of papermill's output (the cell's exception)."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"^[A-Za-z_.]*(Error|Exception)\b", line)]
    tail = errors[-1] if errors else (lines[-1] if lines else "")
    return f"exit code {code}: {tail}"


def _cell_error(executed: Path, fallback: str) -> str:
    """``exit code 1: Regression: ...`` from the executed notebook's first error output."""
    try:
        book = json.loads(executed.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return fallback
    for cell in book.get("cells", []):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                head = fallback.split(":", 1)[0]
                return f"{head}: {out.get('ename', '')}: {out.get('evalue', '')}"
    return fallback


def _title(source: Path, params: Mapping[str, Any]) -> str:
    title = params.get("title")
    return str(title) if title else source.stem.replace("_", " ")


def _is_widget(output: Any) -> bool:
    data = output.get("data") if isinstance(output, dict) else None
    return isinstance(data, dict) and _WIDGET_MIME in data


def export_html(
    notebook: str | os.PathLike[str], html: str | os.PathLike[str], *, title: str = "report"
) -> Path:
    """Render an executed notebook as a static report: inputs hidden, widgets dropped, no
    ``notebook-only`` cells, no heading anchors."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(notebook), as_version=4)  # type: ignore[no-untyped-call]
    nb.metadata.pop("widgets", None)
    nb.cells = [c for c in nb.cells if NOTEBOOK_ONLY_TAG not in c.metadata.get("tags", ())]
    for cell in nb.cells:
        if "outputs" in cell:  # a live widget's output ("VBox(children=...)") says nothing here
            cell["outputs"] = [out for out in cell["outputs"] if not _is_widget(out)]
    exporter = HTMLExporter(  # type: ignore[no-untyped-call]
        template_name="basic",
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        exclude_anchor_links=True,
    )
    quiet = logging.getLogger("traitlets")  # its "alternative text is missing" note on plots
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        body, _ = exporter.from_notebook_node(nb)
    finally:
        quiet.setLevel(level)
    failed = any(
        out.get("output_type") == "error" for cell in nb.cells for out in cell.get("outputs", [])
    )
    page = report_page(title, body, failed=failed)
    target = Path(html)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, page.encode("utf-8"), durable=False)
    return target
