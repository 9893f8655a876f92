"""One place that turns an error into a short message and an exit code, for every command.

:class:`EvalkitGroup` is the ``evalkit`` command group: it runs a command and, unless
``--debug`` or ``EVALKIT_DEBUG=1`` asks for the traceback, prints ``evalkit: error: ...`` with
what went wrong and what to do, then exits with a code from :class:`ExitCode`.
"""

from __future__ import annotations

import errno
import logging
import os
import shlex
import sys
from collections.abc import Callable, Mapping
from enum import IntEnum
from typing import Any, Final
from urllib.parse import urlsplit

import typer
from typer.core import TyperGroup

from .._exceptions import EvalkitError
from ._pipes import stdout_reader_gone

__all__ = [
    "ARGV_KEY",
    "EXIT_CODE_MEANINGS",
    "EvalkitGroup",
    "ExitCode",
    "debug_enabled",
    "describe",
    "fail",
    "quiet_store_outage",
    "store_outage",
]

#: ``ctx.meta`` key holding the command line as given (to print a resume line).
ARGV_KEY: Final = "evalkit.argv"


class ExitCode(IntEnum):
    """The exit codes of every ``evalkit`` command (their meanings: :data:`EXIT_CODE_MEANINGS`)."""

    OK = 0
    ERROR = 1
    USAGE = 2
    PARTIAL = 3
    ABORTED = 4
    FAIL_ON = 5
    STORE_UNREACHABLE = 6
    JUDGE_SHIFTED = 7
    INTERRUPTED = 130


#: Each exit code's meaning: (the short form ``--help`` prints, the sentence the docs print).
EXIT_CODE_MEANINGS: Final[Mapping[ExitCode, tuple[str, str]]] = {
    ExitCode.OK: ("ok", "The command did what it was asked."),
    ExitCode.ERROR: (
        "error",
        "An error stopped the command (one message on stderr; `--debug` shows the traceback); "
        "also a gate that failed: `compare --fail-on-regression` with a regressed verdict, "
        "`compare --fail-unless-non-inferior` without non-inferiority shown, `history "
        "--fail-on-regression` below the last-known-good run, `scorecard validate` with a "
        "problem, `lint` with an error (any finding with `--strict`).",
    ),
    ExitCode.USAGE: ("usage", "A command-line mistake: an unknown option, a missing argument."),
    ExitCode.PARTIAL: (
        "partial run (budget)",
        "A run stopped by its budget (`--max-conversations`, `--max-seconds`, `--max-cost`): "
        "some conversations are not recorded yet; the line that resumes it is printed.",
    ),
    ExitCode.ABORTED: (
        "run aborted",
        "A run stopped by an error no retry would fix (401, 402, 403, 404: `RunAborted`); "
        "what finished is kept and the line that resumes it is printed.",
    ),
    ExitCode.FAIL_ON: (
        "--fail-on matched",
        "A complete run recorded an outcome named by `--fail-on` (error, dropped, failed), "
        "or `grade --fail-on` found grades holding the verdicts it names (fail, na, error).",
    ),
    ExitCode.STORE_UNREACHABLE: (
        "store unreachable",
        "The store (an object store URL) could not be reached, at start or mid-run: one line "
        "names the store and the command that resumes (what finished is kept in the journal).",
    ),
    ExitCode.JUDGE_SHIFTED: (
        "judge-drift shift",
        "`judge-drift --fail-on-shift`: the new judge moved a judged rule's pass rate.",
    ),
    ExitCode.INTERRUPTED: (
        "interrupted (Ctrl-C)",
        "Interrupted (Ctrl-C, SIGINT): what finished is kept and the line that resumes it is "
        "printed.",
    ),
}

EXIT_CODES_HELP: Final = (
    "Exit codes: "
    + "; ".join(f"{int(code)} {short}" for code, (short, _) in EXIT_CODE_MEANINGS.items())
    + "."
)


