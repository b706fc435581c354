"""Lobby: host opens a table, joiners take seats (by discovery or host:port), start, mesh."""

from __future__ import annotations

import asyncio
import os

import pytest
from p2p_testutil import LOOPBACK, run

from p2p.errors import LobbyError
from p2p.game import GameSetup, auth_words, compute_game_id, wordlist
from p2p.identity import Identity
from p2p.lobby.discovery import Discovery, TableInfo
from p2p.lobby.seating import MAX_NAME, LobbyTable, join_discovered, join_table, unique_name
from p2p.net.connection import Listener
from p2p.net.mesh import Mesh
from p2p.sanitize import is_clean

DIGEST = bytes(range(32))


async def listener() -> Listener:
    return await Listener(Identity.generate(), host=LOOPBACK).start()


@pytest.mark.timeout(30)
def test_lobby_discovery_code_start_and_mesh(fast_zeroconf: None) -> None:
    table_name = f"Lobby {os.urandom(3).hex()}"

    async def body() -> None:
        async with Discovery([LOOPBACK]) as disc_host, Discovery([LOOPBACK]) as disc_join:
            host_l = await listener()
            table = LobbyTable(
                host_l,
                name=table_name,
                seats=4,
                host_name="alice",
                join_code="Silk 7",
                board_digest=DIGEST,
                shuffle_mode="audit",
                discovery=disc_host,
            )
            await table.open()
            found: TableInfo | None = None
            async with disc_join.browse() as browser, asyncio.timeout(5):
                while found is None:
                    event = await browser.next_event()
                    if event.table and event.table.ad.name == table_name:
                        found = event.table
            assert found.ad.code_required and found.ad.seats_taken == 1
            assert found.ad.fingerprint == host_l.identity.fingerprint

            joiners = [await listener() for _ in range(3)]
            lobby_updates: list[int] = []

            # a peer without the code is refused before it learns anything of the game
            with pytest.raises(LobbyError, match="wrong or missing join code"):
                await join_discovered(joiners[0], found, name="eve", join_code="silk 8")
            with pytest.raises(LobbyError, match="wrong or missing join code"):
                await join_table(joiners[0], LOOPBACK, host_l.port, name="eve")
            assert len(table.seated) == 1

            tasks = [
                asyncio.create_task(
                    join_discovered(
                        joiners[0],
                        found,
                        name="bob",
                        join_code="silk-7",
                        start_timeout=10,
                        on_lobby=lambda seats, total: lobby_updates.append(len(seats)),
                    )
                ),
                asyncio.create_task(
                    join_table(
                        joiners[1],
                        LOOPBACK,
                        host_l.port,
                        name="carol",
                        join_code="SILK7",
                        start_timeout=10,
                    )
                ),
            ]
            await table.wait_for_players(3, timeout=5)
            tasks.append(
                asyncio.create_task(
                    join_table(
                        joiners[2],
                        LOOPBACK,
                        host_l.port,
                        name="dave",
                        join_code="silk 7",
                        start_timeout=10,
                    )
                )
            )
            await table.wait_for_players(timeout=5)

            # the full table refuses a fifth player
            late = await listener()
            with pytest.raises(LobbyError, match="the table is full"):
                await join_table(late, LOOPBACK, host_l.port, name="late", join_code="silk 7")
            await late.close()

            # the advertisement follows the seats
            async with disc_join.browse() as browser, asyncio.timeout(5):
                while True:
                    event = await browser.next_event()
                    if event.table and event.table.ad.name == table_name:
                        if event.table.ad.seats_taken == 4:
                            break

            host_setup = await table.start()
            setups: list[GameSetup] = [host_setup, *await asyncio.gather(*tasks)]
            assert {s.game_id for s in setups} == {host_setup.game_id}
            assert {s.words for s in setups} == {host_setup.words}
            assert len(host_setup.words) == 5 and set(host_setup.words) <= set(wordlist())
            assert sorted(s.my_seat for s in setups) == [0, 1, 2, 3]
            # every seat knows the table's name (its folder records it for a resume)
            assert {s.table for s in setups} == {table_name}
            assert next(e.name for e in host_setup.roster) == "alice"
            assert host_setup.params.players == 4 and host_setup.params.board_digest == DIGEST
            assert host_setup.params.shuffle_mode == "audit"
            assert max(lobby_updates) >= 3

            # everybody builds the mesh on the listener it already has
            listeners = {
                0: host_l,
                **{s.my_seat: j for s, j in zip(setups[1:], joiners, strict=True)},
            }
            meshes = [
                Mesh(listeners[s.my_seat], s.roster, s.game_id, heartbeat_interval=0.1)
                for s in setups
            ]
            for m in meshes:
                await m.start()
            for m in meshes:
                await m.wait_all_up(5)
                m.broadcast(f"hello from {m.my_seat}".encode())
            for m in meshes:
                got = sorted([(await m.recv()).seat for _ in range(3)])
                assert got == sorted(set(range(4)) - {m.my_seat})
            for m in meshes:
                await m.close()
            await table.close()
            for lst in listeners.values():
                await lst.close()

    run(body, timeout=30)


