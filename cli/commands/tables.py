"""``silkroad tables``: list the tables advertised on the LAN (mDNS)."""

from __future__ import annotations

import argparse
import asyncio
import json

from cli.commands.net import EXIT_OK, EXIT_USAGE, describe, fail
from cli.table.net_session import quiet_network_logs
from p2p.front_door import (
    TableInfo,
    browse_tables,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    t = sub.add_parser(
        "tables", help="list the tables advertised on the LAN",
        description="Browse the LAN (mDNS) for open tables and print them.",
        epilog="Examples:\n  silkroad tables\n  silkroad tables --timeout 5 --json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("--timeout", type=float, default=3.0, metavar="S",
                   help="how long to listen (default 3 s)")
    t.add_argument("--interface", metavar="ADDR", default=None,
                   help="IPv4 address to browse on (default: all)")
    t.add_argument("--json", action="store_true", help="print a JSON array")
    t.set_defaults(func=run_tables)


def table_row(info: TableInfo) -> dict[str, object]:
    """One table as ``tables --json`` prints it."""
    ad = info.ad
    return {"name": ad.name, "host": info.host, "port": info.port,
            "seats_taken": ad.seats_taken, "seats_total": ad.seats_total, "phase": ad.phase,
            "code_required": ad.code_required, "variant": ad.variant, "money": ad.money,
            "watchers": ad.watchers, "fingerprint": ad.fingerprint,
            "addresses": list(info.addresses)}


def run_tables(args: argparse.Namespace) -> int:
    quiet_network_logs(False)
    if args.timeout <= 0:
        return fail("tables", "--timeout must be positive", EXIT_USAGE)
    try:
        found = asyncio.run(browse_tables(args.interface, args.timeout))
    except OSError as exc:
        return fail("tables", f"cannot browse the network: {exc}")
    rows = sorted(found.values(), key=lambda i: (i.ad.name, i.instance))
    if args.json:
        print(json.dumps([table_row(i) for i in rows]))
        return EXIT_OK
    if not rows:
        print("No tables found. Open one with 'silkroad host', or join one directly with "
              "'silkroad join HOST:PORT' where multicast does not get through.")
        return EXIT_OK
    for i in rows:
        print(f"{describe(i)}  {i.host}:{i.port}")
    return EXIT_OK
