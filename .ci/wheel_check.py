"""CI: the wheel works without the repository.

Builds the sdist and the wheel (``python -m build``, ``twine check --strict``), installs the
wheel into a fresh virtual environment outside the checkout, and from an empty folder runs what a
new user runs: ``evalkit demo``; ``evalkit emulator --port 0 --demo-assistant`` with the run
line it prints, a second run, ``grade`` and ``compare``; ``evalkit report`` on a bundled
notebook; ``evalkit view bundle``; ``evalkit.data.bundled_path("notebooks")``; and the red-team
personas and scorecard by name. Every bundled file must come from the installed package, and
nothing may be written inside site-packages.
Prints the packaging figures (sizes, install time, start-up times against a bare interpreter).

Run with the checkout's environment (``build`` and ``twine`` come with ``.[dev]``):
``python .ci/wheel_check.py``. Everything it writes is under a temp folder, removed at the end.
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCORECARD = "appointment-reminder-ur"
STARTUP_REPEATS = 7
COMMAND_TIMEOUT_S = 900


class CheckFailed(Exception):
    """One check of the wheel failed; the message says which and why."""


def step(text: str) -> None:
    print(f"\n--> {text}", flush=True)


def run(
    args: Sequence[str | Path],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    what: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``args``; a non-zero exit is a failed check showing the command's output."""
    done = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=dict(env) if env is not None else None,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        shown = shlex.join(str(a) for a in args)
        tail = (done.stdout + done.stderr)[-4000:]
        raise CheckFailed(f"{what or shown} exited {done.returncode}:\n{tail}")
    return done


def user_env(venv: Path) -> dict[str, str]:
    """A new user's environment: the wheel's venv first on PATH, nothing of the checkout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    env["MPLBACKEND"] = "Agg"
    for name in ("EVALKIT_BASE_URL", "EVALKIT_API_KEY", "EVALKIT_JUDGE_BASE_URL"):
        env.pop(name, None)
    return env


def site_packages(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python*/site-packages"))
    if len(found) != 1:
        raise CheckFailed(f"expected one site-packages under {venv}, found {found}")
    return found[0]


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``folder``: (size, modification time in ns)."""
    out = {}
    for path in folder.rglob("*"):
        if path.is_file() or path.is_symlink():
            info = path.lstat()
            out[str(path.relative_to(folder))] = (info.st_size, info.st_mtime_ns)
    return out