def debug_enabled(flag: bool = False) -> bool:
    """``--debug`` or ``EVALKIT_DEBUG`` set to anything but empty/0/false/no."""
    value = os.environ.get("EVALKIT_DEBUG", "").strip().lower()
    return flag or value not in ("", "0", "false", "no")


def fail(message: str, code: ExitCode = ExitCode.ERROR) -> typer.Exit:
    """Print ``evalkit: error: message`` to stderr; the Exit to raise."""
    typer.echo(f"evalkit: error: {message}", err=True)
    return typer.Exit(int(code))


# --------------------------------------------------------------------------- describing errors


def _base_url() -> str:
    return os.environ.get("EVALKIT_BASE_URL", "").strip()


def _host_port(url: str) -> str:
    parts = urlsplit(url)
    if not parts.hostname:
        return url or "the service"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.hostname}:{port}"


def _is_local(url: str) -> bool:
    return urlsplit(url).hostname in ("127.0.0.1", "localhost", "::1")


def _connection(exc: BaseException) -> str:
    url = _base_url()
    where = _host_port(url)
    reason = str(exc).rsplit(": ", 1)[-1] or type(exc).__name__
    if _is_local(url) or not url:
        hint = (
            "is the emulator running? Start it with `evalkit emulator` and export the lines "
            "it prints (EVALKIT_BASE_URL, EVALKIT_API_KEY)"
        )
    else:
        hint = "check EVALKIT_BASE_URL and your network"
    return f"cannot reach {where} ({reason}); {hint}"


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


_API_HINTS: Final[dict[int, str]] = {
    401: "the API key was refused: check EVALKIT_API_KEY (`evalkit emulator` prints the key "
    "it accepts)",
    402: "the project has no credits left",
    403: "the assistant belongs to another project than EVALKIT_API_KEY's",
    404: "no such assistant for this API key: `evalkit assistants list` shows the ones there are",
}


def _api(exc: BaseException) -> str:
    status = _status(exc)
    messages = getattr(exc, "messages", None) or [str(exc)]
    said = "; ".join(str(m) for m in messages)
    hint = _API_HINTS.get(status or 0)
    head = f"the service answered {status}: {said}" if status else said
    return f"{head}; {hint}" if hint else head


def _admin_status(exc: BaseException) -> str:
    import httpx

    assert isinstance(exc, httpx.HTTPStatusError)
    response = exc.response
    if response.status_code == 404 and "/_emulator/" in str(exc.request.url):
        return (
            f"{_host_port(str(exc.request.url))} has no emulator admin API (404): publishing "
            "and brief builds work only on the emulator; the spec does not show the real "
            "service's publish, so publish there in its console"
        )
    return f"{exc.request.method} {exc.request.url.path} answered {response.status_code}: " + (
        response.text[:300] or response.reason_phrase
    )


def _os_error(exc: BaseException) -> str:
    assert isinstance(exc, OSError)
    if exc.errno == errno.EADDRINUSE:
        return f"address already in use ({exc.strerror}); pick another --port, or --port 0"
    where = f": {exc.filename}" if exc.filename else ""
    return f"{exc.strerror or type(exc).__name__}{where}"


