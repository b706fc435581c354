"""A minimal peer for manual LAN trials and the multi-process tests.

    python tests/p2p/demo_peer.py host --table "Friday" --seats 3 [--code CODE] [--bind 0.0.0.0]
    python tests/p2p/demo_peer.py join (--table "Friday" | --connect HOST:PORT) [--code CODE]

It seats the players, prints the authentication words, builds the mesh, broadcasts
``--messages`` messages, waits to receive everyone else's and exits.  Progress is printed
as one JSON object per line so a test (or a curious human) can follow it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

from p2p.game import GameSetup
from p2p.identity import Identity
from p2p.lobby.discovery import Discovery
from p2p.lobby.seating import LobbyTable, join_discovered, join_table
from p2p.net.connection import Listener
from p2p.net.mesh import Mesh, PeerDown, PeerUp, Received


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


async def find_table(discovery: Discovery, name: str, timeout: float) -> Any:
    async with asyncio.timeout(timeout), discovery.browse() as browser:
        async for event in browser:
            if event.table is not None and event.table.ad.name == name:
                return event.table
    raise TimeoutError


async def play(setup: GameSetup, listener: Listener, args: argparse.Namespace) -> None:
    emit(event="setup", seat=setup.my_seat, game_id=setup.game_id.hex(), words=list(setup.words))
    mesh = Mesh(
        listener, setup.roster, setup.game_id, heartbeat_interval=0.2, peer_timeout=args.timeout
    )
    await mesh.start()
    try:
        await mesh.wait_all_up(args.timeout)
        emit(event="mesh-up", seat=setup.my_seat)
        for i in range(args.messages):
            mesh.broadcast(f"{setup.my_seat}:{i}".encode())
        want = args.messages * (len(setup.roster) - 1)
        got: list[str] = []
        async with asyncio.timeout(args.timeout):
            while len(got) < want:
                event = await mesh.next_event()
                if isinstance(event, Received):
                    got.append(event.body.decode())
                elif isinstance(event, (PeerUp, PeerDown)):
                    emit(event=type(event).__name__, seat=event.seat)
        emit(event="received", seat=setup.my_seat, messages=sorted(got))
        # stay until everybody has had time to receive ours (acks arrive with heartbeats)
        deadline = time.monotonic() + args.timeout
        while any(s["unacked"] for s in mesh.stats().values()) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
    finally:
        await mesh.close("demo finished")


async def run(args: argparse.Namespace) -> int:
    identity = Identity.generate()
    discovery = Discovery([args.mdns_interface] if args.mdns_interface else None)
    async with Listener(identity, host=args.bind, port=args.port) as listener:
        emit(event="listening", port=listener.port, fingerprint=identity.fingerprint)
        if args.role == "host":
            await discovery.start()
            table = LobbyTable(
                listener,
                name=args.table,
                seats=args.seats,
                host_name=args.player,
                join_code=args.code,
                discovery=discovery,
            )
            await table.open()
            emit(
                event="open", instance=table.advertisement.instance if table.advertisement else None
            )
            await table.wait_for_players(timeout=args.timeout)
            setup = await table.start()
            try:
                await play(setup, listener, args)
            finally:
                await table.close()
                await discovery.close()
        else:
            if args.connect:
                host, _, port = args.connect.rpartition(":")
                setup = await join_table(
                    listener,
                    host,
                    int(port),
                    name=args.player,
                    join_code=args.code,
                    start_timeout=args.timeout,
                )
            else:
                async with discovery:
                    table = await find_table(discovery, args.table, args.timeout)
                    emit(event="found", host=table.host, port=table.port)
                    setup = await join_discovered(
                        listener,
                        table,
                        name=args.player,
                        join_code=args.code,
                        start_timeout=args.timeout,
                    )
            await play(setup, listener, args)
    emit(event="done")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="demo_peer.py")
    parser.add_argument("role", choices=["host", "join"])
    parser.add_argument("--table", default="demo")
    parser.add_argument("--seats", type=int, default=3)
    parser.add_argument("--player", default="player")
    parser.add_argument("--code")
    parser.add_argument("--connect", help="HOST:PORT of the table (skips discovery)")
    parser.add_argument("--bind", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--mdns-interface", help="IPv4 address to run mDNS on (default: all)")
    parser.add_argument("--messages", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=20.0)
    args = parser.parse_args(argv)
    try:
        return asyncio.run(run(args))
    except Exception as exc:
        emit(event="error", error=f"{type(exc).__name__}: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
