"""``Transcripts``: the turns being graded, with per-speaker views and normalised text cached.

Built once per grading and shared by every check, so each costly Arrow pass runs once, and on
each distinct text once (turn texts are dictionary-encoded: :meth:`Transcripts.codes`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ._text import normalise

__all__ = ["TURN_COLUMNS", "TextKind", "Transcripts"]

TURN_COLUMNS = ("conversation_id", "index", "role", "text")
TextKind = Literal["raw", "norm", "norm_cs"]


@dataclass
class Transcripts:
    """Turns (sorted by conversation, index) of the conversations ``ids``, plus ``info``.

    ``info`` is indexed by conversation id and may hold ``persona_label``, ``ended_by`` and
    ``variables`` (JSON text); missing columns make the checks that need them say so.
    """

    turns: pd.DataFrame
    ids: pd.Index
    info: pd.DataFrame
    _cache: dict[Hashable, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, turns: pd.DataFrame, conversations: pd.DataFrame | None = None) -> Transcripts:
        """From a turns frame and, optionally, the conversations frame (it decides ``ids``)."""
        missing = [c for c in TURN_COLUMNS if c not in turns.columns]
        if missing:
            raise ValueError(f"the turns frame lacks column(s) {missing}; needs {TURN_COLUMNS}")
        frame = turns.loc[:, list(TURN_COLUMNS)]
        frame = frame.astype({"conversation_id": "str", "role": "str", "text": "str"})
        frame = frame.sort_values(["conversation_id", "index"], kind="stable")
        frame = frame.reset_index(drop=True)
        if conversations is not None:
            info = conversations.drop_duplicates("conversation_id", keep="last")
            info = info.set_index(info["conversation_id"].astype("str"))
            ids = pd.Index(info.index, name="conversation_id")
            frame = frame[frame["conversation_id"].isin(ids)].reset_index(drop=True)
        else:
            ids = pd.Index(frame["conversation_id"].unique(), name="conversation_id")
            info = pd.DataFrame(index=ids)
        frame["_pos"] = ids.get_indexer(frame["conversation_id"])
        return cls(frame, ids, info)

    def mask(self, speaker: str) -> np.ndarray:
        """Which turns are ``speaker``'s (``agent``, ``caller`` or ``all``), as booleans."""
        key = ("mask", speaker)
        if key not in self._cache:
            role = self.turns["role"]
            is_all = speaker == "all"
            self._cache[key] = np.ones(len(role), bool) if is_all else (role == speaker).to_numpy()
        mask: np.ndarray = self._cache[key]
        return mask

    def of(self, speaker: str) -> pd.DataFrame:
        """The turns of ``speaker`` (``agent``, ``caller`` or ``all``)."""
        key = ("turns", speaker)
        if key not in self._cache:
            sub = self.turns if speaker == "all" else self.turns[self.mask(speaker)]
            self._cache[key] = sub.reset_index(drop=True)
        frame: pd.DataFrame = self._cache[key]
        return frame

    def codes(self, speaker: str) -> np.ndarray:
        """For each of ``speaker``'s turns, the position of its text in :meth:`uniques`."""
        key = ("codes", speaker)
        if key not in self._cache:
            if speaker == "all":
                self._encode()
            else:
                self._cache[key] = self.codes("all")[self.mask(speaker)]
        codes: np.ndarray = self._cache[key]
        return codes

    def uniques(self, kind: TextKind = "raw") -> pa.Array:
        """Each distinct turn text once (NFC), raw or normalised: the checks work on these
        and spread the results to turns with :meth:`codes`."""
        key = ("uniques", kind)
        if key not in self._cache:
            if kind == "raw":
                self._encode()
            else:
                self._cache[key] = normalise(self.uniques(), kind == "norm_cs")
        array: pa.Array = self._cache[key]
        return array

    def text(self, speaker: str, kind: TextKind = "raw") -> pa.Array:
        """The text of ``speaker``'s turns as an Arrow array, raw or normalised."""
        key = ("text", speaker, kind)
        if key not in self._cache:
            self._cache[key] = self.uniques(kind).take(pa.array(self.codes(speaker)))
        array: pa.Array = self._cache[key]
        return array

    def _encode(self) -> None:
        raw = pa.array(self.turns["text"], pa.large_string(), from_pandas=True)
        if isinstance(raw, pa.ChunkedArray):
            raw = raw.combine_chunks()
        encoded = pc.dictionary_encode(raw, null_encoding="encode")
        indices = encoded.indices.to_numpy(zero_copy_only=False).astype(np.intp, copy=False)
        self._cache[("codes", "all")] = indices
        self._cache[("uniques", "raw")] = pc.utf8_normalize(encoded.dictionary, "NFC")

    def variable_values(self, name: str, as_text: Callable[[Any], str | None]) -> pd.Series | None:
        """Each conversation's variable ``name`` through ``as_text`` (None when absent), over
        ``ids``; each distinct variables text is parsed once. None when variables are unknown."""
        if "variables" not in self.info.columns:
            return None
        key = ("variables",)
        if key not in self._cache:
            codes, uniques = pd.factorize(self.info["variables"].reindex(self.ids))
            self._cache[key] = (codes, [_parse(text) for text in uniques])
        codes, parsed = self._cache[key]
        values = np.array(
            [as_text(v.get(name)) if isinstance(v, dict) else None for v in parsed] + [None],
            dtype=object,
        )
        return pd.Series(values[codes], index=self.ids, dtype="object")

    def column(self, name: str) -> pd.Series | None:
        """A column of ``info`` aligned to ``ids``, or None when the frame has no such column."""
        if name not in self.info.columns:
            return None
        return self.info[name].reindex(self.ids)


def _parse(text: Any) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, dict) else None
