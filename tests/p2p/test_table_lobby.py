"""The path ``silkroad host`` / ``join`` takes: lobby on 127.0.0.1, then the lockstep game."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from table_kit import LAM, FrugalBot, run

from p2p.identity import Identity
from p2p.judge.game_audit import audit_game
from p2p.lobby.seating import LobbyTable, join_table
from p2p.net.connection import Listener
from p2p.netgame import play_setup


@pytest.mark.timeout(120)
def test_lobby_then_game(tmp_path: Path) -> None:
    async def body() -> list:
        listeners = [await Listener(Identity.generate(), host="127.0.0.1").start()
                     for _ in range(3)]
        host = LobbyTable(listeners[0], name="t", seats=3, shuffle_mode="audit",
                          advertise_addresses=["127.0.0.1"])
        await host.open()
        try:
            joins = [asyncio.ensure_future(join_table(
                lst, "127.0.0.1", listeners[0].port, name=f"p{i}", mesh_host="127.0.0.1",
                start_timeout=20)) for i, lst in enumerate(listeners[1:], 1)]
            await host.wait_for_players(timeout=10)
            setups = [await host.start(), *(await asyncio.gather(*joins))]
        finally:
            await host.close()
        assert len({s.words for s in setups}) == 1
        games = [play_setup(s, lst, tmp_path / f"peer{s.my_seat}", FrugalBot(s.my_seat),
                            lam=LAM, abandon_timeout=60)
                 for s, lst in zip(setups, listeners, strict=True)]
        try:
            return list(await asyncio.gather(*games))
        finally:
            for lst in listeners:
                await lst.close()

    results = run(body, timeout=110)
    assert len({r.state_hash for r in results}) == 1
    assert audit_game(results[0].export).fair
