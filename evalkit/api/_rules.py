"""The spec's request rules as annotations on the models: stated once, checked on a request.

A :class:`Rule` sits on a field of a model (``instructions: Annotated[str, Rule(min_length=1)]``)
and is the only place that rule is written: the client checks it before sending, the emulator
checks it on arrival, and the OpenAPI document shows it (``minLength: 1``). Rules that span
fields (a scorecard's points total 100) are model validators that raise
:func:`rule_violations`.

The resource models also read what the service answers, and a read must stay lenient (a new
enum value or an old scorecard must not make an assistant unreadable): a rule checks only a
value validated as a request, with :data:`REQUEST` set in the validation context.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Final

from pydantic import BeforeValidator, GetCoreSchemaHandler, GetJsonSchemaHandler, ValidationError
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import InitErrorDetails, PydanticCustomError, core_schema

__all__ = [
    "REQUEST",
    "Integer",
    "Rule",
    "in_request",
    "number_text",
    "rule_violations",
    "variables_json_length",
]

REQUEST: Final = "evalkit.request"
"""Validation-context flag: the value is a request body, so the spec's rules apply."""


def in_request(info: core_schema.ValidationInfo) -> bool:
    """Whether a validator runs on a request body (see :data:`REQUEST`)."""
    context = info.context
    return context is not None and REQUEST in context


def _violation(message: str) -> PydanticCustomError:
    return PydanticCustomError("spec_rule", "{message}", {"message": message})


def rule_violations(
    title: str, found: Sequence[tuple[tuple[int | str, ...], str]], value: Any
) -> ValidationError:
    """Several broken rules of one model at once, each at its location inside the model."""
    return ValidationError.from_exception_data(
        title,
        [
            InitErrorDetails(type=_violation(message), loc=loc, input=value)
            for loc, message in found
        ],
    )


def number_text(x: float) -> str:
    """A number as a message says it: ``100``, not ``100.0``."""
    return str(int(x)) if float(x).is_integer() else str(x)


_COMPACT: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def variables_json_length(variables: Mapping[str, Any]) -> int:
    """Length of the compact JSON text of a variables object, as the limit counts it."""
    return len(_COMPACT.encode(variables))


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule of the spec on one value, checked on requests and shown in the document.

    Lengths apply to a string (characters: Unicode code points) or an array (``items`` names
    its entries in messages); ``ge``/``le`` bound a number; ``one_of`` is an enumeration;
    ``must_match`` is a pattern and what to say when it fails; ``key_max_length`` and
    ``json_under`` bound an object's keys and its compact JSON; ``unsupported`` says why a
    value must not be there at all.
    """

    min_length: int | None = None
    max_length: int | None = None
    ge: float | None = None
    le: float | None = None
    one_of: tuple[str, ...] | None = None
    must_match: tuple[str, str] | None = None
    key_max_length: int | None = None
    json_under: int | None = None
    unsupported: str | None = None
    items: tuple[str, str] = ("item", "items")

    def problem(self, value: Any) -> str | None:
        """What is wrong with ``value`` under this rule, or None."""
        if self.unsupported is not None:
            return self.unsupported
        if isinstance(value, str):
            return self._text(value)
        if isinstance(value, list):
            return self._items(value)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return self._range(value)
        return None

    def _text(self, value: str) -> str | None:
        if self.one_of is not None and value not in self.one_of:
            return f"must be one of {', '.join(self.one_of)}; got {value!r}"
        if self.must_match is not None and not re.search(self.must_match[0], value):
            return self.must_match[1]
        if self.min_length is not None and len(value) < self.min_length:
            if self.min_length == 1:
                return "must not be empty"
            return f"must have at least {self.min_length} characters"
        if self.max_length is not None and len(value) > self.max_length:
            return f"must be at most {self.max_length} characters, got {len(value)}"
        return None

    def _items(self, value: list[Any]) -> str | None:
        one, many = self.items
        if self.min_length is not None and len(value) < self.min_length:
            return f"must have at least {self.min_length} {one if self.min_length == 1 else many}"
        if self.max_length is not None and len(value) > self.max_length:
            return f"must have at most {self.max_length} {many}, got {len(value)}"
        return None

    def _object(self, value: dict[Any, Any]) -> list[tuple[tuple[int | str, ...], str]]:
        """An object's broken rules: each key too long (at the key), then its JSON's size."""
        found: list[tuple[tuple[int | str, ...], str]] = []
        if (most := self.key_max_length) is not None:
            found += [
                ((key, "[key]"), f"must be at most {most} characters, got {len(key)}")
                for key in value
                if isinstance(key, str) and len(key) > most
            ]
        if self.json_under is not None:
            try:
                n = variables_json_length(value)
            except (TypeError, ValueError) as exc:
                found.append(
                    ((), f"must be JSON-serialisable (finite numbers, string keys): {exc}")
                )
            else:
                if n >= self.json_under:
                    found.append(((), f"JSON must be under {self.json_under} characters, got {n}"))
        return found

    def _range(self, value: float) -> str | None:
        if isinstance(value, float) and not math.isfinite(value):
            return f"must be a finite number, got {value}"
        if self.ge is not None and value < self.ge:
            return f"must be at least {number_text(self.ge)}, got {value}"
        if self.le is not None and value > self.le:
            return f"must be at most {number_text(self.le)}, got {value}"
        return None

    def _check(self, value: Any, info: core_schema.ValidationInfo) -> Any:
        if not in_request(info):
            return value
        if isinstance(value, dict) and self.unsupported is None:
            found = self._object(value)
            if found:
                raise rule_violations("Rule", found, value)
            return value
        message = self.problem(value)
        if message is not None:
            raise _violation(message)
        return value

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.with_info_after_validator_function(self._check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        out = dict(handler(schema))
        if self.unsupported is not None:
            return {"not": {}}
        if self.one_of is not None:
            return {"enum": list(self.one_of)}
        array = out.get("type") == "array"
        keywords = {
            ("minItems" if array else "minLength"): self.min_length,
            ("maxItems" if array else "maxLength"): self.max_length,
            "minimum": self.ge,
            "maximum": self.le,
            "pattern": self.must_match[0] if self.must_match else None,
            "propertyNames": (
                {"maxLength": self.key_max_length} if self.key_max_length is not None else None
            ),
        }
        out.update({k: v for k, v in keywords.items() if v is not None})
        return out


def _integral(value: Any) -> Any:
    """JSON has one number type: 120.0 is the integer 120 (as JSON Schema reads it)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Integer = Annotated[int, BeforeValidator(_integral)]
"""An integer field that also takes a JSON number with no fraction (``600.0``)."""
