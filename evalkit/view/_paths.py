"""The viewer's addresses, the same in the live viewer and in a static copy: plain relative
``href``s between files, so a bundle opens from disk and the live pages can sit under a token.

    index.html
    runs/<run>/index.html            a run's conversations
    runs/<run>/c/<conversation>.html a transcript (POST .../<conversation>/label: a label)
    runs/<run>/audio/<conversation>/<turn>.mp3   a played agent turn (live only)
    compare/<baseline>/<candidate>.html
    history/<assistant>.html
    changes/<run>.html               what changed since its series' last-known-good run
    static/evalkit.css (the one stylesheet), viewer.js, nastaliq.ttf
"""

from __future__ import annotations

from urllib.parse import quote

__all__ = [
    "changes_path",
    "compare_path",
    "conversation_path",
    "file_name",
    "history_path",
    "run_path",
    "seg",
]


def seg(value: str) -> str:
    """One path segment of an href (everything but unreserved characters escaped)."""
    return quote(str(value), safe="")


def file_name(value: str) -> str:
    """The file name a static copy uses for an id (what a browser asks for after decoding
    :func:`seg`); ids with path separators never reach here (the store refuses them)."""
    return str(value)


def run_path(run_id: str) -> str:
    return f"runs/{seg(run_id)}/index.html"


def conversation_path(run_id: str, conversation_id: str) -> str:
    return f"runs/{seg(run_id)}/c/{seg(conversation_id)}.html"


def compare_path(baseline: str, candidate: str) -> str:
    return f"compare/{seg(baseline)}/{seg(candidate)}.html"


def history_path(assistant_id: str) -> str:
    return f"history/{seg(assistant_id)}.html"


def changes_path(run_id: str) -> str:
    return f"changes/{seg(run_id)}.html"
