"""Running a page's examples: the embedded emulator (one per test process), and per page a
fresh folder, a fresh project holding a fresh demo assistant, one Python namespace and one
shell state.

A page's environment is what ``evalkit emulator --demo-assistant`` prints (the service, the
judge and the proposer on the emulator, ``EVALKIT_ASSISTANT_ID``), the emulator seeded as
``evalkit emulator --demo-assistant --seed 7`` is, so the numbers a page shows are exact. Each
page gets a project of its own (its ``EVALKIT_API_KEY``): the emulator seeds a conversation by
the config and how often that request was made on that config in the project, so pages running
in any order, on any worker, see the same transcripts a reader's fresh emulator shows.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .blocks import Block, console_commands, output_matches

#: The emulator's seed, as the pages tell a reader to start it (``--seed 7``).
SEED = 7
#: The demo's pace: emulated seconds are 0.002 s, so builds and pings are quick.
TIME_SCALE = 0.002
#: A shell command (or a python block) gets this long.
COMMAND_TIMEOUT_S = 240


class ExampleFailed(AssertionError):
    """An example that raised, exited non-zero, or printed something other than shown."""


class Emulator:
    """The test process's one emulator, started on first use and stopped at exit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stack = contextlib.ExitStack()
        self.server: Any = None

    def get(self) -> Any:
        with self._lock:
            if self.server is None:
                from evalkit.demo._story import CEILING_FLOOR_S
                from evalkit.emulator import EmulatorSettings, serve

                settings = EmulatorSettings(
                    seed=SEED, time_scale=TIME_SCALE, min_ceiling_s=CEILING_FLOOR_S
                )
                self.server = self._stack.enter_context(serve(settings=settings))
            return self.server

    def close(self) -> None:
        self._stack.close()
        self.server = None


def settings_env(server: Any) -> dict[str, str]:
    """The ``export`` lines ``evalkit emulator`` prints, as a mapping."""
    from evalkit.cli._emulator_command import settings_lines

    pairs = (line.split("=", 1) for line in settings_lines(server))
    return {key: value for key, value in pairs}


