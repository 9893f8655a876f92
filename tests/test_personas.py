"""Personas: the repo's persona files, the Persona type and every load_personas error path."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalkit.grid import Persona, PersonaError, load_personas

PERSONAS_DIR = Path(__file__).resolve().parent.parent / "personas"

# The behaviour each persona must name plainly in English (the emulator's scripted caller
# picks its behaviour from such words).
KEYWORDS = {
    "busy-hangs-up": ["busy", "hang up"],
    "hostile": ["hostile", "object"],
    "confused-elderly": ["confused", "repeat"],
    "wrong-person": ["wrong person"],
    "asks-callback": ["call back"],
    "do-not-call": ["do not call"],
    "price-sensitive": ["price"],
    "noisy-distracted": ["noise"],
    "scam-suspicious": ["scam"],
    "cooperative": ["cooperative"],
}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


GOOD = "label: {label}\nbehavior: You are {label}. You answer briefly and end the call.\n"


# --------------------------------------------------------------------------- repo content


@pytest.fixture(scope="module")
def repo_personas() -> list[Persona]:
    return load_personas(PERSONAS_DIR)


def test_repo_has_at_least_twelve_personas_with_unique_labels(
    repo_personas: list[Persona],
) -> None:
    labels = [p.label for p in repo_personas]
    assert len(labels) >= 12
    assert len(set(labels)) == len(labels)
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", label) for label in labels)


def test_repo_personas_are_real_content(repo_personas: list[Persona]) -> None:
    for p in repo_personas:
        assert len(p.behavior) >= 400, p.label
        assert len(p.behavior.split()) >= 80, p.label
        assert "{{" not in p.behavior, p.label
        assert "TODO" not in p.behavior, p.label
        text = p.behavior.lower()
        assert "end the call" in text or "hang up" in text, p.label
        assert p.path == "negative"
        assert p.tags, p.label
        assert p.description, p.label


def test_repo_file_names_match_labels() -> None:
    for file in PERSONAS_DIR.glob("*.yaml"):
        (persona,) = load_personas(file)
        assert persona.label == file.stem


def test_repo_personas_name_their_behaviour_in_english(repo_personas: list[Persona]) -> None:
    by_label = {p.label: p for p in repo_personas}
    for label, words in KEYWORDS.items():
        text = by_label[label].behavior.lower()
        for word in words:
            assert word in text, (label, word)


def test_repo_covers_languages(repo_personas: list[Persona]) -> None:
    by_label = {p.label: p for p in repo_personas}
    urdu = by_label["urdu-script"].behavior
    assert len(re.findall(r"[\u0600-\u06ff]", urdu)) >= 50
    assert any("inbound" in p.tags for p in repo_personas)
    assert any("outbound" in p.tags for p in repo_personas)


def test_every_persona_is_listed_in_the_readme(repo_personas: list[Persona]) -> None:
    readme = (PERSONAS_DIR / "README.md").read_text(encoding="utf-8")
    for p in repo_personas:
        assert f"`{p.label}.yaml`" in readme, p.label


# --------------------------------------------------------------------------- Persona


def test_persona_defaults_and_api_shape() -> None:
    p = Persona("busy", "You are busy and hang up.")
    assert p.path == "negative"
    assert p.tags == ()
    assert p.to_api() == {
        "label": "busy",
        "behavior": "You are busy and hang up.",
        "path": "negative",
    }


def test_persona_tags_list_becomes_tuple_and_persona_is_hashable() -> None:
    p = Persona("busy", "You are busy.", tags=["outbound", "busy"])  # type: ignore[arg-type]
    assert p.tags == ("outbound", "busy")
    assert p == Persona("busy", "You are busy.", tags=("outbound", "busy"))
    assert len({p, Persona("busy", "You are busy.", tags=("outbound", "busy"))}) == 1
    assert "tags" not in p.to_api()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"label": "", "behavior": "b"}, "label"),
        ({"label": 3, "behavior": "b"}, "label"),
        ({"label": "a", "behavior": "  "}, "behavior"),
        ({"label": "a", "behavior": "b", "path": None}, "path"),
        ({"label": "a", "behavior": "b", "tags": "x"}, "tags"),
        ({"label": "a", "behavior": "b", "tags": ["ok", 3]}, "tags[1]"),
    ],
)
def test_persona_rejects_bad_fields(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(PersonaError) as info:
        Persona(**kwargs)  # type: ignore[arg-type]
    assert info.value.field == field
    assert field in str(info.value)
    assert isinstance(info.value, ValueError)


# --------------------------------------------------------------------------- loading


def test_load_directory_sorted_by_file_name(tmp_path: Path) -> None:
    write(tmp_path / "b.yaml", GOOD.format(label="second"))
    write(tmp_path / "a.yml", GOOD.format(label="first"))
    write(tmp_path / "notes.txt", "not a persona")
    personas = load_personas(tmp_path)
    assert [p.label for p in personas] == ["first", "second"]


def test_load_single_file_list_and_several_paths(tmp_path: Path) -> None:
    many = write(
        tmp_path / "many.yaml",
        "- {label: one, behavior: You are one., tags: [x]}\n"
        "- {label: two, behavior: You are two., path: negative}\n",
    )
    single = write(tmp_path / "sub" / "three.yaml", GOOD.format(label="three"))
    assert [p.label for p in load_personas(many)] == ["one", "two"]
    assert load_personas(str(many))[0].tags == ("x",)
    both = load_personas([many, tmp_path / "sub"])
    assert [p.label for p in both] == ["one", "two", "three"]
    assert load_personas([single])[0].label == "three"


def test_load_strips_whitespace_and_keeps_description(tmp_path: Path) -> None:
    file = write(
        tmp_path / "p.yaml",
        "label: ' calm '\ndescription: For people.\nbehavior: |\n  You are calm.\n  You stay.\n",
    )
    (p,) = load_personas(file)
    assert p.label == "calm"
    assert p.behavior == "You are calm.\nYou stay."
    assert p.description == "For people."


def _error(path: Path | list[Path]) -> PersonaError:
    with pytest.raises(PersonaError) as info:
        load_personas(path)
    return info.value


def test_missing_label_names_file_and_field(tmp_path: Path) -> None:
    err = _error(write(tmp_path / "nolabel.yaml", "behavior: You are here.\n"))
    assert (err.file, err.field) == (str(tmp_path / "nolabel.yaml"), "label")
    assert "nolabel.yaml: label: is required" in str(err)


def test_missing_behavior_names_file_and_field(tmp_path: Path) -> None:
    err = _error(write(tmp_path / "nobehavior.yaml", "label: x\n"))
    assert "nobehavior.yaml: behavior: is required" in str(err)


def test_wrong_types_name_file_and_field(tmp_path: Path) -> None:
    file = write(
        tmp_path / "types.yaml",
        "label: 12\nbehavior: [a, b]\npath: 3\ntags: busy\ndescription: 4\n",
    )
    err = _error(file)
    text = str(err)
    for field, kind in [
        ("label", "number"),
        ("behavior", "list"),
        ("path", "number"),
        ("tags", "string"),
        ("description", "number"),
    ]:
        assert f"types.yaml: {field}: must be" in text, field
        assert kind in text
    assert len(err.problems) == 5


def test_unknown_key_suggests_the_right_one(tmp_path: Path) -> None:
    err = _error(write(tmp_path / "typo.yaml", "label: x\nbehaviour: You are x.\n"))
    text = str(err)
    assert "typo.yaml: behaviour: unknown key; did you mean 'behavior'?" in text
    assert "typo.yaml: behavior: is required" in text


def test_unknown_key_without_close_match(tmp_path: Path) -> None:
    err = _error(write(tmp_path / "odd.yaml", GOOD.format(label="x") + "zzz: 1\n"))
    assert err.field == "zzz"
    assert "did you mean" not in str(err)
    assert "known keys: label, behavior" in str(err)


def test_duplicate_labels_across_files(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", GOOD.format(label="same"))
    write(tmp_path / "b.yaml", GOOD.format(label="same"))
    err = _error(tmp_path)
    assert err.file == str(tmp_path / "b.yaml")
    assert err.field == "label"
    assert "duplicate label 'same'" in str(err)
    assert "a.yaml" in str(err)


def test_duplicate_labels_in_one_list_file(tmp_path: Path) -> None:
    file = write(
        tmp_path / "list.yaml",
        "- {label: a, behavior: You are a.}\n- {label: a, behavior: You are b.}\n",
    )
    err = _error(file)
    assert err.field == "[1].label"


def test_bad_entry_in_list_file_names_its_index(tmp_path: Path) -> None:
    file = write(
        tmp_path / "list.yaml", "- {label: a, behavior: You are a.}\n- {label: b}\n- just text\n"
    )
    err = _error(file)
    text = str(err)
    assert "list.yaml: [1].behavior: is required" in text
    assert "list.yaml: [2]: must be a mapping, got string" in text


def test_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    err = _error(tmp_path / "empty")
    assert err.field == "path"
    assert "empty" in str(err)
    assert "holds no persona files" in str(err)


def test_missing_path_and_empty_path_list(tmp_path: Path) -> None:
    assert "does not exist" in str(_error(tmp_path / "nope.yaml"))
    assert "no persona paths" in str(_error([]))


def test_yaml_syntax_error_reports_its_line(tmp_path: Path) -> None:
    file = write(tmp_path / "broken.yaml", "label: x\nbehavior: fine\ntags: [a, b\npath: x\n")
    err = _error(file)
    assert err.field == "file"
    match = re.search(r"broken\.yaml: file: YAML syntax error at line (\d+)", str(err))
    assert match is not None
    assert int(match.group(1)) in (3, 4)


def test_empty_file_and_wrong_top_level(tmp_path: Path) -> None:
    assert "empty.yaml: file: is empty" in str(_error(write(tmp_path / "empty.yaml", "")))
    scalar = _error(write(tmp_path / "scalar.yaml", "just a string\n"))
    assert "scalar.yaml: file: must hold a mapping or a list of mappings" in str(scalar)
    assert "empty list" in str(_error(write(tmp_path / "list.yaml", "[]\n")))


def test_every_problem_of_every_file_is_reported_together(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", "label: a\n")
    write(tmp_path / "b.yaml", "behavior: You are b.\n")
    write(tmp_path / "c.yaml", GOOD.format(label="fine"))
    write(tmp_path / "d.yaml", "label: [\n")
    err = _error(tmp_path)
    assert [(Path(p.file or "").name, p.field) for p in err.problems] == [
        ("a.yaml", "behavior"),
        ("b.yaml", "label"),
        ("d.yaml", "file"),
    ]
    assert str(err).startswith("3 problems in personas:")
