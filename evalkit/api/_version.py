"""The User-Agent evalkit sends."""

from .._version import __version__

USER_AGENT = f"evalkit/{__version__}"
