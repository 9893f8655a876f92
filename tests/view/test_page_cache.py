"""Issue 33, item 15: the viewer keeps rendered pages, never more than its caps, never a page
older than the store (a new run, a new label, new grades show on the next request), and
answers a burst of 200 concurrent requests on a real uvicorn server, every one whole."""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import shutil
import threading
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from evalkit.store import load_run
from evalkit.store._manifest import MANIFEST_NAME, read_manifest, write_manifest
from evalkit.view import ViewerOptions, ViewerServer, build_app
from evalkit.view._app import ViewerApp
from evalkit.view._cache import PageCache
from evalkit.view._site import RUNS_HELD, Site


def test_the_cache_never_holds_more_than_its_caps_and_drops_the_least_recent() -> None:
    rng = random.Random(3)
    cache = PageCache(max_bytes=10_000, max_entries=12)
    for i in range(2_000):
        cache.put(i, b"x" * rng.randrange(0, 3_000))
        if i % 7 == 0 and i >= 3:
            cache.get(i - 3)  # recently used: kept ahead of older pages
        assert cache.size <= 10_000
        assert len(cache) <= 12
        assert cache.size == sum(len(cache.get(k) or b"") for k in list(cache._pages))
    cache.put("big", b"x" * 10_001)
    assert cache.get("big") is None  # larger than the whole cache: not kept
    small = PageCache(max_bytes=300, max_entries=3)
    for key in "abc":
        small.put(key, b"1" * 100)
    small.get("a")
    small.put("d", b"1" * 100)
    assert [k for k in "abcd" if small.get(k) is not None] == ["a", "c", "d"]


def test_the_runs_held_between_requests_are_bounded(store: Path) -> None:
    copies = _copies(store, RUNS_HELD + 4)
    site = Site(store)
    for run_id in copies:
        site.run(run_id)
        assert len(site._runs) <= RUNS_HELD
    assert list(site._runs) == copies[-RUNS_HELD:]


def _copies(store: Path, n: int, source: str = "prod") -> list[str]:
    """``n`` copies of a run (own run id and start time, an hour apart)."""
    made = []
    for i in range(n):
        run_id = f"{source}-{i:03d}"
        shutil.copytree(store / source, store / run_id)
        manifest = read_manifest(store / run_id / MANIFEST_NAME)
        manifest["run_id"] = run_id
        manifest["created_at"] = f"2026-02-{1 + i // 24:02d}T{i % 24:02d}:00:00+00:00"
        write_manifest(store / run_id / MANIFEST_NAME, manifest)
        made.append(run_id)
    return made


def test_a_new_run_a_label_and_new_grades_show_on_the_next_request(store: Path) -> None:
    app = build_app(ViewerOptions(store=store, port=0))
    viewer: ViewerApp = app.state.viewer
    cid = str(load_run("prod", store).conversations["conversation_id"].iloc[0])
    with TestClient(app, base_url="http://127.0.0.1") as client:
        first = client.get("/index.html").text
        assert client.get("/index.html").text == first
        assert len(viewer.cache) == 1  # the second answer came from the cache
        assert "prod-000" not in first

        _copies(store, 1)  # a new run
        assert 'href="runs/prod-000/index.html"' in client.get("/index.html").text

        manifest = read_manifest(store / "prod" / MANIFEST_NAME)  # new grades' summary
        (rubric,) = manifest["grades"]
        manifest["grades"][rubric]["mean_score"] = 12.34
        write_manifest(store / "prod" / MANIFEST_NAME, manifest)
        assert "12.3" in client.get("/index.html").text

        page = f"/runs/prod/c/{cid}.html"
        before = client.get(page).text
        assert client.get(page).text == before
        token = re.search(r'name="form_token" value="([^"]+)"', before)
        rule = re.search(r'name="rule_id" value="([^"]+)"', before)
        assert token is not None
        assert rule is not None
        posted = client.post(
            f"/runs/prod/c/{cid}/label",
            data={
                "form_token": token.group(1),
                "rule_id": rule.group(1),
                "label": "fail",
                "note": "a note only this label has",
                "labelled_by": "tester",
            },
            follow_redirects=False,
        )
        assert posted.status_code == 303, posted.text
        assert "a note only this label has" in client.get(page).text
        assert "a note only this label has" not in before
        held = len(viewer.cache)
        client.get("/index.html")  # pages over the whole store read no labels: still cached
        assert len(viewer.cache) == held


