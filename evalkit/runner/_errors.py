"""The runner's error, and the errors that stop a whole run."""

from __future__ import annotations

from .._exceptions import EvalkitError
from ..api import (
    AuthenticationError,
    ConfigurationError,
    MissingVariables,
    NotFoundError,
    PaymentRequiredError,
    PermissionDeniedError,
)

__all__ = ["FATAL_ERRORS", "MissingVariablesError", "RunAborted", "ServiceUnreachable"]

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


class ServiceUnreachable(RunAborted):
    """The run stopped because the service could not be reached (the runner's circuit breaker,
    ``RunOptions.stop_after_unreachable``); finished conversations were kept, the ones that
    could not connect were not recorded, so resuming with the same run id runs them.

    ``address`` is the service's base URL; ``conversations`` how many could not connect in a
    row. The cause is the last connection error.
    """

    def __init__(self, address: str, conversations: int) -> None:
        super().__init__(
            f"run stopped after {conversations} conversation(s) in a row could not reach the "
            f"service at {address} (those were not recorded; every recorded conversation is "
            "kept; resume with the same run id once it answers again, from any host or port)"
        )
        self.address = address
        self.conversations = conversations


class MissingVariablesError(RunAborted):
    """A run refused before its first conversation: a ``{{token}}`` of the prompt it would use
    has no value in some variables records, so the agent would say it out loud.

    ``target`` is the run's target label; ``missing`` a :class:`~evalkit.api.MissingVariables`
    (``names``: the tokens; ``rows``: token -> 1-based record numbers; ``records``: how many).
    """

    def __init__(self, target: str, missing: MissingVariables) -> None:
        super().__init__(
            f"run refused before any conversation: the prompt of {target} uses tokens without a "
            f"value: {missing.describe()}. Add them to the variables (or the grid's records), "
            "or pass allow_missing_variables=True (RunOptions; `evalkit run --allow-missing-variables`) "
            "to run anyway"
        )
        self.target = target
        self.missing = missing

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.target, self.missing))
