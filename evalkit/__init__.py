"""evalkit: simulated-conversation evaluation for real-time voice assistants."""

from ._version import __version__ as __version__
from .api import *  # noqa: F403
from .api import __all__ as _api_all

__all__ = sorted(["__version__", *_api_all])
