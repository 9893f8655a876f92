"""`evalkit emulator`, registered lazily: the emulator (starlette, uvicorn) loads only when the
command runs, so `evalkit --help` and `evalkit --version` stay fast."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

import typer

from ._app import app
from ._options import SAMPLE_CONTACTS

if TYPE_CHECKING:
    from ..emulator import EmulatorServer


@app.command(
    "emulator",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def emulator_command(ctx: typer.Context) -> None:
    """Serve the local emulator of the service until stopped (`evalkit emulator --help`)."""
    from ._emulator_command import CommandStyle, make_emulator_command

    command = typer.Typer(
        add_completion=False, pretty_exceptions_show_locals=False, rich_markup_mode=None
    )
    style = CommandStyle(export=True, demo_assistant=demo_assistant)
    command.command()(make_emulator_command(style))
    typer.main.get_command(command)(args=list(ctx.args), prog_name="evalkit emulator")


def demo_assistant(server: EmulatorServer) -> list[str]:
    """Build the demo's assistant on ``server`` (prod v1 published, draft v2 saved, v1's
    snapshot in ``./runs``); the lines saying how to use it, its id as an export line."""
    from ..demo import CONTEXT, build_demo_assistant

    assistant_id = build_demo_assistant(server, "runs")
    run = ["evalkit", "run", "--assistant", assistant_id, "--variables", SAMPLE_CONTACTS]
    return [
        f"export EVALKIT_ASSISTANT_ID={shlex.quote(assistant_id)}",
        "# demo assistant: an Urdu clinic appointment reminder, as in `evalkit demo`: prod v1 "
        "published (its config snapshot in ./runs), draft v2 saved",
        "# in another shell, after the export lines above, try:",
        "# " + shlex.join([*run, "--context", CONTEXT, "--repeats", "1"]),
    ]
