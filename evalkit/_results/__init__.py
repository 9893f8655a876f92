"""The one face of every result a flow returns (DESIGN.md "Results and calling convention"):
the :class:`Result` base (``headline()``, ``summary``, ``to_dict()``, ``_repr_html_``) and the
JSON-ready values and rows its ``to_dict()`` gives. Private to evalkit.

Apart from :mod:`evalkit._util` because it needs pandas: ``_util`` is imported by the command
line's light start (``evalkit --help``), results only by the packages that make them.
"""

from __future__ import annotations

from ._result import Result
from ._summary import json_records, json_value

__all__ = ["Result", "json_records", "json_value"]
