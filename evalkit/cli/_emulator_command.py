"""The `evalkit emulator` command (registered by ``evalkit/cli/_emulator.py``, which imports
this module only when the command runs: it loads the emulator).

:func:`emulator` prints ``KEY=value`` settings lines (tools parse them); the ``evalkit
emulator`` command is :func:`make_emulator_command` with :class:`CommandStyle` ``export=True``
(``export KEY=value`` lines a shell can ``eval``) and a hook that ``--demo-assistant`` calls
once the server is up.
"""

from __future__ import annotations

import errno
import shlex
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from ..emulator import EmulatorServer, EmulatorSettings, serve
from ..emulator.dialogue import DialogueBackend

#: Called with the running server by ``--demo-assistant``; returns the lines to print (export
#: lines, then ``#`` comments).
ReadyHook = Callable[[EmulatorServer], Sequence[str]]


@dataclass(frozen=True)
class CommandStyle:
    """How the command prints its settings, and what ``--demo-assistant`` does."""

    export: bool = False
    demo_assistant: ReadyHook | None = None


def make_emulator_command(style: CommandStyle = CommandStyle()) -> Callable[..., None]:
    """The emulator command function (for ``typer``) printing settings as ``style`` says."""

    def command(
        demo_assistant: Annotated[
            bool,
            typer.Option(
                "--demo-assistant",
                help="Create the demo's assistant (an Urdu clinic reminder: prod v1 published, "
                "draft v2 saved, v1's snapshot in ./runs), print its id as EVALKIT_ASSISTANT_ID "
                "and how to run it.",
            ),
        ] = False,
        **options: object,
    ) -> None:
        if demo_assistant and style.demo_assistant is None:
            raise typer.BadParameter(
                "is available through `evalkit emulator`", param_hint="--demo-assistant"
            )
        hook = style.demo_assistant if demo_assistant else None
        server = _server(**options)  # type: ignore[arg-type]
        run_forever(server, style=CommandStyle(style.export, hook))

    command.__signature__ = _merged_signature(command, _server)  # type: ignore[attr-defined]
    command.__doc__ = "Serve a local emulator of the service until stopped (Ctrl-C)."
    return command


def _merged_signature(first: Callable[..., object], rest: Callable[..., object]) -> object:
    import inspect

    head = [
        p
        for p in inspect.signature(first, eval_str=True).parameters.values()
        if p.kind is not p.VAR_KEYWORD
    ]
    return inspect.Signature([*inspect.signature(rest, eval_str=True).parameters.values(), *head])


