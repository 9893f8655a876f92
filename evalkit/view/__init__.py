"""The web viewer: every run of a store in one local page (``evalkit view``), or the same
pages as a static site (``evalkit view bundle``).

    with ViewerServer(ViewerOptions(store="runs", port=0)) as viewer:
        print(viewer.url)          # http://127.0.0.1:PORT/index.html
    write_bundle("runs", "site/")  # site/index.html opens from disk

Pages: the runs (from the store's catalog), a run's conversations with filters, a transcript
with its verdicts, rationales, hand-label forms and a play control per agent turn, two runs
compared, and an assistant's history. Starlette + uvicorn, Jinja2 templates shipped with the
package; nothing is loaded from another address.
"""

from __future__ import annotations

from .._util import publish
from ._app import build_app
from ._bundle import BundleResult, write_bundle
from ._options import ViewerOptions
from ._server import ViewerServer, serve_forever

__all__ = [
    "BundleResult",
    "ViewerOptions",
    "ViewerServer",
    "build_app",
    "serve_forever",
    "write_bundle",
]

publish(globals())
