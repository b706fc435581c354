"""Idle and unauthenticated connections cannot lock honest players out.

About 80 idle connections kept open made 15 of 18 honest joins fail and slowed a resume
from 19 s to 79 s.  Now a handshake has deadlines, strangers are limited per address and
overall (a newcomer pushes out the idlest), and seats the game knows get reserved room.
Everything runs on 127.0.0.1 with real sockets; every loop is bounded in count and time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import pytest
from p2p_testutil import LOOPBACK, run, start_mesh
from test_p2p_handshake import PURPOSE, RawDialer
from test_p2p_mesh import crash, expect

from p2p.errors import LobbyError
from p2p.identity import Identity
from p2p.lobby.seating import LOBBY, MAX_JOINING, LobbyTable, join_table
from p2p.net.connection import LOG_BURST, Connection, Listener, dial
from p2p.net.handshake import AcceptPolicy, new_incarnation
from p2p.net.mesh import Mesh, PeerUp

CODE = "silk 7"


class Flood:
    """``slots`` idle connections to each port, each reopened (after ``pause``) when the
    listener closes it, like an attacker keeping them open.  Bounded: at most
    ``max_opens`` connections in all, and it stops by itself after ``max_time``."""

    def __init__(self, ports: list[int], slots: int = 80, pause: float = 0.05,
                 max_opens: int = 20_000, max_time: float = 60.0) -> None:
        self.ports, self.slots, self.pause = ports, slots, pause
        self.max_opens, self.deadline = max_opens, time.monotonic() + max_time
        self.opens = 0
        self.open_now = 0
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    async def _slot(self, port: int) -> None:
        while not self._stop.is_set() and self.opens < self.max_opens \
                and time.monotonic() < self.deadline:
            self.opens += 1
            try:
                reader, writer = await asyncio.open_connection(LOOPBACK, port)
            except OSError:
                await asyncio.sleep(self.pause)
                continue
            self.open_now += 1
            try:
                left = max(0.0, self.deadline - time.monotonic())
                with contextlib.suppress(TimeoutError, OSError):
                    await asyncio.wait_for(reader.read(), left)  # idle until closed
            finally:
                self.open_now -= 1
                writer.close()
            await asyncio.sleep(self.pause)

    async def __aenter__(self) -> Flood:
        self._tasks = [asyncio.create_task(self._slot(p)) for p in self.ports
                       for _ in range(self.slots)]
        await asyncio.sleep(0.5)  # let them connect
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._stop.set()
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


@pytest.mark.timeout(20)
def test_handshake_deadlines_close_idle_and_stalled_sockets() -> None:
    async def body() -> None:
        lst = await Listener(Identity.generate(), host=LOOPBACK, hello_timeout=0.3,
                             handshake_timeout=0.8).start()
        lst.register(PURPOSE, AcceptPolicy(lambda k: None), lambda c: c.close())
        try:
            t0 = time.monotonic()
            reader, writer = await asyncio.open_connection(LOOPBACK, lst.port)
            assert await asyncio.wait_for(reader.read(), 5) == b""  # closed on us
            idle = time.monotonic() - t0
            writer.close()
            assert 0.25 <= idle < 2.0, idle
            raw = RawDialer()  # a hello, then nothing: the whole-handshake deadline
            await raw.connect(lst.port)
            t0 = time.monotonic()
            raw.writer.write(raw.m1())
            assert (await raw.read())[0] == "hello-ack"
            with contextlib.suppress(ConnectionError):
                while await asyncio.wait_for(raw.reader.read(4096), 5):
                    pass
            stalled = time.monotonic() - t0
            raw.writer.close()
            assert 0.6 <= stalled < 3.0, stalled
            reasons = [r for _a, r in lst.refusals]
            assert "no hello within 0.3 s" in reasons and "handshake timed out" in reasons
        finally:
            await lst.close()

    run(body)


@pytest.mark.timeout(60)
def test_honest_joins_succeed_quickly_under_80_idle_connections(
        caplog: pytest.LogCaptureFixture) -> None:
    """18 honest joins (3 rounds of 5 joiners, then 3 more), each with the join code,
    while 80 idle connections are kept open against the host.  The refusals the flood
    causes are counted, but logged only up to a bound."""
    caplog.set_level(logging.WARNING, logger="p2p")

    async def body() -> None:
        host = await Listener(Identity.generate(), host=LOOPBACK).start()
        table = await LobbyTable(host, name="Tea", seats=6, join_code=CODE).open()
        joiners = [await Listener(Identity.generate(), host=LOOPBACK).start()
                   for _ in range(18)]
        seated = 0
        try:
            async with Flood([host.port]) as flood:
                assert flood.open_now >= 60  # the flood holds its sockets open
                for chunk in (joiners[0:5], joiners[5:10], joiners[10:15], joiners[15:18]):
                    t0 = time.monotonic()
                    tasks = [asyncio.create_task(join_table(
                        j, LOOPBACK, host.port, name=f"p{i}", join_code=CODE, timeout=5,
                        start_timeout=30)) for i, j in enumerate(chunk)]
                    try:
                        await table.wait_for_players(1 + len(chunk), timeout=8)
                        took = time.monotonic() - t0
                        assert took < 5.0, took
                        seated += len(chunk)
                    finally:
                        for t in tasks:
                            t.cancel()
                        results = await asyncio.gather(*tasks, return_exceptions=True)
                        assert not any(isinstance(r, LobbyError) for r in results), results
                    async with asyncio.timeout(5):  # they left: their seats are free
                        while len(table.seated) > 1:
                            await asyncio.sleep(0.02)
            assert seated == 18
            lines = [r for r in caplog.records if "refused connection" in r.getMessage()]
            assert len(lines) <= LOG_BURST * 2, len(lines)
        finally:
            await table.close()
            for j in joiners:
                await j.close()
            await host.close()

    run(body, 55)


@pytest.mark.timeout(30)
def test_silent_sockets_push_out_only_each_other() -> None:
    """Past ``idle_per_address`` silent sockets from one address, the oldest go; an
    honest dialer from that very address, the newest, gets in."""
    async def body() -> None:
        lst = await Listener(Identity.generate(), host=LOOPBACK, idle_per_address=8,
                             max_idle=16).start()
        got: asyncio.Queue[Connection] = asyncio.Queue()
        lst.register(PURPOSE, AcceptPolicy(lambda k: None), got.put_nowait)
        socks: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        try:
            for _ in range(30):  # bounded: 30 silent sockets, one after the other
                socks.append(await asyncio.open_connection(LOOPBACK, lst.port))
                await asyncio.sleep(0.005)
            async with asyncio.timeout(5):
                while lst.evicted_count < 22:
                    await asyncio.sleep(0.01)
            for reader, _w in socks[:22]:  # the oldest were closed
                assert await asyncio.wait_for(reader.read(), 5) == b""
            assert lst.pending == 8 and lst.evicted_count == 22
            raw = RawDialer()  # an honest hello from the same address still gets through
            await raw.connect(lst.port)
            raw.writer.write(raw.m1())
            m2 = await raw.read()
            raw.writer.write(raw.valid_m3(m2))
            conn = await asyncio.wait_for(got.get(), 5)
            assert conn.remote_key == raw.identity.public
            conn.close()
            raw.writer.close()
            # its arrival pushed out one more silent socket, the oldest, and nothing else
            assert lst.evicted_count == 23
            assert await asyncio.wait_for(socks[22][0].read(), 5) == b""
        finally:
            for _r, w in socks:
                w.close()
            await lst.close()

    run(body, 25)


@pytest.mark.timeout(60)
def test_a_resume_gets_back_in_quickly_under_a_flood() -> None:
    """A crashed seat restarts (same key, same port) while 80 idle connections are held
    against each of the other seats: it is back with everyone within seconds."""
    async def body() -> None:
        meshes, listeners, game_id = await start_mesh(3, heartbeat=0.1, timeout=0.6)
        roster = meshes[0].roster
        old, port = listeners[1].identity, listeners[1].port
        try:
            async with Flood([listeners[0].port, listeners[2].port]):
                await crash(meshes[1], listeners[1])
                t0 = time.monotonic()
                listeners[1] = await Listener(Identity.from_bytes(old.to_bytes()),
                                              host=LOOPBACK, port=port).start()
                meshes[1] = Mesh(listeners[1], roster, game_id, heartbeat_interval=0.1,
                                 peer_timeout=0.6)
                await meshes[1].start()
                await meshes[1].wait_all_up(10)
                for m in (meshes[0], meshes[2]):
                    up = await expect(m, PeerUp, 10)
                    assert up.seat == 1 and up.restarted
                took = time.monotonic() - t0
                assert took < 5.0, took
                meshes[1].broadcast(b"back")
                for m in (meshes[0], meshes[2]):
                    got = await asyncio.wait_for(m.recv(), 5)
                    assert (got.seat, got.body) == (1, b"back")
        finally:
            for m in meshes:
                await m.close()
            for lst in listeners:
                await lst.close()

    run(body, 55)


@pytest.mark.timeout(30)
def test_known_seats_have_reserved_room() -> None:
    """Strangers that sent a hello and stall fill every stranger slot; a known seat's
    handshake is never pushed out by them, and a second claim of the same key replaces
    the first."""
    async def body() -> None:
        seat = Identity.generate()
        lst = await Listener(Identity.generate(), host=LOOPBACK, max_pending=4, per_address=4,
                             reserved=2, hello_timeout=5, handshake_timeout=8).start()
        got: asyncio.Queue[Connection] = asyncio.Queue()
        lst.register(PURPOSE, AcceptPolicy(lambda k: None, known=lambda k: k == seat.public),
                     got.put_nowait)
        raws: list[RawDialer] = []
        try:
            mine = RawDialer(seat)
            await mine.connect(lst.port)
            mine.writer.write(mine.m1())
            m2 = await mine.read()
            assert m2[0] == "hello-ack"
            for _ in range(30):  # bounded: 30 strangers, each a hello and then silence
                raw = RawDialer()
                raws.append(raw)
                await raw.connect(lst.port)
                raw.writer.write(raw.m1())
                await asyncio.sleep(0.01)
            assert lst.evicted_count >= 26 and lst.pending <= 4 + 2
            mine.writer.write(mine.valid_m3(m2))  # still there: it completes
            conn = await asyncio.wait_for(got.get(), 5)
            assert conn.remote_key == seat.public
            conn.close()
            # the same key claimed twice: the newer connection replaces the older
            first, second = RawDialer(seat), RawDialer(seat)
            for r in (first, second):
                await r.connect(lst.port)
                r.writer.write(r.m1())
                await r.read()
                raws.append(r)
            assert await asyncio.wait_for(first.reader.read(), 5) == b""
            assert any("same key" in r for _a, r in lst.refusals)
        finally:
            for r in raws:
                r.writer.close()
            await lst.close()

    run(body, 25)


@pytest.mark.timeout(30)
def test_authenticated_but_silent_lobby_connections_are_bounded() -> None:
    """At a table without a code anyone completes the handshake; at most
    ``MAX_JOINING`` may then wait for their join request at once, each for
    ``join_timeout``, and the lobby is open again when they expire."""
    async def body() -> None:
        host = await Listener(Identity.generate(), host=LOOPBACK).start()
        table = await LobbyTable(host, name="Tea", seats=3, join_timeout=1.0).open()
        conns: list[Connection] = []
        try:
            for _ in range(MAX_JOINING + 8):  # bounded: 8 more than allowed
                conns.append(await dial(LOOPBACK, host.port, Identity.generate(), LOBBY,
                                        incarnation=new_incarnation(), timeout=5))
            refused = 0
            for c in conns[MAX_JOINING:]:
                msg = await asyncio.wait_for(c.recv(), 5)
                assert msg == ["refuse", "too many joins in progress; try again"]
                refused += 1
            assert refused == 8
            await asyncio.sleep(1.5)  # the silent ones ran out of time
            me = await Listener(Identity.generate(), host=LOOPBACK).start()
            task = asyncio.create_task(join_table(me, LOOPBACK, host.port, name="Ann",
                                                  timeout=5, start_timeout=10))
            try:
                await table.wait_for_players(2, timeout=5)
            finally:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                await me.close()
        finally:
            for c in conns:
                c.close()
            await table.close()
            await host.close()

    run(body, 25)
