"""`evalkit --version` and `--help` start fast: the command imports what it needs when it runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HEAVY = ("pandas", "pyarrow", "numpy", "starlette", "uvicorn", "matplotlib", "httpx", "pydantic")


def test_importing_the_cli_loads_no_heavy_module() -> None:
    code = (
        "import sys, evalkit.cli\n"
        f"heavy = {HEAVY!r}\n"
        "found = sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in heavy}"
        " | {m for m in sys.modules if m.startswith('evalkit.emulator')})\n"
        "print(found)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_version_and_help_answer_without_loading_the_data_side() -> None:
    for args in (["--version"], ["--help"], ["run", "--help"], ["compare", "--help"]):
        code = (
            "import sys\nfrom evalkit.cli import app\n"
            f"try:\n    app({args!r})\nexcept SystemExit as e:\n    assert e.code in (0, None), e.code\n"
            "print(any(m.split('.')[0] in ('pandas', 'pyarrow') for m in sys.modules))\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip().endswith("False"), (args, out.stdout[-200:])


NUMERIC = ("scipy", "sklearn", "matplotlib", "statsmodels")


def test_lint_file_and_help_import_no_scipy_sklearn_or_matplotlib() -> None:
    """Issue 33, item 14: `evalkit lint FILE` took 3.7 s importing scipy and scikit-learn
    through evalkit.diagnose; a command imports only what it uses."""
    example = Path(__file__).resolve().parents[1] / "examples" / "assistant.yaml"
    for args in (["lint", str(example)], ["--help"], ["lint", "--help"], ["runs", "--help"]):
        code = (
            "import sys\nfrom evalkit.cli import app\n"
            f"try:\n    app({args!r})\nexcept SystemExit as e:\n    assert e.code in (0, None), e.code\n"
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({NUMERIC!r})))\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip().endswith("[]"), (args, out.stdout[-300:])
