"""``silkroad watch``: sit a watcher at a running table and verify the game as it goes.

A watcher is not a seat: it signs nothing, sees the public view only, and checks every
envelope the host relays with the same judge as ``silkroad audit`` (the host cannot
forge a seat's envelope: each must verify under that seat's roster key, bound to the game
id).  It finds the table like ``join`` (by name over mDNS, or ``HOST:PORT``), may come
mid-game (the host sends what it holds first), and leaves with the transcript it saw,
audited.  The network side is :func:`p2p.front_door.watch_table`; the screen is
:mod:`cli.replay.live`.

Exit codes are those of ``silkroad audit``: 0 certified, 1 unfair (a seat is named),
2 usage or the table cannot be watched, 3 not certified (naming no one).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from cli.commands.join import pick_table, split_target
from cli.commands.net import Abort, close_screen, explain, fail
from cli.lobby_app import LobbyScreen
from cli.replay.live import WatchScreen, verification_line
from cli.table.net_session import quiet_network_logs
from cli.verdict import verdict_of, verdict_text
from p2p.front_door import (
    EXIT_UNREADABLE,
    MAX_WATCHERS,
    WATCH_EVERY,
    NoSuchTable,
    TableInfo,
    WatchError,
    WatchResult,
    find_table,
    lan_discovery,
    summary,
    watch_table,
)

EXIT_USAGE = EXIT_UNREADABLE
"""Usage errors and a table that cannot be watched: 2, as ``audit`` for what it cannot read."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    w = sub.add_parser(
        "watch", help="watch a table on the LAN and verify its game live",
        description="Sit a watcher at a running table: the public view only (no hidden "
        "goods; with hidden money, no money), every envelope checked against the seats' "
        "keys and the whole game judged as it goes with the audit's own checks. A watcher "
        "signs nothing and may come mid-game; the table's join code applies. At the end "
        "the verdict is shown and the transcript kept (silkroad audit reads it). "
        f"A table admits {MAX_WATCHERS} watchers.\n\nExit codes (as silkroad audit): 0 "
        "certified; 1 unfair (a seat is named); 2 usage, or the table cannot be watched; "
        "3 not certified (naming no one).",
        epilog="Examples:\n  silkroad watch\n  silkroad watch 'Friday tea' --code silk7\n"
        "  silkroad watch 192.168.1.5:40123\n"
        "  silkroad watch 'Friday tea' --headless --json   (the verdict for scripts)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    w.add_argument("target", nargs="?", default=None, metavar="TABLE|HOST:PORT")
    w.add_argument("--code", default=None, help="the table's join code")
    w.add_argument("--interface", metavar="ADDR", default=None,
                   help="IPv4 address to use (default: every IPv4 interface)")
    w.add_argument("--timeout", type=float, default=30.0, metavar="S",
                   help="how long to look for the table and to reach it (default 30)")
    w.add_argument("--transcript", metavar="PATH", default=None,
                   help="where to keep the transcript watched "
                   "(default ./games/<time>-watch-<table>.silkroad)")
    w.add_argument("--every", type=float, default=WATCH_EVERY, metavar="S",
                   help=f"seconds between two audits of what was received (default "
                   f"{WATCH_EVERY:g}; never more than a third of the time)")
    w.add_argument("--name", default="", metavar="NAME",
                   help="the name your lines of talk carry (' on the screen talks; "
                   "default: your key's fingerprint)")
    w.add_argument("--headless", action="store_true",
                   help="no screen: progress lines, then the verdict")
    w.add_argument("--json", action="store_true",
                   help="with --headless: print one JSON object at the end")
    w.add_argument("--verbose", action="store_true", help="show the network layer's log")
    w.set_defaults(func=run_watch)


def run_watch(args: argparse.Namespace) -> int:
    quiet_network_logs(args.verbose)
    if args.json and not args.headless:
        return fail("watch", "--json needs --headless", EXIT_USAGE)
    if args.timeout <= 0:
        return fail("watch", "--timeout must be positive", EXIT_USAGE)
    if args.every <= 0:
        return fail("watch", "--every must be positive", EXIT_USAGE)
    if args.headless and not args.target:
        return fail("watch", "--headless needs a table name or HOST:PORT", EXIT_USAGE)
    if not args.headless and not (sys.stdin.isatty() and sys.stdout.isatty()):
        return fail("watch", "the watcher's screen needs a terminal; use --headless",
                    EXIT_USAGE)
    try:
        result = asyncio.run(_watch(args))
    except Abort as exc:
        if args.json:  # a script still reads one object: why nothing was watched
            print(json.dumps({"status": "unwatched", "verdict": "unwatched",
                              "exit_code": exc.code, "error": str(exc),
                              "table": args.target}), flush=True)
        return fail("watch", str(exc), exc.code)
    except OSError as exc:
        return fail("watch", f"cannot use the network: {exc.strerror or exc}", EXIT_USAGE)
    if result is None:
        print("You left before the game began; nothing was watched.")
        return 0
    return result


