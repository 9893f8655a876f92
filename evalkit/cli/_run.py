"""`evalkit run` and `evalkit runs`: run a grid, list the runs of a store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._app import app
from ._errors import ARGV_KEY, EXIT_CODES_HELP, ExitCode, describe, fail, store_outage
from ._options import ConcurrencyOption, ContextOption, PersonasOption, StoreOption
from ._pricing import MaxCostOption, PricingOption, announce, assistant_llms, load_pricing

if TYPE_CHECKING:
    from ..api import Client
    from ..grid import Grid
    from ..runner import RunOptions
    from ..targets import Target, Variant
    from ._outcome import RunReport


def _parse_shard(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    try:
        index, count = (int(x) for x in value.split("/"))
    except ValueError:
        raise typer.BadParameter(
            f"--shard takes INDEX/COUNT (for example 0/4), got {value!r}"
        ) from None
    return index, count


def _statuses(value: str | None, option: str) -> tuple[str, ...]:
    from ._outcome import parse_statuses

    try:
        return parse_statuses(value, option)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=option) from None


def default_personas() -> Path:
    """``./personas`` when that folder exists, else the bundled personas."""
    local = Path("personas")
    if local.is_dir():
        return local
    from ..data import personas_path

    return personas_path()


@app.command("run", epilog=EXIT_CODES_HELP)
def run_command(
    ctx: typer.Context,
    assistant: Annotated[
        str,
        typer.Option("--assistant", "-a", metavar="ID", help="Assistant id to simulate against."),
    ],
    personas: PersonasOption = None,
    variables: Annotated[
        Path | None,
        typer.Option(
            "--variables",
            metavar="CSV",
            help="CSV of variable records, one simulated contact per row "
            "(`evalkit personas list` prints the bundled sample's path).",
        ),
    ] = None,
    context: ContextOption = None,
    repeats: Annotated[int, typer.Option(min=1, metavar="N", help="Conversations per cell.")] = 1,
    target: Annotated[
        str, typer.Option(metavar="draft|prod", help="draft or prod (the base, with --variant).")
    ] = "draft",
    variant: Annotated[
        str | None,
        typer.Option(metavar="NAME", help="Run a named variant on a temporary clone (A/B)."),
    ] = None,
    instructions: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="With --variant: a file holding its system prompt."),
    ] = None,
    patch: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="With --variant: a JSON merge patch over the base."),
    ] = None,
    store: StoreOption = "runs",
    run_id: Annotated[
        str | None, typer.Option("--run-id", metavar="ID", help="Resume or name a run.")
    ] = None,
    concurrency: ConcurrencyOption = 8,
    shard: Annotated[
        str | None, typer.Option(metavar="I/N", help="Run one shard of the grid: INDEX/COUNT.")
    ] = None,
    max_conversations: Annotated[
        int | None, typer.Option(metavar="N", help="Stop after starting this many (partial).")
    ] = None,
    max_seconds: Annotated[
        float | None, typer.Option(metavar="S", help="Stop after this many seconds (partial).")
    ] = None,
    pricing: PricingOption = None,
    max_cost: MaxCostOption = None,
    rerun: Annotated[
        str | None,
        typer.Option(
            metavar="STATUSES", help="Run recorded conversations again, e.g. failed,dropped."
        ),
    ] = None,
    fail_on: Annotated[
        str | None,
        typer.Option(
            "--fail-on",
            metavar="STATUSES",
            help="Exit 5 when the run records any of these, e.g. error,dropped,failed.",
        ),
    ] = None,
    allow_missing_variables: Annotated[
        bool,
        typer.Option(
            "--allow-missing-variables",
            help="Run even when a {{token}} of the prompt has no value in some variables records.",
        ),
    ] = False,
) -> None:
    """Run a grid of simulated conversations and record it (resumable with --run-id)."""
    from ..grid import Grid
    from ..runner import Budget, RunOptions, default_run_id

    if target not in ("draft", "prod"):
        raise typer.BadParameter("--target must be draft or prod", param_hint="--target")
    rerun_statuses = _statuses(rerun, "--rerun")
    fail_statuses = _statuses(fail_on, "--fail-on")
    prices = load_pricing(pricing, max_cost)
    chosen: Target = target
    if variant is not None:
        chosen = _variant(variant, target, instructions, patch)
    elif instructions is not None or patch is not None:
        raise typer.BadParameter(
            "--instructions and --patch need --variant NAME", param_hint="--variant"
        )
    grid = Grid(
        personas or default_personas(),
        variables=variables,
        contexts=context or None,
        repeats=repeats,
        shard=_parse_shard(shard),
    )
    run_id = run_id or default_run_id(variant or target)
    options = RunOptions(
        concurrency=concurrency,
        budget=Budget(max_conversations, max_seconds, max_cost),
        rerun=rerun_statuses,
        allow_missing_variables=allow_missing_variables,
        pricing=prices,
    )
    argv = ctx.meta.get(ARGV_KEY, ["run"])
    from ._client import cli_client

    with cli_client() as client:
        expected = len(grid) if max_conversations is None else min(len(grid), max_conversations)
        over = None if isinstance(chosen, str) else dict(chosen.patch)
        [llm] = assistant_llms(client, assistant, [over]) if prices else [None]
        announce(expected, prices, [(llm, expected)])
        report = _run(grid, assistant, client, chosen, store, run_id, options, argv)
    typer.echo(report.sentence())
    code = report.exit_code(fail_statuses)
    if code is ExitCode.PARTIAL:
        typer.echo(f"The run is partial; resume with: {_resume(argv, run_id)}", err=True)
    elif code is ExitCode.FAIL_ON:
        matched = ", ".join(f"{report.counts[s]} {s}" for s in report.matched(fail_statuses))
        typer.echo(f"--fail-on: the run recorded {matched}", err=True)
    if code is not ExitCode.OK:
        raise typer.Exit(int(code))


def _resume(argv: list[str], run_id: str) -> str:
    from ._outcome import resume_command

    return resume_command(argv, run_id)


def _run(
    grid: Grid,
    assistant: str,
    client: Client,
    target: Target,
    store: str,
    run_id: str,
    options: RunOptions,
    argv: list[str],
) -> RunReport:
    """Run, and turn Ctrl-C and RunAborted into what was kept, a resume line and an exit."""
    from ..runner import RunAborted, run_grid
    from ..store import StoreUnreachableError

    try:
        run = run_grid(
            grid,
            assistant,
            client=client,
            target=target,
            store=store,
            run_id=run_id,
            options=options,
        )
    except KeyboardInterrupt:
        kept = _stored_report(store, run_id)
        if kept is not None:
            typer.echo(
                f"Interrupted: {kept.recorded} of {kept.grid_size} conversations recorded and "
                f"kept ({kept.breakdown()}); the ones in flight were cancelled, not recorded, "
                f"and {kept.grid_size - kept.recorded} remain to run.",
                err=True,
            )
            typer.echo(f"Resume with: {_resume(argv, run_id)}", err=True)
        raise fail("interrupted (Ctrl-C)", ExitCode.INTERRUPTED) from None
    except StoreUnreachableError as exc:
        outage = store_outage(exc, argv, _resume(argv, run_id))
        raise fail(outage or str(exc), ExitCode.STORE_UNREACHABLE) from None
    except RunAborted as exc:
        kept = _stored_report(store, run_id)
        message = describe(exc) or str(exc)
        if kept is not None:
            message += (
                f"\n{kept.recorded} of {kept.grid_size} conversations recorded "
                f"({kept.breakdown()}); once fixed, resume with: {_resume(argv, run_id)}"
            )
        raise fail(message, ExitCode.ABORTED) from None
    from ..diagnose import record_flags
    from ._outcome import RunReport

    flags = record_flags(run)
    if len(flags):
        counts = flags["flag"].value_counts().sort_index()
        typer.echo(
            f"{flags['conversation_id'].nunique()} conversation(s) look like suspect simulations "
            f"({', '.join(f'{k}: {v}' for k, v in counts.items())}); see "
            "evalkit.simulation_flags(run)",
            err=True,
        )
    return RunReport.of(run.manifest, str(run.path))


def _stored_report(store: str, run_id: str) -> RunReport | None:
    from ..store import open_store, read_stored_manifest
    from ._outcome import RunReport

    folder = open_store(store) / run_id
    manifest = read_stored_manifest(folder)
    if manifest is None or "counts" not in manifest:
        return None
    return RunReport.of(manifest, str(folder))


def _variant(name: str, base: str, instructions: Path | None, patch: Path | None) -> Variant:
    import json

    from ..targets import Variant, merge_patch

    body: dict[str, object] = {}
    if patch is not None:
        try:
            loaded = json.loads(patch.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise typer.BadParameter(f"{patch}: {exc}", param_hint="--patch") from None
        if not isinstance(loaded, dict):
            raise typer.BadParameter(f"{patch} must hold a JSON object", param_hint="--patch")
        body = loaded
    if instructions is not None:
        text = instructions.read_text(encoding="utf-8")
        body = merge_patch(body, {"agent": {"instructions": text}})
    if not body:
        raise typer.BadParameter(
            "a variant needs --instructions or --patch", param_hint="--variant"
        )
    return Variant(name, body, "prod" if base == "prod" else "draft")
