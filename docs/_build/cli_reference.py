"""The command-line reference, generated from the typer app: every command, argument and option
with its help, default and environment variable, as `evalkit COMMAND --help` prints them.

Run as a script to print the page: ``python docs/_build/cli_reference.py``.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

#: Commands that hand their arguments to a command built when they run (``evalkit emulator``
#: builds the emulator's own command): the page documents the built one.
_DELEGATES: dict[str, Callable[[], Any]] = {}


def _emulator_command() -> Any:
    import typer

    from evalkit.cli._emulator import demo_assistant
    from evalkit.cli._emulator_command import CommandStyle, make_emulator_command

    inner = typer.Typer(
        add_completion=False, pretty_exceptions_show_locals=False, rich_markup_mode=None
    )
    inner.command()(make_emulator_command(CommandStyle(export=True, demo_assistant=demo_assistant)))
    return typer.main.get_command(inner)


_DELEGATES["emulator"] = _emulator_command


@dataclass(frozen=True)
class Command:
    """One command as the page shows it."""

    path: tuple[str, ...]
    command: Any
    context: Any

    @property
    def name(self) -> str:
        return " ".join(("evalkit", *self.path))

    @property
    def anchor(self) -> str:
        return "-".join(("evalkit", *self.path))


def commands() -> Iterator[Command]:
    """Every command and group of ``evalkit``, the root first, groups before their commands."""
    import typer
    import typer._click as click

    from evalkit.cli import app

    root = typer.main.get_command(app)
    root_context = click.Context(root, info_name="evalkit")

    def walk(command: Any, path: tuple[str, ...], context: Any) -> Iterator[Command]:
        yield Command(path, command, context)
        if not hasattr(command, "list_commands"):
            return
        for name in sorted(command.list_commands(context)):
            sub = command.get_command(context, name)
            if sub is None or sub.hidden:
                continue
            if not path and name in _DELEGATES:
                sub = _DELEGATES[name]()
            yield from walk(sub, (*path, name), click.Context(sub, parent=context, info_name=name))

    yield from walk(root, (), root_context)


_CODE_SPAN = re.compile(r"(`[^`]*`)")


def _text(value: str) -> str:
    """Help text as Markdown: code spans kept, characters Markdown or HTML would read escaped."""
    pieces = _CODE_SPAN.split(value)
    out = []
    for i, piece in enumerate(pieces):
        if i % 2:
            out.append(piece)
        else:
            piece = piece.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            out.append(re.sub(r"([*_\\\[\]])", r"\\\1", piece))
    return "".join(out)


def _help(command: Any) -> list[str]:
    text = inspect.cleandoc(command.help or "").replace("\b\n", "")
    return [_text(" ".join(p.split())) for p in text.split("\n\n") if p.strip()]


def _params(entry: Command) -> tuple[list[str], list[str]]:
    arguments, options = [], []
    for param in entry.command.params:
        if getattr(param, "hidden", False):
            continue
        record = param.get_help_record(entry.context)
        if param.param_type_name == "argument":
            name = param.make_metavar(entry.context) if record is None else record[0]
            help_text = "" if record is None else record[1]
            arguments.append(f"- `{name}`: {_text(help_text)}".rstrip(": "))
        elif record is not None:
            names, help_text = record
            envvar = param.envvar if isinstance(param.envvar, str) else None
            if envvar and envvar not in help_text:
                help_text = f"{help_text} [environment: {envvar}]".strip()
            options.append(f"- `{names}`: {_text(help_text)}".rstrip(": "))
    return arguments, options


def _usage(entry: Command) -> str:
    pieces = entry.command.collect_usage_pieces(entry.context)
    return " ".join((entry.name, *pieces))


def _summary(command: Any) -> str:
    first = _help(command)
    return first[0].split(". ")[0].rstrip(".") if first else ""


def page() -> str:
    """The whole page, Markdown."""
    from evalkit.cli._errors import EXIT_CODES_HELP

    entries = list(commands())
    lines = [
        "# Command line",
        "",
        "Every `evalkit` command with its arguments and options, generated from the command "
        "itself when the site is built (the same text `evalkit COMMAND --help` prints). "
        "Every command exits with one of the [exit codes](exit-codes.md): "
        + _text(EXIT_CODES_HELP.removeprefix("Exit codes: ")),
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    for entry in entries[1:]:
        lines.append(f"| [`{entry.name}`](#{entry.anchor}) | {_summary(entry.command)} |")
    lines.append("")
    for entry in entries:
        level = "#" * min(2 + max(len(entry.path) - 1, 0), 4)
        lines += [f"{level} `{entry.name}` {{#{entry.anchor}}}", ""]
        for paragraph in _help(entry.command):
            lines += [paragraph, ""]
        lines += ["```text", f"Usage: {_usage(entry)}", "```", ""]
        arguments, options = _params(entry)
        if arguments:
            lines += ["Arguments:", "", *arguments, ""]
        if options:
            lines += ["Options:", "", *options, ""]
        if hasattr(entry.command, "list_commands"):
            subs = [
                name
                for name in sorted(entry.command.list_commands(entry.context))
                if not entry.command.get_command(entry.context, name).hidden
            ]
            links = ", ".join(f"[`{n}`](#{entry.anchor}-{n})" for n in subs)
            lines += [f"Commands: {links}.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    sys.stdout.write(page())
