"""The viewer's history page says which variance each series' nightly alarm used."""

from __future__ import annotations

from pathlib import Path

from evalkit.view._compare_pages import history_page
from evalkit.view._pages import Pages
from evalkit.view._site import Site

from ..stores.test_store_urls import _synthetic_store


def test_the_history_page_names_the_variance_of_the_newest_alarm(tmp_path: Path) -> None:
    _synthetic_store(tmp_path, [0, 0, 0, 0, 0, 25])
    page = history_page(Pages(Site(tmp_path), live=False), "asst_1")
    assert "Nightly alarm of the newest run: within night + between nights (SD " in page
    assert "points from 5 nights)." in page
    assert "<th>alarm_variance</th>" in page
    assert "<th>alarm_z</th>" in page
    short = tmp_path / "short"
    _synthetic_store(short, [0, 0])
    page = history_page(Pages(Site(short), live=False), "asst_1")
    assert (
        "Nightly alarm of the newest run: within night only (short series: 1 night before" in page
    )
