"""A game folder's λ is checked before a live table plays from it.

``meta.json`` is nobody's signed word: since protocol version 4, λ (the cut-and-choose
rounds) is the protocol's own, bound to the game id through the version.  A folder whose
λ is wrong for its version, absent, or out of range is refused with an error naming λ and
the folder on every path that reads it live (a table starting from the folder, a resume, a
bot child, ``join --resume``), never played silently.  The audit applies the same rule to
files (``p2p.judge.game_audit``); the live rule is :func:`p2p.game.lambda_problem`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from table_kit import run

from cli.main import main
from crypto.shuffle import DEFAULT_LAMBDA
from p2p.front_door import read_seat
from p2p.game import lambda_problem
from p2p.local_table import LocalPeer, finish_peer, make_local_setup, prepare_folder, start_peer
from p2p.net.connection import Listener
from p2p.netgame import resume_folder
from p2p.peer import main as peer_main
from p2p.store import BotSeat, GameStore, StoreError

ABSENT = object()
BAD = {
    "below the protocol's": 40,
    "above the protocol's": 200,
    "out of range": 10**6,
    "not an integer": "128",
    "a boolean": True,
    "absent": ABSENT,
}


def _set_lam(folder: Path, lam: Any) -> None:
    """Edit ``meta.json`` as a damaged or tampered folder would have it."""
    meta_path = folder / "meta.json"
    meta = json.loads(meta_path.read_text())
    if lam is ABSENT:
        del meta["lam"]
    else:
        meta["lam"] = lam
    meta_path.write_text(json.dumps(meta))


async def _folders(root: Path) -> list[LocalPeer]:
    """Three seats' folders, each with its secrets, every listener closed (as after a
    crash: the resumed peer binds its port again)."""
    peers = await make_local_setup(3, "audit", root)
    for p in peers:
        await p.listener.close()
        prepare_folder(p.folder, p.roster, p.params, p.seat, p.game_id, p.identity)
    return peers


def _refused(exc: BaseException, folder: Path) -> None:
    assert isinstance(exc, StoreError), repr(exc)
    assert "λ" in str(exc) and str(folder) in str(exc), str(exc)


def test_the_rule() -> None:
    assert lambda_problem(4, DEFAULT_LAMBDA) is None
    assert lambda_problem(3, 40) is None  # before version 4 any λ in range was recorded
    for lam in (40, 200, 10**6, "128", True, None):
        assert lambda_problem(4, lam) is not None, lam
    for lam in (0, 10**6, "40", True):
        assert lambda_problem(3, lam) is not None, lam


def test_an_honest_folder_gives_the_protocols_lambda(tmp_path: Path) -> None:
    peers = run(lambda: _folders(tmp_path))
    assert GameStore(peers[0].folder).load_table_lam() == DEFAULT_LAMBDA
    assert read_seat(peers[0].folder).seat == 0


@pytest.mark.parametrize("why", sorted(BAD))
def test_a_folder_with_a_wrong_lambda_is_refused_on_every_live_path(
        tmp_path: Path, why: str) -> None:
    peers = run(lambda: _folders(tmp_path))
    peer = peers[1]
    _set_lam(peer.folder, BAD[why])

    with pytest.raises(StoreError) as err:
        GameStore(peer.folder).load_table_lam()
    _refused(err.value, peer.folder)
    # the audit still reads the recorded value as it is and judges it itself
    if BAD[why] is not ABSENT and isinstance(BAD[why], int):
        assert GameStore(peer.folder).load_lam() == BAD[why]

    # ``join --resume`` checks the folder before anything comes back
    with pytest.raises(StoreError) as err:
        read_seat(peer.folder)
    _refused(err.value, peer.folder)

    async def start() -> BaseException | None:
        """A table built from the folder (a resume), refused before the mesh starts."""
        peer.listener = await Listener(peer.identity, host="127.0.0.1", port=0).start()
        try:
            await start_peer(peer, None)
        except BaseException as exc:
            return exc
        finally:
            started = peer.mesh is not None
            await finish_peer(peer)
            assert not started, "the mesh started before the folder was checked"
        return None

    got = run(start)
    assert got is not None
    _refused(got, peer.folder)

    async def resume() -> BaseException | None:
        try:
            await resume_folder(peer.folder)
        except BaseException as exc:
            return exc
        return None

    got = run(resume)
    assert got is not None
    _refused(got, peer.folder)


def test_a_bot_seat_folder_with_a_wrong_lambda_is_refused_up_front(tmp_path: Path) -> None:
    """A seat that ran bot seats brings them back from their own folders: a bad λ there is
    refused by ``join --resume`` before anything starts."""
    peers = run(lambda: _folders(tmp_path))
    GameStore(peers[0].folder).save_bot_seats(
        [BotSeat(p.seat, str(p.folder), "random", 1) for p in peers[1:]])
    _set_lam(peers[2].folder, 40)
    with pytest.raises(StoreError) as err:
        read_seat(peers[0].folder)
    _refused(err.value, peers[2].folder)


@pytest.mark.timeout(30)  # played silently, it would wait for the others
def test_a_bot_child_reports_the_refusal(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A bot child (``python -m p2p.peer FOLDER``) given such a folder says why it stopped
    in its last JSON line, instead of dying with a traceback."""
    peers = run(lambda: _folders(tmp_path))
    _set_lam(peers[1].folder, 40)
    assert peer_main([str(peers[1].folder)]) == 1
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    last = events[-1]
    assert last["event"] == "stopped" and last["rule"] == "bad-folder", events
    assert "λ" in last["detail"] and str(peers[1].folder) in last["detail"], events


@pytest.mark.timeout(30)  # played silently, it would wait for the others
def test_join_resume_refuses_it_with_one_line(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    peers = run(lambda: _folders(tmp_path))
    folder = peers[1].folder
    _set_lam(folder, 40)
    code = main(["join", "--resume", str(folder), "--headless", "--json"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "λ" in err and str(folder) in err, err
    for word in ("cheat", "unfair", "Traceback"):
        assert word not in err, err
