"""Screenshots of the report and the viewer, taken by Debian's chromium (driven by Playwright,
as the browser tests drive it) over the demo's output: nothing pasted by hand.

    python docs/_build/screenshots.py DEMO_DIR OUT_DIR

``DEMO_DIR`` is what ``evalkit demo --output-dir DEMO_DIR`` wrote (``report.html`` and
``runs/``); the PNGs go to ``OUT_DIR``. A hand label is added to a copy of the draft run so the
transcript shows one. Every request the pages make must stay on this machine.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: The pictures, by file name: what each shows (its alt text).
SHOTS = {
    "report.png": "The top of the demo's report: the verdict card with its interval, what was "
    "left out, and the rules that moved",
    "viewer-runs.png": "evalkit view's runs page: each run with its assistant, state, counts, "
    "score, latency and a link comparing it with the run before",
    "viewer-rules.png": "A conversation in evalkit view: each rule's verdict, grader, "
    "rationale and evidence turn, with a hand label marked and the controls to label the rest",
    "viewer-transcript.png": "The same conversation's transcript in evalkit view: Urdu in "
    "Nastaliq, right to left, a play control on each agent turn",
}
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise RuntimeError(
            "Debian's chromium is needed for the screenshots (apt-get install chromium)"
        )
    return found


@contextmanager
def _page(allowed: tuple[str, ...]) -> Iterator[Any]:
    """A Chromium page that refuses (and reports) any request outside ``allowed``."""
    from playwright.sync_api import sync_playwright

    outside: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 860})

            def route(r: Any) -> None:
                if r.request.url.startswith((*allowed, "data:", "blob:")):
                    r.continue_()
                else:
                    outside.append(r.request.url)
                    r.abort()

            context.route("**/*", route)
            yield context.new_page()
        finally:
            browser.close()
    if outside:
        raise RuntimeError(f"a page asked for addresses off this machine: {outside}")


def _labelled_store(runs: Path, work: Path) -> tuple[Path, str]:
    """A copy of the demo's store with one hand label on a prod conversation (its id)."""
    from evalkit.store import Label, load_run

    store = work / "runs"
    shutil.copytree(runs, store)
    prod = load_run("prod", store=store)
    done = prod.conversations[prod.conversations["persona_label"] == "cooperative"]
    first = str(done.sort_values("conversation_id")["conversation_id"].iloc[0])
    prod.add_labels(
        [
            Label(
                first,
                "polite-close",
                "pass",
                note="it did say Allah hafiz, in Urdu script",
                labelled_by="analyst-1",
            )
        ]
    )
    return store, first


def take(demo_dir: Path, out_dir: Path) -> dict[str, Path]:
    """Take every screenshot of :data:`SHOTS` into ``out_dir``; their paths by name."""
    from evalkit.view import ViewerOptions, ViewerServer

    out_dir.mkdir(parents=True, exist_ok=True)
    report = (demo_dir / "report.html").resolve()
    with _page((report.as_uri(),)) as page:
        page.goto(report.as_uri())
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(out_dir / "report.png"))
    with tempfile.TemporaryDirectory(prefix="evalkit-shots-") as work:
        store, labelled = _labelled_store(demo_dir / "runs", Path(work))
        viewer = ViewerServer(ViewerOptions(store=store, port=0))
        with viewer, _page((viewer.base,)) as page:
            page.goto(viewer.url)
            page.wait_for_load_state("networkidle")
            page.screenshot(path=str(out_dir / "viewer-runs.png"))
            page.goto(f"{viewer.base}runs/prod/c/{labelled}.html")
            page.wait_for_load_state("networkidle")
            page.screenshot(path=str(out_dir / "viewer-rules.png"))
            page.locator("h2", has_text="Transcript").scroll_into_view_if_needed()
            page.evaluate("window.scrollBy(0, -16)")
            page.screenshot(path=str(out_dir / "viewer-transcript.png"))
    return {name: out_dir / name for name in SHOTS}


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    for path in take(Path(sys.argv[1]), Path(sys.argv[2])).values():
        sys.stdout.write(f"{path}\n")