def _plain(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _handlers() -> tuple[tuple[type[BaseException], Callable[[BaseException], str]], ...]:
    import httpx

    from ..api import ApiConnectionError, ApiError

    return (
        (ApiConnectionError, _connection),
        (httpx.TransportError, _connection),
        (httpx.HTTPStatusError, _admin_status),
        (ApiError, _api),
        (EvalkitError, _plain),
        (OSError, _os_error),
        (ValueError, _plain),  # a value the user gave (a grid option, a number) was refused
    )


def describe(exc: BaseException) -> str | None:
    """A one-paragraph message for ``exc``, or None when it is not an error evalkit expects.

    When ``exc`` wraps a connection or API error (``RunAborted`` from a 401, say), the wrapper's
    words come first and the cause's advice after.
    """
    handlers = _handlers()

    def own(error: BaseException) -> str | None:
        for kind, handler in handlers:
            if isinstance(error, kind):
                return handler(error)
        return None

    message = own(exc)
    if message is None:
        return None
    cause = exc.__cause__
    if isinstance(cause, handlers[0][0] | handlers[1][0] | handlers[3][0]) and not isinstance(
        exc, handlers[0][0]
    ):
        detail = own(cause)
        if detail is not None and detail not in message:
            message = f"{message.split(': ', 1)[0]}: {detail}"
    return _one_paragraph(message)


def _store_in(argv: list[str]) -> str:
    """The ``--store`` given on the command line (``runs`` when none was)."""
    for i, arg in enumerate(argv):
        if arg == "--store" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--store="):
            return arg.split("=", 1)[1]
    return "runs"


def store_outage(exc: BaseException, argv: list[str], resume: str | None = None) -> str | None:
    """One line for a store that could not be reached: the store, why, and the command that
    resumes (``resume``, else the command as given); None when ``exc`` is something else."""
    if "evalkit.store" not in sys.modules:  # no store was touched (and none is imported)
        return None
    from ..store import StoreUnreachableError, is_unreachable

    if isinstance(exc, StoreUnreachableError):
        store, reason = exc.store, exc.reason
    elif is_unreachable(exc, backends_only=True):
        store = _store_in(argv)
        reason = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
        reason = reason or type(exc).__name__
    else:
        return None
    check = "check its endpoint (AWS_ENDPOINT_URL, ...) and the network"
    if resume is None:
        again = shlex.join(["evalkit", *argv])
        return f"cannot reach the store {store} ({reason}); {check}, then run again: {again}"
    return (
        f"cannot reach the store {store} ({reason}); what finished is kept: {check}, then "
        f"resume with: {resume}"
    )


def quiet_store_outage(record: logging.LogRecord) -> bool:
    """A logging filter: drop asyncio's "Task exception was never retrieved" tracebacks of a
    store backend's dropped connections (the store outage is said once, by the command)."""
    if record.name != "asyncio" or not record.exc_info or record.exc_info[1] is None:
        return True
    from ..store import is_unreachable

    return not is_unreachable(record.exc_info[1], backends_only=True)


def _one_paragraph(text: str, limit: int = 40) -> str:
    lines = [line.rstrip() for line in text.strip().splitlines() if line.strip()]
    if len(lines) > limit:
        lines = [*lines[:limit], f"... ({len(lines) - limit} more lines)"]
    return "\n".join(lines)


class EvalkitGroup(TyperGroup):
    """The ``evalkit`` group: every command's errors become one short message."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: Any = None,
        **extra: Any,
    ) -> Any:
        """Remember the arguments as given, so a run can print how to resume it."""
        given = list(args)
        ctx = super().make_context(info_name, args, parent=parent, **extra)
        ctx.meta[ARGV_KEY] = given
        return ctx

    def invoke(self, ctx: Any) -> Any:
        """Run the command; turn expected errors into a message and an exit code."""
        try:
            return super().invoke(ctx)
        except Exception as exc:
            if type(exc).__module__.startswith("typer"):  # Exit, Abort, usage errors: typer's
                raise
            if isinstance(exc, BrokenPipeError) and stdout_reader_gone():
                raise  # `evalkit runs | head -1`: typer ends quietly (see _pipes)
            if debug_enabled(bool(ctx.params.get("debug"))):
                raise
            outage = store_outage(exc, list(ctx.meta.get(ARGV_KEY, [])))
            if outage is not None:
                raise fail(outage, ExitCode.STORE_UNREACHABLE) from None
            message = describe(exc)
            if message is None:
                raise
            raise fail(f"{message}\n(run with --debug for the traceback)", _code_of(exc)) from None


def _code_of(exc: BaseException) -> ExitCode:
    from ..runner import RunAborted

    return ExitCode.ABORTED if isinstance(exc, RunAborted) else ExitCode.ERROR
