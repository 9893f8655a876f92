"""Helpers for result summaries: JSON-ready values and rows, and the one-release bridge for
``summary`` spellings that were not a DataFrame property (a mapping, a method)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._util import deprecated

__all__ = ["SummaryFrame", "json_records", "json_value"]


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


class SummaryFrame(pd.DataFrame):
    """A summary DataFrame that still answers, for one release and with a
    ``DeprecationWarning``, the spelling it replaced: a call (``grades.summary()``, once a
    method) or a key lookup (``result.summary["winner"]``, once a mapping). Anything derived
    from it is a plain DataFrame."""

    _metadata: ClassVar[list[str]] = ["_old_call", "_old_mapping", "_old_where"]
    _old_call: Callable[..., pd.DataFrame] | None
    _old_mapping: Mapping[str, Any] | None
    _old_where: str

    @classmethod
    def bridge(
        cls,
        frame: pd.DataFrame,
        where: str,
        *,
        call: Callable[..., pd.DataFrame] | None = None,
        mapping: Mapping[str, Any] | None = None,
    ) -> SummaryFrame:
        """``frame`` answering the old ``call`` or ``mapping`` spelling of ``where``."""
        out = cls(frame)
        out._old_where = where
        out._old_call = call
        out._old_mapping = mapping
        return out

    @property
    def _constructor(self) -> Callable[..., pd.DataFrame]:
        return pd.DataFrame

    def __call__(self, *args: Any, **kwargs: Any) -> pd.DataFrame:
        call = getattr(self, "_old_call", None)
        if call is None:
            raise TypeError("'DataFrame' object is not callable")
        deprecated(f"{self._old_where}: summary is a property now (write .summary, no call)")
        out: pd.DataFrame = call(*args, **kwargs)
        return out

    def _old(self, key: Any) -> Mapping[str, Any] | None:
        mapping = getattr(self, "_old_mapping", None)
        if mapping is None or not isinstance(key, str) or key in self.columns:
            return None
        return mapping if key in mapping else None

    def __getitem__(self, key: Any) -> Any:
        mapping = self._old(key)
        if mapping is not None:
            deprecated(
                f"{self._old_where}: summary is a DataFrame now; read {key!r} from the "
                "result's attributes or .details"
            )
            return mapping[key]
        return super().__getitem__(key)

    def get(self, key: Any, default: Any = None) -> Any:
        mapping = self._old(key)
        if mapping is not None or (
            getattr(self, "_old_mapping", None) is not None
            and isinstance(key, str)
            and key not in self.columns
        ):
            deprecated(
                f"{self._old_where}: summary is a DataFrame now; read {key!r} from the "
                "result's attributes or .details"
            )
            return default if mapping is None else mapping[key]
        return super().get(key, default)
