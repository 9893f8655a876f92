"""Problems with a request body, and the one function that reads them out of pydantic.

A :class:`Problem` names its field by a dotted path as the body spells it
(``config.agent.tools[0].name``) and says what is wrong in words a user reads
(``must not be empty``). The rules themselves are stated once, on the models (see
:mod:`._rules`); :func:`problems_from` turns what pydantic found into problems.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from pydantic import ValidationError
from pydantic_core import ErrorDetails

__all__ = ["Problem", "Severity", "errors_only", "problems_from", "type_name"]

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a request body, at a dotted field path."""

    field: str
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


def type_name(value: Any, *, mapping: str = "object", sequence: str = "array") -> str:
    """The JSON type of ``value`` for messages (YAML callers pass ``mapping``/``sequence``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return mapping
    if isinstance(value, list | tuple):
        return sequence
    return type(value).__name__


def errors_only(problems: Sequence[Problem]) -> list[Problem]:
    """The problems that make the service answer 400."""
    return [p for p in problems if p.severity == "error"]


_EXPECTED: Final[Mapping[str, str]] = {
    "string_type": "a string",
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "a boolean",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "list_type": "an array",
}
"""pydantic's type errors -> what the value must be (the rest of the sentence is shared)."""

_KEY: Final = "[key]"
"""The last step of a location that points at a dict's key rather than its value."""
_LONG_KEY: Final = 20
"""Keys longer than this are cut in field paths (a 3000-character key is no path)."""


def _field_path(body: Any, loc: tuple[int | str, ...]) -> str:
    """The dotted path of an error location as the body spells it: the steps the body has
    (pydantic's union-member tags such as ``vendor_a`` or ``int`` are not in it)."""
    path = ""
    node = body
    for step in loc:
        if isinstance(node, Mapping) and step in node:
            shown = str(step)
            if loc[-1] == _KEY and len(shown) > _LONG_KEY:
                shown = shown[:_LONG_KEY] + "…"
            path = f"{path}.{shown}" if path else shown
            node = node[step]
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            path = f"{path}[{step}]"
            node = node[step]
    return path


def _message(errors: Sequence[ErrorDetails]) -> str:
    """What is wrong at one path: the first error's words, or every type it may be."""
    first = errors[0]
    kind = first["type"]
    if kind == "missing":
        return "is required"
    expected = [_EXPECTED[e["type"]] for e in errors if e["type"] in _EXPECTED]
    if expected:
        if "a number" in expected:  # int | float: a number, whichever JSON wrote
            expected = [e for e in expected if e != "an integer"]
        return f"must be {' or '.join(dict.fromkeys(expected))}, got {type_name(first['input'])}"
    if kind == "literal_error":
        return f"must be {first.get('ctx', {}).get('expected')}; got {first['input']!r}"
    return str(first["msg"]).removeprefix("Value error, ")


def problems_from(error: ValidationError, body: Any, *, at: str = "") -> list[Problem]:
    """The problems pydantic found validating ``body``, one per field path, in its order.

    ``at`` is where ``body`` sits in a larger request (``"config"``, ``"contexts[2]"``);
    errors of the whole body are named ``body`` (or ``at``).
    """
    by_path: dict[str, list[ErrorDetails]] = {}
    for err in error.errors(include_url=False):
        loc = tuple(err["loc"])
        path = _field_path(body, loc)
        if err["type"] == "missing" and loc:
            path = f"{path}.{loc[-1]}" if path else str(loc[-1])
        by_path.setdefault(path, []).append(err)
    problems = []
    for path, errors in by_path.items():
        message = _message(errors)
        if errors[0]["loc"][-1:] == (_KEY,):
            message = f"key {message}"
        joined = f"{at}{'' if path.startswith('[') or not at else '.'}{path}" if path else at
        problems.append(Problem(joined or "body", message))
    return problems
