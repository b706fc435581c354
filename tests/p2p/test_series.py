"""A series at one table (p2p/lobby/series.py): three games in a row on real sockets (127.0.0.1),
the host's bot seat in its own process each game, one joiner replaced after game 1.

What must hold: every game is an ordinary, certified game with its own id; the seats that
come back keep their places and the newcomer takes the place of the seat that left; the
first leader is the coin's in game 1 and rotates after; every seat's ``series.json``
counts the wins of the games it played."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from p2p.errors import ProtocolError
from p2p.front_door import HostedTable, JoiningSeat, headless_agent
from p2p.game import GameParams, GameSetup, compute_game_id
from p2p.handle import TableHandle
from p2p.judge.game_audit import CERTIFIED, audit_game
from p2p.lobby.series import NextGame, SeriesRecord, read_series
from p2p.net.mesh import RosterEntry
from p2p.store import game_folder, read_export
from p2p.table import TableResult

LIMIT = 60.0


async def _game(hosted: HostedTable, seat: JoiningSeat, root: Path,
                joining: asyncio.Task[GameSetup] | None = None,
                ) -> tuple[GameSetup, TableResult, TableResult]:
    """Seat ``seat`` at the host's open lobby (bots join by themselves), start, play.
    ``joining``: the seat's join, already under way."""
    if joining is None:
        joining = asyncio.create_task(seat.join(("127.0.0.1", hosted.port), code=None,
                                                timeout=LIMIT))
    await hosted.wait_full(LIMIT)
    setup = await hosted.start()
    mine = await joining
    assert mine.game_id == setup.game_id and mine.words == setup.words
    host_res, seat_res = await asyncio.gather(
        hosted.play(setup, TableHandle(), headless_agent("heuristic", 1)),
        seat.play(mine, root, TableHandle(), headless_agent("heuristic", 2)))
    return setup, host_res, seat_res


@pytest.mark.timeout(900)  # three whole games with crypto: minutes on a loaded machine
def test_a_series_of_three_games_with_one_seat_replaced(tmp_path: Path) -> None:
    async def scenario() -> tuple[list[GameSetup], list[TableResult]]:
        hosted = HostedTable(name="series", seats=3, player="Host", root=tmp_path / "host",
                             shuffle="audit", interface="127.0.0.1", bots=1,
                             bot_names=["Bot"])
        ann = JoiningSeat(name="Ann", interface="127.0.0.1")
        bob = JoiningSeat(name="Bob", interface="127.0.0.1")
        try:
            await hosted.open()
            await ann.open()
            await bob.open()
            setups, results = [], []
            # game 1: Ann sits, plays, and leaves the table
            setup, res, _ = await _game(hosted, ann, tmp_path / "ann")
            setups.append(setup)
            results.append(res)
            await ann.close()
            assert await hosted.next_game() == 2
            # game 2: Bob takes the seat Ann left
            setup, res, _ = await _game(hosted, bob, tmp_path / "bob")
            setups.append(setup)
            results.append(res)
            # game 3: Bob dials again at once, before the host opens the next lobby: he is
            # told no table is open yet and dials again until it is
            assert hosted._listener is not None
            refused = hosted._listener.refused_count
            joining = asyncio.create_task(bob.join(("127.0.0.1", hosted.port), code=None,
                                                   timeout=LIMIT, again=True))
            while hosted._listener.refused_count == refused:
                await asyncio.sleep(0.02)  # until Bob's dial was refused (bounded below)
            assert hosted._listener.refusals[-1][1] == "no table is open here"
            assert not joining.done()  # he dials again
            assert await hosted.next_game() == 3
            setup, res, _ = await _game(hosted, bob, tmp_path / "bob", joining)
            setups.append(setup)
            results.append(res)
            return setups, results
        finally:
            await ann.close()
            await bob.close()
            await hosted.close()

    setups, results = asyncio.run(asyncio.wait_for(scenario(), 600))
    ids = [s.game_id for s in setups]
    assert len(set(ids)) == 3  # same table, same rules: a new game id every game
    rosters = [[e.name for e in s.roster] for s in setups]
    assert rosters == [["Host", "Bot", "Ann"], ["Host", "Bot", "Bob"], ["Host", "Bot", "Bob"]]
    # the host and its bot keep their keys (seat identities) from game to game
    assert len({s.roster[0].key for s in setups}) == 1
    assert len({s.roster[1].key for s in setups}) == 1
    assert [s.params.game_no for s in setups] == [1, 2, 3]

    # every game is an ordinary game: its own folder and export on every seat (the
    # host, its bot in a child process, the joiner), and certified by the audit
    exports: list[Path] = []
    for setup, res in zip(setups, results, strict=True):
        folders = [p for p in tmp_path.rglob(f"{setup.game_id.hex()[:16]}-*")
                   if (p / "game.silkroad").exists()]
        assert len(folders) == 3
        path = game_folder(tmp_path / "host", setup.game_id, setup.roster[0].key)
        report = audit_game(path / "game.silkroad")
        assert report.status == CERTIFIED, (path, report.notes)
        assert report.final_hash == res.state_hash
        exports.append(path / "game.silkroad")

    # the coin picked game 1's first leader; then it rotates to the next seat each game
    leaders = [read_export(path).params.first_leader for path in exports]
    assert leaders[0] is None
    record = read_series(game_folder(tmp_path / "host", ids[2], setups[2].roster[0].key))
    assert record is not None
    first = [r.index(g.first_leader) for r, g in zip(rosters, record.games, strict=True)
             if g.first_leader is not None]
    assert leaders[1:] == first[1:] == [(first[0] + 1) % 3, (first[0] + 2) % 3]

    # the series record: game ids in order, winners by name, wins per name
    assert [g.game_id for g in record.games] == [i.hex() for i in ids]
    want: dict[str, int] = {"Host": 0, "Bot": 0, "Ann": 0, "Bob": 0}
    for roster, res in zip(rosters, results, strict=True):
        for w in res.winners:
            want[roster[w]] += 1
    assert record.wins == want
    assert [g.winners for g in record.games] == [[r[w] for w in res.winners]
                                                 for r, res in zip(rosters, results,
                                                                   strict=True)]
    assert record.line().startswith("Series after 3 games: ")
    # the bot's folder keeps the same record; each joiner's, the games it played
    bot = read_series(next((tmp_path / "host" / "bot0").glob(f"{ids[2].hex()[:16]}-*")))
    assert bot is not None and bot.wins == want
    ann = read_series(game_folder(tmp_path / "ann", ids[0], setups[0].roster[2].key))
    bob = read_series(game_folder(tmp_path / "bob", ids[2], setups[2].roster[2].key))
    assert ann is not None and [g.game_id for g in ann.games] == [ids[0].hex()]
    assert bob is not None and [g.game_id for g in bob.games] == [i.hex() for i in ids[1:]]
    assert sum(bob.wins.values()) == sum(len(r.winners) for r in results[1:])


