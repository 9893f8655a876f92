"""Helpers for result summaries: JSON-ready values and rows."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["json_records", "json_value"]


def json_value(value: Any) -> Any:
    """``value`` as JSON-ready Python: numpy scalars unwrapped, NaN/inf and NA as None, enums
    as their value."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is pd.NA or value is pd.NaT or value is None:
        return None
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    enum_value = getattr(value, "value", None)
    if isinstance(enum_value, str) and isinstance(value, str):
        return enum_value
    return value


def json_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """``frame``'s rows as JSON-ready dicts."""
    return [
        {str(k): json_value(v) for k, v in row.items()} for row in frame.to_dict(orient="records")
    ]
