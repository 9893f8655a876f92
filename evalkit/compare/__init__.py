"""Draft vs prod (or any A vs B) comparisons from grades, with honest verdicts."""

from __future__ import annotations

__all__: list[str] = []
