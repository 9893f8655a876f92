"""Grading: scorecards, deterministic checks, the LLM judge, and stored grades."""

from __future__ import annotations

__all__: list[str] = []
