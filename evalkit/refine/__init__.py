"""Refine builds: preflight, submit, wait, snapshot and diff; the guarded refine loop."""

from __future__ import annotations

__all__: list[str] = []
