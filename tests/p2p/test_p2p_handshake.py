"""Handshake: success, every refusal with its reason, replay, and a socket-level fuzz."""

from __future__ import annotations

import asyncio
import os
import random

import pytest
from p2p_testutil import LOOPBACK, mutate, run

from p2p.errors import FramingError, HandshakeError, P2PError
from p2p.identity import Identity
from p2p.net.connection import Connection, Listener, dial
from p2p.net.framing import HANDSHAKE_LIMITS, frame, pack, read_frame, unpack
from p2p.net.handshake import (
    _SIG_DIALER,
    PROTOCOL_VERSION,
    AcceptPolicy,
    _transcript,
    join_key,
    new_incarnation,
    normalize_code,
)

PURPOSE = b"lobby"


async def open_listener(code: str | None = None, authorize=None) -> tuple[Listener, asyncio.Queue]:
    ident = Identity.generate()
    lst = await Listener(ident, host=LOOPBACK, handshake_timeout=2.0).start()
    got: asyncio.Queue[Connection] = asyncio.Queue()
    key = join_key(code, ident.public) if code else None
    lst.register(PURPOSE, AcceptPolicy(authorize or (lambda k: None), key), got.put_nowait)
    return lst, got


async def dial_to(lst: Listener, **kw) -> Connection:
    kw.setdefault("identity", Identity.generate())
    ident = kw.pop("identity")
    purpose = kw.pop("purpose", PURPOSE)
    return await dial(LOOPBACK, lst.port, ident, purpose, incarnation=new_incarnation(), **kw)


class RawDialer:
    """Speaks the dialer side by hand so tests can replay, forge and mutate messages."""

    def __init__(self, identity: Identity | None = None) -> None:
        self.identity = identity or Identity.generate()
        self.eph = os.urandom(32)  # any 32 bytes: the handshake fails before keys matter
        self.nonce = os.urandom(32)
        self.inc = new_incarnation()

    def m1(self, version: int = PROTOCOL_VERSION, purpose: bytes = PURPOSE) -> bytes:
        d = [self.identity.public, self.eph, self.nonce, self.inc]
        return frame(pack(["hello", version, purpose, *d]))

    async def connect(self, port: int) -> None:
        self.reader, self.writer = await asyncio.open_connection(LOOPBACK, port)

    async def read(self) -> list:
        return unpack(await read_frame(self.reader, HANDSHAKE_LIMITS.max_frame), HANDSHAKE_LIMITS)

    def valid_m3(self, m2: list, purpose: bytes = PURPOSE) -> bytes:
        d = (self.identity.public, self.eph, self.nonce, self.inc)
        t = _transcript(PROTOCOL_VERSION, purpose, d, tuple(m2[1:5]))
        return frame(pack(["hello-auth", self.identity.sign(_SIG_DIALER + t), None]))


@pytest.mark.timeout(10)
def test_handshake_success_encrypted_channel() -> None:
    async def body() -> None:
        lst, got = await open_listener(code="Camel 42")
        dialer = Identity.generate()
        conn = await dial_to(
            lst, identity=dialer, join_code="camel-42", expected_key=lst.identity.public
        )
        server = await got.get()
        assert server.remote_key == dialer.public and conn.remote_key == lst.identity.public
        assert server.transcript == conn.transcript
        conn.send(["x", b"secret"])
        assert await server.recv() == ["x", b"secret"]
        server.send({"k": [1, 2]})
        assert await conn.recv() == {"k": [1, 2]}
        await conn.aclose()
        await server.aclose()
        await lst.close()

    run(body)


@pytest.mark.parametrize(
    ("table_code", "dialer_kw", "reason"),
    [
        ("ruby", {"join_code": "opal"}, "wrong or missing join code"),
        ("ruby", {}, "wrong or missing join code"),
        (None, {"version": PROTOCOL_VERSION + 1},
         f"protocol version {PROTOCOL_VERSION + 1} not supported (this peer speaks "
         f"{PROTOCOL_VERSION})"),
        (None, {"purpose": b"mesh/" + b"x" * 32}, "no such game"),
    ],
)
@pytest.mark.timeout(10)
def test_refusals_reach_the_dialer(table_code, dialer_kw, reason) -> None:
    async def body() -> None:
        lst = await Listener(Identity.generate(), host=LOOPBACK).start()
        key = join_key(table_code, lst.identity.public) if table_code else None
        lst.register(PURPOSE, AcceptPolicy(lambda k: None, key), lambda c: c.close())
        with pytest.raises(HandshakeError) as info:
            await dial_to(lst, **dialer_kw)
        assert info.value.refused_by_remote
        assert reason in info.value.reason
        assert lst.refusals[-1][1].startswith(reason[:20])
        await lst.close()

    run(body)


@pytest.mark.timeout(10)
def test_unknown_key_refused_by_authorize() -> None:
    known = Identity.generate()

    async def body() -> None:
        lst, _ = await open_listener(
            authorize=lambda k: None if k == known.public else "key not in roster"
        )
        with pytest.raises(HandshakeError, match="key not in roster"):
            await dial_to(lst)
        conn = await dial_to(lst, identity=known)
        await conn.aclose()
        await lst.close()

    run(body)


@pytest.mark.timeout(10)
def test_table_must_prove_the_code_and_the_key() -> None:
    async def body() -> None:
        lst, _ = await open_listener(code=None)
        with pytest.raises(HandshakeError, match="this table has no join code"):
            await dial_to(lst, join_code="anything")
        with pytest.raises(HandshakeError, match="is not the expected"):
            await dial_to(lst, expected_key=Identity.generate().public)
        with pytest.raises(HandshakeError, match="empty join code"):
            await dial_to(lst, join_code=" - ")
        await lst.close()

    run(body)


