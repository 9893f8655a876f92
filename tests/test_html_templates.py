"""HTML comes from templates only (issue 32, item 5): no Python string literal holds an HTML
tag, and the report, the viewer, the static bundle and every notebook display use the one
stylesheet, ``evalkit/templates/evalkit.css``."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

import evalkit
from evalkit._util._html import environment, render_html, stylesheet
from evalkit.report import html_page, report_page, table_html
from evalkit.view._app import STATIC, static_bytes

ROOT = Path(evalkit.__file__).parent
TAGS = (
    "a|audio|b|bdi|body|br|button|code|details|div|em|footer|form|h[1-6]|head|header|html|i|"
    "img|input|label|li|link|main|mark|meta|nav|ol|option|p|pre|script|section|select|small|"
    "source|span|strong|style|sub|summary|sup|table|tbody|td|th|thead|title|tr|ul"
)
#: A start or end tag: ``<div>``, ``</div>``, ``<div class="...">`` (attributes with ``=``, so
#: prose such as "<a rule id given>" in a prompt is not taken for a tag).
TAG = re.compile(rf"<(/?)({TAGS})(\s+[^<>]*=[^<>]*)?\s*/?>", re.IGNORECASE)
#: Literals allowed to hold a tag: none.
ALLOWED: frozenset[str] = frozenset()


def _literals(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every string literal but docstrings; an f-string with ``{}`` for each placeholder."""
    docstrings = set()
    owners = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for node in ast.walk(tree):
        first = node.body[0] if isinstance(node, owners) and node.body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            docstrings.add(id(first.value))
    parts = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts.update(id(v) for v in node.values)
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            yield node.lineno, text
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings | parts
        ):
            yield node.lineno, node.value


def _tags_in_python() -> list[str]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for line, text in _literals(ast.parse(path.read_text(encoding="utf-8"))):
            match = TAG.search(text)
            where = f"{path.relative_to(ROOT)}:{line}"
            if match and where not in ALLOWED:
                found.append(f"{where}: {match.group(0)[:60]}")
    return found


def test_no_python_string_holds_an_html_tag() -> None:
    assert _tags_in_python() == []


def test_the_check_finds_tags_in_strings_and_f_strings() -> None:
    sample = 'x = f\'<div class="{c}">\' + "</td>"\ny = "<a rule id given>"\n'
    found = [t for _, t in _literals(ast.parse(sample)) if TAG.search(t)]
    assert found == ['<div class="{}">', "</td>"]


def test_one_stylesheet_in_the_package() -> None:
    assert sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.css")) == [
        "templates/evalkit.css"
    ]
    styles = [
        (p.name, m.group(0))
        for p in (ROOT / "templates").rglob("*.html")
        for m in re.finditer(r"<style>.*?</style>", p.read_text(encoding="utf-8"), re.S)
    ]
    for name, style in styles:  # the stylesheet inlined, or the page's font declaration
        assert style == "<style>{{ css|safe }}</style>" or name == "font_face.html", name


def test_report_viewer_bundle_and_displays_use_the_one_stylesheet() -> None:
    css = stylesheet()
    assert css == (ROOT / "templates" / "evalkit.css").read_text(encoding="utf-8")
    # the report page and a static page inline it, unescaped
    for page in (report_page("t", "<p>x</p>"), html_page("t", "<p>x</p>")):
        assert f"<style>{css}</style>" in page
    # the viewer serves it (live) and the bundle copies it (both through static_bytes)
    assert "evalkit.css" in STATIC
    assert static_bytes("evalkit.css") == css.encode("utf-8")
    base = environment().get_template("view/base.html").render(root="../", title="t")
    assert '<link rel="stylesheet" href="../static/evalkit.css">' in base
    # every _repr_html_ carries it
    grades = evalkit.Grades.of(
        pd.DataFrame(
            {
                "conversation_id": ["c1"],
                "cell_id": ["x"],
                "persona_label": ["p"],
                "repeat": [0],
                "rule_id": ["r"],
                "title": ["R"],
                "points": [100.0],
                "points_awarded": [100.0],
                "verdict": ["pass"],
                "grader": ["check:x"],
            }
        )
    )
    assert f"<style>{css}</style>" in grades._repr_html_()


def test_render_html_escapes_and_nests_without_double_escaping() -> None:
    inner = table_html(pd.DataFrame({"a": ["<b>x</b>"]}))
    assert "&lt;b&gt;x&lt;/b&gt;" in inner
    outer = render_html("side_by_side.html", panes=[("<left>", inner)])
    assert "&lt;left&gt;" in outer
    assert inner in outer  # inserted as it is: Markup is never escaped twice
