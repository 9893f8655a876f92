"""The Debian packages the browser tests need, installed by the test run itself when missing.

The browser tests drive Debian's ``chromium`` with Playwright (which cannot download a browser
of its own here), and ``fonts-noto-core`` gives Chromium the fonts a reader's machine has. The
test command (README's ``pytest``) installs both once per machine, before any worker starts:
with ``apt-get`` as root, or through ``sudo`` when it needs no password. When neither is
possible, or ``apt-get`` fails, the run says so once (:func:`unavailable_message`) instead of
failing every browser test.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

from _pytest.mark.expression import Expression

#: What the browser tests need, in the order apt-get is given them.
PACKAGES = ("chromium", "fonts-noto-core")

#: The whole of ``apt-get update`` + ``install`` may take this long (a slow mirror, a big
#: download) before the run gives up and says why.
INSTALL_TIMEOUT_S = 1200

#: Lines of apt-get's output kept for the message when it fails.
_TAIL_LINES = 15


def _marked(marks: set[str]) -> Callable[..., bool]:
    def matcher(name: str, /, **kwargs: object) -> bool:
        return name in marks

    return matcher


def selected(markexpr: str) -> bool:
    """False when ``-m markexpr`` leaves out every test marked ``browser``, whatever else it
    is marked with."""
    if not markexpr:
        return True
    expression = Expression.compile(markexpr)
    others = ("slow", "notebook")
    return any(
        expression.evaluate(_marked({"browser", *extra}))
        for size in range(len(others) + 1)
        for extra in itertools.combinations(others, size)
    )


def chromium_path() -> str | None:
    """The installed Chromium executable, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _installed(package: str) -> bool:
    if package == "chromium":
        return chromium_path() is not None
    if shutil.which("dpkg-query") is None:  # not Debian: the font by name, if fontconfig knows it
        return _fontconfig_has("Noto Nastaliq Urdu")
    found = subprocess.run(
        ["dpkg-query", "-W", "-f=${db:Status-Status}", package],
        capture_output=True,
        text=True,
        check=False,
    )
    return found.returncode == 0 and found.stdout.strip() == "installed"


def _fontconfig_has(family: str) -> bool:
    if shutil.which("fc-list") is None:
        return False
    listed = subprocess.run(["fc-list", family], capture_output=True, text=True, check=False)
    return bool(listed.stdout.strip())


def missing() -> tuple[str, ...]:
    """The packages of :data:`PACKAGES` this machine lacks."""
    return tuple(package for package in PACKAGES if not _installed(package))


def _privilege() -> list[str] | None:
    """The prefix that runs apt-get as root: none for root, ``sudo -n`` when sudo needs no
    password, None when neither."""
    if os.geteuid() == 0:
        return []
    sudo = shutil.which("sudo")
    if sudo is None:
        return None
    probe = subprocess.run([sudo, "-n", "true"], capture_output=True, check=False)
    return [sudo, "-n"] if probe.returncode == 0 else None


@dataclass(frozen=True)
class Outcome:
    """What provisioning did: the packages it installed, or why the missing ones are missing."""

    installed: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    reason: str = ""
    seconds: float = 0.0

    @property
    def ready(self) -> bool:
        return not self.missing


def _apt(prefix: list[str], args: list[str], deadline: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(
        [*prefix, "apt-get", *args],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=max(deadline - time.monotonic(), 1.0),
    )


def _tail(result: subprocess.CompletedProcess[str]) -> str:
    lines = (result.stdout + result.stderr).strip().splitlines()
    return "\n".join(lines[-_TAIL_LINES:])


def provision(announce: Callable[[tuple[str, ...]], None]) -> Outcome:
    """Install the missing :data:`PACKAGES` with apt-get (root or password-less sudo);
    ``announce`` is told the packages just before apt-get starts."""
    needed = missing()
    if not needed:
        return Outcome()
    if shutil.which("apt-get") is None:
        return Outcome(missing=needed, reason="this machine has no apt-get (not Debian)")
    prefix = _privilege()
    if prefix is None:
        return Outcome(missing=needed, reason="not root, and sudo is absent or asks a password")
    announce(needed)
    started = time.monotonic()
    deadline = started + INSTALL_TIMEOUT_S
    try:
        update = _apt(prefix, ["update", "-q"], deadline)
        if update.returncode != 0:
            return Outcome(missing=needed, reason=f"apt-get update failed:\n{_tail(update)}")
        install = _apt(
            prefix, ["install", "-y", "-q", "--no-install-recommends", *needed], deadline
        )
    except subprocess.TimeoutExpired:
        return Outcome(missing=missing(), reason=f"apt-get took over {INSTALL_TIMEOUT_S} s")
    still = missing()
    seconds = time.monotonic() - started
    if install.returncode != 0 or still:
        return Outcome(missing=still or needed, reason=f"apt-get install failed:\n{_tail(install)}")
    return Outcome(installed=needed, seconds=seconds)


def install_command(packages: tuple[str, ...] = PACKAGES) -> str:
    return f"sudo apt-get install {' '.join(packages)}"


def skip_reason(packages: tuple[str, ...]) -> str:
    """The one reason every browser test is skipped with (pytest folds them into one line)."""
    return f"Debian's {', '.join(packages)} missing: {install_command(packages)}"


def unavailable_message(outcome: Outcome) -> str:
    """The run's one message when the browser tests cannot run."""
    return (
        f"The browser tests need Debian's {' and '.join(outcome.missing)}, which this machine "
        f"lacks and the test run could not install ({outcome.reason}).\n"
        f"Install them ({install_command(outcome.missing)}) and run pytest again, "
        "or leave the browser tests out: pytest -m 'not browser'."
    )