@pytest.mark.timeout(20)
def test_start_needs_three_and_leavers_free_their_seat() -> None:
    async def body() -> None:
        host_l = await listener()
        table = await LobbyTable(host_l, name="small", seats=3).open()
        j1, j2 = await listener(), await listener()
        t1 = asyncio.create_task(join_table(j1, LOOPBACK, host_l.port, name="bob"))
        await table.wait_for_players(2, timeout=5)
        with pytest.raises(LobbyError, match="at least 3"):
            await table.start()
        t1.cancel()  # bob walks away
        with pytest.raises(asyncio.CancelledError):
            await t1
        async with asyncio.timeout(5):
            while len(table.seated) != 1:
                await asyncio.sleep(0.01)
        t2 = asyncio.create_task(join_table(j2, LOOPBACK, host_l.port, name="carol"))
        await table.wait_for_players(2, timeout=5)
        await table.close("host went home")
        with pytest.raises(LobbyError, match="host went home"):
            await t2
        for lst in (host_l, j1, j2):
            await lst.close()

    run(body)


def test_words_depend_on_every_nonce_and_the_game() -> None:
    gid = bytes(32)
    nonces = [os.urandom(32) for _ in range(3)]
    words = auth_words(gid, nonces)
    assert words == auth_words(gid, list(nonces))
    assert words != auth_words(bytes([1]) + gid[1:], nonces)
    assert words != auth_words(gid, [nonces[0], nonces[1], os.urandom(32)])


def test_unique_name_numbers_a_taken_name_ignoring_case() -> None:
    assert unique_name("Root", ["Ann", "Bea"]) == "Root"
    assert unique_name("Root", ["root"]) == "Root (2)"
    assert unique_name("ROOT", ["Root", "root (2)"]) == "ROOT (3)"
    assert unique_name("Root (2)", ["Root", "Root (2)"]) == "Root (2) (2)"
    long = "x" * MAX_NAME
    got = unique_name(long, [long])
    assert got == "x" * (MAX_NAME - 4) + " (2)" and len(got) == MAX_NAME and is_clean(got)


@pytest.mark.timeout(20)
def test_same_names_are_seated_apart_before_the_roster_is_fixed() -> None:
    """The host and two joiners all call themselves Root (the login name): the joiners
    are seated as "root (2)" and "Root (3)", learn it from the lobby updates and the
    roster, and every seat computes the game id from those names."""
    async def body() -> None:
        host_l = await listener()
        table = await LobbyTable(host_l, name="Roots", seats=3, host_name="Root",
                            shuffle_mode="audit").open()
        j1, j2 = await listener(), await listener()
        seen: list[list[tuple[str, str]]] = []
        tasks = [asyncio.create_task(join_table(j1, LOOPBACK, host_l.port, name="root",
                                                start_timeout=10,
                                                on_lobby=lambda s, _: seen.append(s)))]
        await table.wait_for_players(2, timeout=5)  # join order decides the numbers
        tasks.append(asyncio.create_task(join_table(j2, LOOPBACK, host_l.port, name="Root",
                                                    start_timeout=10)))
        await table.wait_for_players(timeout=5)
        assert [s.name for s in table.seated] == ["Root", "root (2)", "Root (3)"]
        host_setup = await table.start()
        setups = [host_setup, *await asyncio.gather(*tasks)]
        names = ["Root", "root (2)", "Root (3)"]
        for setup in setups:
            assert [e.name for e in setup.roster] == names
            assert setup.game_id == compute_game_id(setup.roster, setup.params)
        assert {s.game_id for s in setups} == {host_setup.game_id}
        # each joiner finds its own final name by its key
        assert setups[1].roster[setups[1].my_seat].name == "root (2)"
        assert setups[2].roster[setups[2].my_seat].name == "Root (3)"
        # the first joiner saw its new name in the lobby, against its own fingerprint
        mine = j1.identity.fingerprint[:8]
        assert ("root (2)", mine) in seen[-1]
        await table.close()
        for lst in (host_l, j1, j2):
            await lst.close()

    run(body)
