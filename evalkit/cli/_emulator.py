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
    """Build the demo's Urdu clinic reminder on ``server``; lines saying how to run it."""
    from ..demo import CONTACTS, CONTEXT, GREETING, PROD_INSTRUCTIONS
    from ..emulator import default_config

    # the demo's config (its stt, llm and tts blocks: `evalkit tune`'s LLM-knob variants and the
    # viewer's play control need them), with the greeting's instructions
    config = default_config(PROD_INSTRUCTIONS, True)
    config["agent"]["greetingInstructions"] = GREETING
    built = server.build(
        "Clinic appointment reminder",
        {"context": CONTEXT, "sampleRows": CONTACTS[:1]},
        PROD_INSTRUCTIONS,
        initial_greeting=True,
        config=config,
    )
    assistant_id = str(built["realtimeAssistantId"])
    run = ["evalkit", "run", "--assistant", assistant_id, "--variables", SAMPLE_CONTACTS]
    return [
        f"demo assistant: {assistant_id} (an Urdu clinic appointment reminder)",
        "in another shell, after the export lines above, try:",
        shlex.join([*run, "--context", CONTEXT, "--repeats", "1"]),
    ]
