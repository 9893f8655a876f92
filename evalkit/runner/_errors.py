"""The runner's error, and the errors that stop a whole run."""

from __future__ import annotations

from .._exceptions import EvalkitError
from ..api import (
    AuthenticationError,
    ConfigurationError,
    NotFoundError,
    PaymentRequiredError,
    PermissionDeniedError,
)

__all__ = ["FATAL_ERRORS", "RunAborted"]

#: Errors that mean every conversation would fail the same way: the run stops (nothing recorded
#: for the conversations not yet finished, so a resume after the fix runs them).
FATAL_ERRORS = (
    AuthenticationError,
    PermissionDeniedError,
    PaymentRequiredError,
    NotFoundError,
    ConfigurationError,
)


class RunAborted(EvalkitError):
    """The run stopped early because of an error no retry would fix; finished work was kept."""
