"""Wide conversations: each variable a column, each persona tag a boolean column.

``variables`` and ``persona_tags`` are stored as JSON text (one schema for every grid); an
analyst wants ``df["variables.customer_name"]`` and ``df[df["tag.angry"]]``. Columns get a
dtype from their values, so a CSV's text stays text:

=================================  ======================================
values of a variable               column dtype
=================================  ======================================
all strings                        ``str`` (pyarrow-backed, missing = NaN)
all booleans                       ``boolean``
all integers                       ``Int64``
integers and floats                ``float64``
anything else (lists, objects)     ``object``
=================================  ======================================

A conversation without the variable (or with JSON ``null``) has a missing value. Tag columns
are ``boolean``: missing when the run did not record tags (runs older than the column).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from ._tables import string_dtype

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["DEFAULT_TAG_PREFIX", "DEFAULT_VARIABLE_PREFIX", "expand_variables"]

DEFAULT_VARIABLE_PREFIX: Final = "variables."
DEFAULT_TAG_PREFIX: Final = "tag."
_ABSENT: Final = object()


def _parse_unique(column: pd.Series, kind: type, name: str) -> tuple[np.ndarray, list[Any]]:
    """Codes into the parsed unique values of a JSON text column (code -1: null text)."""
    import numpy as np
    import pandas as pd

    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    parsed: list[Any] = []
    for text in uniques:
        value = json.loads(text)
        if not isinstance(value, kind):
            raise ValueError(f"{name} holds {text[:60]!r}, not a JSON {kind.__name__}")
        parsed.append(value)
    return np.asarray(codes), parsed


def _all(values: Sequence[Any], test: Callable[[Any], bool]) -> bool:
    return all(test(v) for v in values)


def _typed(values: list[Any]) -> Any:
    """``values`` (``None`` = missing) as a pandas array with the dtype of the module's table."""
    import numpy as np
    import pandas as pd

    present = [v for v in values if v is not None]
    if _all(present, lambda v: isinstance(v, str)):
        return pd.array(values, dtype=string_dtype())
    if _all(present, lambda v: isinstance(v, bool)):
        return pd.array(values, dtype="boolean")
    if _all(present, lambda v: isinstance(v, int) and not isinstance(v, bool)):
        return pd.array(values, dtype="Int64")
    if _all(present, lambda v: isinstance(v, int | float) and not isinstance(v, bool)):
        return np.array([np.nan if v is None else float(v) for v in values], dtype="float64")
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = value
    return out


def _spread(per_unique: list[Any], codes: np.ndarray) -> list[Any]:
    """One value per row from one value per unique text (code -1, a null text: ``None``)."""
    table = [*per_unique, None]  # index -1 picks the trailing None
    return [table[code] for code in codes.tolist()]


def _variable_columns(frame: pd.DataFrame, prefix: str) -> dict[str, Any]:
    codes, records = _parse_unique(frame["variables"], dict, "variables")
    keys = sorted({key for record in records for key in record})
    columns: dict[str, Any] = {}
    for key in keys:
        per_unique = [record.get(key) for record in records]
        columns[f"{prefix}{key}"] = _typed(_spread(per_unique, codes))
    return columns


def _tag_columns(frame: pd.DataFrame, prefix: str) -> dict[str, Any]:
    import pandas as pd

    codes, tag_lists = _parse_unique(frame["persona_tags"], list, "persona_tags")
    tags = sorted({tag for tags in tag_lists for tag in tags})
    columns: dict[str, Any] = {}
    for tag in tags:
        per_unique = [tag in tags_of for tags_of in tag_lists]
        columns[f"{prefix}{tag}"] = pd.array(_spread(per_unique, codes), dtype="boolean")
    return columns


def expand_variables(
    conversations: pd.DataFrame,
    *,
    prefix: str = DEFAULT_VARIABLE_PREFIX,
    tag_prefix: str | None = DEFAULT_TAG_PREFIX,
) -> pd.DataFrame:
    """A copy of a conversations frame with a column per variable and per persona tag.

    Adds ``<prefix><key>`` for every top-level key of any conversation's ``variables`` (sorted
    by key; dtypes: see the module docstring), then ``<tag_prefix><tag>`` (``boolean``) for every
    tag in ``persona_tags`` unless ``tag_prefix`` is None. The JSON columns stay as they are.
    Works on any frame with those columns: ``run.conversations``, ``load_runs(...)``.
    Raises ``ValueError`` when a new column's name is taken or a JSON text is not a dict/list.
    """
    import pandas as pd

    if "variables" not in conversations.columns:
        raise ValueError("expand_variables needs a 'variables' column (a conversations table)")
    added = _variable_columns(conversations, prefix)
    if tag_prefix is not None and "persona_tags" in conversations.columns:
        for name, column in _tag_columns(conversations, tag_prefix).items():
            if name in added:
                raise ValueError(f"column {name!r} is both a variable and a tag; pass a prefix")
            added[name] = column
    taken = sorted(set(added) & set(map(str, conversations.columns)))
    if taken:
        raise ValueError(f"column(s) {taken} already exist; pass another prefix")
    extra = pd.DataFrame(added, index=conversations.index)
    return pd.concat([conversations, extra], axis=1)