# --- the parts, without a network ------------------------------------------------------
def _roster(names: list[str]) -> list[RosterEntry]:
    return [RosterEntry(i, bytes([i + 1]) * 32, "127.0.0.1", 4000 + i, n)
            for i, n in enumerate(names)]


def test_game_no_changes_the_game_id_and_game_one_keeps_the_old_wire() -> None:
    roster = _roster(["A", "B", "C"])
    one = GameParams(3)
    assert one.to_wire() == [one.protocol_version, 3, "base", b"", "verified"]
    ids = {compute_game_id(roster, GameParams(3, game_no=k, first_leader=None if k == 1
                                              else 0)) for k in (1, 2, 3)}
    assert len(ids) == 3
    assert compute_game_id(roster, GameParams(3, game_no=2, first_leader=0)) != \
        compute_game_id(roster, GameParams(3, game_no=2, first_leader=1))
    for params in (GameParams(3, money="hidden"), GameParams(3, game_no=2, first_leader=2),
                   GameParams(4, money="hidden", game_no=7)):
        assert GameParams.from_wire(params.to_wire()) == params


@pytest.mark.parametrize("tail, words", [
    (["open", 1, None], "game number 1"),
    (["open", True, None], "game number True"),
    (["open", 2, 3], "first leader 3"),
    (["open", 2, -1], "first leader -1"),
    (["loud", 2, 0], "money 'loud'"),
])
def test_a_bad_series_tail_is_refused_naming_the_field(tail: list[object], words: str
                                                       ) -> None:
    wire = [*GameParams(3).to_wire(), *tail]
    with pytest.raises(ProtocolError, match=words):
        GameParams.from_wire(wire)


def test_game_one_never_names_a_first_leader() -> None:
    with pytest.raises(ValueError, match="coin"):
        GameParams(3, first_leader=1)


def test_returning_seats_keep_their_places_and_newcomers_fill_the_gaps() -> None:
    k = [bytes([i]) * 32 for i in range(6)]
    nxt = NextGame(2, (k[0], k[1], k[2], k[3]), previous_leader=3)
    # k2 left; k5 joined first, k1 and k3 came back later: k5 takes seat 2
    order = nxt.arrange([k[0], k[5], k[3], k[1]])
    assert [[k[0], k[5], k[3], k[1]][j] for j in order] == [k[0], k[1], k[5], k[3]]
    assert nxt.first_leader(4) == 0 and nxt.first_leader(3) == 1
    # the table shrank: seat 3's player takes the first free seat
    order = nxt.arrange([k[0], k[3], k[1]])
    assert [[k[0], k[3], k[1]][j] for j in order] == [k[0], k[1], k[3]]
    assert NextGame(3, (k[0],), None).first_leader(3) is None


def test_the_series_record_reads_back_and_refuses_a_damaged_file(tmp_path: Path) -> None:
    rec = SeriesRecord("t")
    rec.add(1, b"\x01" * 32, ["Ann", "Bob", "Cy"], [0], None)
    rec.add(2, b"\x02" * 32, ["Ann", "Bob", "Cy"], [1], 1)
    rec.add(3, b"\x03" * 32, ["Ann", "Bob", "Dee"], [0, 2], 2)
    assert rec.wins == {"Ann": 2, "Bob": 1, "Cy": 0, "Dee": 1}
    assert rec.line() == "Series after 3 games: Ann 2 wins, Bob 1, Dee 1, Cy 0"
    path = rec.save(tmp_path)
    assert path.stat().st_mode & 0o777 == 0o600
    back = read_series(tmp_path)
    assert back is not None and back.to_json() == rec.to_json()
    assert read_series(tmp_path / "nothing") is None
    path.write_text('{"version": 1, "games": [{"game_no": 1}]}')
    from p2p.store import StoreError
    with pytest.raises(StoreError, match=r"series\.json"):
        read_series(tmp_path)
