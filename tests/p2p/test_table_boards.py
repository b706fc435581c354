"""Variant and board at a networked table: every peer builds its engine config from the
agreed params (reverse direction, a custom board file carried as JSON), the offline audit
rebuilds the same config from the transcript, and a peer with another board is refused."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from table_kit import LAM, FrugalBot, run

from engine.board import default_board_data
from p2p.errors import LobbyError
from p2p.game import BoardMismatch, board_spec_digest
from p2p.identity import Identity
from p2p.judge.game_audit import DAMAGED, EXIT_NOT_CERTIFIED, audit_game
from p2p.lobby.seating import LobbyTable, join_table
from p2p.local_table import run_local_game
from p2p.net.connection import Listener
from p2p.netgame import play_setup
from p2p.store import encode_export, read_export
from p2p.table import LockstepTable


def custom_board(path: Path) -> Path:
    """A valid board that differs from the built-in one (name and a printed bonus)."""
    data = default_board_data()
    data["name"] = "Test board"
    for city in data["cities"]:
        if city["name"] == "Dunhuang":
            city["printed"] = {"kind": "exchange", "n": 3}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _play(tmp_path: Path, **kw: object) -> tuple[object, list[LockstepTable]]:
    seen: list[LockstepTable] = []

    def on_tables(tables: list[LockstepTable]) -> None:
        seen.extend(tables)

    result = run(lambda: run_local_game(3, [FrugalBot(s) for s in range(3)], 4, "audit",
                                        tmp_path, lam=LAM, on_tables=on_tables, **kw),
                 timeout=110)
    return result, seen


@pytest.mark.timeout(120)
def test_reverse_variant_game_audits_fair(tmp_path: Path) -> None:
    result, tables = _play(tmp_path, variant="reverse")
    assert all(t.config.board.reverse for t in tables)
    assert len(set(result.state_hashes)) == 1
    assert result.audit is not None and result.audit.fair, str(result.audit)
    game = read_export(result.transcript)
    assert game.params.variant == "reverse" and game.config().board.reverse
    assert result.audit.final_hash == result.state_hashes[0]


@pytest.mark.timeout(120)
def test_custom_board_game_audits_fair(tmp_path: Path) -> None:
    board = custom_board(tmp_path / "board.json")
    result, tables = _play(tmp_path / "games", board=board)
    assert all(t.config.board.name == "Test board" for t in tables)
    assert len(set(result.state_hashes)) == 1
    assert result.audit is not None and result.audit.fair, str(result.audit)
    game = read_export(result.transcript)
    assert game.params.board_digest == board_spec_digest(board.read_text())
    assert game.config().board.name == "Test board"
    # the board in the file is bound by the game id: swapping it is caught, not replayed;
    # nobody signed the board, so the file is damaged (exit 3), naming no one
    swapped = tmp_path / "swapped.silkroad"
    swapped.write_bytes(encode_export(game.roster, game.params, game.game_id, game.lam,
                                      game.wires, "default"))
    report = audit_game(swapped)
    assert report.exit_code == EXIT_NOT_CERTIFIED and report.status == DAMAGED
    assert report.violation is not None and report.violation.party is None
    assert report.violation.rule == "board" and "board mismatch" in str(report)


@pytest.mark.timeout(60)
def test_joiner_with_another_board_is_refused_with_the_reason(tmp_path: Path) -> None:
    board = custom_board(tmp_path / "board.json")
    digest = board_spec_digest(board.read_text()).hex()[:16]

    async def body() -> None:
        listeners = [await Listener(Identity.generate(), host="127.0.0.1").start()
                     for _ in range(4)]
        host = LobbyTable(listeners[0], name="t", seats=3, shuffle_mode="audit",
                          advertise_addresses=["127.0.0.1"])
        await host.open()
        try:
            # a joiner bringing another board file is refused at the door, both digests named
            with pytest.raises(LobbyError, match="board mismatch") as err:
                await join_table(listeners[3], "127.0.0.1", listeners[0].port, name="odd",
                                 board=board)
            assert digest in str(err.value)
            assert board_spec_digest("default").hex()[:16] in str(err.value)
            joins = [asyncio.ensure_future(join_table(
                lst, "127.0.0.1", listeners[0].port, name=f"p{i}", start_timeout=20))
                for i, lst in enumerate(listeners[1:3], 1)]
            await host.wait_for_players(timeout=10)
            setups = [await host.start(), *(await asyncio.gather(*joins))]
        finally:
            await host.close()
            for lst in listeners[3:]:
                await lst.close()
        assert all(s.board == "default" for s in setups)
        # a peer that was set up but then asks to play its own board is refused before any
        # game state exists, naming the mismatch
        with pytest.raises(BoardMismatch, match="board mismatch: this peer has its board file"):
            await play_setup(setups[1], listeners[1], tmp_path / "p1", FrugalBot(1),
                             lam=LAM, board=board)
        with pytest.raises(BoardMismatch, match="variant mismatch"):
            await play_setup(setups[2], listeners[2], tmp_path / "p2", FrugalBot(2),
                             lam=LAM, variant="reverse")
        assert not (tmp_path / "p1").exists() and not (tmp_path / "p2").exists()
        for lst in listeners[:3]:
            await lst.close()

    run(body, timeout=50)
