"""The fenced blocks of a Markdown page, as the docs' example collector reads them.

- ```` ```python ```` runs (one namespace per page, in order); a ```` ```text ```` block right
  after it is its expected stdout.
- ```` ```console ```` is a shell session: each ``$ `` line a command (a trailing ``\\``
  continues it), run with bash in the page's folder (``cd`` and ``export`` carry to the next
  command), the lines after it its expected output: its standard output, then its standard
  error. A command must exit 0 (show a failure with ``cmd || echo "exit $?"``).
- ```` ```bash ```` / ```` ```sh ```` run as scripts: exit code 0, output unchecked.
- ``<!-- docs-test: skip (reason) -->`` right before a block: not run, the reason listed;
  ``<!-- docs-test: scorecard -->`` (``persona``, ``variants``, ``pricing``) before a
  ```` ```yaml ```` block: the file is checked by evalkit's loader.
- In expected output, a line that is ``...`` matches any lines (none too), and ``...`` inside
  a line matches any text on that line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

RUN = ("python", "console", "bash", "sh")
FILE_KINDS = ("scorecard", "persona", "variants", "pricing")

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n]*)$")
_MARKER = re.compile(r"^<!--\s*docs-test:\s*(?P<what>.*?)\s*-->$")
_SKIP = re.compile(r"^skip\s*\((?P<reason>.+)\)$")


class MarkerError(ValueError):
    """A ``docs-test`` marker that says something the collector does not know."""


@dataclass(frozen=True)
class Block:
    """One fenced block: where it starts (1-based line of its opening fence), its language,
    its text, and what the marker before it says."""

    path: Path
    line: int
    lang: str
    text: str
    skip: str | None = None
    file_kind: str | None = None
    expected: str | None = None  # a python block's expected stdout (the text block after it)

    @property
    def runs(self) -> bool:
        return self.lang in RUN or self.file_kind is not None

    @property
    def kind(self) -> str:
        return self.file_kind or self.lang


@dataclass
class _Fence:
    line: int
    lang: str
    text: str
    marker: str | None
    end: int  # index of the closing fence line
    after_blank: list[int] = field(default_factory=list)


def _lang(info: str) -> str:
    word = info.strip().split()[0] if info.strip() else ""
    return word.strip("{}.").lower()


def _fences(lines: list[str]) -> list[_Fence]:
    found: list[_Fence] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        j = i + 1
        body: list[str] = []
        while j < len(lines):
            stripped = lines[j].strip()
            if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                break
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        marker = None
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        if k >= 0:
            seen = _MARKER.match(lines[k].strip())
            marker = seen["what"] if seen else None
        text = "\n".join(body)
        found.append(_Fence(i + 1, _lang(opening["info"]), text + "\n" if body else "", marker, j))
        i = j + 1
    return found


def _follows(previous: _Fence, block: _Fence, lines: list[str]) -> bool:
    """True when only blank lines stand between ``previous``'s closing fence and ``block``."""
    between = lines[previous.end + 1 : block.line - 1]
    return all(not line.strip() for line in between)


def read_blocks(path: Path) -> list[Block]:
    """Every fenced block of the page at ``path``, with its marker and expected output.

    Raises :class:`MarkerError` for a marker it does not know, or a skip without its reason.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    fences = _fences(lines)
    blocks: list[Block] = []
    for n, fence in enumerate(fences):
        skip = file_kind = None
        if fence.marker is not None:
            skipped = _SKIP.match(fence.marker)
            if skipped:
                skip = skipped["reason"].strip()
            elif fence.marker in FILE_KINDS:
                if fence.lang not in ("yaml", "yml"):
                    raise MarkerError(
                        f"{path}:{fence.line}: a '{fence.marker}' marker needs a yaml block"
                    )
                file_kind = fence.marker
            else:
                raise MarkerError(
                    f"{path}:{fence.line}: unknown docs-test marker {fence.marker!r}: write "
                    "'skip (the reason)' or one of " + ", ".join(FILE_KINDS)
                )
        expected = None
        if fence.lang == "python" and n + 1 < len(fences):
            after = fences[n + 1]
            if after.lang == "text" and after.marker is None and _follows(fence, after, lines):
                expected = after.text
        blocks.append(Block(path, fence.line, fence.lang, fence.text, skip, file_kind, expected))
    return blocks


# ------------------------------------------------------------------------ console sessions


@dataclass(frozen=True)
class Command:
    """One ``$`` command of a console block and the output shown under it."""

    line: int  # 1-based, in the page
    command: str
    expected: str


def console_commands(block: Block) -> list[Command]:
    """The commands of a console block, each with the lines shown after it."""
    commands: list[Command] = []
    current: list[str] | None = None
    output: list[str] = []
    start = 0
    continued = False
    for offset, line in enumerate(block.text.splitlines()):
        if continued and current is not None:
            current.append(line)
            continued = line.rstrip().endswith("\\")
            continue
        if line.startswith("$ ") or line == "$":
            if current is not None:
                commands.append(Command(start, "\n".join(current), "\n".join(output)))
            current, output = [line[2:]], []
            start = block.line + 1 + offset
            continued = line.rstrip().endswith("\\")
        elif current is None:
            raise MarkerError(
                f"{block.path}:{block.line + 1 + offset}: a console block starts with a "
                "'$ ' command"
            )
        else:
            output.append(line)
    if current is not None:
        commands.append(Command(start, "\n".join(current), "\n".join(output)))
    return commands


# ------------------------------------------------------------------------- expected output


def _lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def output_pattern(expected: str) -> re.Pattern[str]:
    """The regular expression an expected output stands for (see the module docstring)."""
    parts = []
    for line in _lines(expected):
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            pieces = [re.escape(piece) for piece in line.split("...")]
            parts.append(r"[^\n]*?".join(pieces) + r"[ \t]*\n")
    return re.compile("".join(parts))


def output_matches(expected: str, actual: str) -> bool:
    """True when ``actual`` is what ``expected`` shows (trailing spaces and blank lines aside)."""
    body = "".join(line + "\n" for line in _lines(actual))
    return output_pattern(expected).fullmatch(body) is not None