def _server(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0 picks a free one).")] = 8787,
    api_key: Annotated[
        str | None,
        typer.Option(help="Project key to accept (sk_api_...); generated when omitted."),
    ] = None,
    db: Annotated[
        Path | None, typer.Option(help="SQLite file that keeps state across restarts.")
    ] = None,
    time_scale: Annotated[
        float, typer.Option(help="Multiplies every emulated duration (pings, ceiling, builds).")
    ] = 1.0,
    seed: Annotated[int | None, typer.Option(help="Seed of the dialogue engine.")] = None,
    turn_delay: Annotated[
        float,
        typer.Option(
            help="Emulated seconds of latency per turn (scaled): the base the agent's config "
            "(model, reasoning, verbosity, prompt length, tools) scales."
        ),
    ] = 0.0,
    turn_jitter: Annotated[
        float,
        typer.Option(help="Spread (log-normal sigma) of turn latencies; 0: every wait exact."),
    ] = 0.25,
    llm_base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible endpoint that plays both sides.")
    ] = None,
    llm_model: Annotated[str | None, typer.Option(help="Model name for --llm-base-url.")] = None,
    llm_api_key: Annotated[
        str | None,
        typer.Option(
            envvar="EVALKIT_LLM_API_KEY", show_envvar=False, help="Key for --llm-base-url."
        ),
    ] = None,
    livekit_api_key: Annotated[
        str | None,
        typer.Option(
            envvar="EVALKIT_LIVEKIT_API_KEY", help="LiveKit API key session tokens carry."
        ),
    ] = None,
    livekit_api_secret: Annotated[
        str | None,
        typer.Option(
            envvar="EVALKIT_LIVEKIT_API_SECRET",
            show_envvar=True,
            help="LiveKit API secret that signs session tokens (at least 32 characters).",
        ),
    ] = None,
) -> EmulatorServer:
    """The (not yet started) server the options describe."""
    backend: DialogueBackend | None = None
    if llm_base_url is not None:
        if not llm_model:
            raise typer.BadParameter("--llm-model is required with --llm-base-url")
        from ..emulator import LlmBackend

        backend = LlmBackend(llm_base_url, llm_model, api_key=llm_api_key)
    if api_key is not None and not api_key.startswith("sk_api_"):
        raise typer.BadParameter("--api-key must start with sk_api_")
    try:
        EmulatorSettings(
            livekit_api_key=livekit_api_key,
            livekit_api_secret=livekit_api_secret,
            turn_jitter=turn_jitter,
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    return serve(
        livekit_api_key=livekit_api_key,
        livekit_api_secret=livekit_api_secret,
        port=port,
        api_key=api_key,
        time_scale=time_scale,
        seed=seed,
        turn_delay=turn_delay,
        turn_jitter=turn_jitter,
        host=host,
        db=db,
        backend=backend,
    )


def _start(server: EmulatorServer) -> None:
    try:
        server.start()
    except OSError as exc:
        server.stop()
        if exc.errno != errno.EADDRINUSE:
            raise
        raise typer.BadParameter(
            f"port {server._requested_port} on {server.host} is already in use (is an emulator "
            "already running there?); choose another with --port N, or --port 0 for a free one",
            param_hint="--port",
        ) from None


def settings_lines(server: EmulatorServer, export: bool = False) -> list[str]:
    """``KEY=value`` lines (``export KEY='value'`` with ``export``) of the server's settings."""
    pairs = (
        ("EVALKIT_BASE_URL", server.base_url),
        ("EVALKIT_API_KEY", server.api_key),
        ("EVALKIT_JUDGE_BASE_URL", server.judge_base_url),
        ("EVALKIT_JUDGE_MODEL", "emulator-judge"),
        ("EVALKIT_PROPOSER_BASE_URL", server.proposer_base_url),
        ("EVALKIT_PROPOSER_MODEL", "emulator-proposer"),
        ("LIVEKIT_URL", server.livekit_url),
        ("LIVEKIT_API_KEY", server.livekit_api_key),
        ("LIVEKIT_API_SECRET", server.livekit_api_secret),
    )
    if export:
        return [f"export {key}={shlex.quote(str(value))}" for key, value in pairs]
    return [f"{key}={value}" for key, value in pairs]


def run_forever(
    server: EmulatorServer,
    stop: threading.Event | None = None,
    style: CommandStyle = CommandStyle(),
) -> None:
    """Start ``server``, print its settings, and block until ``stop`` is set, Ctrl-C or
    SIGTERM (signals are caught only on the main thread). A busy port is a one-line error."""
    stop = stop or threading.Event()

    def request_stop(signum: int, frame: object) -> None:
        stop.set()

    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {
            sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)
        }
    try:
        _start(server)
        with server:
            for line in settings_lines(server, style.export):
                typer.echo(line)
            if style.demo_assistant is not None:
                for line in style.demo_assistant(server):
                    typer.echo(line)
            typer.echo(f"# admin API: {server.admin_url}  (Ctrl-C to stop)", err=True)
            while not stop.wait(0.5):
                pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


#: The plain command (``KEY=value`` lines, no ``--demo-assistant``): what tools and tests run.
emulator = make_emulator_command(CommandStyle())
emulator.__name__ = "emulator"
