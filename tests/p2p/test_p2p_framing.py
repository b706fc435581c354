"""Framing: strict decoding, size limits, and a fuzz of malformed frames.

The fuzz runs over real asyncio streams: every malformed frame must be rejected with a
:class:`FramingError` (or, at the protocol layer, a handshake refusal) that names the fault;
nothing else may escape, and the listener must keep serving honest peers afterwards.
"""

from __future__ import annotations

import asyncio
import random
import struct

import msgpack
import pytest
from p2p_testutil import mutate, run

from p2p.errors import ConnectionClosed, FramingError
from p2p.net.framing import (
    DEFAULT_LIMITS,
    HANDSHAKE_LIMITS,
    FrameLimits,
    frame,
    pack,
    read_frame,
    unpack,
)


def feed(data: bytes) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    return reader


@pytest.mark.timeout(10)
def test_roundtrip_and_stream_of_frames() -> None:
    msgs = [["hello", 1, b"\x00" * 32], {"a": [1, 2, {"b": None}]}, "text", 2**63, -5, True]

    async def body() -> None:
        reader = feed(b"".join(frame(pack(m)) for m in msgs))
        for m in msgs:
            assert unpack(await read_frame(reader, 1 << 20)) == m
        with pytest.raises(ConnectionClosed):
            await read_frame(reader, 1 << 20)

    run(body)


@pytest.mark.parametrize(
    ("data", "fault"),
    [
        (b"\x00\x00", "truncated frame header"),
        (b"\x00\x00\x00\x00", "empty frame"),
        (struct.pack(">I", 9 << 20) + b"x", "exceeds the limit"),
        (struct.pack(">I", 10) + b"abc", "truncated frame (got 3 of 10"),
    ],
)
@pytest.mark.timeout(10)
def test_read_frame_faults(data: bytes, fault: str) -> None:
    async def body() -> None:
        with pytest.raises(FramingError, match=fault.replace("(", r"\(")):
            await read_frame(feed(data), DEFAULT_LIMITS.max_frame)

    run(body)


@pytest.mark.parametrize(
    ("payload", "fault"),
    [
        (msgpack.packb(msgpack.ExtType(5, b"ab")), "max_ext_len"),
        (msgpack.packb(msgpack.Timestamp(1, 0)), "max_ext_len"),
        (b"\x81\x01\x02", "strict_map_key"),
        (b"\x82\xa1a\x01\xa1a\x02", "duplicate map key"),
        (b"\xc1", "reserved type byte"),
        (b"\x92\x01", "incomplete input"),
        (b"\x01\x02", "trailing bytes"),
        (msgpack.packb(1.5), "floats are not allowed"),
        (b"\xa2\xff\xfe", "invalid UTF-8"),
        (b"\xdd\xff\xff\xff\xff", "max_array_len"),
        (b"\x91" * 20 + b"\x01", "nesting deeper than 16"),
        (b"\x91" * 5000 + b"\x01", "nesting"),
        (b"\xc6\x00\x00\x01\x01" + b"x" * 257, "max_bin_len"),
    ],
)
def test_unpack_faults(payload: bytes, fault: str) -> None:
    limits = FrameLimits(max_bin=256)
    with pytest.raises(FramingError, match=fault):
        unpack(payload, limits)


def test_handshake_limits_are_small() -> None:
    assert HANDSHAKE_LIMITS.max_frame <= 4096
    with pytest.raises(FramingError, match="max_str_len"):
        unpack(pack("x" * 600), HANDSHAKE_LIMITS)


def test_float_can_be_allowed() -> None:
    assert unpack(pack(1.5), FrameLimits(allow_float=True)) == 1.5


@pytest.mark.timeout(30)
def test_fuzz_decoder_10000_frames() -> None:
    """10,000 mutated frames through the real stream reader and the strict decoder."""
    rng = random.Random(20240601)
    good = frame(pack(["hello", 1, b"lobby", b"k" * 32, b"e" * 32, b"n" * 32, b"i" * 16]))
    outcomes: dict[str, int] = {}

    async def body() -> None:
        for _ in range(10_000):
            data = mutate(rng, good)
            try:
                payload = await read_frame(feed(data), HANDSHAKE_LIMITS.max_frame)
                unpack(payload, HANDSHAKE_LIMITS)
                outcome = "decoded"  # still well-formed msgpack; the handshake must refuse it
            except FramingError as exc:
                assert exc.reason
                outcome = exc.reason.split(":")[0].split("(")[0].strip()
            except ConnectionClosed:
                outcome = "empty"
            outcomes[outcome] = outcomes.get(outcome, 0) + 1

    run(body, timeout=30)
    assert sum(outcomes.values()) == 10_000
    assert outcomes.get("decoded", 0) < 10_000 * 0.5