@pytest.mark.timeout(10)
def test_replayed_hello_and_bad_signature_refused() -> None:
    async def body() -> None:
        lst, got = await open_listener()
        raw = RawDialer()
        await raw.connect(lst.port)
        raw.writer.write(raw.m1())
        m2 = await raw.read()
        recorded_m3 = raw.valid_m3(m2)
        raw.writer.write(recorded_m3)
        await raw.reader.read(1)  # welcome arrives: the honest session worked
        assert (await got.get()).remote_key == raw.identity.public
        raw.writer.close()

        # replay the very same hello + auth on a new connection: the acceptor's fresh nonce
        # is in the transcript, so the old signature no longer verifies.
        await raw.connect(lst.port)
        raw.writer.write(raw.m1())
        await raw.read()
        raw.writer.write(recorded_m3)
        await raw.reader.read()
        assert "replayed hello" in lst.refusals[-1][1]
        raw.writer.close()

        # a forged signature
        await raw.connect(lst.port)
        raw.writer.write(raw.m1())
        await raw.read()
        raw.writer.write(frame(pack(["hello-auth", os.urandom(64), None])))
        await raw.reader.read()
        assert "bad signature" in lst.refusals[-1][1]
        raw.writer.close()
        await lst.close()

    run(body)


@pytest.mark.timeout(10)
def test_tampered_ciphertext_is_rejected() -> None:
    async def body() -> None:
        lst, got = await open_listener()
        conn = await dial_to(lst)
        server = await got.get()
        payload = conn._send.seal(pack(["x"]))
        tampered = bytearray(payload)
        tampered[0] ^= 1
        conn._writer.write(frame(bytes(tampered)))
        with pytest.raises(FramingError, match="failed authentication"):
            await server.recv()
        await conn.aclose()
        await server.aclose()
        await lst.close()

    run(body)


def test_code_normalisation() -> None:
    assert normalize_code(" Camel-42 ") == normalize_code("camel 42") == "camel42"


@pytest.mark.timeout(40)
def test_listener_survives_10000_malformed_handshakes() -> None:
    """Mutated hellos (M1) and mutated auth messages (M3) over real sockets.

    Every attempt must end as a logged refusal with a reason (never an internal error),
    and honest peers connect before, during and after the barrage.
    """
    rng = random.Random(7)
    total = 10_000

    async def attack(lst: Listener, i: int) -> None:
        raw = RawDialer()
        try:
            await raw.connect(lst.port)
            if i % 4 == 3:  # get past M1/M2, then send a mutated M3
                raw.writer.write(raw.m1())
                m2 = await raw.read()
                raw.writer.write(mutate(rng, raw.valid_m3(m2)))
            else:
                raw.writer.write(mutate(rng, raw.m1()))
            raw.writer.write_eof()
            await raw.reader.read()
        except (ConnectionError, OSError, P2PError):
            # FramingError, or ConnectionClosed: 48 attackers from one address push out
            # each other's oldest handshakes (the listener's per-address limit)
            pass
        finally:
            if hasattr(raw, "writer"):
                raw.writer.close()

    async def body() -> None:
        lst, got = await open_listener()
        accepted: list[Connection] = []

        def on_connection(conn: Connection) -> None:
            # an unlucky "mutation" may be byte-identical to the honest message
            accepted.append(conn)
            conn.close()

        lst.register(PURPOSE, AcceptPolicy(lambda k: None), on_connection)
        before = lst.refused_count
        sem = asyncio.Semaphore(48)

        async def one(i: int) -> None:
            async with sem:
                await attack(lst, i)

        honest = []
        for chunk in range(0, total, 2500):
            await asyncio.gather(*(one(i) for i in range(chunk, min(total, chunk + 2500))))
            lst.register(PURPOSE, AcceptPolicy(lambda k: None), got.put_nowait)
            honest.append(await dial_to(lst))
            server = await got.get()
            lst.register(PURPOSE, AcceptPolicy(lambda k: None), on_connection)
            honest.append((honest.pop(), server))
        refused = lst.refused_count - before
        assert refused + len(accepted) == total
        assert len(accepted) < total // 100
        reasons = [r for _, r in lst.refusals]
        assert all(r and "internal error" not in r for r in reasons)
        for conn, server in honest:
            conn.send(["still", "serving"])
            assert await server.recv() == ["still", "serving"]
            await conn.aclose()
            await server.aclose()
        await lst.close()

    run(body, timeout=40)


IDENTITY_POINT = bytes([1]) + bytes(31)
"""The neutral element as an Ed25519 public key: OpenSSL verifies ``IDENTITY_POINT ‖ 0``
as its signature of *any* message, so such a key would let anyone speak for its seat."""


@pytest.mark.timeout(10)
def test_weak_identity_key_is_refused_before_anything_else() -> None:
    async def body() -> None:
        lst, got = await open_listener()
        raw = RawDialer()
        await raw.connect(lst.port)
        raw.writer.write(frame(pack(["hello", PROTOCOL_VERSION, PURPOSE, IDENTITY_POINT,
                                     raw.eph, raw.nonce, raw.inc])))
        m2 = await raw.read()
        assert m2[0] == "refuse" and "not a valid Ed25519 public key" in m2[1], m2
        assert got.empty()
        raw.writer.close()
        await lst.close()

    run(body)


def test_weak_roster_key_is_refused() -> None:
    from p2p.errors import ProtocolError
    from p2p.net.mesh import RosterEntry

    with pytest.raises(ProtocolError, match="seat 2: roster key is not a valid Ed25519"):
        RosterEntry.from_wire([2, IDENTITY_POINT, "127.0.0.1", 4000, "eve"])
    ok = Identity.generate().public
    assert RosterEntry.from_wire([2, ok, "127.0.0.1", 4000, "bo"]).key == ok
