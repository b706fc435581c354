"""The mesh over loopback: broadcast/send, heartbeats, reconnection, restarts, refusals."""

from __future__ import annotations

import asyncio
import random

import pytest
from p2p_testutil import LOOPBACK, make_peers, roster_of, run, start_mesh, stop_all

from p2p.errors import HandshakeError, P2PError
from p2p.identity import Identity
from p2p.net.connection import Listener, dial
from p2p.net.handshake import new_incarnation
from p2p.net.mesh import Mesh, MeshEvent, PeerDown, PeerUp, Received


async def expect(mesh: Mesh, kind: type, timeout: float = 5.0) -> MeshEvent:
    """The next event of ``kind`` (other kinds are skipped)."""
    async with asyncio.timeout(timeout):
        while True:
            event = await mesh.next_event()
            if isinstance(event, kind):
                return event


async def crash(mesh: Mesh, listener: Listener) -> None:
    """Kill a peer like a crashed process: sockets reset, no goodbye."""
    mesh._closed = True
    for task in list(mesh._tasks):
        task.cancel()
    for link in mesh._links.values():
        if link.reader is not None:
            link.reader.cancel()
        if link.conn is not None:
            link.conn._writer.transport.abort()
    await listener.close()


@pytest.mark.parametrize("n", [3, 4, 5, 6])
@pytest.mark.timeout(15)
def test_mesh_broadcast_and_send(n: int) -> None:
    async def body() -> None:
        meshes, listeners, _ = await start_mesh(n)
        per_sender = 20
        for m in meshes:
            for i in range(per_sender):
                m.broadcast(f"{m.my_seat}/{i}".encode())
            m.send((m.my_seat + 1) % n, f"direct from {m.my_seat}".encode())
        for m in meshes:
            got: dict[int, list[bytes]] = {}
            for _ in range(per_sender * (n - 1) + 1):
                event = await m.recv()
                got.setdefault(event.seat, []).append(event.body)
            prev = (m.my_seat - 1) % n
            assert got[prev][-1] == f"direct from {prev}".encode()
            for seat, bodies in got.items():
                bodies = [b for b in bodies if not b.startswith(b"direct")]
                assert bodies == [f"{seat}/{i}".encode() for i in range(per_sender)]
            assert sorted(got) == sorted(s for s in range(n) if s != m.my_seat)
        stats = meshes[0].stats()
        assert all(s["up"] and s["connects"] == 1 for s in stats.values())
        await stop_all(meshes, listeners)

    run(body)


@pytest.mark.timeout(15)
def test_silent_peer_is_reported_down_by_name() -> None:
    async def body() -> None:
        meshes, listeners, _ = await start_mesh(3, heartbeat=0.1, timeout=0.5)
        silent = meshes[2]
        # freeze seat 2: no heartbeats, no reading (like a hung process); sockets stay open
        for task in list(silent._tasks):
            task.cancel()
        for link in silent._links.values():
            assert link.conn is not None
            link.conn._writer.transport.pause_reading()
        # and no new handshakes either: otherwise the others' redial succeeds at once and
        # races the is_up() check below (CI flake, stop 6)
        await listeners[2].close()
        for m in meshes[:2]:
            down = await expect(m, PeerDown, timeout=3)
            assert down.seat == 2
            assert "seat 2 (p2, " in down.reason and "silent for" in down.reason
            assert not m.is_up(2) and m.is_up(1 - m.my_seat)
        await stop_all(meshes, listeners)

    run(body)


@pytest.mark.timeout(15)
def test_transient_disconnect_loses_and_duplicates_nothing() -> None:
    async def body() -> None:
        meshes, listeners, _ = await start_mesh(3)
        a, b = meshes[0], meshes[1]
        link = a._links[1]
        assert link.conn is not None
        link.conn._writer.transport.abort()  # cut the 0-1 link mid-game
        for i in range(50):
            a.send(1, f"a{i}".encode())
            b.send(0, f"b{i}".encode())

        async def collect(m: Mesh) -> tuple[list[bytes], list[MeshEvent]]:
            bodies: list[bytes] = []
            others: list[MeshEvent] = []
            while len(bodies) < 50:
                event = await m.next_event()
                if isinstance(event, Received):
                    bodies.append(event.body)
                else:
                    others.append(event)
            return bodies, others

        got_b, _events_b = await collect(b)
        got_a, events_a = await collect(a)
        assert got_b == [f"a{i}".encode() for i in range(50)]
        assert got_a == [f"b{i}".encode() for i in range(50)]
        assert a.stats()[1]["connects"] == 2
        assert [type(e) for e in events_a] == [PeerDown, PeerUp]
        assert not events_a[1].restarted
        await stop_all(meshes, listeners)

    run(body)


