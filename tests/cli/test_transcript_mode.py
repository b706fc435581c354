"""The transcript a command copies out of the game folder is as private as the folder.

``game.silkroad`` holds what only this seat was sent, so in the game folder it is ``0600``
(docs/network.md, "Permissions").  ``silkroad play --transcript PATH`` (and ``host`` and
``join``, through :func:`cli.commands.net_report.finish_report`) copied it with the umask's mode —
``0644`` for most users — where anyone on the machine could read it.  The copy is now
written atomically as ``0600``, also when the table stopped after the game reached its end
(the export it still wrote is copied, and its path is shown).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.commands.net_report import finish_report
from cli.main import main
from cli.table.net_session import NetSession, RunOutcome
from cli.table.session import SeatInfo
from p2p.handle import TableHandle
from p2p.table import HumanDecider, TableStopped


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The usual umask (files ``0644``), whatever the test runner's is."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.timeout(120)
@pytest.mark.usefixtures("open_umask")
def test_play_writes_its_transcript_copy_0600(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "new" / "g.silkroad"
    assert main(["play", "--headless", "--json", "--bots", "2", "--seed", "5", "--shuffle",
                 "audit", "--one-process", "--transcript", str(target)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["transcript"] == str(target) and out["verdict"] == "fair", out
    assert _mode(target) == 0o600
    assert _mode(target.parent) == 0o700  # made by us, for the seats' folders too
    assert not list(target.parent.glob("*.tmp"))  # written atomically, nothing left over
    # the offline commands only read it
    assert main(["audit", str(target), "--json"]) == 0
    capsys.readouterr()
    assert _mode(target) == 0o600


async def _never(_human: HumanDecider | None, _handle: TableHandle) -> RunOutcome:
    raise AssertionError("not run: the test sets the session's end itself")


@pytest.mark.usefixtures("open_umask")
def test_an_existing_readable_copy_is_replaced_by_a_private_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A stop after the end of the game: its export is copied (``0600``, replacing a
    readable file of the same name) and the player is told where it is."""
    export = tmp_path / "folder" / "game.silkroad"
    export.parent.mkdir()
    export.write_bytes(b"the signed envelopes")
    target = tmp_path / "copy.silkroad"
    target.write_bytes(b"an older game")
    target.chmod(0o644)
    session = NetSession([SeatInfo(n, "bot") for n in ("Ann", "Bea", "Cem")], None, _never)
    session.stopped = TableStopped(2, "timeout", "waited 4.0 s for the closing "
                                                 "acknowledgements; seats [2] never answered")
    session.stopped.export = export
    code = finish_report(session, target, None, 1.0, False, headless=True, quit_early=False,
                         prog="silkroad play")
    err = capsys.readouterr().err
    assert code == 1
    assert target.read_bytes() == b"the signed envelopes" and _mode(target) == 0o600
    assert "Cem (seat 2)" in err and f"its transcript is {target}" in err, err
