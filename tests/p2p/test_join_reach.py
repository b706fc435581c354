"""Reaching a table: what answers is not always a table, and the first packets may be lost.

An address that answers with something other than our handshake (a web server, random
bytes) fails at once and says so; a connection refused, reset or closed before the
handshake ended is dialled again with backoff until the joiner's own deadline, because
on a lossy link the first packets are lost and a busy or restarting host closes early;
a refusal with a reason (wrong code, another protocol version) is not asked again.
Every server here is a real asyncio server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from p2p_testutil import LOOPBACK, run
from test_p2p_handshake import RawDialer

import p2p.lobby.dial as lobby_mod
from p2p.errors import HandshakeError, LobbyError, NotSilkroad
from p2p.identity import Identity
from p2p.lobby.seating import LOBBY, LobbyTable, join_table
from p2p.net.connection import Connection, Listener, dial
from p2p.net.framing import frame, pack
from p2p.net.handshake import PROTOCOL_VERSION, AcceptPolicy, new_incarnation

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
HTTP_400 = b"HTTP/1.1 400 Bad Request\r\n\r\n"


async def _serve(handler: Handler, port: int = 0) -> asyncio.Server:
    return await asyncio.start_server(handler, LOOPBACK, port)


def _port(server: asyncio.Server) -> int:
    return int(server.sockets[0].getsockname()[1])


async def _http_after_request(reader: asyncio.StreamReader,
                              writer: asyncio.StreamWriter) -> None:
    """Like a web server: read the request, answer 400, close."""
    with contextlib.suppress(OSError, TimeoutError):
        await asyncio.wait_for(reader.read(4096), 5)
        writer.write(HTTP_400)
        await writer.drain()
    writer.close()


async def _http_at_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answers before reading anything, then closes."""
    writer.write(HTTP_400)
    with contextlib.suppress(OSError):
        await writer.drain()
    writer.close()


def _garbage(data: bytes, then_close: bool) -> Handler:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(data)
        with contextlib.suppress(OSError, TimeoutError):
            await writer.drain()
            if not then_close:  # stays open until the dialer gives up
                await asyncio.wait_for(reader.read(), 10)
        writer.close()
    return handler


async def _joiner() -> Listener:
    return await Listener(Identity.generate(), host=LOOPBACK).start()


async def _join_fails(port: int, **kw: Any) -> tuple[str, float]:
    me = await _joiner()
    t0 = time.monotonic()
    try:
        with pytest.raises(LobbyError) as caught:
            await join_table(me, LOOPBACK, port, name="Ann", **kw)
        return caught.value.reason, time.monotonic() - t0
    finally:
        await me.close()


def _has_reason(text: str) -> bool:
    """Every colon in the message is followed by words."""
    return not re.search(r":\s*($|\()", text)


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("handler", "sent"), [
    (_http_after_request, "b'HTTP'…"),
    (_http_at_once, "b'HTTP'…"),
    (_garbage(b"\xde\xad\xbe\xef garbage \x00\xff" * 4, then_close=False), "b'\\xde\\xad"),
    (_garbage(b"\x00\x00\x00\x03\xc1\xc1\xc1", then_close=False), "not a silkroad handshake"),
    (_garbage(b"\x00\x00\x00\x02[", then_close=True), "and closed the connection"),
    (_garbage(b"\x00\x00", then_close=True), "and closed the connection"),
    (_garbage(frame(pack(["hi", 1])), then_close=False), "not a silkroad handshake"),
], ids=["http-after-request", "http-at-once", "garbage", "bad-msgpack",
        "truncated-frame", "truncated-header", "wrong-message"])
def test_an_answer_that_is_not_silkroad_fails_at_once(handler: Handler, sent: str) -> None:
    async def body() -> None:
        server = await _serve(handler)
        port = _port(server)
        try:
            reason, took = await _join_fails(port, dial_timeout=30)
        finally:
            server.close()
            await server.wait_closed()
        assert reason.startswith(f"{LOOPBACK}:{port} answered, but it is not a silkroad "
                                 "table: "), reason
        assert sent in reason, reason
        assert _has_reason(reason), reason
        assert took < 5.0, took  # no redial: a redial would wait out the 30 s

    run(body, 25)


@pytest.mark.timeout(30)
def test_dial_tells_not_silkroad_from_a_closed_connection() -> None:
    """The dialer's errors: bytes that are not our handshake vs. a close before any
    answer (the one dialling again may cure)."""
    async def body() -> None:
        async def close_after_hello(reader: asyncio.StreamReader,
                                    writer: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, TimeoutError):
                await asyncio.wait_for(reader.read(4096), 5)
            writer.close()

        for handler, kind, transient in ((_http_after_request, NotSilkroad, False),
                                         (close_after_hello, HandshakeError, True)):
            server = await _serve(handler)
            try:
                with pytest.raises(HandshakeError) as caught:
                    await dial(LOOPBACK, _port(server), Identity.generate(), LOBBY,
                               incarnation=new_incarnation(), timeout=10)
            finally:
                server.close()
                await server.wait_closed()
            assert type(caught.value) is kind and caught.value.transient is transient
            assert caught.value.reason

    run(body, 25)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


