"""Arabic-script detection and the plot font finder."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.data import LATIN_FAMILY, latin_font_path, nastaliq_font_path
from evalkit.report import _fonts

URDU = "السلام علیکم، کل صبح دس بجے آپ کی اپائنٹمنٹ ہے۔"


@pytest.mark.parametrize(
    ("text", "share"),
    [(URDU, 1.0), ("Ji, theek hai", 0.0), ("ok ٹھیک", 4 / 6), ("123 !?", 0.0), ("", 0.0)],
    ids=["urdu", "roman-urdu", "mixed", "no-letters", "empty"],
)
def test_arabic_share_counts_letters(text: str, share: float) -> None:
    assert _fonts.arabic_share(text) == pytest.approx(share)


def test_is_arabic_script_uses_the_threshold() -> None:
    mixed = "Please confirm kal 5 baje ٹھیک"
    assert _fonts.is_arabic_script(URDU)
    assert not _fonts.is_arabic_script(mixed)
    assert _fonts.is_arabic_script(mixed, threshold=0.1)
    assert not _fonts.is_arabic_script("12:00", threshold=0.0)


def test_plot_label_falls_back_only_without_a_font(tmp_path: object) -> None:
    font = _fonts.ArabicFont("Noto Nastaliq Urdu", tmp_path)  # type: ignore[arg-type]
    assert _fonts.plot_label("عائشہ", "record 1", None) == "record 1"
    assert _fonts.plot_label("عائشہ", "record 1", font) == "عائشہ"
    assert _fonts.plot_label("Ayesha", "record 1", None) == "Ayesha"


def test_finder_takes_the_shipped_nastaliq_file(urdu_font: _fonts.ArabicFont) -> None:
    """Noto Nastaliq Urdu is first in the preference and ships with evalkit: the finder takes
    the package's file, in its regular weight, and that file holds the Urdu letters."""
    from matplotlib.ft2font import FT2Font

    assert urdu_font.family == "Noto Nastaliq Urdu"
    assert urdu_font.path == nastaliq_font_path()
    assert "bold" not in urdu_font.path.name.lower()
    charmap = FT2Font(str(urdu_font.path)).get_charmap()
    assert all(ord(ch) in charmap for ch in "ےہںٹڈڑھگکپچ")


def test_finder_refuses_families_without_urdu_letters() -> None:
    assert _fonts.find_arabic_font(("No Such Font Family",)) is None
    # DejaVu Sans has Arabic but lacks some Urdu letters (ہ, ے), so it is never taken for Urdu
    assert _fonts.find_arabic_font(("DejaVu Sans",)) is None


@pytest.fixture
def no_system_fonts() -> Iterator[None]:
    """Matplotlib knowing no installed font but its own: as when its font cache was built before
    fonts-noto-core was installed (the test command installs it on a fresh machine)."""
    from matplotlib import font_manager

    manager = font_manager.fontManager
    kept = manager.ttflist
    manager.ttflist = [e for e in kept if "/matplotlib/" in e.fname.replace("\\", "/")]
    manager._findfont_cached.cache_clear()
    yield
    manager.ttflist = kept
    manager._findfont_cached.cache_clear()


def _drawn_from(text: str, families: list[str]) -> dict[str, str]:
    """For each character of ``text``: the file matplotlib's layout draws it from."""
    from matplotlib import _text_helpers
    from matplotlib.font_manager import FontProperties, fontManager, get_font

    ft = get_font(fontManager._find_fonts_by_props(FontProperties(family=families)))
    return {item.char: Path(item.ft_object.fname).name for item in _text_helpers.layout(text, ft)}


@pytest.mark.usefixtures("no_system_fonts")
def test_a_label_pairs_latin_with_the_urdu_font() -> None:
    """Latin from the shipped Latin file (no Arabic letters), every Urdu letter from the shipped
    Nastaliq file, whatever fonts the machine has or matplotlib's cache remembers."""
    urdu_font = _fonts.find_arabic_font()
    assert urdu_font is not None
    label = "closes with a farewell (اللہ حافظ)"
    mixed = _fonts.label_families(label, urdu_font)
    assert mixed == [LATIN_FAMILY, urdu_font.family]
    drawn = _drawn_from(label, mixed)
    assert {drawn[ch] for ch in "closes farewell"} == {latin_font_path().name}
    assert {drawn[ch] for ch in "اللہحافظ"} == {nastaliq_font_path().name}
    assert _fonts.label_families(URDU, urdu_font) == [urdu_font.family, "sans-serif"]
    assert _fonts.label_families("plain English", urdu_font) is None
    assert _fonts.label_families(URDU, None) is None


def test_an_installed_font_of_the_same_family_never_wins(tmp_path: Path) -> None:
    """Another file of the shipped families listed first (an installed copy of another version)
    does not displace the package's files."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    manager = font_manager.fontManager
    kept = manager.ttflist
    decoys = []
    for shipped in (nastaliq_font_path(), latin_font_path()):
        decoy = Path(shutil.copy(shipped, tmp_path / f"system-{shipped.name}"))
        decoys.append(font_manager.ttfFontProperty(FT2Font(str(decoy))))
    manager.ttflist = [*decoys, *kept]
    manager._findfont_cached.cache_clear()
    try:
        font = _fonts.find_arabic_font()
        assert font is not None
        assert _fonts.bundled_latin() == LATIN_FAMILY
        for family, shipped in ((font.family, font.path), (LATIN_FAMILY, latin_font_path())):
            found = font_manager.findfont(font_manager.FontProperties(family=[family]))
            assert Path(found) == shipped
    finally:
        manager.ttflist = kept
        manager._findfont_cached.cache_clear()


def test_the_shipped_latin_font_has_no_arabic_letters() -> None:
    from matplotlib.ft2font import FT2Font

    font = FT2Font(str(latin_font_path()))
    charmap = font.get_charmap()
    assert font.family_name == LATIN_FAMILY
    assert all(ord(ch) in charmap for ch in "Aa zZ09()-,.…éü")
    assert not any(_fonts.has_arabic(chr(code)) for code in charmap)


def test_direction_marks_follow_the_labels_script() -> None:
    assert _fonts.directed("plain") == "plain"
    mixed = "closes with a farewell\n(اللہ حافظ)"  # mostly Latin: every line left to right
    assert _fonts.directed(mixed) == f"{_fonts.LRM}closes with a farewell\n{_fonts.LRM}(اللہ حافظ)"
    assert _fonts.directed(f"{URDU}\nok") == f"{_fonts.RLM}{URDU}\n{_fonts.RLM}ok"


def test_without_arabic_keeps_the_latin_words() -> None:
    text = "The agent closes with a farewell (اللہ حافظ / خدا حافظ, in either script)"
    assert _fonts.without_arabic(text) == "The agent closes with a farewell (…, in either script)"
    assert _fonts.without_arabic(URDU) == ""
