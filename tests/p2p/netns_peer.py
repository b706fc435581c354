"""One peer of the multi-host test, run inside its own network namespace.

``python tests/p2p/netns_peer.py host|join ADDRESS ROOT``: binds the listener and zeroconf to
``ADDRESS`` only; the host advertises a 3-seat table over real multicast mDNS, joiners find
it by browsing, then everybody plays the game (heuristic bots) and prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import sys

from table_kit import FrugalBot  # this script's folder is on sys.path

from p2p.identity import Identity
from p2p.lobby.discovery import Discovery
from p2p.lobby.seating import LobbyTable, join_discovered
from p2p.net.connection import Listener
from p2p.netgame import play_setup


async def main(role: str, address: str, root: str) -> None:
    listener = await Listener(Identity.generate(), host=address).start()
    disc = await Discovery([address]).start()
    try:
        if role == "host":
            table = LobbyTable(listener, name="netns", seats=3, shuffle_mode="audit",
                               discovery=disc, advertise_addresses=[address])
            await table.open()
            try:
                await table.wait_for_players(timeout=60)
                setup = await table.start()
            finally:
                await table.close()
        else:
            async with disc.browse() as browser:
                while True:
                    ev = await asyncio.wait_for(browser.next_event(), 60)
                    if ev.kind == "added" and ev.table is not None:
                        info = ev.table
                        break
            setup = await join_discovered(listener, info, name=f"peer-{address}",
                                          mesh_host=address, start_timeout=60)
    finally:
        await disc.close()
    result = await play_setup(setup, listener, root, FrugalBot(setup.my_seat),
                              abandon_timeout=60)
    await listener.close()
    print(json.dumps({"seat": setup.my_seat, "hash": result.state_hash.hex(),
                      "export": str(result.export), "found_via_mdns": role != "host"}),
          flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
