"""Issue 10, items 9 and 10: help texts and examples that work as written, and ``./dev``
running any silkroad command from the clone (the command is not on the PATH there)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def test_bench_alone_says_which_benchmarks_exist(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench"]) == 2
    err = capsys.readouterr().err
    assert "engine, crypto or net" in err and "required" not in err


def test_bench_help_names_the_command_typed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "net", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: silkroad bench net") and "python -m bench" not in out


def test_replay_example_names_a_file_play_writes() -> None:
    epilog = build_parser().epilog or ""
    assert "latest.silkroad" not in epilog
    assert "--transcript games/seed7.silkroad" in epilog
    assert "silkroad replay games/seed7.silkroad" in epilog


@pytest.mark.timeout(60)
def test_dev_runs_any_silkroad_command() -> None:
    if not (ROOT / ".venv" / "bin" / "silkroad").exists() or shutil.which("bash") is None:
        pytest.fail("./dev needs the project's .venv (./dev test makes it)")
    for argv in (["audit", "--help"], ["silkroad", "audit", "--help"]):
        proc = subprocess.run([str(ROOT / "dev"), *argv], capture_output=True, text=True,
                              timeout=50, check=False)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("usage: silkroad audit"), proc.stdout
