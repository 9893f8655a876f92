"""Deterministic checks: one small vectorised function per check type, and ``CHECK_TYPES``.

Each function takes the :class:`Transcripts` being graded and its typed check model and
returns a frame indexed by conversation id with ``verdict`` (pass/fail/na), ``rationale`` (a
sentence a person can read) and ``evidence_turn`` (1-based turn index or <NA>). Work is done
with Arrow/pandas column operations and groupbys: a Python loop runs per rule or per distinct
value, never per turn (the exceptions: ``regex`` patterns RE2 cannot run, searched once per
distinct text under a time limit (:mod:`._regex`), and the sound-alike search of
``uses_variable`` for Roman values in Urdu-script conversations, which loops over the turns of
the conversations concerned only).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel

from . import _check_models as m
from ._regex import (
    GIVE_UP_AFTER,
    MATCH_GROUP,
    TIME_LIMIT_S,
    backtracking,
    backtracking_search,
    re2_form,
)
from ._skeleton import sound_pattern
from ._text import ARABIC_LETTER, LATIN_LETTER, PLACEHOLDER_RE2, normalise_one
from ._transcripts import TextKind, Transcripts

__all__ = ["CHECK_TYPES", "CheckType", "run_check"]

CID = "conversation_id"
_Found = tuple[np.ndarray, np.ndarray]
_BOUNDARY: Final = r"[^\pL\pN]"


@dataclass(frozen=True, slots=True)
class CheckType:
    """One row of the check table: name, parameter model, function (None: judged), doc."""

    name: str
    model: type[BaseModel]
    function: Callable[[Transcripts, Any], pd.DataFrame] | None
    doc: str


# ----------------------------------------------------------------------------- helpers


def _frame(t: Transcripts, verdict: Any, rationale: Any, evidence: Any = pd.NA) -> pd.DataFrame:
    out = pd.DataFrame(index=t.ids)
    out["verdict"] = pd.Series(verdict, index=t.ids, dtype="object")
    out["rationale"] = pd.Series(rationale, index=t.ids, dtype="object")
    out["evidence_turn"] = pd.Series(evidence, index=t.ids).astype("Int64")
    return out


def _set(out: pd.DataFrame, rows: pd.DataFrame, verdict: str, rationale: pd.Series) -> None:
    """Give the conversations in ``rows`` (indexed by id, with ``index``) this verdict."""
    ids = rows.index
    at = rows["_pos"].to_numpy() if "_pos" in rows.columns else out.index.get_indexer(ids)
    out.iloc[at, 0] = verdict
    out.iloc[at, 1] = rationale.reindex(ids).to_numpy(object)
    if "index" in rows.columns:
        out.iloc[at, 2] = rows["index"].astype("Int64").to_numpy()


def _mark(out: pd.DataFrame, rows: Any, verdict: str, rationale: str) -> None:
    """Set the verdict and rationale of ``rows`` (a mask or labels)."""
    out.loc[rows, "verdict"] = verdict
    out.loc[rows, "rationale"] = rationale


def _where(rows: pd.DataFrame) -> pd.Series:
    """``"agent turn 3"`` for each row (columns role, index)."""
    return rows["role"].astype("object") + " turn " + rows["index"].astype(str)


def _first_rows(pos: np.ndarray, mask: Any) -> np.ndarray:
    """Positions of the first row per conversation where ``mask`` holds (``pos``: each row's
    conversation; a conversation's rows are contiguous)."""
    rows = np.flatnonzero(np.asarray(mask, dtype=bool))
    if len(rows) < 2:
        return rows
    at = pos[rows]
    return rows[np.concatenate(([True], at[1:] != at[:-1]))]


def _first(sub: pd.DataFrame, mask: Any, match: Any = None) -> pd.DataFrame:
    """The first turn per conversation where ``mask`` holds (with ``match`` text if given)."""
    rows = _first_rows(sub["_pos"].to_numpy(), mask)
    hits = sub.iloc[rows][[CID, "index", "role", "_pos"]]
    if match is not None:
        hits = hits.assign(match=np.asarray(match)[rows].astype(object))
    return hits.set_index(CID)


def _extract(array: pa.Array, pattern: str, group: str = "m") -> tuple[np.ndarray, np.ndarray]:
    """(matched?, matched text) per element for an RE2 ``pattern`` with a named ``group``."""
    found = pc.extract_regex(array, pattern)
    valid = found.is_valid().to_numpy(zero_copy_only=False)
    text = found.field(group).to_numpy(zero_copy_only=False)
    return valid.astype(bool), text


def _search(
    t: Transcripts, speaker: str, pattern: str, kind: TextKind = "raw", group: str = "m"
) -> _Found:
    """:func:`_extract` over ``speaker``'s turns, run once per distinct text."""
    hit, text = _extract(t.uniques(kind), pattern, group)
    codes = t.codes(speaker)
    return hit[codes], text[codes]


def _search_some(text: pa.Array, codes: np.ndarray, pattern: str) -> _Found:
    """:func:`_extract` over the turns whose texts are ``text.take(codes)``, once per code."""
    distinct, inverse = np.unique(codes, return_inverse=True)
    hit, said = _extract(text.take(pa.array(distinct)), pattern)
    return hit[inverse], said[inverse]


def _quote(values: Sequence[str]) -> str:
    return ", ".join(f"'{v}'" for v in values)


def _who(speaker: str) -> str:
    """The speaker before a noun: ``"caller "``, or nothing for every speaker (``"no turn"``,
    never ``"no any turn"``)."""
    return "" if speaker == "all" else f"{speaker} "


# ----------------------------------------------------------------------------- text


def _text_hits(t: Transcripts, c: m.ContainsCheck | m.NotContainsCheck) -> pd.DataFrame:
    kind: TextKind = "norm_cs" if c.case_sensitive else "norm"
    needles = [normalise_one(n, c.case_sensitive) for n in c.needles]
    alternation = "|".join(re.escape(n) for n in sorted(set(needles), key=len, reverse=True))
    pattern = f"(?P<m>{alternation})"
    if c.whole_word:
        pattern = f"(?:^|{_BOUNDARY}){pattern}(?:{_BOUNDARY}|$)"
    hit, text = _search(t, c.speaker, pattern, kind)
    return _first(t.of(c.speaker), hit, text)


def check_contains(t: Transcripts, c: m.ContainsCheck) -> pd.DataFrame:
    """Pass when the text, or one of ``any``, occurs in some turn of ``speaker``."""
    out = _frame(t, "fail", f"no {_who(c.speaker)}turn contains {_quote(c.needles)}")
    hits = _text_hits(t, c)
    _set(out, hits, "pass", _where(hits) + " contains '" + hits["match"] + "'")
    return out


def check_not_contains(t: Transcripts, c: m.NotContainsCheck) -> pd.DataFrame:
    """Pass when none of the texts occurs in any turn of ``speaker``."""
    out = _frame(t, "pass", f"no {_who(c.speaker)}turn contains {_quote(c.needles)}")
    hits = _text_hits(t, c)
    _set(out, hits, "fail", _where(hits) + " contains '" + hits["match"] + "'")
    return out


def _regex_matches(t: Transcripts, c: m.RegexCheck) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """Per turn of the speaker: matched?, the match; and the conversations the pattern ran out
    of time on (only a backtracking pattern can; see :mod:`._regex`)."""
    form = re2_form(c.pattern, c.ignore_case)
    if form is not None:
        hit, text = _search(t, c.speaker, form, group=MATCH_GROUP)
        return hit, text, _first(t.of(c.speaker), np.zeros(len(hit), bool))
    codes = t.codes(c.speaker)
    compiled = backtracking(c.pattern, c.ignore_case)
    search = backtracking_search(t.uniques(), np.unique(codes), compiled)
    hit = search.hit[codes]
    unknown = (search.timed_out | search.skipped)[codes]
    mode = c.effective_mode
    decisive = ~hit & ~unknown if mode == "all" else hit
    late = _out_of_time(t.of(c.speaker), decisive, unknown, search.seconds[codes])
    skipped = search.skipped[codes][late["_row"].to_numpy()]
    late["reason"] = np.where(
        skipped,
        _where(late) + f" was not searched: /{c.pattern}/ had run out of time on "
        f"{GIVE_UP_AFTER} turns, so the rule stopped searching",
        f"/{c.pattern}/ ran out of its {TIME_LIMIT_S:g} s time limit by "
        + _where(late)
        + " (lookarounds and backreferences need a backtracking engine; without them the "
        "pattern runs on RE2 in linear time)",
    )
    return (hit | unknown if mode == "all" else hit), search.said[codes], late


def _out_of_time(
    sub: pd.DataFrame, decisive: np.ndarray, unknown: np.ndarray, seconds: np.ndarray
) -> pd.DataFrame:
    """The conversations that ran out of time before the turn that decides them (their first
    decisive turn, else their last): an unknown turn, or more than the limit of search time
    added up; one row each (the turn where it happened, its position ``_row``)."""
    pos = sub["_pos"].to_numpy()
    if len(pos) == 0:
        return _first(sub, decisive).assign(_row=np.zeros(0, np.int64))
    new = np.concatenate(([True], pos[1:] != pos[:-1]))
    group = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    last = np.append(starts[1:], len(pos)) - 1
    first_decisive = _first_rows(pos, decisive)
    last[group[first_decisive]] = first_decisive
    spent = np.cumsum(seconds)
    spent -= np.concatenate(([0.0], spent))[starts][group]
    missing = np.cumsum(unknown)
    missing -= np.concatenate(([0], missing))[starts][group]
    over = _first_rows(pos, (spent > TIME_LIMIT_S) | (missing > 0))
    over = over[over <= last[group[over]]]
    rows: pd.DataFrame = sub.iloc[over][[CID, "index", "role", "_pos"]].assign(_row=over)
    return rows.set_index(CID)


def check_regex(t: Transcripts, c: m.RegexCheck) -> pd.DataFrame:
    """``mode`` any: some turn matches; none: no turn does; all: every turn does; ``error``
    when a backtracking pattern ran out of time before deciding."""
    mode = c.effective_mode
    who = _who(c.speaker)
    hit, text, late = _regex_matches(t, c)
    sub = t.of(c.speaker)
    if mode == "all":
        out = _frame(t, "pass", f"every {who}turn matches /{c.pattern}/")
        misses = _first(sub, ~hit)
        _set(out, misses, "fail", _where(misses) + f" does not match /{c.pattern}/")
        none = t.ids.difference(pd.Index(sub[CID].unique()))
        _mark(out, none, "na", f"no {who}turns")
    else:
        hits = _first(sub, hit, text)
        said = _where(hits) + " matches /" + c.pattern + "/ ('" + hits["match"] + "')"
        if mode == "any":
            out = _frame(t, "fail", f"no {who}turn matches /{c.pattern}/")
            _set(out, hits, "pass", said)
        else:
            out = _frame(t, "pass", f"no {who}turn matches /{c.pattern}/")
            _set(out, hits, "fail", said)
    if len(late):
        _set(out, late, "error", late["reason"])
    return out


def check_no_placeholders(t: Transcripts, c: m.NoPlaceholdersCheck) -> pd.DataFrame:
    """Pass when no ``{{token}}`` or ``{identifier}`` is left in the speaker's turns."""
    out = _frame(t, "pass", f"no unresolved template token in {_who(c.speaker)}turns")
    hit, text = _search(t, c.speaker, PLACEHOLDER_RE2)
    hits = _first(t.of(c.speaker), hit, text)
    _set(out, hits, "fail", _where(hits) + " says '" + hits["match"] + "' (unresolved token)")
    return out


# ----------------------------------------------------------------------------- shape


def check_turns(t: Transcripts, c: m.TurnsCheck) -> pd.DataFrame:
    """Pass when ``min`` <= number of turns by ``speaker`` <= ``max``."""
    counts = t.of(c.speaker).groupby(CID, sort=False).size().reindex(t.ids, fill_value=0)
    low = c.min if c.min is not None else 0
    high = c.max if c.max is not None else np.iinfo(np.int64).max
    ok = (counts >= low) & (counts <= high)
    bounds = " and ".join(
        f"{name} {v}" for name, v in (("min", c.min), ("max", c.max)) if v is not None
    )
    noun = "turns" if c.speaker == "all" else f"{c.speaker} turns"
    rationale = counts.astype(str) + f" {noun} ({bounds})"
    return _frame(t, np.where(ok, "pass", "fail"), rationale)


def check_ended_by(t: Transcripts, c: m.EndedByCheck) -> pd.DataFrame:
    """Pass when the call was ended by ``speaker``: the record's ``ended_by`` when known,
    else the speaker of the last turn; ``na`` with neither."""
    last = t.turns.groupby(CID, sort=False)[["role", "index"]].last().reindex(t.ids)
    recorded = t.column("ended_by")
    by = last["role"].astype("object")
    source = pd.Series("spoke last", index=t.ids, dtype="object")
    if recorded is not None:
        known = recorded.notna()
        by = by.where(~known, recorded.astype("object"))
        source = source.where(~known, "ended the call")
    ok = by == c.speaker
    out = _frame(t, np.where(ok, "pass", "fail"), "the " + by.astype(str) + " " + source)
    out["evidence_turn"] = last["index"].astype("Int64")
    _mark(out, by.isna(), "na", "no turns and no recorded ending")
    return out


def check_agent_speaks_first(t: Transcripts, c: m.AgentSpeaksFirstCheck) -> pd.DataFrame:
    """Pass when (the first turn is the agent's) == ``expected``; ``na`` with no turns."""
    first = t.turns.groupby(CID, sort=False)["role"].first().reindex(t.ids)
    ok = (first == "agent") == c.expected
    out = _frame(t, np.where(ok, "pass", "fail"), "the " + first.astype(str) + " spoke first", 1)
    _mark(out, first.isna(), "na", "no turns")
    out.loc[first.isna(), "evidence_turn"] = pd.NA
    return out


def check_max_turn_chars(t: Transcripts, c: m.MaxTurnCharsCheck) -> pd.DataFrame:
    """Pass when no turn of ``speaker`` is longer than ``max_chars`` characters."""
    out = _frame(t, "pass", f"every {_who(c.speaker)}turn has at most {c.max_chars} characters")
    lengths = pc.utf8_length(t.uniques()).to_numpy(zero_copy_only=False)
    codes = t.codes(c.speaker)
    long = _first(t.of(c.speaker), (lengths > c.max_chars)[codes], lengths.astype(str)[codes])
    rationale = _where(long) + " has " + long["match"] + f" characters (max {c.max_chars})"
    _set(out, long, "fail", rationale)
    return out


def check_no_repetition(t: Transcripts, c: m.NoRepetitionCheck) -> pd.DataFrame:
    """Pass when no utterance of at least ``min_chars`` characters (normalised, punctuation
    removed) occurs more than ``max_occurrences`` times."""
    out = _frame(t, "pass", f"no {_who(c.speaker)}utterance said more than {c.max_occurrences}x")
    key = pc.replace_substring_regex(t.uniques("norm"), r"[^\pL\pN ]+", "")
    key = pc.utf8_trim_whitespace(pc.replace_substring_regex(key, " +", " "))
    long = pc.utf8_length(key).to_numpy(zero_copy_only=False) >= c.min_chars
    keys = pc.dictionary_encode(key)  # texts differing only in punctuation share a key
    key_id = keys.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    codes = t.codes(c.speaker)
    sub = t.of(c.speaker)
    kept = np.flatnonzero(long[codes])
    turn_key = key_id[codes[kept]]
    pos = sub["_pos"].to_numpy()[kept]
    nth, times = _occurrences(pos * (int(key_id.max(initial=0)) + 1) + turn_key)
    rows = _first_rows(pos, nth == c.max_occurrences)
    key_text = keys.dictionary.to_numpy(zero_copy_only=False)
    over = sub.iloc[kept[rows]][[CID, "index", "role", "_pos"]].set_index(CID)
    over = over.assign(key=key_text[turn_key[rows]].astype(object), times=times[rows])
    short = over["key"].str.slice(0, 60)
    rationale = (
        _where(over)
        + " repeats '"
        + short
        + "' (said "
        + over["times"].astype(str)
        + f" times; at most {c.max_occurrences})"
    )
    _set(out, over, "fail", rationale)
    return out


def _occurrences(group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: how many earlier rows share its ``group`` (cumcount), and the group's size."""
    order = np.argsort(group, kind="stable")
    ordered = group[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    sizes = np.diff(np.append(starts, len(group)))
    nth, times = np.empty(len(group), np.int64), np.empty(len(group), np.int64)
    nth[order] = np.arange(len(group)) - np.repeat(starts, sizes)
    times[order] = np.repeat(sizes, sizes)
    return nth, times


# ----------------------------------------------------------------------------- script


def _count(text: pa.Array, letter_class: str) -> np.ndarray:
    """Letters of ``letter_class`` per string (strip the rest, measure: faster than counting)."""
    others = "[^" + letter_class[1:] + "+"
    kept = pc.utf8_length(pc.replace_substring_regex(text, others, ""))
    return np.asarray(kept.to_numpy(zero_copy_only=False))


def _letter_counts(t: Transcripts, speaker: str) -> pd.DataFrame:
    """Arabic-script and Latin letters per turn; Latin capitalised words (brand names) inside
    a turn that is mostly Arabic script are not counted."""
    key = ("letters", speaker)
    if key not in t._cache:
        text = t.uniques()
        arabic = _count(text, ARABIC_LETTER)
        latin = _count(text, LATIN_LETTER)
        unbranded = pc.replace_substring_regex(text, r"\b[A-Z][A-Za-z0-9&'.\-]*", "")
        plain = _count(unbranded, LATIN_LETTER)
        latin = np.where(arabic > plain, plain, latin)
        sub, codes = t.of(speaker), t.codes(speaker)
        t._cache[key] = pd.DataFrame(
            {CID: sub[CID], "index": sub["index"], "role": sub["role"], "_pos": sub["_pos"],
             "arabic": arabic[codes], "latin": latin[codes]}
        )  # fmt: skip
    frame: pd.DataFrame = t._cache[key]
    return frame


def _letter_totals(t: Transcripts, speaker: str) -> pd.DataFrame:
    """Arabic-script and Latin letters per conversation (over ``ids``; 0 with no turns)."""
    key = ("letter-totals", speaker)
    if key not in t._cache:
        letters = _letter_counts(t, speaker)
        pos, n = letters["_pos"].to_numpy(), len(t.ids)
        t._cache[key] = pd.DataFrame(
            {name: np.bincount(pos, letters[name].to_numpy(), n) for name in ("arabic", "latin")},
            index=t.ids,
        )
    frame: pd.DataFrame = t._cache[key]
    return frame


def check_script(t: Transcripts, c: m.ScriptCheck) -> pd.DataFrame:
    """Pass when letters of ``script`` make at least ``min_share`` of the Arabic-script + Latin
    letters in ``speaker``'s turns; digits, punctuation and brand names do not count."""
    letters = _letter_counts(t, c.speaker)
    totals = _letter_totals(t, c.speaker)
    all_letters = totals["arabic"] + totals["latin"]
    share = totals[c.script] / all_letters.where(all_letters > 0)
    ok = share >= c.min_share
    name = "Arabic script" if c.script == "arabic" else "Latin script"
    rationale = (share * 100).round().astype("Int64").astype(
        str
    ) + f"% of {_who(c.speaker)}letters are {name} (needs {c.min_share:.0%})"
    out = _frame(t, np.where(ok, "pass", "fail"), rationale)
    turn_share = letters[c.script] / (letters["arabic"] + letters["latin"]).replace(0, np.nan)
    worst = _first(letters, (turn_share < c.min_share).to_numpy())
    failed = worst.index.intersection(t.ids[~ok.to_numpy()])
    out.loc[failed, "evidence_turn"] = worst.loc[failed, "index"].astype("Int64")
    _mark(out, share.isna(), "na", f"no {_who(c.speaker)}letters")
    return out


# ----------------------------------------------------------------------------- variables


def _value_text(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float | str):
        text = str(value).strip()
        return text or None
    return None


_GROUPED_DIGITS: Final = r"(\d)[,\x{00A0}\x{202F} ](\d)"


def check_uses_variable(t: Transcripts, c: m.UsesVariableCheck) -> pd.DataFrame:
    """Pass when the variable's value occurs in ``speaker``'s turns (numbers also with digit
    grouping; with ``partial``, any word of 3+ letters); for a Roman value in an Urdu-script
    conversation, its Urdu spelling found by sound counts too. ``na`` when it is missing.

    One vectorised search per distinct value, over the turns of the conversations having it."""
    values = t.variable_values(c.variable, _value_text)
    if values is None:
        return _frame(t, "na", "the conversations' variables are not known")
    out = _frame(t, "na", f"variable {c.variable!r} is missing or empty")
    has = values.dropna()
    if has.empty:
        return out
    out.loc[has.index, "verdict"] = "fail"
    out.loc[has.index, "rationale"] = (
        f"no {_who(c.speaker)}turn says {c.variable} ('" + has.astype(str) + "')"
    )
    kind: TextKind = "norm_cs" if c.case_sensitive else "norm"
    sub, codes = t.of(c.speaker), t.codes(c.speaker)
    text = t.uniques(kind)
    if has.str.fullmatch(r"[\d,.\s]+").any():
        text = pc.replace_substring_regex(text, _GROUPED_DIGITS, r"\1\2")
    value_ids, distinct = pd.factorize(values.to_numpy(object))
    turn_value = value_ids[sub["_pos"].to_numpy()]
    for number, value in enumerate(distinct):
        needles = _needles(str(value), c.partial, c.case_sensitive)
        alternation = "|".join(re.escape(n) for n in needles)
        mask = turn_value == number
        hit, said = _search_some(text, codes[mask], f"(?P<m>{alternation})")
        hits = _first(sub[mask], hit, said)
        _set(out, hits, "pass", _where(hits) + " says '" + hits["match"] + "'")
    _by_sound(t, c, out, has)
    return out


def _needles(value: str, partial: bool, case_sensitive: bool) -> list[str]:
    norm = normalise_one(value, case_sensitive)
    digits = re.sub(r"(\d)[,\u00a0\u202f ](?=\d)", r"\1", norm)
    words = [digits]
    if partial:
        words += [w for w in re.findall(r"[^\W_]+", norm) if sum(ch.isalpha() for ch in w) >= 3]
    return words


def _by_sound(t: Transcripts, c: m.UsesVariableCheck, out: pd.DataFrame, has: pd.Series) -> None:
    """Roman values not found as written, in conversations the speaker holds in Urdu script:
    one RE2 "sounds like" pattern per distinct value, run over those conversations' turns."""
    letters = _letter_totals(t, c.speaker)
    urdu = letters.index[letters["arabic"] > letters["latin"]]
    latin_value = has.str.contains(r"[A-Za-z]", regex=True)
    todo = has.index[(out.loc[has.index, "verdict"] == "fail").to_numpy() & latin_value.to_numpy()]
    todo = todo.intersection(urdu)
    if todo.empty:
        return
    sub, codes = t.of(c.speaker), t.codes(c.speaker)
    text = t.uniques("norm")
    wanted = np.zeros(len(t.ids), dtype=bool)
    wanted[t.ids.get_indexer(todo)] = True
    values = has.reindex(t.ids).to_numpy(object, copy=True)
    values[~wanted] = None
    value_ids, distinct = pd.factorize(values)
    turn_value = value_ids[sub["_pos"].to_numpy()]
    for number, value in enumerate(distinct):
        pattern = sound_pattern(str(value), c.partial)
        if pattern is None:
            continue
        mask = turn_value == number
        hit, said = _search_some(text, codes[mask], pattern)
        hits = _first(sub[mask], hit, said)
        rationale = (
            _where(hits) + " says '" + hits["match"] + f"' ({c.variable} '{value}' in Urdu script)"
        )
        _set(out, hits, "pass", rationale)


# ----------------------------------------------------------------------------- the table

CHECK_TYPES: Final[dict[str, CheckType]] = {
    row.name: row
    for row in (
        CheckType("agent_speaks_first", m.AgentSpeaksFirstCheck, check_agent_speaks_first,
                  "the agent opens the call (or not, with expected: false)"),
        CheckType("contains", m.ContainsCheck, check_contains,
                  "a text (or one of several) occurs in some turn"),
        CheckType("ended_by", m.EndedByCheck, check_ended_by, "who ended the call"),
        CheckType("judge", m.JudgeCheck, None, "the LLM judge decides from title and criterion"),
        CheckType("max_turn_chars", m.MaxTurnCharsCheck, check_max_turn_chars,
                  "no turn longer than max_chars characters"),
        CheckType("no_placeholders", m.NoPlaceholdersCheck, check_no_placeholders,
                  "no {{token}} or {token} left unresolved"),
        CheckType("no_repetition", m.NoRepetitionCheck, check_no_repetition,
                  "no utterance said more than max_occurrences times"),
        CheckType("not_contains", m.NotContainsCheck, check_not_contains,
                  "none of the texts occurs in any turn"),
        CheckType("regex", m.RegexCheck, check_regex,
                  "a regex matches some, every or no turn (RE2, else under a time limit)"),
        CheckType("script", m.ScriptCheck, check_script,
                  "share of Arabic-script (or Latin) letters at least min_share"),
        CheckType("turns", m.TurnsCheck, check_turns, "number of turns within min..max"),
        CheckType("uses_variable", m.UsesVariableCheck, check_uses_variable,
                  "a variable's value (or its Urdu spelling) is spoken"),
    )
}  # fmt: skip


def run_check(t: Transcripts, check: Any) -> pd.DataFrame:
    """Run one deterministic check, then apply its ``only_personas``/``skip_personas``."""
    function = CHECK_TYPES[check.type].function
    if function is None:
        raise ValueError(f"check type {check.type!r} is not deterministic")
    out = function(t, check)
    return persona_filter(t, check, out)


def persona_filter(t: Transcripts, check: Any, out: pd.DataFrame) -> pd.DataFrame:
    """``na`` for conversations whose persona the check skips (or does not list in only)."""
    if not (check.only_personas or check.skip_personas):
        return out
    personas = t.column("persona_label")
    if personas is None:
        return out
    skip = personas.isin(check.skip_personas or [])
    if check.only_personas:
        skip |= ~personas.isin(check.only_personas)
    out.loc[skip, "verdict"] = "na"
    out.loc[skip, "evidence_turn"] = pd.NA
    out.loc[skip, "rationale"] = "the rule does not apply to persona '" + personas[skip] + "'"
    return out
