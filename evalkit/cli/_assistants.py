"""`evalkit assistants list|create|show|update|publish`: get an assistant onto the service (or
the emulator) and change it without curl.

``publish`` and ``create --brief`` use the emulator's admin API (``/_emulator/...``); the spec
does not show the real service's publish or build endpoints, so against the real service they
say so and stop.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Annotated, Any

import typer

from ._app import app

assistants_app = typer.Typer(
    name="assistants",
    help="List, create, show, update and publish assistants.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(assistants_app)


def read_document(path: Path, what: str) -> dict[str, Any]:
    """A YAML or JSON object from ``path`` (or a bundled example by name, ``assistant.yaml``);
    a BadParameter naming the file otherwise."""
    import yaml

    from ..data import resolve

    try:
        path = resolve(path, "examples")
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc.strerror}", param_hint=what) from None
    except yaml.YAMLError as exc:
        raise typer.BadParameter(
            f"{path} is not valid YAML/JSON: {exc}".splitlines()[0], param_hint=what
        ) from None
    if not isinstance(loaded, dict):
        raise typer.BadParameter(f"{path} must hold an object (a mapping)", param_hint=what)
    return loaded


def _admin(method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    """Call the emulator's admin API with the project key; raises httpx.HTTPStatusError."""
    import httpx

    base = os.environ.get("EVALKIT_BASE_URL", "").rstrip("/")
    key = os.environ.get("EVALKIT_API_KEY", "")
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    with httpx.Client(base_url=f"{root}/_emulator", timeout=30.0) as http:
        response = http.request(method, path, json=body, headers={"Authorization": f"Bearer {key}"})
    response.raise_for_status()
    return response.json() if response.content else None


def _echo_json(value: Any) -> None:
    typer.echo(json.dumps(value, ensure_ascii=False, indent=2))


@assistants_app.command("list")
def list_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The assistants of EVALKIT_API_KEY's project: id, versions, name."""
    from ._client import cli_client

    with cli_client() as client:
        found = client.list_assistants()
    if as_json:
        _echo_json([a.to_json() for a in found])
        return
    if not found:
        typer.echo("no assistants yet: create one with `evalkit assistants create`")
        return
    for a in found:
        aliases = a.aliases
        draft = aliases.draft.version if aliases else a.version
        prod = f"v{aliases.prod.version}" if aliases and aliases.prod else "-"
        typer.echo(f"{a.id}  draft v{draft}  prod {prod:<4}  {a.name}")


@assistants_app.command("show")
def show_command(
    assistant: Annotated[str, typer.Argument(metavar="ID", help="Assistant id.")],
) -> None:
    """One assistant as JSON: its draft config, versions and aliases."""
    from ._client import cli_client

    with cli_client() as client:
        found = next((a for a in client.list_assistants() if a.id == assistant), None)
        if found is None:  # E5 answers 404/403 with the service's own words
            client.get_assistant_metadata(assistant)
            raise typer.BadParameter(f"no assistant {assistant} in this project")
    _echo_json(found.to_json())


@assistants_app.command("create")
def create_command(
    name: Annotated[str, typer.Option(metavar="NAME", help="The assistant's name.")],
    config: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="Its config, YAML or JSON (the service's format)."),
    ] = None,
    brief: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Emulator only: build from a brief (YAML/JSON with brief: {context, "
            "sampleRows}, instructions, optional initialGreeting).",
        ),
    ] = None,
    description: Annotated[str | None, typer.Option(metavar="TEXT", help="A description.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the created assistant.")] = False,
) -> None:
    """Create an assistant from a config file (or, on the emulator, build one from a brief)."""
    if (config is None) == (brief is None):
        raise typer.BadParameter("give exactly one of --config FILE or --brief FILE")
    if brief is not None:
        body = {"name": name, **read_document(brief, "--brief")}
        if description is not None:
            body["description"] = description
        created: dict[str, Any] = _admin("POST", "/builds", body)
        assistant_id = str(created.get("realtimeAssistantId"))
    else:
        assert config is not None
        from ._client import cli_client

        document = read_document(config, "--config")
        with cli_client() as client:
            made = client.create_assistant(name, document, description)
        created, assistant_id = made.to_json(), made.id
    if as_json:
        _echo_json(created)
        return
    from ._options import SAMPLE_CONTACTS

    typer.echo(f"created {assistant_id} ({name})")
    run = ["evalkit", "run", "--assistant", assistant_id, "--variables", SAMPLE_CONTACTS]
    typer.echo("try: " + shlex.join([*run, "--context", "A reminder from the clinic."]))


