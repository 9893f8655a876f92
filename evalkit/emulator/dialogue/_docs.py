"""The documentation's rule tables, rendered from the tables themselves (a test checks that
the package docstring holds exactly these)."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

from ._acts import ACTS
from ._features import FEATURES
from ._noise import NoiseModel
from ._traits import TRAITS

__all__ = ["act_table", "feature_table", "trait_table"]


def _readable(pattern: str) -> str:
    """A keyword regex as a reader would write it (``hurr(?:y|ied)`` -> ``hurry``)."""
    text = re.sub(r"\(\?<!?[^)]*\)", "", pattern)
    text = re.sub(r"\(\?:[^)]*\)\?", "", text)
    text = re.sub(r"\(\?:([^|)]*)\|[^)]*\)\??", r"\1", text)
    text = re.sub(r"\[\\s-\]\*?|\[\\s/-\]\*|\\s", " ", text)
    text = re.sub(r"\\d\+", "N", text)
    text = re.sub(r"\\w\*|[?*+]|\[[^\]]*\]", "", text)
    return text.replace("\\", "")


def _table(headers: Sequence[str], widths: Sequence[int], rows: Sequence[Sequence[str]]) -> str:
    rule = "  ".join("=" * w for w in widths)
    lines = [rule, "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines.append(rule)
    for row in rows:
        cells = [textwrap.wrap(c, w) or [""] for c, w in zip(row, widths, strict=True)]
        for i in range(max(map(len, cells))):
            parts = [
                (c[i] if i < len(c) else "").ljust(w) for c, w in zip(cells, widths, strict=True)
            ]
            lines.append("  ".join(parts).rstrip())
    lines.append(rule)
    return "\n".join(lines)


def trait_table() -> str:
    """Persona traits: name, priority, keywords, caller behaviour, what each overrides."""
    rows = [
        (
            t.name,
            str(t.priority),
            ", ".join(_readable(k) for k in t.keywords),
            t.behaviour + (f" (overrides {', '.join(sorted(t.excludes))})" if t.excludes else ""),
        )
        for t in TRAITS
    ]
    return _table(("trait", "prio", "keywords", "caller behaviour"), (12, 4, 34, 34), rows)


def feature_table(noise: NoiseModel | None = None) -> str:
    """Prompt features: keywords, effect, and how often it happens with and without asking."""
    noise = noise or NoiseModel()
    rows = [
        (
            f.name,
            ", ".join(_readable(k) for k in f.keywords),
            f.effect,
            f"{f.rate(noise, True):.0%} / {f.rate(noise, False):.0%}",
        )
        for f in FEATURES
    ]
    return _table(("feature", "keywords", "effect", "asked / not"), (10, 30, 30, 11), rows)


def act_table() -> str:
    """Acts: name, who performs it, meaning."""
    rows = [(a.name, a.role, a.meaning) for a in ACTS]
    return _table(("act", "by", "meaning"), (23, 6, 50), rows)
