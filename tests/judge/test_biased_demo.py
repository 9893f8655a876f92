"""`evalkit demo --biased-judge`: a lenient judge hides part of the regression, queue labels
restore it (the exact judge stands in for the labeller)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli import app


@pytest.mark.slow
def test_biased_judge_demo_tells_the_story(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["demo", "--biased-judge", "-o", str(tmp_path / "demo")])
    assert result.exit_code == 0, result.output
    lines = {line.split("  ")[0]: line for line in result.stdout.splitlines()}
    assert "60 queue labels a side" in result.stdout

    def difference(name: str) -> tuple[float, float, float]:
        words = lines[name].split("points")
        estimate = float(words[0].split()[-1])
        low, high = (float(v) for v in words[1].strip(" []").split(","))
        return estimate, low, high

    alone, corrected, truth = (
        difference(n) for n in ("judge alone", "judge-corrected (PPI++)", "exact judge (the truth)")
    )
    # the lenient judge shrinks the drop; the corrected interval holds the exact judge's figure
    assert alone[0] > truth[0]
    assert corrected[1] <= truth[0] <= corrected[2]
    assert abs(corrected[0] - truth[0]) < abs(alone[0] - truth[0])
    assert (tmp_path / "demo" / "runs" / "draft" / "labels").is_dir()