def _prompt_text(path: Path) -> str:
    """The system prompt in ``path`` (UTF-8 text, surrounding blank lines dropped)."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise typer.BadParameter(
            f"cannot read {path}: {exc.strerror}", param_hint="--instructions"
        ) from None
    except UnicodeDecodeError:
        raise typer.BadParameter(f"{path} is not UTF-8 text", param_hint="--instructions") from None
    if not text:
        raise typer.BadParameter(f"{path} is empty", param_hint="--instructions")
    return text


def _with_prompt(config: dict[str, Any], text: str) -> dict[str, Any]:
    """``config`` with its system prompt (``agent.instructions``) set to ``text``."""
    agent = config.get("agent")
    return {**config, "agent": {**(agent if isinstance(agent, dict) else {}), "instructions": text}}


def _echo_changes(before: dict[str, Any], after: dict[str, Any], versions: tuple[int, int]) -> None:
    """The prompt as a unified diff, then every other config path that changed (redacted)."""
    from ..targets import PROMPT_PATH, config_edits, prompt_diff

    old_prompt = str((before.get("agent") or {}).get("instructions", ""))
    new_prompt = str((after.get("agent") or {}).get("instructions", ""))
    diff = prompt_diff(
        old_prompt, new_prompt, version_before=versions[0], version_after=versions[1]
    )
    if diff:
        typer.echo(diff, nl=False)
    for edit in config_edits(before, after, skip=(PROMPT_PATH,)):
        typer.echo(f"changed {edit}")


@assistants_app.command("update")
def update_command(
    assistant: Annotated[str, typer.Argument(metavar="ID", help="Assistant id.")],
    config: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE", help="A whole new draft config, YAML or JSON (the service's format)."
        ),
    ] = None,
    instructions: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="A text file with the new system prompt (config agent.instructions); the rest "
            "of the config stays as it is (or as --config has it).",
        ),
    ] = None,
) -> None:
    """Change an assistant's draft config (E3): replace it with --config FILE, set its prompt
    from --instructions FILE, or both. The new config is checked before anything is sent; what
    changed is printed (the prompt as a diff, every other path old -> new)."""
    if config is None and instructions is None:
        raise typer.BadParameter("give --config FILE, --instructions FILE, or both")
    from ._client import cli_client

    with cli_client() as client:
        found = next((a for a in client.list_assistants() if a.id == assistant), None)
        if found is None:  # E5 answers 404/403 with the service's own words
            client.get_assistant_metadata(assistant)
            raise typer.BadParameter(f"no assistant {assistant} in this project")
        before = found.config.to_json()
        after = read_document(config, "--config") if config is not None else dict(before)
        if instructions is not None:
            after = _with_prompt(after, _prompt_text(instructions))
        if after == before:
            typer.echo(f"no change: {assistant}'s draft config is already this one; nothing sent")
            return
        old_version = client.get_assistant_metadata(assistant).aliases.draft.version
        client.update_assistant(assistant, config=after)  # checked first: nothing sent if bad
        new_version = client.get_assistant_metadata(assistant).aliases.draft.version
    _echo_changes(before, after, (old_version, new_version))
    typer.echo(f"updated {assistant}: draft v{old_version} -> v{new_version}")


@assistants_app.command("publish")
def publish_command(
    assistant: Annotated[str, typer.Argument(metavar="ID", help="Assistant id.")],
) -> None:
    """Emulator only: point prod at the current draft (the spec does not show the real
    service's publish; use its console there)."""
    metadata = _admin("POST", f"/assistants/{assistant}/publish", {})
    prod = (metadata.get("aliases") or {}).get("prod") or {}
    typer.echo(f"published {assistant}: prod is now version {prod.get('version')}")
