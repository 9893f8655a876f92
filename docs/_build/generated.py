"""Reference tables generated from the code when the site is built.

A page asks for one with a line of its own, ``<!-- generated: NAME -->``; :data:`TABLES` maps
each name to the function writing its Markdown. An unknown name fails the build.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import MISSING, fields
from typing import Any


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _table(header: Iterable[str], rows: Iterable[Iterable[object]]) -> str:
    head = list(header)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


_ROLE = re.compile(r":(?:func|class|mod|data|meth|attr|exc|obj):`~?([^`]+)`")


def _doc(obj: object) -> str:
    """An object's docstring on one line, its reStructuredText roles as Markdown code."""
    text = " ".join(inspect.cleandoc(getattr(obj, "__doc__", None) or "").split())
    text = _ROLE.sub(lambda m: f"`{m.group(1).rsplit('.', 1)[-1]}`", text)
    return text.replace("``", "`")


# ------------------------------------------------------------------------------- exit codes


def exit_codes() -> str:
    from evalkit.cli._errors import EXIT_CODE_MEANINGS

    rows = [
        (f"`{int(code)}`", f"`{code.name}`", meaning)
        for code, (_, meaning) in EXIT_CODE_MEANINGS.items()
    ]
    return _table(("code", "name (`evalkit.cli.ExitCode`)", "meaning"), rows)


# ------------------------------------------------------------------------- the admin API


def emulator_admin() -> str:
    from evalkit.emulator._app import ADMIN_ROUTES

    out = []
    for path, handler, methods in ADMIN_ROUTES:
        out += [f"### `{'|'.join(methods)} /_emulator{path}`", "", _doc(handler), ""]
    return "\n".join(out)


# ------------------------------------------------------------------------------ file formats


def _type_name(annotation: Any) -> str:
    """A type as a reader says it: ``list of str``, ``agent or caller``, ``int``."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is typing.Literal:
        return " or ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in args if a is not type(None))
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if isinstance(annotation, type):
        return f"`{annotation.__name__}`"
    return f"`{annotation}`"


def _constraints(metadata: Iterable[Any]) -> str:
    found = []
    for item in metadata:
        nested = getattr(item, "metadata", None)
        if isinstance(nested, list):  # a FieldInfo inside Annotated
            found.append(_constraints(nested))
            continue
        for attr, word in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            value = getattr(item, attr, None)
            if value is not None:
                found.append(f"{word} {value}")
        if getattr(item, "min_length", None):
            found.append(f"at least {item.min_length} long")
    return ", ".join(f for f in found if f)


def _field_constraints(info: Any) -> str:
    """The field's own constraints and those of the type it is (``NonEmpty``: non-empty)."""
    own = _constraints(info.metadata)
    inner = info.annotation
    for arg in (inner, *typing.get_args(inner)):
        if typing.get_origin(arg) is typing.Annotated:
            own = ", ".join(x for x in (own, _constraints(arg.__metadata__)) if x)
    return own


def check_types() -> str:
    """Each check type of a scorecard rule, from its pydantic model."""
    from evalkit.grading._check_models import CheckModel

    union = typing.get_args(CheckModel)[0]
    models = sorted(
        typing.get_args(union), key=lambda m: typing.get_args(m.model_fields["type"].annotation)
    )
    out = []
    for model in models:
        type_name = typing.get_args(model.model_fields["type"].annotation)[0]
        out += [f"#### `{type_name}`", "", _doc(model), ""]
        rows = []
        for name, info in model.model_fields.items():
            if name in ("type", "only_personas", "skip_personas"):
                continue
            default = "required" if info.is_required() else f"`{info.default!r}`".replace("'", "")
            rows.append(
                (f"`{name}`", _type_name(info.annotation), default, _field_constraints(info))
            )
        if rows:
            out += [_table(("key", "type", "default", "constraints"), rows), ""]
        else:
            out += ["No keys beyond the common ones.", ""]
    return "\n".join(out)


def scorecard_keys() -> str:
    from evalkit.grading._scorecard import RULE_KEYS, SCORECARD_KEYS

    rows = [("scorecard", ", ".join(f"`{k}`" for k in SCORECARD_KEYS))]
    rows.append(("each rule", ", ".join(f"`{k}`" for k in RULE_KEYS)))
    return _table(("level", "keys"), rows)


def persona_keys() -> str:
    from evalkit.grid._personas import Persona

    rows = []
    for f in fields(Persona):
        default = "required" if f.default is MISSING else f"`{f.default!r}`"
        sent = "sent to the service" if f.name in ("label", "behavior", "path") else "evalkit's"
        rows.append((f"`{f.name}`", _type_name(f.type), default, sent))
    return _table(("key", "type", "default", "who reads it"), rows)


def variants_keys() -> str:
    from evalkit.tuning._variants import _KEYS

    return ", ".join(f"`{k}`" for k in sorted(_KEYS))


def pricing_keys() -> str:
    from evalkit.runner._pricing import _JUDGE_FIELDS, _SIMULATION_FIELDS, _TOP

    rows = [
        ("top level", ", ".join(f"`{k}`" for k in sorted(_TOP))),
        ("a `simulation` entry", ", ".join(f"`{k}`" for k in _SIMULATION_FIELDS)),
        ("a `judge` entry", ", ".join(f"`{k}`" for k in _JUDGE_FIELDS)),
    ]
    return _table(("where", "keys"), rows)


# ------------------------------------------------------------------------------ the top level


def top_level() -> str:
    """Every top-level name, linked to where its home package documents it."""
    import evalkit

    rows = []
    for name, home in evalkit._HOMES.items():
        value = getattr(evalkit, name)
        kind = "class" if isinstance(value, type) else "function"
        summary = _doc(value).split(". ")[0].rstrip(".")
        rows.append(
            (f"[`{name}`][evalkit.{home}.{name}]", kind, f"[`evalkit.{home}`]({home}.md)", summary)
        )
    return _table(("name", "kind", "documented in", "what it is"), rows)


# ------------------------------------------------------------------------- the store's tables


def store_schemas() -> str:
    from evalkit.store import CONVERSATIONS_SCHEMA, GRADES_SCHEMA, TURNS_SCHEMA

    out = []
    for title, schema in (
        ("conversations.parquet", CONVERSATIONS_SCHEMA),
        ("turns.parquet", TURNS_SCHEMA),
        ("grades/<rubricVersionId>.parquet", GRADES_SCHEMA),
    ):
        rows = [(f"`{f.name}`", f"`{f.type}`", "yes" if f.nullable else "no") for f in schema]
        out += [f"### `{title}`", "", _table(("column", "type", "may be null"), rows), ""]
    return "\n".join(out)


TABLES: dict[str, Callable[[], str]] = {
    "store-schemas": store_schemas,
    "top-level": top_level,
    "exit-codes": exit_codes,
    "emulator-admin": emulator_admin,
    "check-types": check_types,
    "scorecard-keys": scorecard_keys,
    "persona-keys": persona_keys,
    "variants-keys": variants_keys,
    "pricing-keys": pricing_keys,
}
