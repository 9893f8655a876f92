"""Every async twin is reachable from one documented place, ``evalkit.aio`` (issue 32): each
sync flow that calls the service or the judge has its twin there under the same name, taking
the same parameters, and every ``a<name>`` coroutine function a package exports is in it."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import evalkit
from evalkit import aio

PACKAGES = ("api", "flows", "grading", "refine", "runner", "tuning", "compare", "diagnose")


def _sync_flows() -> dict[str, object]:
    """Functions users reach (the top level and the packages' ``__all__``) that take a
    ``client`` or a ``judge``: the ones that call the service or the judge."""
    found: dict[str, object] = {}
    spaces = [evalkit, *(importlib.import_module(f"evalkit.{p}") for p in PACKAGES)]
    for space in spaces:
        for name in space.__all__:
            value = getattr(space, name)
            if not inspect.isfunction(value) or inspect.iscoroutinefunction(value):
                continue
            if {"client", "judge"} & set(inspect.signature(value).parameters):
                found[name] = value
    return found


def test_every_sync_flow_has_its_twin_under_its_name() -> None:
    flows = _sync_flows()
    assert {"run_grid", "grade_run", "compare_runs", "draft_vs_prod", "tune"} <= set(flows)
    for name, sync in flows.items():
        if name in aio.SYNC_ONLY:
            continue
        assert name in aio.__all__, f"{name} has no async twin in evalkit.aio"
        twin = getattr(aio, name)
        assert inspect.iscoroutinefunction(twin), name
        assert twin.__name__ == f"a{name}", name
        sync_params = list(inspect.signature(sync).parameters)  # type: ignore[arg-type]
        assert list(inspect.signature(twin).parameters) == sync_params, name


def test_every_exported_twin_is_in_aio() -> None:
    twins = {getattr(aio, name) for name in aio.__all__}
    for package in PACKAGES:
        module = importlib.import_module(f"evalkit.{package}")
        for name in module.__all__:
            value = getattr(module, name)
            if name.startswith("a") and inspect.iscoroutinefunction(value):
                assert value in twins, f"evalkit.{package}.{name} is not reachable from aio"
    assert aio.AsyncClient is evalkit.AsyncClient
    assert sorted(aio.__all__) == aio.__all__


def test_aio_loads_nothing_until_a_name_is_used() -> None:
    code = (
        "import sys\nfrom evalkit import aio\n"
        "assert not any(m.startswith(('evalkit.runner', 'evalkit.flows')) for m in sys.modules)\n"
        "assert aio.run_grid.__name__ == 'arun_grid'\n"
        "assert 'evalkit.runner' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
