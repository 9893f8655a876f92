"""The problems of a JSON merge patch over an assistant config, found before anything is sent.

A variants file holds patches (``{llm: {default: {reasoningEffort: hot}}}``) that reach the
service only when an arm's clone is saved, waves into a sweep. Every value a patch sets is
checked here against the rules the config models and the knob table already state (one fact
in one place): types, ranges and enumerations; the provider's refusals a rehearsal would meet
(:func:`~._advice.config_advice` with ``rehearsal=True``) when the patch names the provider.
What the patch leaves to the config it lands on (a required field it does not set) is not
asked for. A key no model lists is a did-you-mean error when it is close to a field's name (a
typo would make the arm run the control's config), otherwise a warning: the service stores
unknown keys unchanged, and the spec does not say what they do, so no rule is invented.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any, Union

from pydantic import BaseModel

from .._util import closest_name
from . import _limits as L
from ._advice import config_advice
from ._models import AssistantConfig
from ._problems import Problem, errors_only
from ._requests import request_errors

__all__ = ["patch_problems"]


def _present(value: Any) -> Any:
    """The patch without its deletions (``null``): what it sets."""
    if isinstance(value, Mapping):
        return {k: _present(v) for k, v in value.items() if v is not None}
    return value


def patch_problems(patch: Mapping[str, Any], at: str = "patch") -> list[Problem]:
    """Every problem of the values ``patch`` sets, each at its field path under ``at``:
    errors, then warnings (keys the spec does not list)."""
    sets = _present(patch)
    found = [
        p
        for p in request_errors(AssistantConfig, sets, at=at)
        if p.message != "is required"  # the config the patch lands on may have it
    ]
    found += _knob_values(sets, at)
    found += _refusals(sets, at)
    keys: list[Problem] = []
    _unlisted(AssistantConfig, sets, at, keys)
    found += errors_only(keys)
    first = {p.field: p for p in reversed(found)}  # one problem per field: the first found
    return [p for p in found if first[p.field] is p] + [k for k in keys if k not in found]


def _llm_default(sets: Mapping[str, Any]) -> Mapping[str, Any] | None:
    llm = sets.get("llm")
    default = llm.get("default") if isinstance(llm, Mapping) else None
    return default if isinstance(default, Mapping) else None


def _refusals(sets: Mapping[str, Any], at: str) -> list[Problem]:
    """What a provider the patch names would refuse in a rehearsal (the blocks that name
    one; an LLM block needs its model too)."""
    blocks: dict[str, Any] = {"agent": {"instructions": "-"}}  # what the check needs
    for name in ("stt", "tts", "llm"):
        block = sets.get(name)
        default = block.get("default") if isinstance(block, Mapping) else None
        if not isinstance(default, Mapping) or not isinstance(default.get("provider"), str):
            continue
        if name == "llm" and not isinstance(default.get("model"), str):
            continue
        blocks[name] = {"default": default}
    if len(blocks) == 1 or request_errors(AssistantConfig, blocks):
        return []  # nothing named, or a type error the checks above already report
    return errors_only(config_advice(blocks, at, rehearsal=True))


def _knob_values(sets: Mapping[str, Any], at: str) -> list[Problem]:
    """An LLM knob set to a value that no provider taking it accepts (the knob table), or
    that the provider the patch names does not accept."""
    block = _llm_default(sets)
    if block is None:
        return []
    provider = block.get("provider")
    out = []
    for knob, takers in L.LLM_KNOBS.items():
        value = block.get(knob)
        if not isinstance(value, str):
            continue  # absent, or a type error the models report
        if provider in takers:  # the patch names a provider that takes it: its values
            takers = {provider: takers[provider]}
        elif provider is not None:
            continue  # a provider that does not take it ignores it (a lint warning)
        allowed = [v for _, values in takers.values() if values for v in values]
        if allowed and value not in allowed:
            out.append(
                Problem(
                    f"{at}.llm.default.{knob}",
                    f"must be one of {', '.join(dict.fromkeys(allowed))} (what "
                    f"{' and '.join(takers)} take{'s' if len(takers) == 1 else ''}); "
                    f"got {value!r}",
                )
            )
    return out


def _fields(model: type[BaseModel]) -> dict[str, Any]:
    """A model's fields by their wire names."""
    return {f.alias or name: f.annotation for name, f in model.model_fields.items()}


def _one_model(annotation: Any) -> type[BaseModel] | None:
    """The one model a field holds (``X | None``, ``Annotated[X, ...]``), or None (a union of
    providers, a list, a plain value)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _one_model(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        models = [m for a in typing.get_args(annotation) if (m := _one_model(a)) is not None]
        return models[0] if len(models) == 1 else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _unlisted(
    model: type[BaseModel], value: Mapping[str, Any], path: str, out: list[Problem]
) -> None:
    """Keys ``model`` does not list, walking the fields that hold one model."""
    refused = "__pydantic_extra__" in model.__annotations__  # its own rule says (``default``)
    fields = _fields(model)
    for key, sub in value.items():
        where = f"{path}.{key}"
        if key not in fields:
            if refused:
                continue
            guess = closest_name(str(key), fields)
            if guess is not None:
                out.append(Problem(where, f"is not a field here; did you mean {guess!r}?"))
            else:
                out.append(
                    Problem(
                        where,
                        "is not a field the spec lists here: the service stores it unchanged "
                        "and the spec does not say what reads it",
                        "warning",
                    )
                )
            continue
        inner = _one_model(fields[key])
        if inner is not None and isinstance(sub, Mapping):
            _unlisted(inner, sub, where, out)
