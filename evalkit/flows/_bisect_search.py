"""The search behind :func:`bisect`, apart from running anything: halve the set of changes
until the one (or the interacting pair) that carries the regression remains.

``test(subset)`` answers whether the good config with ``subset`` applied regresses (and is
called at most once per subset). With one culprit among ``n`` changes the search tries about
``log2 n + 1`` configurations (a first half that does not regress sends it into the second half
untested, and the change left is checked alone); when that check fails, a thorough search tries
both halves at every level, and when neither half regresses alone, the culprit needs one change
from each half and is searched on both sides with the other half applied (Zeller's delta debugging, "Yesterday, my program
worked", 1999, in its bisection form).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Sequence

__all__ = ["Search", "culprit_search", "find_culprit", "side_of", "worst_case_tests"]

Test = Callable[[tuple[int, ...]], bool]
#: The search as a generator: it yields each subset to try, is sent whether that subset
#: regresses, and returns the culprit. The caller runs the tests (sync or awaited in its own
#: task), so nothing runs behind its back when it stops.
Search = Generator[tuple[int, ...], bool, tuple[int, ...]]


def side_of(difference: float, low: float, high: float, midpoint: float, last: bool) -> bool | None:
    """Whether a configuration sides with the bad run (True) or the good one (False), from
    its difference against the good run and that difference's interval: decided when the
    interval lies wholly on one side of ``midpoint`` (half the bad run's difference), at the
    ``last`` look by the point estimate; None: look again. Bisect asks "closer to bad or to
    good?", a classification with equal error on both sides, not "significantly worse?"."""
    if high < midpoint:
        return True
    if low > midpoint:
        return False
    return difference < midpoint if last else None


def worst_case_tests(n: int) -> int:
    """Configurations tried at most for one culprit among ``n`` changes: the fast path's
    ``log2 n`` and its check, then the thorough search's two halves per level (an interacting
    pair costs more)."""
    return 0 if n <= 1 else 3 * math.ceil(math.log2(n)) + 1


def find_culprit(changes: Sequence[int], test: Test) -> tuple[int, ...]:
    """The smallest set of ``changes`` (indices) found to carry the regression, asking
    ``test`` (see :func:`culprit_search`)."""
    search = culprit_search(changes)
    try:
        subset = next(search)
        while True:
            subset = search.send(test(subset))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def culprit_search(changes: Sequence[int]) -> Search:
    """The search for the smallest set of ``changes`` (indices) that carries the regression.

    The fast path assumes one culprit: a first half that does not regress sends the search
    into the second half untested (the whole set regresses), and the change left is tried
    alone at the end. Only when it does not regress alone does the thorough search run,
    trying both halves at every level and finding an interacting pair. Each subset is asked
    about once (sorted), however often the search needs its answer."""
    cache: dict[tuple[int, ...], bool] = {}

    def regresses(subset: tuple[int, ...]) -> Generator[tuple[int, ...], bool, bool]:
        key = tuple(sorted(subset))
        if key not in cache:
            cache[key] = yield key
        return cache[key]

    def fast(items: tuple[int, ...]) -> Search:
        while len(items) > 1:
            half = len(items) // 2
            items = items[:half] if (yield from regresses(items[:half])) else items[half:]
        return items

    def thorough(items: tuple[int, ...], fixed: tuple[int, ...]) -> Search:
        if len(items) <= 1:
            return items
        half = len(items) // 2
        first, second = items[:half], items[half:]
        if (yield from regresses(fixed + first)):
            return (yield from thorough(first, fixed))
        if (yield from regresses(fixed + second)):
            return (yield from thorough(second, fixed))
        left = yield from thorough(first, fixed + second)  # interacting: one from each side
        right = yield from thorough(second, fixed + left)
        return left + right

    everything = tuple(changes)
    single = yield from fast(everything)
    if len(everything) <= 1 or (yield from regresses(single)):
        return single
    return tuple(sorted((yield from thorough(everything, ()))))
