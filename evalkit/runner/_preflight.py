"""Checks before a run sends its first conversation: the config's lint findings (logged) and
every prompt ``{{token}}`` having a value in every variables record (refused otherwise).

A variables file without the ``appointment_date`` column ran all 85 conversations of a grid,
the agent said ``{{appointment_date}}`` aloud in every one, and a judged date rule still
passed: the money was spent on nothing. The check reads the prompt the run will use (the
draft, prod's snapshot or the variant's merged config), so it costs no conversation.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from .._util import SaidOnce, canonical_json
from ..api import MissingVariables, config_pitfalls, missing_variables, prompt_tokens
from ..grid import Grid
from ..targets import ResolvedTarget
from ._errors import MissingVariablesError

__all__ = ["check_variables", "log_lint", "run_config"]

logger = logging.getLogger("evalkit.runner")


def run_config(resolved: ResolvedTarget) -> dict[str, Any]:
    """The config a run's conversations exercise (a clone's when it runs on one)."""
    if resolved.clone_config is not None:
        return resolved.clone_config
    return resolved.snapshot.config


def log_lint(resolved: ResolvedTarget, said: SaidOnce) -> None:
    """Log the lint findings of the config the run uses (the table in ``evalkit.api``), once
    per target and findings for each ``said`` memory (the client's ``said_once``): a tune's
    waves and arms would repeat them. The record carries ``lint`` (target, version, findings)
    for a caller that tells it its own way (``evalkit demo``)."""
    found = config_pitfalls(run_config(resolved))
    if not found:
        return
    said_text = "; ".join(f"[{f.severity}] {f.rule_id} at {f.path}: {f.message}" for f in found)
    if not said.first("lint", resolved.label, resolved.assistant_id, resolved.version, said_text):
        return
    level = logging.WARNING if any(f.severity != "info" for f in found) else logging.INFO
    logger.log(
        level,
        "lint of %s (assistant %s, version %s): %s; `evalkit lint` shows the reasons",
        resolved.label,
        resolved.assistant_id,
        resolved.version,
        said_text,
        extra={
            "lint": {"target": resolved.label, "version": resolved.version, "findings": said_text}
        },
    )


def _records(grid: Grid, on_clone: bool) -> list[Mapping[str, Any] | None]:
    """The grid's distinct variables records, in grid order. A cell without variables sends
    none: on a clone (no stored brief) nothing fills the tokens; on the assistant itself the
    brief's sample row does, which evalkit cannot read, so such cells are not checked."""
    seen: dict[str, Mapping[str, Any] | None] = {}
    for cell in grid.cells():
        if cell.variables is None and not on_clone:
            continue
        key = canonical_json(cell.variables)
        seen.setdefault(key, cell.variables)
    return list(seen.values())


def check_variables(grid: Grid, resolved: ResolvedTarget, allow_missing: bool) -> MissingVariables:
    """Refuse (:class:`MissingVariablesError`) when a prompt token has no value in a record;
    with ``allow_missing`` log a warning instead. Returns what is missing."""
    agent = run_config(resolved).get("agent") or {}
    texts = [agent.get("instructions")]
    if agent.get("initialGreeting") is True:
        texts.append(agent.get("greetingInstructions"))
    tokens = prompt_tokens(*(t for t in texts if isinstance(t, str)))
    missing = missing_variables(tokens, _records(grid, resolved.needs_clone))
    if not missing:
        return missing
    if not allow_missing:
        raise MissingVariablesError(resolved.label, missing)
    logger.warning(
        "the prompt of %s has tokens without values (running anyway, as allowed): %s",
        resolved.label,
        missing.describe(),
    )
    return missing
