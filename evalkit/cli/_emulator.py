"""`evalkit emulator`, registered lazily: the emulator (starlette, uvicorn) loads only when the
command runs, so `evalkit --help` and `evalkit --version` stay fast."""

from __future__ import annotations

import typer

from ._app import app


@app.command(
    "emulator",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def emulator_command(ctx: typer.Context) -> None:
    """Serve the local emulator of the service until stopped (`evalkit emulator --help`)."""
    from ..emulator._command import emulator

    command = typer.Typer(add_completion=False, pretty_exceptions_show_locals=False)
    command.command()(emulator)
    typer.main.get_command(command)(args=list(ctx.args), prog_name="evalkit emulator")