@dataclass
class Page:
    """One page's examples' world: its folder, environment, namespace and shell state."""

    path: Path
    emulator: Emulator
    folder: Path = field(init=False)
    env: dict[str, str] = field(init=False)
    namespace: dict[str, Any] = field(init=False)
    failed: str | None = None
    _state: Path = field(init=False)
    _ready: bool = False

    def __post_init__(self) -> None:
        self.path = Path(os.path.relpath(self.path, Path(__file__).resolve().parents[2]))
        self._root = Path(tempfile.mkdtemp(prefix="evalkit-docs-page-"))
        self.folder = self._root / "work"
        self.folder.mkdir()
        self._state = self._root / "shell-state"
        self.namespace = {"__name__": "__main__"}
        self.env = {}

    def ready(self) -> None:
        """Start what the page needs: the emulator and the page's own demo assistant."""
        if self._ready:
            return
        from evalkit.demo import build_demo_assistant
        from evalkit.emulator import EmulatorAdmin

        server = self.emulator.get()
        key = server.new_project()["apiKey"]
        with self.inside(), EmulatorAdmin(server.url, key) as project:
            assistant_id = build_demo_assistant(project, self.folder / "runs")
        self.env = {**settings_env(server), "EVALKIT_API_KEY": key}
        self.env["EVALKIT_ASSISTANT_ID"] = assistant_id
        self._ready = True

    @contextlib.contextmanager
    def inside(self) -> Iterator[None]:
        """The page's folder as the working directory and its environment in ``os.environ``."""
        before_cwd = os.getcwd()
        before_env = dict(os.environ)
        os.environ.clear()
        os.environ.update({**_base_env(), **self.env})
        os.chdir(self.folder)
        try:
            yield
        finally:
            os.chdir(before_cwd)
            os.environ.clear()
            os.environ.update(before_env)
            _forget_filesystems()

    def close(self) -> None:
        import shutil

        shutil.rmtree(self._root, ignore_errors=True)

    # ------------------------------------------------------------------------- running

    def run(self, block: Block) -> None:
        self.ready()
        if block.file_kind is not None:
            self._check_file(block)
        elif block.lang == "python":
            self._python(block)
        elif block.lang == "console":
            for command in console_commands(block):
                self._shell(command.command, command.line, command.expected)
        else:
            self._shell(block.text, block.line, None)

    def _python(self, block: Block) -> None:
        code = compile(block.text, f"{self.path}:{block.line}", "exec")
        out = io.StringIO()
        with self.inside(), contextlib.redirect_stdout(out):
            try:
                exec(code, self.namespace)
            except Exception as exc:
                printed = out.getvalue()
                trace = "".join(traceback.format_exception(exc))
                raise ExampleFailed(
                    f"the python block at {self.path}:{block.line} raised:\n{trace}"
                    + (f"\nit printed before:\n{printed}" if printed else "")
                ) from None
        if block.expected is not None:
            _compare(block.expected, out.getvalue(), f"{self.path}:{block.line}")

    def _shell(self, script: str, line: int, expected: str | None) -> None:
        """Run ``script`` with bash in the page's folder; cd and exports carry to the next."""
        bin_dir = str(Path(sys.executable).parent)
        path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
        env = {**_base_env(), **self.env, "PATH": path}
        state = shlex.quote(str(self._state))
        wrapped = (
            f"[ -f {state} ] && . {state}\n"
            f"{script}\n"
            "__rc=$?\n"
            f"{{ export -p; printf 'cd %q\\n' \"$PWD\"; }} > {state}\n"
            "exit $__rc\n"
        )
        if not self._state.exists():
            self._state.write_text(f"cd {shlex.quote(str(self.folder))}\n", encoding="utf-8")
        try:
            done = subprocess.run(
                ["bash", "-c", wrapped],
                cwd=self.folder,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=COMMAND_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired as exc:
            raise ExampleFailed(
                f"{self.path}:{line}: still running after {COMMAND_TIMEOUT_S} s: {script}"
            ) from exc
        # what it printed: its standard output, then its standard error (in that order, so a
        # page can show both without depending on how a terminal interleaves them)
        printed = done.stdout + done.stderr
        if done.returncode != 0:
            raise ExampleFailed(
                f"{self.path}:{line}: exited {done.returncode}: {script}\n{printed}"
            )
        if expected is not None:
            _compare(expected, printed, f"{self.path}:{line} ({script})")

    def _check_file(self, block: Block) -> None:
        from evalkit.grading import Scorecard
        from evalkit.grid import load_personas
        from evalkit.runner import Pricing
        from evalkit.tuning import load_variants

        path = self._root / f"block-{block.line}.yaml"
        path.write_text(block.text, encoding="utf-8")
        loaders = {
            "scorecard": Scorecard.load,
            "persona": load_personas,
            "variants": load_variants,
            "pricing": Pricing.load,
        }
        try:
            loaders[block.kind](path)
        except Exception as exc:
            raise ExampleFailed(
                f"the {block.kind} at {self.path}:{block.line} is refused by evalkit's "
                f"loader: {exc}"
            ) from None


def _forget_filesystems() -> None:
    """Drop the filesystems fsspec cached while a page's environment was in place: it keeps
    one per set of arguments, endpoint and all, and a later test of this process would reach
    the page's (stopped) S3 server through it."""
    if "fsspec" not in sys.modules:
        return
    from fsspec import AbstractFileSystem

    kinds: list[type[AbstractFileSystem]] = [AbstractFileSystem]
    while kinds:  # every filesystem class loaded, however it was imported
        kind = kinds.pop()
        kind.clear_instance_cache()
        kinds.extend(kind.__subclasses__())


def _base_env() -> dict[str, str]:
    """This process's environment without a developer's own evalkit settings."""
    return {k: v for k, v in os.environ.items() if not k.startswith("EVALKIT_")}


def _compare(expected: str, actual: str, where: str) -> None:
    if output_matches(expected, actual):
        return
    diff = "\n".join(
        difflib.unified_diff(
            expected.rstrip("\n").splitlines(),
            actual.rstrip("\n").splitlines(),
            "shown",
            "printed",
            lineterm="",
        )
    )
    raise ExampleFailed(f"{where} printed something other than shown:\n{diff}")
