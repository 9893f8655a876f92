"""How a scorecard's ``regex`` runs: RE2 in linear time, or a backtracking engine on a clock.

A pattern RE2 accepts (pyarrow's regex engine) runs there, vectorised, in time linear in the
text: capturing groups are fine (they are made non-capturing first, since only the whole match
is reported and pyarrow's ``extract_regex`` refuses unnamed groups). A pattern only a
backtracking engine can run (lookarounds, backreferences, atomic groups) runs on the ``regex``
package with a time limit: each transcript gets :data:`TIME_LIMIT_S` seconds of searching
(CPU seconds, as the package's ``timeout`` counts them; its turns' search times added up to
the turn that decides it, each distinct text searched once); a transcript that needs more is
graded ``error`` with the reason. After :data:`GIVE_UP_AFTER` searches ran out of time the
rule stops searching, and the transcripts it has not decided are ``error`` too, so one
catastrophic pattern costs a few seconds, never a stuck nightly job. A pattern neither engine
compiles is refused when the scorecard is validated (:func:`pattern_problem`).
"""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass
from typing import Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import regex

__all__ = [
    "GIVE_UP_AFTER",
    "MATCH_GROUP",
    "TIME_LIMIT_S",
    "BacktrackingSearch",
    "backtracking_search",
    "pattern_problem",
    "re2_form",
    "uncapture",
]

#: CPU seconds of backtracking search one transcript may take, per regex rule.
TIME_LIMIT_S: Final = 0.5
#: Searches that ran out of time after which a regex rule stops searching.
GIVE_UP_AFTER: Final = 3
#: The group holding the whole match in the RE2 form of a pattern.
MATCH_GROUP: Final = "evalkit_match"
_NAMED_GROUP: Final = re.compile(r"\(\?P?<(?![=!])\w+>")


def uncapture(pattern: str) -> str:
    """``pattern`` with every plain capturing group ``(`` made non-capturing ``(?:``.

    Named groups (``(?P<name>``, ``(?<name>``) become non-capturing too: only the whole match
    is read. Escapes (``\\(``, RE2's ``\\Q...\\E``) and character classes (``[(]``, ``[]()]``,
    ``[[:alpha:]]``) are left alone, and so are the other ``(?`` constructs.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            if pattern.startswith("\\Q", i):  # literal text up to \E (RE2)
                end = pattern.find("\\E", i + 2)
                stop = n if end < 0 else end + 2
            else:
                stop = i + 2
            out.append(pattern[i:stop])
            i = stop
            continue
        if in_class:
            if pattern.startswith("[:", i) and (end := pattern.find(":]", i + 2)) >= 0:
                out.append(pattern[i : end + 2])  # a POSIX class such as [:alpha:]
                i = end + 2
                continue
            in_class = ch != "]"
            out.append(ch)
            i += 1
            continue
        if ch == "[":
            in_class = True
            start = i + 1
            if start < n and pattern[start] == "^":
                start += 1
            if start < n and pattern[start] == "]":  # a leading ] is a literal
                start += 1
            out.append(pattern[i:start])
            i = start
            continue
        if ch == "(" and (named := _NAMED_GROUP.match(pattern, i)) is not None:
            out.append("(?:")  # a named group: its name is never read
            i = named.end()
            continue
        out.append("(?:" if ch == "(" and not pattern.startswith("(?", i) else ch)
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=256)
def re2_form(pattern: str, ignore_case: bool) -> str | None:
    """The pattern as RE2 runs it (groups non-capturing, the match in :data:`MATCH_GROUP`),
    or None when RE2 cannot run it (then :func:`backtracking` does, under a time limit)."""
    flags = "(?i)" if ignore_case else ""
    form = f"{flags}(?P<{MATCH_GROUP}>{uncapture(pattern)})"
    try:
        pc.extract_regex(pa.array([""], pa.large_string()), form)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return form


@functools.lru_cache(maxsize=256)
def backtracking(pattern: str, ignore_case: bool) -> regex.Pattern[str]:
    """The pattern compiled by the ``regex`` package (whose searches take a ``timeout``)."""
    return regex.compile(pattern, regex.IGNORECASE if ignore_case else 0)


def pattern_problem(pattern: str) -> str | None:
    """Why a scorecard may not use ``pattern`` (neither engine compiles it), or None."""
    if re2_form(pattern, False) is not None:
        return None
    try:
        backtracking(pattern, False)
    except regex.error as exc:
        return f"invalid regex {pattern!r}: {exc}"
    except (OverflowError, RecursionError, ValueError) as exc:
        return f"invalid regex {pattern!r}: {exc}"
    return None


@dataclass(frozen=True, slots=True)
class BacktrackingSearch:
    """One backtracking search of each distinct text: per text, whether it matched, the match,
    the seconds it took, and whether it ran out of time or was never searched."""

    hit: np.ndarray
    said: np.ndarray
    seconds: np.ndarray
    timed_out: np.ndarray
    skipped: np.ndarray


def backtracking_search(
    texts: pa.Array,
    wanted: np.ndarray,
    compiled: regex.Pattern[str],
    time_limit: float = TIME_LIMIT_S,
    give_up_after: int = GIVE_UP_AFTER,
) -> BacktrackingSearch:
    """Search ``texts[wanted]`` (positions) one by one, each for at most ``time_limit`` s;
    after ``give_up_after`` searches ran out of time the rest are skipped."""
    n = len(texts)
    hit = np.zeros(n, bool)
    said = np.full(n, None, object)
    seconds = np.zeros(n)
    timed_out = np.zeros(n, bool)
    skipped = np.zeros(n, bool)
    positions = np.asarray(wanted, dtype=np.int64)
    out_of_time = 0
    for at, text in zip(positions, texts.take(pa.array(positions)).to_pylist(), strict=True):
        if out_of_time >= give_up_after:
            skipped[at] = True
            continue
        start = time.thread_time()
        try:
            found = compiled.search(text or "", timeout=time_limit)
        except TimeoutError:
            timed_out[at], seconds[at] = True, time_limit
            out_of_time += 1
            continue
        seconds[at] = time.thread_time() - start
        if found is not None:
            hit[at], said[at] = True, found.group(0)
    return BacktrackingSearch(hit, said, seconds, timed_out, skipped)
