"""``lint``: an assistant config's silent failures and ignored knobs, as a DataFrame.

The rules are the spec's (:data:`evalkit.api.PITFALL_RULES`, one row per pitfall); this module
reads what the user has at hand (a config, an assistant, a YAML/JSON file, an assistant id)
and presents the findings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import pandas as pd
import yaml

from ..api import PITFALL_RULES, Assistant, AssistantConfig, Client, config_pitfalls
from ..grid import load_variables

__all__ = ["LINT_COLUMNS", "SEVERITY_ORDER", "lint", "lint_rules", "read_config"]

LINT_COLUMNS: Final = ("rule_id", "severity", "path", "message", "reason")
SEVERITY_ORDER: Final = {"error": 0, "warning": 1, "info": 2}

ConfigLike = Mapping[str, Any] | AssistantConfig | Assistant | str | Path


def lint_rules() -> pd.DataFrame:
    """The rule table: ``rule_id``, ``severity``, ``reason`` (the spec's words)."""
    return pd.DataFrame(
        [(r.rule_id, r.severity, r.reason) for r in PITFALL_RULES],
        columns=["rule_id", "severity", "reason"],
    )


def _from_file(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{path}, line {exc.lineno}, column {exc.colno}: not valid JSON: {exc.msg}"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}, line {mark.line + 1}, column {mark.column + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ValueError(f"{where}: not valid YAML: {problem}") from None
    if not isinstance(data, Mapping):
        raise ValueError(
            f"{path}: expected an assistant config (a mapping), got {type(data).__name__}"
        )
    return dict(data)


def _by_id(assistant_id: str, client: Client | None) -> dict[str, Any]:
    owned = client is None
    client = client or Client()
    try:
        assistants = client.list_assistants()
    finally:
        if owned:
            client.close()
    found = next((a for a in assistants if a.id == assistant_id), None)
    if found is None:
        raise ValueError(
            f"assistant {assistant_id!r} is not among the {len(assistants)} assistant(s) of "
            "this API key's project (E1), and no file has that name"
        )
    return found.config.to_json()


def read_config(source: ConfigLike, client: Client | None = None) -> dict[str, Any]:
    """The config (camelCase JSON) of ``source``: a config mapping, an assistant mapping or
    model (its ``config``), a YAML/JSON file of either, or an assistant id (read with E1)."""
    if isinstance(source, Assistant):
        return source.config.to_json()
    if isinstance(source, AssistantConfig):
        return source.to_json()
    if isinstance(source, Path) or (isinstance(source, str) and Path(source).is_file()):
        data = _from_file(Path(source))
    elif isinstance(source, str):
        return _by_id(source, client)
    elif isinstance(source, Mapping):
        data = dict(source)
    else:
        raise TypeError(
            f"lint takes a config, an assistant, a file or an assistant id, got "
            f"{type(source).__name__}"
        )
    config = data.get("config")
    if "agent" not in data and isinstance(config, Mapping):  # an assistant, not a config
        return dict(config)
    return data


def _records(variables: Any) -> list[Mapping[str, Any] | None] | None:
    if variables is None:
        return None
    if isinstance(variables, Mapping):
        return [variables]
    return list(load_variables(variables))


def lint(
    config_or_assistant: ConfigLike,
    variables: Any = None,
    *,
    client: Client | None = None,
) -> pd.DataFrame:
    """The findings of every lint rule on a config: ``rule_id``, ``severity`` (``error``,
    ``warning``, ``info``), ``path`` (``llm.default.verbosity``), ``message`` and ``reason``
    (the spec's words), errors first. No value of a credential is ever echoed.

    ``config_or_assistant``: a config (camelCase mapping or :class:`~evalkit.AssistantConfig`),
    an assistant, a YAML/JSON file of either, or an assistant id (read with ``client``, by
    default one from the environment). ``variables``: the records a run would send (a list of
    dicts, a DataFrame or a CSV/JSON path); with them, every ``{{token}}`` of the prompt
    without a value in a record is an error (``variables-missing``).
    """
    config = read_config(config_or_assistant, client)
    found = config_pitfalls(config, _records(variables))
    frame = pd.DataFrame(
        [(f.rule_id, f.severity, f.path, f.message, f.reason) for f in found],
        columns=list(LINT_COLUMNS),
    ).astype("object")
    if frame.empty:
        return frame
    order = frame["severity"].map(SEVERITY_ORDER)
    return (
        frame.assign(_o=order)
        .sort_values("_o", kind="stable")
        .drop(columns="_o")
        .reset_index(drop=True)
    )
