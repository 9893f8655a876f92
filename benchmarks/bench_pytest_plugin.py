"""What the evalkit pytest plugin costs a project that does not use it.

Writes a project of ``--modules`` test modules (``--tests`` tests each, no evalkit in them) to
a temporary folder and times ``pytest --collect-only -q`` there, in interleaved rounds whose
order rotates: with every installed plugin (evalkit's included), with ``-p no:evalkit``, and
with no plugin autoloaded at all (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``, the bare floor). It
prints the median wall time of each and the ratio with/without evalkit's plugin, and which of
pandas, numpy, httpx and evalkit's heavy packages the plugin's presence loaded (those loaded
with it and not without it; none should).
Run: ``python benchmarks/bench_pytest_plugin.py [--rounds 7]`` (~1-2 min).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY = ("pandas", "numpy", "httpx", "evalkit.testing", "evalkit.emulator", "evalkit.api")
_PROBE = """
import json, os, sys
def pytest_sessionfinish(session):
    heavy = [m for m in {heavy!r} if m in sys.modules]
    with open(os.environ["EVALKIT_BENCH_PROBE"], "w") as f:
        json.dump(heavy, f)
"""


def write_project(root: Path, modules: int, tests: int) -> None:
    for m in range(modules):
        body = ["import pytest", ""]
        for t in range(tests):
            body += [
                "@pytest.mark.parametrize('x', range(3))",
                f"def test_{t}(x):",
                "    assert x < 3",
                "",
            ]
        (root / f"test_mod{m:03d}.py").write_text("\n".join(body), encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")


def run(root: Path, args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=root,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", type=int, default=60)
    parser.add_argument("--tests", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    base_env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-plugin-") as tmp:
        root = Path(tmp)
        write_project(root, args.modules, args.tests)
        ways = {
            "with evalkit's plugin": ([], base_env),
            "-p no:evalkit": (["-p", "no:evalkit"], base_env),
            "no plugin autoloaded": ([], {**base_env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}),
        }
        times: dict[str, list[float]] = {name: [] for name in ways}
        names = list(ways)
        for name in names:  # warm-up: bytecode caches, the file system
            run(root, *ways[name])
        for r in range(args.rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                times[name].append(run(root, *ways[name]))
        probe = root / "probe.json"
        (root / "conftest.py").write_text(_PROBE.format(heavy=HEAVY), encoding="utf-8")
        loaded = {}
        for name in names[:2]:
            extra, env = ways[name]
            run(root, extra, {**env, "EVALKIT_BENCH_PROBE": str(probe)})
            loaded[name] = set(json.loads(probe.read_text(encoding="utf-8")))
        heavy = sorted(loaded[names[0]] - loaded[names[1]])
    collected = args.modules * args.tests * 3
    print(
        f"pytest --collect-only over {collected} tests in {args.modules} modules, {args.rounds} rounds\n"
    )
    print("| plugins | median wall time | min | max |")
    print("|---|---|---|---|")
    for name in names:
        t = times[name]
        print(f"| {name} | {statistics.median(t):.3f} s | {min(t):.3f} s | {max(t):.3f} s |")
    ratio = statistics.median(times[names[0]]) / statistics.median(times[names[1]])
    print(f"\nwith / without evalkit's plugin: {ratio:.3f}x")
    print(
        "heavy modules the plugin's presence loaded (with minus without it): "
        f"{', '.join(heavy) or 'none'} (of {', '.join(HEAVY)})"
    )


if __name__ == "__main__":
    main()
