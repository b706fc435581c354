"""The join code as a PAKE (p2p/net/join_pake.py): a recorded join gives a bystander nothing to
test code guesses against, a table that does not know the code is caught, and a bad
code share is refused by name."""

from __future__ import annotations

import asyncio
import hashlib
import hmac

import pytest
from p2p_testutil import LOOPBACK, run
from test_p2p_handshake import PURPOSE, RawDialer, dial_to, open_listener

import p2p.net.handshake as hs
from crypto import group as g
from p2p.errors import HandshakeError
from p2p.identity import Identity
from p2p.net.connection import Connection, Listener, dial
from p2p.net.framing import frame, pack
from p2p.net.handshake import _SIG_DIALER, PROTOCOL_VERSION, _transcript, join_key, new_incarnation
from p2p.net.join_pake import ACCEPTOR, DIALER, GENERATOR_TAG, CodeExchange, proof, proof_ok

CODE = "camel 42"
GUESSES = ["camel 41", "camel 42", "camel 43", "silk", "jade 7"]


def test_both_sides_agree_only_with_the_same_code() -> None:
    t = bytes(32)
    k, k2 = join_key(CODE, b"h" * 32), join_key("camel 43", b"h" * 32)
    d, a, wrong = CodeExchange(k, t), CodeExchange(k, t), CodeExchange(k2, t)
    isk_d = d.key(d.share, a.share, a.share)
    assert isk_d == a.key(d.share, a.share, d.share)
    assert proof_ok(isk_d, ACCEPTOR, proof(isk_d, ACCEPTOR))
    assert not proof_ok(isk_d, DIALER, proof(isk_d, ACCEPTOR))  # role tags: no reflection
    assert wrong.key(wrong.share, a.share, a.share) != a.key(wrong.share, a.share,
                                                            wrong.share)
    # fresh scalars: two exchanges with one code never show the same share
    assert CodeExchange(k, t).share != CodeExchange(k, t).share
    for bad in (g.IDENTITY, bytes(32), b"\xff" * 32, b"short"):
        with pytest.raises(HandshakeError, match="join-code share"):
            a.key(bad, a.share, bad)


class Tap:
    """A loopback TCP relay that records every byte both ways (a LAN eavesdropper)."""

    def __init__(self, target_port: int) -> None:
        self.target = target_port
        self.seen = bytearray()

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._relay, LOOPBACK, 0)
        return self.server.sockets[0].getsockname()[1]

    async def _relay(self, r1: asyncio.StreamReader, w1: asyncio.StreamWriter) -> None:
        r2, w2 = await asyncio.open_connection(LOOPBACK, self.target)

        async def pump(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            while data := await r.read(65536):
                self.seen += data
                w.write(data)
            w.close()

        await asyncio.gather(pump(r1, w2), pump(r2, w1), return_exceptions=True)


@pytest.mark.timeout(20)
def test_a_recorded_join_gives_nothing_to_test_guesses_against() -> None:
    """Version 2 sent ``HMAC(K, "dialer" ‖ T)`` in the clear: an eavesdropper computed it
    for each guess and compared.  Now the plaintext carries only ``Y_D = y·G_code`` with a
    secret ``y``: for every guess (the right one included) neither that MAC, the code's key
    nor its generator appears in what crossed the wire."""

    async def body() -> None:
        lst, got = await open_listener(code=CODE)
        tap = Tap(lst.port)
        port = await tap.start()
        conn = await hs_dial(port, lst)
        server = await got.get()
        await conn.aclose()
        await server.aclose()
        tap.server.close()
        await lst.close()
        wire = bytes(tap.seen)
        t = conn.transcript
        assert len(wire) > 300
        for guess in GUESSES:
            k = join_key(guess, lst.identity.public)
            old_mac = hmac.new(k, b"dialer" + t, hashlib.sha256).digest()
            generator = g.hash_to_point(GENERATOR_TAG, [k, t])
            for secret in (old_mac, k, generator):
                assert secret not in wire, guess

    async def hs_dial(port: int, lst: Listener) -> Connection:
        return await dial(LOOPBACK, port, Identity.generate(), PURPOSE,
                          incarnation=new_incarnation(), join_code="Camel-42",
                          expected_key=lst.identity.public)

    run(body)


@pytest.mark.timeout(10)
def test_a_table_that_does_not_know_the_code_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fake table that welcomes whoever comes (it accepts any proof) still cannot prove
    the code: the joiner stops with a clear reason instead of joining it."""
    real = hs.proof_ok

    def acceptor_accepts_anything(isk: bytes, role: bytes, got: object) -> bool:
        return True if role == DIALER else real(isk, role, got)

    monkeypatch.setattr(hs, "proof_ok", acceptor_accepts_anything)

    async def body() -> None:
        lst, _ = await open_listener(code="opal")
        with pytest.raises(HandshakeError, match="did not prove it knows the join code"):
            await dial_to(lst, join_code=CODE)
        await lst.close()

    run(body)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("share", [g.IDENTITY, bytes(32), b"\x01" * 31, "not bytes"])
def test_a_bad_code_share_is_refused_by_name(share: object) -> None:
    async def body() -> None:
        lst, _ = await open_listener(code=CODE)
        raw = RawDialer()
        await raw.connect(lst.port)
        raw.writer.write(raw.m1())
        m2 = await raw.read()
        d = (raw.identity.public, raw.eph, raw.nonce, raw.inc)
        t = _transcript(PROTOCOL_VERSION, PURPOSE, d, tuple(m2[1:5]))
        raw.writer.write(frame(pack(["hello-auth", raw.identity.sign(_SIG_DIALER + t),
                                     share])))
        await raw.reader.read()
        assert "join-code share" in lst.refusals[-1][1], lst.refusals
        raw.writer.close()
        await lst.close()

    run(body)
