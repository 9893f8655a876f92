"""The example collector's reading of a page: fences, markers, expected output, and `...`."""

from __future__ import annotations

from pathlib import Path

import pytest

from .blocks import MarkerError, console_commands, output_matches, read_blocks
from .runner import Emulator, ExampleFailed, Page

PAGE = """# A page

```python
print(1 + 1)
```

```text
2
```

<!-- docs-test: skip (needs the real service) -->
```python
raise SystemExit
```

- a list item:

    ```console
    $ echo one \\
        two
    one two
    $ echo three
    three
    ```

<!-- docs-test: scorecard -->

```yaml
rubricVersionId: x
```

```json
{"not": "run"}
```
"""


def _page(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "page.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_reads_each_block_with_its_marker_and_expected_output(tmp_path: Path) -> None:
    blocks = read_blocks(_page(tmp_path, PAGE))
    assert [(b.line, b.kind, b.runs) for b in blocks] == [
        (3, "python", True),
        (7, "text", False),
        (12, "python", True),
        (18, "console", True),
        (28, "scorecard", True),
        (32, "json", False),
    ]
    assert blocks[0].expected == "2\n"
    assert blocks[1].expected is None
    assert blocks[2].skip == "needs the real service"
    commands = console_commands(blocks[3])
    assert [(c.line, c.command, c.expected) for c in commands] == [
        (19, "echo one \\\n    two", "one two"),
        (22, "echo three", "three"),
    ]


def test_a_text_block_after_other_prose_is_not_expected_output(tmp_path: Path) -> None:
    blocks = read_blocks(_page(tmp_path, "```python\nx = 1\n```\n\nprose\n\n```text\n2\n```\n"))
    assert blocks[0].expected is None


@pytest.mark.parametrize(
    "marker", ["skip", "skip ()", "scorecards", "persona-file"], ids=lambda m: m or "empty"
)
def test_an_unknown_marker_or_a_skip_without_reason_is_refused(tmp_path: Path, marker: str) -> None:
    with pytest.raises(MarkerError, match=r"page\.md:2"):
        read_blocks(_page(tmp_path, f"<!-- docs-test: {marker} -->\n```yaml\na: 1\n```\n"))


@pytest.mark.parametrize(
    ("expected", "actual", "same"),
    [
        ("a\nb\n", "a\nb\n", True),
        ("a\nb\n", "a\nc\n", False),
        ("a\nb\n", "a\nb\nc\n", False),  # more printed than shown
        ("took ... s\n", "took 0.42 s\n", True),
        ("took ... s\n", "took 0.42 s\nmore\n", False),  # `...` inside a line stays in it
        ("first\n...\nlast\n", "first\nx\ny\nlast\n", True),
        ("first\n...\nlast\n", "first\nlast\n", True),  # `...` alone: any lines, none too
        ("first\n...\nlast\n", "first\nx\n", False),
        ("a  \n\n", "a\n", True),  # trailing spaces and blank lines aside
        ("(1.0 [0.5, 2.0])\n", "(1.0 [0.5, 2.0])\n", True),  # brackets are literal
        ("a.b\n", "axb\n", False),
    ],
)
def test_expected_output(expected: str, actual: str, same: bool) -> None:
    assert output_matches(expected, actual) is same


@pytest.fixture(scope="module")
def emulator() -> object:
    emulator = Emulator()
    yield emulator
    emulator.close()


def _run(tmp_path: Path, emulator: Emulator, text: str) -> None:
    path = _page(tmp_path, text)
    page = Page(path, emulator)
    try:
        for block in read_blocks(path):
            if block.runs:
                page.run(block)
    finally:
        page.close()


@pytest.mark.slow
def test_a_page_runs_against_its_own_demo_assistant(tmp_path: Path, emulator: Emulator) -> None:
    _run(
        tmp_path,
        emulator,
        "```python\nimport os\nimport evalkit\n"
        "client = evalkit.Client()\n"
        "a = client.get_assistant_metadata(os.environ['EVALKIT_ASSISTANT_ID'])\n"
        "print(a.aliases.prod.version, a.aliases.draft.version)\n```\n\n```text\n1 2\n```\n\n"
        "```console\n$ export WHERE=$(pwd)\n$ cd runs && pwd\n...runs\n"
        "$ ls -a $WHERE/runs/.snapshots | wc -l\n3\n```\n",
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("```python\nprint('two')\n```\n\n```text\n2\n```\n", "printed something other"),
        ("```python\n1 / 0\n```\n", "ZeroDivisionError"),
        ("```console\n$ echo 1\n2\n```\n", "printed something other"),
        ("```console\n$ false\n```\n", "exited 1"),
        ("```bash\nexit 3\n```\n", "exited 3"),
        (
            "<!-- docs-test: pricing -->\n```yaml\ncurrency: USD\nsimulation: {acme/x: {per_minute: 1}}\n```\n",
            "refused",
        ),
        (
            "<!-- docs-test: scorecard -->\n```yaml\nrubricVersionId: x\nrules:\n  - {ruleId: a, title: A, points: 90}\n```\n",
            "refused",
        ),
    ],
    ids=[
        "python-output",
        "python-raises",
        "console-output",
        "console-exit",
        "bash-exit",
        "pricing",
        "scorecard",
    ],
)
def test_an_example_that_fails_or_prints_otherwise_fails(
    tmp_path: Path, emulator: Emulator, text: str, says: str
) -> None:
    with pytest.raises(ExampleFailed, match=says):
        _run(tmp_path, emulator, text)


def test_a_page_leaves_no_filesystem_behind_for_later_tests(
    tmp_path: Path, emulator: Emulator
) -> None:
    """fsspec keeps a filesystem per set of arguments, its endpoint inside: one a page's example
    opened against its own S3 server (stopped when the page ends) must not serve a later test
    of this process (the store tests once met a page's dead endpoint that way)."""
    import s3fs

    page = Page(_page(tmp_path, "# empty\n"), emulator)
    with page.inside():
        made = s3fs.S3FileSystem(use_listings_cache=False, endpoint_url="http://127.0.0.1:9")
        assert (
            s3fs.S3FileSystem(use_listings_cache=False, endpoint_url="http://127.0.0.1:9") is made
        )
    page.close()
    assert (
        s3fs.S3FileSystem(use_listings_cache=False, endpoint_url="http://127.0.0.1:9") is not made
    )
