"""The knobs of an assertion, in one options object."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from ..compare import check_levels

__all__ = ["INSUFFICIENT_MODES", "AssertOptions", "InsufficientMode"]

InsufficientMode = Literal["fail", "xfail", "skip"]
#: What "insufficient evidence" may become in pytest.
INSUFFICIENT_MODES: Final = ("fail", "xfail", "skip")


@dataclass(frozen=True)
class AssertOptions:
    """Options of every ``evalkit.testing`` assertion and family.

    ``confidence``: the two-sided confidence of the interval an assertion reads (of the whole
    family, for a family's part), in (0.5, 1); ``insufficient``: what a check that can neither
    pass nor fail becomes (``"fail"``, ``"xfail"``, ``"skip"``; None: the pytest session's
    ``--evalkit-insufficient``, and without the evalkit plugin an
    :class:`~evalkit.testing.InsufficientEvidence` error, never a pass); ``report_dir``: where a
    check that did not pass writes its HTML card (None: the session's ``--evalkit-reports``
    folder, or nowhere without the plugin).
    """

    confidence: float = 0.95
    insufficient: InsufficientMode | None = None
    report_dir: Path | None = None

    def __post_init__(self) -> None:
        check_levels(self.confidence, 0.0, "AssertOptions")
        if self.insufficient is not None and self.insufficient not in INSUFFICIENT_MODES:
            raise ValueError(
                f"AssertOptions.insufficient must be one of {', '.join(INSUFFICIENT_MODES)} "
                f"(or None), got {self.insufficient!r}"
            )
        if self.report_dir is not None:
            object.__setattr__(self, "report_dir", Path(self.report_dir))