@pytest.mark.timeout(30)
def test_a_refused_port_is_redialled_and_then_named() -> None:
    async def body() -> None:
        reason, took = await _join_fails(_free_port(), dial_timeout=1.6)
        assert reason.startswith(f"could not reach {LOOPBACK}:"), reason
        assert "connection refused" in reason, reason
        assert re.search(r"\((\d+) attempts in \d+ s\)", reason), reason  # it redialled
        assert _has_reason(reason), reason
        assert took < 10.0, took

    run(body, 25)


@pytest.mark.timeout(30)
def test_the_join_timeout_is_named() -> None:
    """A peer that accepts and never answers: the message says what ran out."""
    async def body() -> None:
        silent = _garbage(b"", then_close=False)
        server = await _serve(silent)
        try:
            reason, _took = await _join_fails(_port(server), dial_timeout=0.5)
        finally:
            server.close()
            await server.wait_closed()
        assert "did not finish the handshake within" in reason, reason
        # the time left of the budget, said the way a person would (not "0.49999 s")
        assert re.search(r"within \d+(\.\d)? s", reason), reason
        assert _has_reason(reason), reason

    run(body, 25)


@pytest.mark.timeout(40)
def test_a_joiner_dials_again_until_the_table_answers() -> None:
    """The first two connections are closed at once (a listener that lost our hello, or
    a host still starting), then nothing listens for a moment (refused), then the table
    opens on that very port: the join gets through."""
    async def body() -> None:
        closed = 0
        two_closed = asyncio.Event()

        async def close_at_once(_r: asyncio.StreamReader, writer: asyncio.StreamWriter
                                ) -> None:
            nonlocal closed
            closed += 1
            writer.close()
            if closed >= 2:
                two_closed.set()

        front = await _serve(close_at_once)
        port = _port(front)
        me = await _joiner()
        joining = asyncio.create_task(join_table(me, LOOPBACK, port, name="Ann",
                                                 dial_timeout=30, start_timeout=30))
        host: Listener | None = None
        table: LobbyTable | None = None
        try:
            await asyncio.wait_for(two_closed.wait(), 20)
            front.close()
            await front.wait_closed()
            host = await Listener(Identity.generate(), host=LOOPBACK, port=port).start()
            table = await LobbyTable(host, name="Tea", seats=3).open()
            waiting = asyncio.create_task(table.wait_for_players(2, timeout=30))
            done, _ = await asyncio.wait({joining, waiting},
                                         return_when=asyncio.FIRST_COMPLETED)
            if joining in done:  # it gave up: show why
                raise AssertionError(f"the join failed: {joining.exception()!r}")
            await waiting
            assert [s.name for s in table.seated][1:] == ["Ann"]
            assert closed >= 2
        finally:
            joining.cancel()
            await asyncio.gather(joining, return_exceptions=True)
            if table is not None:
                await table.close()
            if host is not None:
                await host.close()
            await me.close()

    run(body, 35)


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("host_version", "code", "said"), [
    (PROTOCOL_VERSION, "opal", "wrong or missing join code"),
    (PROTOCOL_VERSION + 1, None, "not supported"),
], ids=["wrong-code", "other-version"])
def test_a_refusal_with_a_reason_is_not_asked_again(
        monkeypatch: pytest.MonkeyPatch, host_version: int, code: str | None,
        said: str) -> None:
    dials: list[int] = []
    real_dial = lobby_mod.dial

    async def counting_dial(*args: Any, **kwargs: Any) -> Connection:
        dials.append(1)
        return await real_dial(*args, **kwargs)

    monkeypatch.setattr(lobby_mod, "dial", counting_dial)

    async def body() -> None:
        host = await Listener(Identity.generate(), host=LOOPBACK,
                              version=host_version).start()
        table = await LobbyTable(host, name="Tea", seats=3, join_code="ruby").open()
        try:
            reason, took = await _join_fails(host.port, join_code=code, dial_timeout=30)
        finally:
            await table.close()
            await host.close()
        assert said in reason and reason.startswith("could not join"), reason
        assert dials == [1], dials
        assert took < 10.0, took

    run(body, 25)


@pytest.mark.timeout(30)
def test_a_hello_resent_after_a_lost_packet_is_still_accepted() -> None:
    """TCP resends a lost hello after its retransmission timeout (3 s once a SYN-ACK was
    lost); the listener's default hello deadline leaves room for it.  The delay below is
    the simulated loss, not a wait for something to happen."""
    async def body() -> None:
        lst = await Listener(Identity.generate(), host=LOOPBACK).start()
        got: asyncio.Queue[Connection] = asyncio.Queue()
        lst.register(LOBBY, AcceptPolicy(lambda k: None), got.put_nowait)
        raw = RawDialer()
        try:
            assert lst.hello_timeout >= 5.0
            await raw.connect(lst.port)
            await asyncio.sleep(3.2)
            raw.writer.write(raw.m1())
            m2 = await asyncio.wait_for(raw.read(), 5)
            assert m2[0] == "hello-ack", m2
            raw.writer.write(raw.valid_m3(m2))
            conn = await asyncio.wait_for(got.get(), 5)
            assert conn.remote_key == raw.identity.public
            conn.close()
        finally:
            raw.writer.close()
            await lst.close()

    run(body, 25)
