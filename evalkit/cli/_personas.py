"""`evalkit personas list`: the personas a run would use, and where the bundled files are;
`evalkit personas generate` and `evalkit personas search`: generated callers, and the ones
that break the draft."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import app
from ._options import (
    ContextOption,
    JudgeModelOption,
    NoJudgeOption,
    PersonasOption,
    ScorecardOption,
    StoreOption,
    VariablesOption,
)

personas_app = typer.Typer(
    name="personas", help="The caller personas.", no_args_is_help=True, rich_markup_mode=None
)
app.add_typer(personas_app)


@personas_app.command("list")
def list_command(
    personas: Annotated[
        Path | None,
        typer.Option(
            "--personas",
            "-p",
            metavar="PATH",
            help="A personas file or folder [default: ./personas, else the bundled ones].",
        ),
    ] = None,
) -> None:
    """Label, tags and description of each persona; the bundled folders' paths."""
    from ..data import contacts_path, resolve
    from ..grid import load_personas
    from ._options import SAMPLE_CONTACTS
    from ._run import default_personas

    source = personas or default_personas()
    found = load_personas(source)
    width = max((len(p.label) for p in found), default=0)
    for persona in found:
        about = " ".join((persona.description or "").split())
        tags = ",".join(persona.tags)
        line = f"{persona.label.ljust(width)}  [{tags}]  {about}"
        typer.echo(line if len(line) <= 100 else line[:99] + "…")
    typer.echo(f"{len(found)} persona(s) from {source}")
    folder = resolve(source, "personas")
    subfolders = sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
    for sub in subfolders:
        files = [f for f in sub.iterdir() if f.suffix.lower() in (".yaml", ".yml")]
        if files:
            typer.echo(f"more in {sub.name}/: {len(files)} persona(s), --personas {sub.name}")
    typer.echo(f"sample contacts: --variables {SAMPLE_CONTACTS} (bundled: {contacts_path()})")
    typer.echo("to edit them, copy the bundled files into this folder: evalkit init")


GeneratorModelOption = Annotated[
    str | None,
    typer.Option(
        "--generator-model",
        metavar="MODEL",
        help="Persona generator model (else EVALKIT_GENERATOR_MODEL; key from "
        "EVALKIT_GENERATOR_API_KEY).",
    ),
]
GeneratorUrlOption = Annotated[
    str | None,
    typer.Option(
        "--generator-base-url",
        metavar="URL",
        help="OpenAI-compatible endpoint of the generator (else EVALKIT_GENERATOR_BASE_URL).",
    ),
]
RunPrefixOption = Annotated[
    str | None,
    typer.Option("--run-prefix", metavar="ID", help="Name (or resume) the runs and records."),
]


def _axes(values: list[str] | None) -> dict[str, list[str]] | None:
    """``--axis language=english,roman-urdu`` options as an axes mapping."""
    if not values:
        return None
    out: dict[str, list[str]] = {}
    for item in values:
        name, sep, rest = item.partition("=")
        if not sep or not name.strip() or not rest.strip():
            raise typer.BadParameter(
                f"expected AXIS=VALUE[,VALUE...], got {item!r}", param_hint="--axis"
            )
        out.setdefault(name.strip(), []).extend(v.strip() for v in rest.split(",") if v.strip())
    return out


AxisOption = Annotated[
    list[str] | None,
    typer.Option(
        "--axis",
        metavar="AXIS=VALUES",
        help="Keep only these values of an axis (repeatable), e.g. language=english,roman-urdu.",
    ),
]


@personas_app.command("generate")
def generate_command(
    assistant: Annotated[
        str, typer.Option("--assistant", "-a", metavar="ID", help="Assistant the callers call.")
    ],
    scorecard: ScorecardOption,
    output: Annotated[
        Path, typer.Option("--output", "-o", metavar="FOLDER", help="Where the persona files go.")
    ] = Path("personas/generated"),
    n: Annotated[int, typer.Option("-n", min=1, metavar="N", help="Personas asked for.")] = 12,
    pilot: Annotated[
        int, typer.Option("--pilot", min=0, metavar="N", help="Pilot conversations each.")
    ] = 2,
    axis: AxisOption = None,
    seed: Annotated[int, typer.Option(metavar="N", help="The trait draws.")] = 0,
    generator_model: GeneratorModelOption = None,
    generator_base_url: GeneratorUrlOption = None,
    store: StoreOption = "runs",
    run_prefix: RunPrefixOption = None,
) -> None:
    """Generate personas along the trait axes, check each (and pilot it), write persona files."""
    from ..personas import GenerateOptions, PersonaGenerator, generate_personas
    from ._client import cli_client

    options = GenerateOptions(
        n=n, pilot_conversations=pilot, axes=_axes(axis), seed=seed, run_prefix=run_prefix
    )
    with cli_client() as client:
        made = generate_personas(
            assistant,
            scorecard,
            generator=PersonaGenerator(generator_model, generator_base_url),
            client=client,
            store=store,
            options=options,
        )
    written = made.write(output)
    typer.echo(made.headline())
    typer.echo(f"{len(written)} persona file(s) written to {output}")


