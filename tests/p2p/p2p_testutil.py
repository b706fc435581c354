"""Helpers shared by the p2p tests (loopback only, real sockets)."""

from __future__ import annotations

import asyncio
import os
import random
import struct
from collections.abc import Awaitable, Callable
from typing import Any

import msgpack

from p2p.identity import Identity
from p2p.net.connection import Listener
from p2p.net.framing import frame
from p2p.net.mesh import Mesh, PeerUp, RosterEntry

LOOPBACK = "127.0.0.1"


def run(coro_fn: Callable[[], Awaitable[Any]], timeout: float = 20.0) -> Any:
    """Run one async test body with a hard timeout (no pytest-asyncio needed)."""

    async def bounded() -> Any:
        async with asyncio.timeout(timeout):
            return await coro_fn()

    return asyncio.run(bounded())


async def make_peers(n: int) -> tuple[list[Identity], list[Listener]]:
    ids = [Identity.generate() for _ in range(n)]
    listeners = [await Listener(i, host=LOOPBACK).start() for i in ids]
    return ids, listeners


def roster_of(ids: list[Identity], listeners: list[Listener]) -> list[RosterEntry]:
    return [
        RosterEntry(s, ids[s].public, LOOPBACK, listeners[s].port, f"p{s}") for s in range(len(ids))
    ]


async def start_mesh(
    n: int, *, heartbeat: float = 0.1, timeout: float = 0.6
) -> tuple[list[Mesh], list[Listener], bytes]:
    ids, listeners = await make_peers(n)
    roster = roster_of(ids, listeners)
    game_id = os.urandom(32)
    meshes = [
        Mesh(lst, roster, game_id, heartbeat_interval=heartbeat, peer_timeout=timeout)
        for lst in listeners
    ]
    for m in meshes:
        await m.start()
    for m in meshes:
        await m.wait_all_up(5)
    for m in meshes:  # consume the initial PeerUp events so tests see only what follows
        for _ in range(n - 1):
            assert isinstance(await m.next_event(), PeerUp)
    return meshes, listeners, game_id


async def stop_all(meshes: list[Mesh], listeners: list[Listener]) -> None:
    for m in meshes:
        await m.close()
    for lst in listeners:
        await lst.close()


def mutate(rng: random.Random, good: bytes) -> bytes:
    """One malformed variant of a well-formed frame (header + payload)."""
    kind = rng.randrange(9)
    if kind == 0:  # truncated anywhere
        return good[: rng.randrange(len(good))]
    if kind == 1:  # bit flips
        data = bytearray(good)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        return bytes(data)
    if kind == 2:  # random bytes with a plausible header
        n = rng.randint(1, 300)
        return struct.pack(">I", n) + rng.randbytes(n)
    if kind == 3:  # pure garbage
        return rng.randbytes(rng.randint(1, 64))
    if kind == 4:  # oversized announced length
        return struct.pack(">I", rng.randint(4097, 0xFFFFFFFF)) + good[4:]
    if kind == 5:  # wrong types in a well-formed frame
        junk = rng.choice([None, 1.5, -1, "x" * 100, b"", [], {}, [[[[[1]]]]], True, 2**64 - 1])
        obj = msgpack.unpackb(good[4:])
        if isinstance(obj, list) and obj:
            obj[rng.randrange(len(obj))] = junk
        return frame(msgpack.packb(obj, use_bin_type=True))
    if kind == 6:  # extra or missing fields
        obj = msgpack.unpackb(good[4:])
        obj = obj[:-1] if rng.random() < 0.5 else [*obj, b"extra"]
        return frame(msgpack.packb(obj, use_bin_type=True))
    if kind == 7:  # length says more than is sent
        return struct.pack(">I", len(good) + rng.randint(1, 100)) + good[4:]
    # random msgpack-ish bytes: a valid header over a mutated payload
    payload = bytearray(good[4:])
    for _ in range(rng.randint(1, 4)):
        payload.insert(rng.randrange(len(payload) + 1), rng.randrange(256))
    return frame(bytes(payload))
