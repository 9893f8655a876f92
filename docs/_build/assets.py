"""What the site shows that is made when it is built, in a temporary folder: the shipped
notebooks executed on the embedded emulator (``reference/notebooks/*.ipynb``, rendered by
mkdocs-jupyter) and the screenshots of the report and the viewer (``assets/screenshots/``,
taken by :mod:`screenshots` over a fresh ``evalkit demo``).
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import screenshots

logger = logging.getLogger("mkdocs.hooks.evalkit")

NOTEBOOKS_URI = "reference/notebooks"
SCREENSHOTS_URI = "assets/screenshots"


def notebook_names() -> list[str]:
    from evalkit.data import bundled_path

    return sorted(p.name for p in bundled_path("notebooks").glob("*.ipynb"))


def _without_widget_state(path: Path) -> None:
    """Drop the stored widget state: rendering it would load the widget manager from a CDN."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    if notebook.get("metadata", {}).pop("widgets", None) is not None:
        path.write_text(json.dumps(notebook, ensure_ascii=False, indent=1), encoding="utf-8")


def _execute(name: str, out: Path, work: Path) -> Path:
    from evalkit.data import bundled_path
    from evalkit.report import execute_notebook

    cwd = work / "kernels" / Path(name).stem
    cwd.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    run = execute_notebook(
        bundled_path("notebooks") / name, output=out / name, cwd=cwd, timeout=900
    )
    if not run.ok:
        raise RuntimeError(f"notebooks/{name} failed when executed for the site: {run.error}")
    _without_widget_state(out / name)
    logger.info("executed notebooks/%s in %.0f s", name, time.monotonic() - started)
    return out / name


def _screenshots(work: Path, out: Path) -> dict[str, Path]:
    from evalkit.demo import run_demo

    started = time.monotonic()
    run_demo(work / "demo", progress=False)
    shots = screenshots.take(work / "demo", out)
    logger.info(
        "ran the demo and took %d screenshots in %.0f s", len(shots), time.monotonic() - started
    )
    return shots


def _placeholder(path: Path, what: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(8, 1.2))
    fig.text(0.5, 0.5, f"{what}\n(taken in a full build: unset EVALKIT_DOCS_QUICK)", ha="center")
    fig.savefig(path)
    plt.close(fig)


def make(root: Path, *, quick: bool = False) -> dict[str, Path]:
    """Every made file by the site path it takes (``src_uri``), written at ``root / src_uri``
    (the demo and the kernels' folders go beside ``root``)."""
    from evalkit.data import bundled_path

    work = root.parent
    notebooks = root / NOTEBOOKS_URI
    shots = root / SCREENSHOTS_URI
    notebooks.mkdir(parents=True, exist_ok=True)
    shots.mkdir(parents=True, exist_ok=True)
    names = notebook_names()
    made: dict[str, Path] = {}
    if quick:
        for name in names:
            shutil.copy(bundled_path("notebooks") / name, notebooks / name)
        for shot in screenshots.SHOTS:
            _placeholder(shots / shot, shot)
    else:
        # two at a time: a notebook's kernel is a process of its own, the demo runs here
        with ThreadPoolExecutor(max_workers=2) as pool:
            pictures: Future[dict[str, Path]] = pool.submit(_screenshots, work, shots)
            executed = [pool.submit(_execute, name, notebooks, work) for name in names]
            pictures.result()
            for future in executed:
                future.result()
    for name in names:
        made[f"{NOTEBOOKS_URI}/{name}"] = notebooks / name
    for shot in screenshots.SHOTS:
        made[f"{SCREENSHOTS_URI}/{shot}"] = shots / shot
    return made
