"""The Nastaliq font ships with evalkit: plots, reports, the viewer and the bundle use the
package's file, never a system font or matplotlib's font cache (issue 33, item 1)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from evalkit.data import nastaliq_font_path
from evalkit.report import _fonts

#: Runs in a fresh interpreter with a fresh MPLCONFIGDIR (matplotlib builds a new font cache)
#: and every system Nastaliq face removed from that cache: as on a machine where the font was
#: installed after matplotlib first ran, or not at all.
SCRIPT = textwrap.dedent(
    r"""
    import sys, tempfile, warnings
    from pathlib import Path

    import httpx
    from matplotlib import font_manager

    manager = font_manager.fontManager
    manager.ttflist = [e for e in manager.ttflist if "Nastaliq" not in e.name]
    assert not any("Nastaliq" in e.name for e in manager.ttflist)

    from evalkit.data import nastaliq_font_path
    from evalkit.report import _fonts, plots, report_page
    from evalkit.view import ViewerOptions, ViewerServer
    from tests.report.figures import row_labels
    from tests.report.test_plots import TITLES, assert_drawn_in_urdu_font
    from tests.simulate import SyntheticTruth, synthetic_grades
    from evalkit.compare import compare_grades

    font = _fonts.find_arabic_font()
    assert font is not None and font.path == nastaliq_font_path(), font

    truth = SyntheticTruth.demo(seed=6)
    sides = []
    for seed, t in ((1, truth), (2, truth.shifted(-10))):
        grades = synthetic_grades(t, repeats=3, seed=seed)
        grades["title"] = grades["rule_id"].map(TITLES).fillna(grades["title"])
        sides.append(grades)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph is a warning in matplotlib
        fig = plots.rule_forest(compare_grades(*sides))
        lines = [t for row in row_labels(fig.axes[0]) for t in row]
        urdu = [t for t in lines if _fonts.has_arabic(t.get_text())]
        assert len(urdu) == 3, [t.get_text() for t in lines]  # a mixed line, two all-Urdu
        for line in urdu:
            assert_drawn_in_urdu_font(line, font)
        plots.figure_to_png(fig)

    page = report_page("t", "<p lang='ur'>اللہ حافظ</p>")
    assert page.count("@font-face") == 1, page[:300]

    with tempfile.TemporaryDirectory() as store, ViewerServer(ViewerOptions(store=store, port=0)) as viewer:
        got = httpx.get(viewer.base + "static/nastaliq.ttf")
        assert got.status_code == 200, got.status_code
        assert got.content == nastaliq_font_path().read_bytes()
    print("ok")
    """
)


def test_plots_reports_and_the_viewer_use_the_shipped_font_without_any_cache(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "MPLCONFIGDIR": str(tmp_path / "mpl"), "PYTHONPATH": os.getcwd()}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")


def test_the_font_ships_with_its_licence() -> None:
    path = nastaliq_font_path()
    assert path.read_bytes()[:4] == b"\x00\x01\x00\x00"  # a TrueType file, not an LFS pointer
    assert 100_000 < path.stat().st_size < 1_500_000
    licence = (path.parent / "OFL.txt").read_text(encoding="utf-8")
    assert "SIL OPEN FONT LICENSE Version 1.1" in licence
    assert "Noto Nastaliq Urdu" in licence


def test_a_font_that_cannot_load_is_a_warning_not_a_debug_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "broken.ttf"
    broken.write_bytes(b"not a font")
    monkeypatch.setattr(_fonts, "nastaliq_font_path", lambda: broken)
    _fonts._unloadable_once.cache_clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _fonts.bundled_nastaliq() is None
        assert _fonts.bundled_nastaliq() is None  # said once per process
    _fonts._unloadable_once.cache_clear()
    said = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(said) == 1
    assert "cannot be loaded" in said[0]
    assert str(broken) in said[0]
