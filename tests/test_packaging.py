"""The release's metadata agrees with itself: the version has its CHANGELOG entry, the licence
files the metadata names exist (evalkit's MIT licence, the shipped fonts' OFL beside them), and
every folder the wheel takes from the checkout is there."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import evalkit

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_version_has_a_changelog_entry() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(evalkit.__version__)}\]", changelog, re.MULTILINE)
    assert "## [Unreleased]" in changelog
    assert not re.search(r"\bissue \d+|#\d{2,}\b", changelog, re.IGNORECASE)


def test_the_licence_files_exist_and_say_what_the_expression_says() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "MIT AND OFL-1.1"
    files = [ROOT / name for name in project["license-files"]]
    assert [f.name for f in files] == ["LICENSE", "OFL.txt"]
    assert files[0].read_text(encoding="utf-8").startswith("MIT License")
    ofl = files[1].read_text(encoding="utf-8")
    assert "SIL OPEN FONT LICENSE Version 1.1" in ofl
    shipped = sorted(p.name for p in files[1].parent.glob("*.ttf"))
    assert shipped == ["NotoNastaliqUrdu-Regular.ttf", "NotoSansLatin-Regular.ttf"]
    assert all(name in ofl for name in shipped)  # each shipped font is named in its licence


def test_the_metadata_names_the_project_urls() -> None:
    urls = PYPROJECT["project"]["urls"]
    assert {"Homepage", "Repository", "Issues", "Changelog"} <= urls.keys()
    assert all(url.startswith("https://") for url in urls.values())


def test_every_folder_the_wheel_takes_from_the_checkout_is_there() -> None:
    included = PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    for source, target in included.items():
        assert (ROOT / source).is_dir(), source
        assert target == f"evalkit/data/{source}"


def test_the_notebooks_folder_the_wheel_takes_whole_holds_only_notebooks() -> None:
    """``force-include`` copies a folder as it is (no exclude applies): a build script kept in
    ``notebooks/`` would ship in the wheel; ``scripts/make_notebooks.py`` writes them."""
    done = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "notebooks"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        files = [p.relative_to(ROOT).as_posix() for p in (ROOT / "notebooks").rglob("*")]
    else:
        files = done.stdout.split()
    assert files
    assert [f for f in files if not f.endswith(".ipynb")] == []
    assert (ROOT / "scripts" / "make_notebooks.py").is_file()
