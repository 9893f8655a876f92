"""Driving Debian's chromium (the ``chromium`` fixture) with Playwright for the viewer tests: a page whose every request
is recorded, and any request leaving the allowed addresses is aborted (and reported)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Route

ARTIFACTS = Path(os.environ.get("EVALKIT_TEST_ARTIFACTS", "test-artifacts"))
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--autoplay-policy=no-user-gesture-required",
]


@contextmanager
def launched(chromium: str) -> Iterator[Browser]:
    """Chromium (the path the ``chromium`` fixture gives) under Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Watched:
    """A page and every URL it asked for; ``outside`` holds those not under ``allowed``."""

    page: Page
    allowed: tuple[str, ...]
    requests: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)


def watched_page(browser: Browser, *allowed: str, width: int = 1280) -> Watched:
    """A fresh page; requests not starting with one of ``allowed`` (or ``data:``) are aborted
    and listed in ``outside``."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    watched = Watched(page, (*allowed, "data:"))

    def handle(route: Route) -> None:
        url = route.request.url
        watched.requests.append(url)
        if url.startswith(watched.allowed):
            route.continue_()
        else:
            watched.outside.append(url)
            route.abort()

    context.route("**/*", handle)
    return watched


def screenshot(page: Page, name: str, *, full_page: bool = False) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=full_page)
    return path