def changes(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> list[str]:
    added = [f"+ {p}" for p in sorted(after.keys() - before.keys())]
    removed = [f"- {p}" for p in sorted(before.keys() - after.keys())]
    changed = [f"~ {p}" for p in sorted(before.keys() & after.keys()) if before[p] != after[p]]
    return added + removed + changed


def median_seconds(args: Sequence[str | Path], *, cwd: Path, env: Mapping[str, str]) -> float:
    times = []
    for _ in range(STARTUP_REPEATS):
        started = time.perf_counter()
        run(args, cwd=cwd, env=env)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


@contextmanager
def emulator(cwd: Path, env: Mapping[str, str]) -> Iterator[tuple[dict[str, str], str]]:
    """``evalkit emulator --port 0 --demo-assistant``: its exported settings and run line."""
    proc = subprocess.Popen(
        ["evalkit", "emulator", "--port", "0", "--demo-assistant"],
        cwd=cwd,
        env={**env, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    printed: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    reader = threading.Thread(target=lambda: [printed.put(line) for line in proc.stdout or ()])
    reader.daemon = True
    reader.start()
    try:
        lines: list[str] = []
        deadline = time.monotonic() + 120
        while not (lines and lines[-1].startswith("# evalkit run ")):
            try:
                lines.append(printed.get(timeout=max(deadline - time.monotonic(), 0.1)).rstrip())
            except queue.Empty:
                shown = "\n".join(line for line in lines if not line.startswith("export "))
                raise CheckFailed(f"the emulator printed no run line:\n{shown}") from None
        exports = dict(
            line.removeprefix("export ").split("=", 1)
            for line in lines
            if line.startswith("export ")
        )
        yield {k: shlex.split(v)[0] for k, v in exports.items()}, lines[-1].removeprefix("# ")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def build(work: Path) -> tuple[Path, Path, dict[str, str]]:
    step("build the sdist and the wheel")
    dist = work / "dist"
    run([sys.executable, "-m", "build", "--outdir", dist, ROOT], cwd=work)
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    run([sys.executable, "-m", "twine", "check", "--strict", wheel, sdist], cwd=work)
    print(f"{wheel.name}, {sdist.name}: twine check passed")
    figures = {
        "wheel": f"{wheel.stat().st_size / 1e6:.2f} MB",
        "sdist": f"{sdist.stat().st_size / 1e6:.2f} MB",
    }
    return wheel, sdist, figures


def install(wheel: Path, work: Path) -> tuple[Path, float]:
    step("install the wheel into a fresh virtual environment outside the checkout")
    venv = work / "venv"
    run([sys.executable, "-m", "venv", venv], cwd=work)
    started = time.perf_counter()
    run([venv / "bin" / "python", "-m", "pip", "install", "-q", wheel], cwd=work)
    seconds = time.perf_counter() - started
    print(f"installed in {seconds:.1f} s")
    return venv, seconds


def bundled_from_the_package(here: Path, env: Mapping[str, str], site: Path) -> None:
    step('import evalkit; evalkit.data.bundled_path("notebooks"), and every bundled file')
    probe = """
import json, evalkit
from evalkit import data
paths = {kind: str(data.bundled_path(kind)) for kind in
         ("personas", "scorecards", "examples", "notebooks")}
paths["evalkit"] = evalkit.__file__
paths["nastaliq font"] = str(data.nastaliq_font_path())
paths["latin font"] = str(data.latin_font_path())
paths["scorecard by name"] = str(data.resolve("appointment-reminder-ur", "scorecards"))
paths["red-team scorecard"] = str(data.resolve("red-team", "scorecards"))
paths["red-team personas"] = str(data.resolve("red-team", "personas"))
paths["red-team personas listed"] = ",".join(
    n for n in data.bundled_names("personas") if n.startswith("red-team/"))
paths["notebooks listed"] = ",".join(data.bundled_names("notebooks"))
print(json.dumps(paths))
"""
    found = json.loads(run(["python", "-c", probe], cwd=here, env=env).stdout)
    listed = found.pop("notebooks listed")
    red_team = found.pop("red-team personas listed").split(",")
    if len(red_team) != 9:
        raise CheckFailed(f"the wheel's red-team personas are not the nine bundled: {red_team}")
    if "compare_draft_prod" not in listed.split(","):
        raise CheckFailed(f"the bundled notebooks lack compare_draft_prod: {listed}")
    outside = {k: v for k, v in found.items() if not Path(v).resolve().is_relative_to(site)}
    if outside:
        raise CheckFailed(f"not from the installed package: {outside}")
    print(f"every bundled folder and font is inside {site}")


def demo(here: Path, env: Mapping[str, str]) -> None:
    step("evalkit demo")
    done = run(["evalkit", "demo"], cwd=here, env=env)
    if "regressed" not in done.stdout or not (here / "evalkit-demo" / "report.html").is_file():
        raise CheckFailed(f"evalkit demo told no regression or wrote no report:\n{done.stdout}")
    print(done.stdout.strip().splitlines()[-2])


def first_hour(here: Path, env: Mapping[str, str]) -> None:
    step("evalkit emulator --port 0 --demo-assistant: its run line, grade, compare")
    with emulator(here, env) as (exports, run_line):
        print(f"run line: {run_line}")
        live = {**env, **exports}
        line = shlex.split(run_line)
        for run_id in ("first", "second"):
            run([*line, "--run-id", run_id], cwd=here, env=live)
            run(["evalkit", "grade", run_id, "-s", SCORECARD], cwd=here, env=live)
        compared = run(
            ["evalkit", "compare", "first", "second", "-s", SCORECARD], cwd=here, env=live
        )
        print(compared.stdout.strip().splitlines()[0])


def report_and_bundle(here: Path, env: Mapping[str, str]) -> None:
    step("evalkit report on a bundled notebook; evalkit view bundle")
    args = ["evalkit", "report", "compare_draft_prod", "-o", "report.html"]
    args += ["-p", "store", "runs", "-r", "baseline_run", "first", "-r", "candidate_run", "second"]
    args += ["-r", "scorecard", SCORECARD]
    print(run(args, cwd=here, env=env).stdout.strip())
    run(["evalkit", "view", "bundle", "-o", "site"], cwd=here, env=env)
    if not (here / "site" / "index.html").is_file():
        raise CheckFailed("evalkit view bundle wrote no site/index.html")
    print("site/index.html written")


def startup(here: Path, env: Mapping[str, str]) -> dict[str, str]:
    step(f"start-up times (median of {STARTUP_REPEATS} fresh processes)")
    bare = median_seconds(["python", "-c", "pass"], cwd=here, env=env)
    imported = median_seconds(["python", "-c", "import evalkit"], cwd=here, env=env)
    helped = median_seconds(["evalkit", "--help"], cwd=here, env=env)
    return {
        "python -c pass (baseline)": f"{bare:.3f} s",
        "import evalkit": f"{imported:.3f} s ({imported / bare:.1f}x the baseline)",
        "evalkit --help": f"{helped:.3f} s ({helped / bare:.1f}x the baseline)",
    }


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="evalkit-wheel-"))
    try:
        wheel, _sdist, figures = build(work)
        venv, install_s = install(wheel, work)
        figures["fresh-venv install of the wheel"] = f"{install_s:.1f} s"
        site = site_packages(venv)
        before = snapshot(site)
        here = work / "empty"
        here.mkdir()
        env = user_env(venv)
        bundled_from_the_package(here, env, site)
        demo(here, env)
        first_hour(here, env)
        report_and_bundle(here, env)
        figures.update(startup(here, env))
        step("nothing was written inside site-packages")
        written = changes(before, snapshot(site))
        if written:
            raise CheckFailed("written inside site-packages:\n" + "\n".join(written[:20]))
        print(f"{len(before)} files in site-packages, none added, removed or changed")
        figures["machine load (1-minute average, at the end)"] = f"{os.getloadavg()[0]:.1f}"
        step("packaging figures")
        width = max(map(len, figures))
        for name, value in figures.items():
            print(f"  {name:<{width}}  {value}")
    except CheckFailed as exc:
        print(f"\nwheel check FAILED: {exc}", flush=True)
        print(f"(left for a look: {work})")
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("\nwheel check passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
