"""The search behind :func:`bisect`, apart from running anything: halve the set of changes
until the one (or the interacting pair) that carries the regression remains.

``test(subset)`` answers whether the good config with ``subset`` applied regresses (and is
called at most once per subset). With one culprit among ``n`` changes the search tries about
``1.5 log2 n`` configurations (the second half only when the first does not regress); when
neither half regresses alone, the culprit needs one change from each half and is searched on
both sides with the other half applied (Zeller's delta debugging, "Yesterday, my program
worked", 1999, in its bisection form).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

__all__ = ["find_culprit", "worst_case_tests"]

Test = Callable[[tuple[int, ...]], bool]


def worst_case_tests(n: int) -> int:
    """Configurations tried at most for one culprit among ``n`` changes (both halves at every
    level); an interacting pair costs more, and is bounded by the budget as it goes."""
    return 0 if n <= 1 else 2 * math.ceil(math.log2(n))


def find_culprit(changes: Sequence[int], test: Test) -> tuple[int, ...]:
    """The smallest set of ``changes`` (indices) found to carry the regression."""
    cache: dict[tuple[int, ...], bool] = {}

    def regresses(subset: tuple[int, ...]) -> bool:
        key = tuple(sorted(subset))
        if key not in cache:
            cache[key] = test(key)
        return cache[key]

    def search(items: tuple[int, ...], fixed: tuple[int, ...]) -> tuple[int, ...]:
        if len(items) <= 1:
            return items
        half = len(items) // 2
        first, second = items[:half], items[half:]
        if regresses(fixed + first):
            return search(first, fixed)
        if regresses(fixed + second):
            return search(second, fixed)
        left = search(first, fixed + second)  # interacting: one from each side
        right = search(second, fixed + left)
        return left + right

    return tuple(sorted(search(tuple(changes), ())))