@personas_app.command("search")
def search_command(
    assistant: Annotated[
        str, typer.Option("--assistant", "-a", metavar="ID", help="Assistant whose draft to test.")
    ],
    scorecard: ScorecardOption,
    personas: PersonasOption = None,
    variables: VariablesOption = None,
    context: ContextOption = None,
    output: Annotated[
        Path, typer.Option("--output", "-o", metavar="FOLDER", help="Where the found personas go.")
    ] = Path("personas/found"),
    rounds: Annotated[int, typer.Option(min=1, metavar="N", help="Rounds at most.")] = 3,
    per_round: Annotated[
        int, typer.Option("--per-round", min=1, metavar="N", help="Personas per round.")
    ] = 8,
    threshold: Annotated[
        float,
        typer.Option(min=0.01, max=0.99, metavar="RATE", help="The failure rate to exceed."),
    ] = 0.25,
    max_conversations: Annotated[
        int | None,
        typer.Option("--max-conversations", min=1, metavar="N", help="The whole search's budget."),
    ] = None,
    axis: AxisOption = None,
    seed: Annotated[int, typer.Option(metavar="N", help="The trait draws.")] = 0,
    generator_model: GeneratorModelOption = None,
    generator_base_url: GeneratorUrlOption = None,
    judge_model: JudgeModelOption = None,
    no_judge: NoJudgeOption = False,
    store: StoreOption = "runs",
    run_prefix: RunPrefixOption = None,
) -> None:
    """Search for the callers that break the draft; confirm each on fresh repeats.

    Prints the estimate first (the most the search spends), a line per round, then the
    confirmed failures (persona, rule, fresh failure rate with its interval); writes the
    callers that break the draft as persona files for the regression grid.
    """
    from ..grid import Grid
    from ..personas import (
        FindOptions,
        PersonaGenerator,
        find_failures,
        grid_records,
        personas_run_prefix,
    )
    from ._client import cli_client
    from ._grade import judge_from_options
    from ._run import default_personas

    grid = Grid(personas or default_personas(), variables=variables, contexts=context or None)
    options = FindOptions(
        rounds=rounds,
        per_round=per_round,
        threshold=threshold,
        max_conversations=max_conversations,
        axes=_axes(axis),
        seed=seed,
        run_prefix=run_prefix or personas_run_prefix(),
        on_round=lambda row: typer.echo(
            f"round {row['round']}: {row['asked']} asked, {row['refused']} refused, "
            f"{row['dropped']} dropped, {row['screened']} screened, {row['failing']} failing "
            f"a rule ({row['conversations']} conversations)",
            err=True,
        ),
    )
    records, contexts = grid_records(grid)
    cells = min(len(records), options.records_per_persona or len(records)) * len(contexts)
    most = options.expected(cells)
    if max_conversations is not None:
        most = min(most, max_conversations)
    typer.echo(
        f"personas search: up to {rounds} round(s) of {per_round} persona(s) on {cells} "
        f"cell(s) each, up to {most} conversations; runs {options.run_prefix}-* in {store} "
        f"(the same command with --run-prefix {options.run_prefix} resumes it)",
        err=True,
    )
    with cli_client() as client:
        result = find_failures(
            grid,
            assistant,
            scorecard,
            generator=PersonaGenerator(generator_model, generator_base_url),
            client=client,
            judge=judge_from_options(judge_model, no_judge),
            store=store,
            options=options,
        )
    typer.echo(result.headline())
    for warning in result.warnings:
        typer.echo(f"warning: {warning}", err=True)
    written = result.write(output)
    typer.echo(f"{len(written)} persona file(s) written to {output}")
