"""notebooks/refine_loop.ipynb: one `parameters` cell, kernelspec python3, no outputs."""

from __future__ import annotations

import json
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "refine_loop.ipynb"


def test_notebook_shape() -> None:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    tagged = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1
    source = "".join(tagged[0]["source"])
    for name in ("assistant", "feedback", "rounds", "holdout", "output_dir"):
        assert f"{name} =" in source
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)
