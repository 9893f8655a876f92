"""Errors of refine builds: the family root and its two cases a caller acts on."""

from __future__ import annotations

from .._exceptions import EvalkitError

__all__ = ["BuildInFlightError", "RefineError", "RefineTimeout"]


class RefineError(EvalkitError):
    """A refine build cannot go ahead (not a built assistant, unknown assistant, ...)."""


class BuildInFlightError(RefineError):
    """A build evalkit started for the assistant is still in flight (the service would accept a
    second one and fail it silently)."""


class RefineTimeout(RefineError):
    """The draft version did not move within the timeout; the build stays recorded as in flight.

    ``build_id`` names it; the next call for the assistant finds it (refuses, or waits for it).
    """

    def __init__(self, message: str, build_id: str) -> None:
        super().__init__(message)
        self.build_id = build_id
