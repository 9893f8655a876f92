"""The `evalkit emulator` command (registered by evalkit/cli.py)."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Annotated

import typer

from ._server import EmulatorServer, serve
from ._settings import EmulatorSettings
from .dialogue import DialogueBackend


def emulator(
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
        float, typer.Option(help="Emulated seconds of latency per turn (scaled).")
    ] = 0.0,
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
) -> None:
    """Serve a local emulator of the service until stopped (Ctrl-C)."""
    backend: DialogueBackend | None = None
    if llm_base_url is not None:
        if not llm_model:
            raise typer.BadParameter("--llm-model is required with --llm-base-url")
        from ._llm_backend import LlmBackend

        backend = LlmBackend(llm_base_url, llm_model, api_key=llm_api_key)
    if api_key is not None and not api_key.startswith("sk_api_"):
        raise typer.BadParameter("--api-key must start with sk_api_")
    try:
        EmulatorSettings(livekit_api_key=livekit_api_key, livekit_api_secret=livekit_api_secret)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    server = serve(
        livekit_api_key=livekit_api_key,
        livekit_api_secret=livekit_api_secret,
        port=port,
        api_key=api_key,
        time_scale=time_scale,
        seed=seed,
        turn_delay=turn_delay,
        host=host,
        db=db,
        backend=backend,
    )
    run_forever(server)


def run_forever(server: EmulatorServer, stop: threading.Event | None = None) -> None:
    """Start ``server``, print its settings, and block until ``stop`` is set, Ctrl-C or
    SIGTERM (signals are caught only on the main thread)."""
    stop = stop or threading.Event()

    def request_stop(signum: int, frame: object) -> None:
        stop.set()

    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {
            sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)
        }
    try:
        with server:
            typer.echo(f"EVALKIT_BASE_URL={server.base_url}")
            typer.echo(f"EVALKIT_API_KEY={server.api_key}")
            typer.echo(f"EVALKIT_JUDGE_BASE_URL={server.judge_base_url}")
            typer.echo("EVALKIT_JUDGE_MODEL=emulator-judge")
            typer.echo(f"LIVEKIT_URL={server.livekit_url}")
            typer.echo(f"LIVEKIT_API_KEY={server.livekit_api_key}")
            typer.echo(f"LIVEKIT_API_SECRET={server.livekit_api_secret}")
            typer.echo(f"# admin API: {server.admin_url}  (Ctrl-C to stop)", err=True)
            while not stop.wait(0.5):
                pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
