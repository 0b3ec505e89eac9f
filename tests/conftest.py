"""Shared fixtures: the bundled catalog, a CLI runner, and a mutable copy of the catalog."""

from __future__ import annotations

import compileall
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine.catalog.load import Catalog, load_catalog
from engine.resources import bundled_dir


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    """The bundled catalog, loaded once per session (it is frozen, so sharing is safe)."""
    return load_catalog()


@pytest.fixture
def runner() -> CliRunner:
    """A click test runner (stdout and stderr kept apart)."""
    return CliRunner()


@pytest.fixture
def catalog_copy(tmp_path: Path) -> Path:
    """A writable copy of the bundled catalog directory, for tests that break a file."""
    target = tmp_path / "catalog"
    shutil.copytree(bundled_dir("catalog"), target)
    return target


@pytest.fixture(scope="session")
def writer_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The recorded decision and policy texts the light writer process appends
    (tests/helpers/fast_audit_writer.py)."""
    from helpers.fast_audit_writer import write_template

    from engine.decide.engine import load_engine

    return write_template(load_engine(), tmp_path_factory.mktemp("template") / "template.json")


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[Any]]]:
    """Processes a test starts: killed (if still running) and reaped when it ends, even
    when it fails, so no writer is left behind."""
    started: list[subprocess.Popen[Any]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=60)


@pytest.fixture(autouse=True)
def isolated_audit_store(tmp_path_factory: pytest.TempPathFactory,
                         monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test records into its own temporary audit store, never the user's."""
    path = tmp_path_factory.mktemp("audit") / "audit.sqlite3"
    monkeypatch.setenv("GPU_ADVISOR_AUDIT_DB", str(path))
    return path


def pytest_configure(config: pytest.Config) -> None:
    """The policy cache (engine/decide/policy_cache.py) goes to a temporary directory, not the
    user's.

    Set before collection: some test modules load the engine when they are imported.
    """
    path = Path(tempfile.mkdtemp(prefix="gpu-advisor-policy-cache-"))
    (path / "cache").mkdir(mode=0o700)  # made before any run: none says it created it
    os.environ["GPU_ADVISOR_CACHE_DIR"] = str(path / "cache")
    config.add_cleanup(lambda: shutil.rmtree(path, ignore_errors=True))
    if not hasattr(config, "workerinput"):
        # once, before any worker starts: where the workers share evaluations of the
        # scenario files (helpers/decided.py), private to this run and removed after it
        shared = Path(tempfile.mkdtemp(prefix="gpu-advisor-evaluations-"))
        os.environ["GPU_ADVISOR_TEST_EVALUATIONS"] = str(shared)
        config.add_cleanup(lambda: shutil.rmtree(shared, ignore_errors=True))
        # once, before any worker starts: the engine's bytecode, so that the many commands
        # run as real processes do not compile every module again where the shell sets
        # PYTHONDONTWRITEBYTECODE (a command still never writes it: test_render)
        compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "engine"),
                               quiet=1)