def default_transcript(label: str) -> Path:
    """``./games/<time>-watch-<table>.silkroad``: beside the seats' transcripts."""
    safe = "".join(c if c.isalnum() else "-" for c in label)[:24].strip("-") or "table"
    return Path("games") / f"{time.strftime('%Y%m%d-%H%M%S')}-watch-{safe}.silkroad"


async def _find(args: argparse.Namespace) -> TableInfo | tuple[str, int] | None:
    """The table to watch: ``HOST:PORT``, a name found over mDNS, or (at a terminal,
    without a target) the one picked from the tables on the LAN (None: the user quit)."""
    if args.target:
        direct = split_target(args.target)
        if direct is not None:
            return direct
        try:
            return await find_table(args.interface, args.target, min(args.timeout, 10.0))
        except NoSuchTable as exc:
            raise Abort(str(exc), EXIT_USAGE) from None
    screen = LobbyScreen("watch a table")
    app = asyncio.create_task(screen.app.run_async())
    try:
        async with lan_discovery(args.interface) as disc, disc.browse() as browser:
            return await pick_table(screen, browser, None)
    finally:
        await close_screen(screen, app)


async def _watch(args: argparse.Namespace) -> int | None:
    target = await _find(args)
    if target is None:
        return None
    label = target.ad.name if isinstance(target, TableInfo) else f"{target[0]}:{target[1]}"
    path = Path(args.transcript) if args.transcript else default_transcript(label)
    path.parent.mkdir(parents=True, exist_ok=True)
    if args.headless:
        return await _headless(args, target, label, path)
    screen = WatchScreen(label, path, every=args.every, name=args.name)
    return await screen.run(lambda watcher: watch_table(
        target, code=args.code, timeout=args.timeout, transcript=path, watcher=watcher))


async def _headless(args: argparse.Namespace, target: TableInfo | tuple[str, int],
                    label: str, path: Path) -> int:
    first: list[int] = []
    last: list[str] = []

    def on_event(kind: str, fields: dict[str, Any]) -> None:
        if kind == "progress":
            if not first:
                first.append(int(fields.get("steps", 0)))
            line = verification_line(fields)
            if not args.json and line != (last[-1] if last else None):
                last.append(line)
                print(line, flush=True)
        elif args.json:
            return
        elif kind == "connected":
            print(f"watching {label} at {fields['host']}:{fields['port']} (table key "
                  f"{str(fields['table_key'])[:8]})", flush=True)
        elif kind == "table":
            words = " ".join(fields.get("words") or []) or "(none sent)"
            print(f"game {str(fields['game_id'])[:16]}: {', '.join(fields['names'])}; "
                  f"words: {words}", flush=True)

    try:
        result = await watch_table(target, code=args.code, timeout=args.timeout,
                                   transcript=path, on_event=on_event, every=args.every)
    except WatchError as exc:
        raise Abort(explain(exc.reason, args), EXIT_USAGE) from None
    out = result_json(result, label, first[0] if first else 0)
    if args.json:
        print(json.dumps(out), flush=True)
    else:
        print(f"the watch ended: {result.ended}")
        print(verdict_text(result.report))
        print(f"transcript: {result.transcript}")
    return int(out["exit_code"])


def result_json(result: WatchResult, label: str, caught_up: int) -> dict[str, Any]:
    """The one JSON object of ``watch --headless --json``: the audit's summary (status,
    rule, culprit, final hash, steps…) and what the watch itself saw."""
    report = result.report
    out = summary(report)
    out["verdict"] = verdict_of(report.exit_code)
    v = report.violation
    culprit = out.get("culprit")
    out["culprit_name"] = report.names[culprit] if isinstance(culprit, int) and \
        0 <= culprit < len(report.names) else None
    out["table"] = label
    out["game_id"] = result.info.game_id.hex()
    out["transcript"] = str(result.transcript) if result.transcript else None
    out["ended"] = result.ended
    out["seen_to_end"] = result.seen_to_end
    out["forged"] = result.forged
    out["envelopes"] = len(result.wires)
    out["ops"] = report.crypto.ops if report.crypto is not None else 0
    out["steps_at_first_audit"] = caught_up
    if v is not None:
        out["violation"] = {"party": v.party, "envelope": v.envelope, "rule": v.rule,
                            "detail": v.detail}
    return out
