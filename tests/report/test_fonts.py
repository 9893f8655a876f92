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


def test_finder_finds_the_nastaliq_font_ci_installs(urdu_font: _fonts.ArabicFont) -> None:
    """fonts-noto-core (installed by .ci/run) has Noto Nastaliq Urdu: the finder must take it,
    in its regular weight, and its file must hold the Urdu letters."""
    from matplotlib.ft2font import FT2Font

    assert urdu_font.family == "Noto Nastaliq Urdu"  # first in the preference, and installed
    assert "bold" not in urdu_font.path.name.lower()
    charmap = FT2Font(str(urdu_font.path)).get_charmap()
    assert all(ord(ch) in charmap for ch in "ےہںٹڈڑھگکپچ")


def test_finder_refuses_families_without_urdu_letters() -> None:
    assert _fonts.find_arabic_font(("No Such Font Family",)) is None
    # DejaVu Sans has Arabic but lacks some Urdu letters (ہ, ے), so it is never taken for Urdu
    assert _fonts.find_arabic_font(("DejaVu Sans",)) is None


def test_a_label_pairs_latin_with_the_urdu_font(urdu_font: _fonts.ArabicFont) -> None:
    # Latin from Noto Sans (fonts-noto-core; no Arabic letters), every Urdu letter from Nastaliq
    mixed = _fonts.label_families("closes with a farewell (اللہ حافظ)", urdu_font)
    assert mixed == ["Noto Sans", urdu_font.family]
    assert _fonts.label_families(URDU, urdu_font) == [urdu_font.family, "sans-serif"]
    assert _fonts.label_families("plain English", urdu_font) is None
    assert _fonts.label_families(URDU, None) is None


def test_direction_marks_follow_the_labels_script() -> None:
    assert _fonts.directed("plain") == "plain"
    mixed = "closes with a farewell\n(اللہ حافظ)"  # mostly Latin: every line left to right
    assert _fonts.directed(mixed) == f"{_fonts.LRM}closes with a farewell\n{_fonts.LRM}(اللہ حافظ)"
    assert _fonts.directed(f"{URDU}\nok") == f"{_fonts.RLM}{URDU}\n{_fonts.RLM}ok"


def test_without_arabic_keeps_the_latin_words() -> None:
    text = "The agent closes with a farewell (اللہ حافظ / خدا حافظ, in either script)"
    assert _fonts.without_arabic(text) == "The agent closes with a farewell (…, in either script)"
    assert _fonts.without_arabic(URDU) == ""
