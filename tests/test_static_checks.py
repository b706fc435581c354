"""The code base stays ruff-clean and type-checks (mypy), as the team's guide asks: checked
here so every CI run enforces it, not just a developer's habit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=240)


def test_ruff_is_clean() -> None:
    r = _run("ruff", "check", "--no-cache", ".")
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.timeout(250)
def test_mypy_is_clean() -> None:
    """Packages and settings come from ``[tool.mypy]`` in pyproject.toml; no cache is
    written (``/dev/null``), so the run is hermetic."""
    r = _run("mypy", "--cache-dir", "/dev/null")
    assert r.returncode == 0, r.stdout + r.stderr