@pytest.mark.timeout(20)
def test_restarted_peer_rejoins_with_same_key() -> None:
    async def body() -> None:
        meshes, listeners, game_id = await start_mesh(3, heartbeat=0.1, timeout=0.6)
        roster = meshes[0].roster
        old_identity = listeners[1].identity
        port = listeners[1].port
        await crash(meshes[1], listeners[1])
        for m in (meshes[0], meshes[2]):
            down = await expect(m, PeerDown)
            assert down.seat == 1
        # the "new process": same key (restored from disk), same port, new incarnation
        listeners[1] = await Listener(
            Identity.from_bytes(old_identity.to_bytes()), host=LOOPBACK, port=port
        ).start()
        meshes[1] = Mesh(listeners[1], roster, game_id, heartbeat_interval=0.1, peer_timeout=0.6)
        await meshes[1].start()
        for m in (meshes[0], meshes[2]):
            up = await expect(m, PeerUp)
            assert up.seat == 1 and up.restarted
        await meshes[1].wait_all_up(5)
        meshes[1].broadcast(b"back")
        for m in (meshes[0], meshes[2]):
            got = await m.recv()
            assert (got.seat, got.body) == (1, b"back")
            m.send(1, b"welcome back")
        assert [(await meshes[1].recv()).body for _ in range(2)] == [b"welcome back"] * 2
        await stop_all(meshes, listeners)

    run(body)


@pytest.mark.timeout(15)
def test_mesh_refuses_strangers_and_wrong_direction() -> None:
    async def body() -> None:
        meshes, listeners, game_id = await start_mesh(3)
        purpose = b"mesh/" + game_id
        with pytest.raises(HandshakeError, match="not in this game's roster"):
            await dial(
                LOOPBACK,
                listeners[1].port,
                Identity.generate(),
                purpose,
                incarnation=new_incarnation(),
            )
        with pytest.raises(HandshakeError, match="must not dial"):
            await dial(
                LOOPBACK,
                listeners[1].port,
                listeners[2].identity,
                purpose,
                incarnation=new_incarnation(),
            )
        with pytest.raises(HandshakeError, match="no such game"):
            await dial(
                LOOPBACK,
                listeners[1].port,
                listeners[0].identity,
                b"mesh/" + bytes(32),
                incarnation=new_incarnation(),
            )
        assert listeners[1].refused_count == 3
        for m in meshes:
            assert len(m.up_seats()) == 2  # the game itself is unaffected
        await stop_all(meshes, listeners)

    run(body)


BAD_MESH_MESSAGES = [
    ["d", 5, b"gap"],
    ["d", "1", b"x"],
    ["d", 1, "not bytes"],
    ["p", 99, 1],
    ["p", -1, 1],
    ["resume", 0],
    ["nope"],
    [],
    "string",
    {"d": 1},
    ["q"],
    ["d", 1, b"x", b"extra"],
]


@pytest.mark.timeout(20)
def test_authenticated_peer_sending_garbage_only_loses_its_link() -> None:
    """Seat 0 is played by hand: it dials seat 1 and misbehaves after the handshake."""
    rng = random.Random(3)

    async def body() -> None:
        ids, listeners = await make_peers(3)
        roster = roster_of(ids, listeners)
        game_id = bytes(range(32))
        m1 = Mesh(listeners[1], roster, game_id, heartbeat_interval=0.1, peer_timeout=0.6)
        m2 = Mesh(listeners[2], roster, game_id, heartbeat_interval=0.1, peer_timeout=0.6)
        await m1.start()
        await m2.start()
        reasons = []
        cases = [*BAD_MESH_MESSAGES]
        for _ in range(300):
            cases.append(
                [
                    rng.choice(["d", "p", "q", "resume", "bye", "x"]),
                    *rng.sample([rng.randrange(-5, 10**12), b"b", "s", None, [], 2**64 - 1], 2),
                ]
            )
        for msg in cases:
            conn = await dial(
                LOOPBACK,
                listeners[1].port,
                ids[0],
                b"mesh/" + game_id,
                incarnation=new_incarnation(),
            )
            first = None if msg == ["resume", 0] else ["resume", 0]
            if first:
                conn.send(first)
            conn.send(msg)
            conn.send(["nope"])  # in case the random message happened to be valid
            try:
                async with asyncio.timeout(3):
                    while True:
                        await conn.recv()  # until seat 1 drops us
            except P2PError:
                pass
            await conn.aclose()
            event = await m1.next_event()
            while not isinstance(event, PeerDown) or event.seat != 0:
                event = await m1.next_event()
            reasons.append(event.reason)
        assert len(reasons) == len(cases)
        assert all(r and "internal error" not in r for r in reasons)
        # seats 1 and 2 still talk to each other
        m1.send(2, b"fine")
        assert (await m2.recv()).body == b"fine"
        await stop_all([m1, m2], listeners)

    run(body, timeout=20)
