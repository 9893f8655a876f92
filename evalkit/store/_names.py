"""The names of a run folder's fixed files, shared by the modules that read and write them."""

from __future__ import annotations

from typing import Final

__all__ = ["MANIFEST_NAME"]

MANIFEST_NAME: Final = "manifest.json"