async def _burst(base: str, paths: list[str]) -> list[tuple[str, int, int, bytes]]:
    limits = httpx.Limits(max_connections=len(paths))
    async with httpx.AsyncClient(limits=limits, timeout=600) as client:
        gate = asyncio.Event()

        async def one(path: str) -> tuple[str, int, int, bytes]:
            await gate.wait()
            response = await client.get(base + path)
            return (
                path,
                response.status_code,
                int(response.headers["content-length"]),
                (response.content),
            )

        tasks = [asyncio.create_task(one(p)) for p in paths]
        await asyncio.sleep(0)
        gate.set()
        return await asyncio.gather(*tasks)


@pytest.mark.slow
def test_200_concurrent_requests_over_many_runs_all_answer_whole(store: Path) -> None:
    runs = _copies(store, 40) + _copies(store, 40, "draft")
    cids = [str(c) for c in load_run("prod", store).conversations["conversation_id"]]
    rng = random.Random(5)
    pages = ["index.html"]
    pages += [f"runs/{r}/index.html" for r in rng.sample(runs, 6)]
    pages += [f"runs/{r}/c/{rng.choice(cids)}.html" for r in rng.sample(runs, 12)]
    pages += ["compare/prod-001/draft-001.html"]
    paths = [rng.choice(pages) for _ in range(200)]
    with ViewerServer(ViewerOptions(store=store, port=0)) as viewer:
        for _round in range(2):  # cold, then from the cache
            answers = asyncio.run(_burst(viewer.base, paths))
            assert len(answers) == 200
            for path, status, length, body in answers:
                assert status == 200, (path, status, body[:300])
                assert len(body) == length
                assert body.rstrip().endswith(b"</html>"), path


def test_a_store_stamp_is_shared_only_by_requests_that_arrived_before_it_began(
    store: Path,
) -> None:
    viewer = ViewerApp(ViewerOptions(store=store, port=0))
    version = {"now": 0}
    calls: list[int] = []
    began, release = threading.Event(), threading.Event()

    def stamp(runs: object = None) -> str:
        seen = version["now"]
        calls.append(seen)
        began.set()
        release.wait(10)
        return f"v{seen}"

    viewer.site.stamp = stamp  # type: ignore[method-assign]

    async def scenario() -> tuple[str | None, list[str | None]]:
        first = asyncio.create_task(viewer.stamp(None))
        await asyncio.to_thread(began.wait, 10)  # the first stamping has begun
        version["now"] = 1  # the store changes while it runs
        later = [asyncio.create_task(viewer.stamp(None)) for _ in range(5)]
        await asyncio.sleep(0)  # they arrive while the first is running
        release.set()
        return await first, list(await asyncio.gather(*later))

    first, later = asyncio.run(scenario())
    assert first == "v0"
    assert later == ["v1"] * 5  # none arriving after the change gets the stamp from before it
    assert calls == [0, 1]  # and the five shared one stamping


def test_a_request_that_goes_away_leaves_the_render_to_the_others(store: Path) -> None:
    viewer = ViewerApp(ViewerOptions(store=store, port=0))
    began, release = threading.Event(), threading.Event()
    renders: list[int] = []

    def render() -> str:
        renders.append(1)
        began.set()
        release.wait(10)
        return "<html>page</html>"

    async def scenario() -> tuple[bool, bytes, bytes]:
        first = asyncio.create_task(viewer.page("key", render))
        await asyncio.to_thread(began.wait, 10)
        second = asyncio.create_task(viewer.page("key", render))
        await asyncio.sleep(0)
        first.cancel()  # its browser went away
        release.set()
        body = await second
        with contextlib.suppress(asyncio.CancelledError):
            await first
        return first.cancelled(), body, await viewer.page("key", render)

    cancelled, body, again = asyncio.run(scenario())
    assert cancelled
    assert body == again == b"<html>page</html>"
    assert renders == [1]  # rendered once, for the one who stayed, then from the cache
