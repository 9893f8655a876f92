"""The public surface is the committed snapshot, and every change to the snapshot is announced
under ``## [Unreleased]`` in CHANGELOG.md, so that a break of the API is always deliberate.

After a deliberate change: ``python -m tests.api_snapshot`` (from the repository root) rewrites
``tests/api_snapshot.txt``; then name each added, removed or changed name in CHANGELOG.md.
"""

from __future__ import annotations

import difflib
import os
import subprocess
import sys

from . import api_snapshot as snap

BEFORE = """\
evalkit: module, 2 names
evalkit.grade_run: alias evalkit.grading.grade_run
evalkit.grading: module, 2 names
evalkit.grading.GradeOptions: class (judge_samples: int = 1) -> None
evalkit.grading.GradeOptions.judge_samples: field int
evalkit.grading.grade_run: function (run: Run, scorecard: ScorecardLike, judge: JudgeArg = None)
evalkit.grading.left_out_of: function (conversations: DataFrame) -> dict[str, int]
"""
AFTER = """\
evalkit: module, 3 names
evalkit.grade_run: alias evalkit.grading.grade_run
evalkit.grading: module, 3 names
evalkit.grading.GradeOptions: class (judge_samples: int = 1, save: bool = True) -> None
evalkit.grading.GradeOptions.judge_samples: field int
evalkit.grading.GradeOptions.save: field bool
evalkit.grading.grade_run: function (run: Run, scorecard: ScorecardLike, *, judge: JudgeArg = None)
evalkit.grading.plan_labels: function (grades: GradesLike) -> DataFrame
"""


def _diff(committed: str, current: str, lines: int = 60) -> str:
    diff = list(
        difflib.unified_diff(
            committed.splitlines(), current.splitlines(), "committed", "current", lineterm=""
        )
    )
    shown = "\n".join(diff[:lines])
    return shown + (f"\n... {len(diff) - lines} more diff lines" if len(diff) > lines else "")


def test_the_public_surface_is_the_committed_snapshot() -> None:
    current = snap.render(snap.surface())
    committed = snap.SNAPSHOT.read_text(encoding="utf-8") if snap.SNAPSHOT.exists() else ""
    assert current == committed, (
        "the public API differs from tests/api_snapshot.txt. If the change is deliberate, run "
        f"`{snap.UPDATE_COMMAND}` from the repository root and announce each added, removed "
        "or changed name under ## [Unreleased] in CHANGELOG.md.\n" + _diff(committed, current)
    )


def test_every_change_since_the_last_release_is_announced_in_the_changelog() -> None:
    before = snap.released_snapshot()
    assert before is not None, "tests/api_released.txt (the last release's surface) is missing"
    committed = snap.SNAPSHOT.read_text(encoding="utf-8")
    missing = snap.unannounced(before, committed, snap.CHANGELOG.read_text(encoding="utf-8"))
    assert not missing, (
        "tests/api_snapshot.txt differs from the last release's surface (tests/api_released.txt) "
        "in ways ## [Unreleased] in CHANGELOG.md does not announce (add a line under Added, "
        "Changed or Removed naming each):\n" + "\n".join(missing)
    )


def test_added_removed_and_changed_names_are_told_apart() -> None:
    assert snap.changed_names(BEFORE, AFTER) == {
        "evalkit.grading.GradeOptions": "changed",
        "evalkit.grading.GradeOptions.save": "added",
        "evalkit.grading.grade_run": "changed",
        "evalkit.grading.left_out_of": "removed",
        "evalkit.grading.plan_labels": "added",
    }  # a module's name count moves with every name and is not a change of its own
    assert snap.changed_names(AFTER, AFTER) == {}


def test_a_change_the_unreleased_section_does_not_name_is_refused() -> None:
    announced = """# Changelog

## [Unreleased]

### Added
- `GradeOptions.save`: grade without writing; `plan_labels` plans hand labels.

### Changed
- `grade_run` takes the judge by keyword.

### Removed
- `left_out_of`.

## [0.1.0] - 2026-01-01
- `GradeOptions` appeared.
"""
    assert snap.unannounced(BEFORE, AFTER, announced) == []
    silent = announced.replace("- `left_out_of`.", "- a helper.")
    assert snap.unannounced(BEFORE, AFTER, silent) == [
        "evalkit.grading.left_out_of (removed): mention `left_out_of`"
    ]
    # a member's change names both the class and the member
    no_member = announced.replace("`GradeOptions.save`: grade without writing", "`GradeOptions`")
    assert snap.unannounced(BEFORE, AFTER, no_member) == [
        "evalkit.grading.GradeOptions.save (added): mention `GradeOptions` and `save`"
    ]
    # a name told only under an earlier release is not announced, and words inside longer
    # names (agrade_run) do not count
    released_only = announced.replace("`grade_run` takes", "`agrade_run` takes")
    assert snap.unannounced(BEFORE, AFTER, released_only) == [
        "evalkit.grading.grade_run (changed): mention `grade_run`"
    ]


def test_the_unreleased_section_ends_at_the_next_release() -> None:
    text = "## [Unreleased]\n- a\n## [0.2.0]\n- b\n"
    assert snap.unreleased(text) == "- a\n"
    assert snap.unreleased("# Changelog\n") == ""


def test_signatures_show_the_convention_as_written() -> None:
    def flow(grid: int, assistant_id: str, *, client: object = None, store: str = "runs") -> None:
        """A flow's shape."""

    assert snap.signature_text(flow) == (
        "(grid: int, assistant_id: str, *, client: object = None, store: str = 'runs') -> None"
    )


def test_one_command_regenerates_and_checks_the_snapshot_in_a_fresh_interpreter() -> None:
    """The check a CI step runs, with another hash seed (nothing in the text may depend on
    set order or on addresses)."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.api_snapshot", "--check"],
        cwd=snap.ROOT,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
