"""evalkit's one exception root, and the whole tree.

Every error evalkit raises on purpose is an :class:`EvalkitError`; catch it to catch them all.
Each family lives beside the code that raises it and is exported from that package::

    EvalkitError                                    evalkit
    ├── ConfigurationError                          evalkit.api   no base URL, a malformed key, ...
    │   ├── JudgeNotConfigured                      evalkit.grading  no judge model or endpoint
    │   ├── ProposerError                           evalkit.tuning  no proposer model or endpoint
    │   └── GeneratorError                          evalkit.personas  no persona generator model
    ├── InvalidRequestError (ValueError)            evalkit.api   a body breaks the spec's limits
    │   └── ScorecardError                          evalkit.grading  a scorecard with problems
    ├── ApiConnectionError                          evalkit.api   the service could not be reached
    │   └── ApiTimeoutError
    ├── UnexpectedResponseError                     evalkit.api   a success body of the wrong shape
    ├── ApiError                                    evalkit.api   the service's error envelope
    │   ├── BadRequestError                             400
    │   ├── AuthenticationError                         401
    │   ├── PaymentRequiredError                        402
    │   ├── PermissionDeniedError                       403
    │   ├── NotFoundError                               404
    │   ├── RateLimitError                              429, or the synthesis rate-limit message
    │   ├── ServiceUnavailableError                     503
    │   └── ServerError                                 other 5xx
    ├── StreamError                                 evalkit.api   a simulate stream broke
    │   └── StreamDropped                               no terminal event; carries the turns
    │       └── StreamDeadlineExceeded                  the total deadline passed first
    ├── PersonaError (ValueError)                   evalkit.grid  a persona file or value is wrong
    ├── LatencyUnavailableError (ValueError)        evalkit.compare  a run without turn timing
    ├── PricingError (ValueError)                   evalkit.runner  a price table that cannot be used
    ├── TargetError                                 evalkit.targets  prod without a snapshot, ...
    ├── RunAborted                                  evalkit.runner  an error no retry would fix
    │   ├── ServiceUnreachable                          the service vanished mid-run
    │   └── MissingVariablesError                       a prompt {{token}} no record fills
    ├── StoreError                                  evalkit.store  every message names the path
    │   ├── RunNotFoundError (FileNotFoundError)
    │   ├── RunExistsError (FileExistsError)
    │   ├── IdentityMismatchError                       resume with another definition
    │   ├── RunLockedError                              another writer has the run open
    │   ├── UnsupportedStoreError                       a store URL whose backend is missing
    │   ├── CorruptRunError                             unreadable manifest, journal or table
    │   └── StoreUnreachableError                       the store's backend could not be reached
    ├── GradingError                                evalkit.grading  e.g. judged rules, no judge
    ├── TuneError                                   evalkit.tuning  an arm could not run or grade
    ├── PromoteError                                evalkit.tuning  no winner, or the draft moved
    ├── VariantsFileError (ValueError)              evalkit.tuning  a variants entry is wrong
    ├── RefineError                                 evalkit.refine  builds that cannot go ahead
    │   ├── BuildInFlightError                          a recorded build is still in flight
    │   └── RefineTimeout                               the draft never moved; build id kept
    ├── Regression                                  evalkit.flows  a comparison asked to fail did
    ├── BisectError                                 evalkit.flows  runs that cannot be bisected
    ├── MissingSnapshotError                        evalkit.flows  no config snapshot to diff
    ├── ReportError                                 evalkit.report  a notebook report cannot be made
    ├── LlmBackendError                             evalkit.emulator  the emulator's LLM backend
    ├── CheckFailed (AssertionError)                evalkit.testing  the evidence says it got worse
    ├── InsufficientEvidence                        evalkit.testing  a check neither passed nor failed
    └── SessionError                                evalkit.testing  a test session that cannot run

No exception's text carries a secret: messages go through the one redactor
(:func:`evalkit._util.redact_text`). Every error survives a pickle round trip (errors cross
process boundaries), whatever its own ``__init__`` takes.
"""

from __future__ import annotations

from typing import Any

from ._util import redact_text

__all__ = ["EvalkitError"]


class EvalkitError(Exception):
    """Base class of every error evalkit raises on purpose."""

    def __init__(self, message: str) -> None:
        super().__init__(redact_text(message))

    def __reduce__(self) -> tuple[Any, ...]:
        # rebuilt without calling __init__, whose signature differs per subclass
        return (_rebuild_error, (type(self), self.args, dict(self.__dict__)))


def _rebuild_error(
    cls: type[EvalkitError], args: tuple[Any, ...], state: dict[str, Any]
) -> EvalkitError:
    """Unpickle an :class:`EvalkitError` subclass from its args and attributes."""
    exc = cls.__new__(cls)
    exc.args = args
    exc.__dict__.update(state)
    return exc


EvalkitError.__module__ = "evalkit"
