"""Helpers the emulator-backed `tune` and `optimize` tests share: fast run options, the clones
left behind, the demo's grid as files for the command line and the command's environment."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

from evalkit.data import bundled_path
from evalkit.demo import CONTACTS, DEMO_PERSONAS, DemoService
from evalkit.runner import RunOptions
from evalkit.targets import CLONE_PREFIX

FAST = RunOptions(concurrency=16, progress=False)


def clones(svc: DemoService) -> list[str]:
    """The temporary clones the service still holds."""
    return [a.name for a in svc.client.list_assistants() if a.name.startswith(CLONE_PREFIX)]


def grid_files(folder: Path) -> tuple[Path, Path]:
    """The demo's personas (a folder) and contacts (a CSV) written under ``folder``."""
    personas = folder / "personas"
    personas.mkdir()
    for label in DEMO_PERSONAS:
        shutil.copy(bundled_path("personas") / f"{label}.yaml", personas)
    contacts = folder / "contacts.csv"
    with contacts.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(CONTACTS[0]))
        writer.writeheader()
        writer.writerows(CONTACTS)
    return personas, contacts


def cli_env(svc: DemoService, **extra: str) -> dict[str, str]:
    """The environment that points the command at ``svc`` and its emulated judge."""
    return {
        "EVALKIT_BASE_URL": svc.emulator.base_url,
        "EVALKIT_API_KEY": svc.emulator.api_key,
        "EVALKIT_JUDGE_BASE_URL": svc.emulator.judge_base_url,
        "EVALKIT_JUDGE_API_KEY": "",
        **extra,
    }
