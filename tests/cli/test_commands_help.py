"""Help texts and examples that work as written, and ``./dev``
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
    assert "say which benchmark to run" in err and "required" not in err
    from cli.commands.bench import BENCHES

    assert all(name in err for name in BENCHES)


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


@pytest.mark.timeout(120)
def test_the_table_prints_the_audit_verdict_and_a_command_that_works(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """After a game at the table (not only headless) the transcript is audited and the
    verdict printed, with audit/replay commands that run from where the player is."""
    import asyncio

    from cli.commands.net_report import finish_report
    from cli.table.net_session import NetSession, RunOutcome
    from cli.table.session import SeatInfo
    from tests.cli.helpers import make_session

    t = tmp_path / "g.silkroad"
    assert main(["play", "--headless", "--json", "--bots", "2", "--seed", "5", "--shuffle",
                 "audit", "--one-process", "--transcript", str(t)]) == 0
    capsys.readouterr()
    local = make_session(3, 5, seat=None)
    asyncio.run(local.play_to_end())

    async def runner(human: object, handle: object) -> RunOutcome:
        raise AssertionError("not played")

    session = NetSession([SeatInfo(n, "human") for n in local.names], 0, runner)
    session._state = local.state
    session.outcome = RunOutcome(t)
    monkeypatch.setattr("sys.argv", [str(ROOT / ".venv" / "bin" / "silkroad")])
    monkeypatch.chdir(ROOT)
    target = tmp_path / "copy.silkroad"
    code = finish_report(session, target, 5, 1.0, False, headless=False, quit_early=False,
                         prog="silkroad play")
    out = capsys.readouterr().out
    assert code == 0
    assert "Auditing the transcript" in out and "Audit: CERTIFIED" in out
    assert f"./.venv/bin/silkroad audit {target}" in out  # not on the PATH: the path


def test_host_example_names_the_table_with_table(capsys: pytest.CaptureFixture[str]) -> None:
    """--name is the player's name; the example that names a table uses --table."""
    with pytest.raises(SystemExit):
        main(["host", "--help"])
    out = capsys.readouterr().out
    assert "--name 'Friday tea'" not in out and "--table 'Friday tea'" in out
