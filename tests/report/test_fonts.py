"""Arabic-script detection and the plot font finder."""

from __future__ import annotations

import pytest

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


def test_finder_returns_a_font_with_urdu_letters_or_none() -> None:
    found = _fonts.find_arabic_font()
    if found is not None:
        from matplotlib.ft2font import FT2Font

        charmap = FT2Font(str(found.path)).get_charmap()
        assert all(ord(ch) in charmap for ch in "ےہںٹ")
        assert found.family in _fonts.ARABIC_FONT_PREFERENCE
    assert _fonts.find_arabic_font(("No Such Font Family",)) is None
    # DejaVu Sans lacks some Urdu letters, so it is never taken for Urdu
    assert _fonts.find_arabic_font(("DejaVu Sans",)) is None
