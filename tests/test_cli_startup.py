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


def _manifest(run_id: str, created: str | None, finalized: bool = True) -> dict[str, object]:
    return {
        "run_id": run_id,
        "created_at": created,
        "finalized_at": "2026-11-02T04:00:00+00:00" if finalized else None,
        "target": "prod",
        "n_conversations": 4,
        "counts": {"total": 3, "done": 2, "error": 1, "dropped": 0, "failed": 0},
    }


def test_runs_table_reads_manifests_without_pandas(tmp_path: Path) -> None:
    """Issue 33, item 14: `evalkit runs` over 100 runs must answer in under 1 s
    (benchmarks/bench_runs_cli.py); the table is built from the manifests alone, without
    pandas (half its start-up), and lists the runs as list_runs orders them; a run never
    finalized is counted from its journal, without pandas too."""
    from evalkit.cli._runs import format_runs
    from evalkit.store import RunWriter, list_runs
    from evalkit.store._manifest import write_manifest

    from .test_store import manifest, record, turns_for

    killed = RunWriter.create(
        tmp_path, "killed", manifest(created_at="2026-10-25T03:00:00+00:00"), fsync=False
    )
    for i in range(3):
        killed.append(record(i, "killed"), turns_for(i))
    killed.close()  # never finalized: `evalkit runs` counts its journal

    created = ["2026-11-01T03:00:00+00:00", "2026-11-01T04:30:00+05:00", None]
    created += [f"2026-10-{day:02d}T03:00:00+00:00" for day in range(1, 20)]
    for i, when in enumerate(created):
        (tmp_path / f"run-{i:02d}").mkdir()
        write_manifest(tmp_path / f"run-{i:02d}" / "manifest.json", _manifest(f"r{i:02d}", when))
    code = (
        "import sys\nfrom evalkit.cli import app\n"
        f"try:\n    app(['runs', '--store', {str(tmp_path)!r}])\n"
        "except SystemExit as e:\n    assert e.code in (0, None), e.code\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        f"set({(*NUMERIC, 'pandas')!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    *table, imported = out.stdout.strip().splitlines()
    assert imported == "[]", imported
    frame = list_runs(tmp_path)
    rows = [{str(k): v for k, v in r.items()} for r in frame.astype(object).to_dict("records")]
    assert table == format_runs(rows).splitlines()
    assert [line.split()[0] for line in table[1:4]] == ["r03", "r04", "r05"]
    assert "interrupted" in next(line for line in table if line.startswith("killed"))
    assert table[-1].split()[:2] == ["r02", "-"]  # no created_at: last, as list_runs sorts it
