"""``silkroad host`` / ``join`` / ``tables``: networked tables on the LAN, no server.

* ``host`` opens a table (mDNS advertisement + one TCP port), optionally fills seats with
  bot peers of its own (each a real peer with its own keys), starts when the table is full
  (or on ``s`` with at least 3 players) and sits the host at seat 0.
* ``join`` finds a table by name (mDNS) or goes straight to ``HOST:PORT`` (for networks
  where multicast does not get through), or resumes a crashed seat from its folder.
* ``tables`` lists what the LAN advertises.

With a terminal the lobby screen (:mod:`cli.lobby_app`) shows tables, asks for the join
code, shows the seats filling, and then the table screen plays.  ``--headless`` lets a bot
play this seat and prints JSON lines: that is how scripts and the tests drive a LAN game.
Exit codes: 0 game over (fair, when audited), 1 the table failed (refused, stopped,
unfair), 2 usage.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cli.bots import BOT_KINDS, DEFAULT_KIND
from cli.cmd_play import BOT_NAMES, _human_name
from cli.net_session import Attach, NetSession, Runner, RunOutcome, quiet_network_logs
from cli.session import SeatInfo
from p2p.lockstep import HumanDecider

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", dest="player", default=None, metavar="NAME",
                   help="your name at the table")
    p.add_argument("--interface", metavar="ADDR", default=None,
                   help="IPv4 address to use (default: every IPv4 interface); "
                   "127.0.0.1 keeps everything on this machine")
    p.add_argument("--headless", action="store_true",
                   help="no screen: a bot plays this seat; progress as JSON lines")
    p.add_argument("--bot-kind", choices=BOT_KINDS, default=None,
                   help="how bots play (default: heuristic)")
    p.add_argument("--transcript", metavar="PATH", default=None,
                   help="where to copy the signed transcript at the end "
                   "(default ./games/<time>-<table>.silkroad)")
    p.add_argument("--folder", metavar="DIR", default="games/peers",
                   help="where this seat keeps its game folder (resume from it after a "
                   "crash; default ./games/peers)")
    p.add_argument("--timeout", type=float, default=600.0, metavar="S",
                   help="how long to wait for players / the host (default 600)")
    p.add_argument("--verbose", action="store_true", help="show the network layer's log")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    h = sub.add_parser(
        "host", help="open a table on the LAN and play at it",
        description="Open a table others can join (they see it with 'silkroad tables'). "
        "The game starts when every seat is taken, or when you press s with 3 or more.",
        epilog="Examples:\n  silkroad host --name 'Friday tea' --seats 4\n"
        "  silkroad host --seats 4 --bots 2 --code silk7\n"
        "  silkroad host --interface 127.0.0.1 --bots 2 --headless --json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    h.add_argument("--table", "--title", dest="table", default=None, metavar="TABLE",
                   help="table name shown on the LAN (default: '<your name>'s table')")
    h.add_argument("--seats", type=int, default=4, metavar="N", help="3..6 seats (default 4)")
    h.add_argument("--code", default=None, help="join code players must give")
    h.add_argument("--bots", type=int, default=0, metavar="K",
                   help="fill K seats with bot peers (each plays in its own process)")
    h.add_argument("--port", type=int, default=0, metavar="P", help="TCP port (default: any)")
    h.add_argument("--shuffle", choices=("audit", "verified"), default="verified",
                   help="shuffle proofs: verified (default) or audit (checked afterwards)")
    h.add_argument("--json", action="store_true", help="with --headless: JSON lines only")
    _common(h)
    h.set_defaults(func=run_host)

    j = sub.add_parser(
        "join", help="join a table on the LAN (by name, or HOST:PORT)",
        description="Join a table. Without TABLE the lobby lists the tables on the LAN. "
        "Where multicast does not work, give HOST:PORT as printed by the host.",
        epilog="Examples:\n  silkroad join\n  silkroad join 'Friday tea' --code silk7\n"
        "  silkroad join 192.168.1.5:40123 --name Ann\n"
        "  silkroad join --resume games/peers/3fa1c2d4e5f60718",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    j.add_argument("target", nargs="?", default=None, metavar="TABLE|HOST:PORT")
    j.add_argument("--code", default=None, help="the table's join code")
    j.add_argument("--resume", metavar="FOLDER", default=None,
                   help="rejoin a game this seat was playing (its game folder)")
    j.add_argument("--json", action="store_true", help="with --headless: JSON lines only")
    _common(j)
    j.set_defaults(func=run_join)

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


# --- helpers ---------------------------------------------------------------------------------
def _fail(prog: str, msg: str, code: int = EXIT_FAIL) -> int:
    print(f"silkroad {prog}: {msg}", file=sys.stderr)
    return code


def _say(args: argparse.Namespace, **fields: Any) -> None:
    """One JSON progress line (headless) — scripts follow the game with these."""
    if args.headless:
        print(json.dumps(fields), flush=True)


def _transcript_path(args: argparse.Namespace, label: str) -> Path:
    if args.transcript:
        return Path(args.transcript)
    safe = "".join(c if c.isalnum() else "-" for c in label)[:24].strip("-") or "table"
    return Path("games") / f"{time.strftime('%Y%m%d-%H%M%S')}-{safe}.silkroad"


def _table_row(info: Any) -> dict[str, Any]:
    ad = info.ad
    return {"name": ad.name, "host": info.host, "port": info.port,
            "seats_taken": ad.seats_taken, "seats_total": ad.seats_total, "phase": ad.phase,
            "code_required": ad.code_required, "variant": ad.variant,
            "fingerprint": ad.fingerprint, "addresses": list(info.addresses)}


def _describe(info: Any) -> str:
    ad = info.ad
    code = "  code needed" if ad.code_required else ""
    return f"{ad.name:<24.24} {ad.seats_taken}/{ad.seats_total} seats  {ad.phase:<7}{code}"


def _interfaces(args: argparse.Namespace) -> list[str] | None:
    return [args.interface] if args.interface else None


def _bind(args: argparse.Namespace) -> str:
    return args.interface or "0.0.0.0"


async def _play(session: NetSession, args: argparse.Namespace) -> str:
    """Run the table screen (or headless to the end); always leave the table cleanly."""
    try:
        if args.headless:
            await session.play_to_end()
            return "over"
        from cli.table_app import run_table

        return await run_table(session)
    finally:
        await session.close()


def _seats_from(setup: Any, me: int, kinds: dict[int, str] | None = None) -> list[SeatInfo]:
    """Seat labels: ``kinds`` first (our bots, or the bot kind of a headless seat), then
    "human" for us and "peer" for everyone else (we cannot know who plays them)."""
    kinds = kinds or {}
    return [SeatInfo(e.name, kinds.get(e.seat, "human" if e.seat == me else "peer"))
            for e in setup.roster]


def _needs_terminal(args: argparse.Namespace, prog: str) -> int | None:
    if args.headless or (sys.stdin.isatty() and sys.stdout.isatty()):
        return None
    return _fail(prog, "the lobby and table need a terminal; use --headless to let a bot "
                 "play this seat", EXIT_USAGE)


# --- tables ----------------------------------------------------------------------------------
async def browse(interfaces: list[str] | None, timeout: float,
                 until: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any]:
    """Collect advertised tables for ``timeout`` seconds (or until ``until(tables)``)."""
    from p2p.discovery import Discovery

    async with Discovery(interfaces) as disc, disc.browse() as browser:
        end = asyncio.get_running_loop().time() + timeout
        while True:
            left = end - asyncio.get_running_loop().time()
            if left <= 0:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(browser.next_event(), left)
            if until is not None and until(browser.tables):
                break
        return dict(browser.tables)


def run_tables(args: argparse.Namespace) -> int:
    quiet_network_logs(False)
    if args.timeout <= 0:
        return _fail("tables", "--timeout must be positive", EXIT_USAGE)
    try:
        found = asyncio.run(browse(_interfaces(args), args.timeout))
    except OSError as exc:
        return _fail("tables", f"cannot browse the network: {exc}")
    rows = sorted(found.values(), key=lambda i: (i.ad.name, i.instance))
    if args.json:
        print(json.dumps([_table_row(i) for i in rows]))
        return EXIT_OK
    if not rows:
        print("No tables found. Open one with 'silkroad host', or join one directly with "
              "'silkroad join HOST:PORT' where multicast does not get through.")
        return EXIT_OK
    for i in rows:
        print(f"{_describe(i)}  {i.host}:{i.port}")
    return EXIT_OK


# --- host ------------------------------------------------------------------------------------
def run_host(args: argparse.Namespace) -> int:
    quiet_network_logs(args.verbose)
    if not 3 <= args.seats <= 6:
        return _fail("host", f"--seats must be 3..6, not {args.seats}", EXIT_USAGE)
    if not 0 <= args.bots < args.seats:
        return _fail("host", f"--bots must be 0..{args.seats - 1} (you take a seat too)",
                     EXIT_USAGE)
    if args.json and not args.headless:
        return _fail("host", "--json needs --headless", EXIT_USAGE)
    bad = _needs_terminal(args, "host")
    if bad is not None:
        return bad
    me_name = _human_name(args.player)
    args.table = args.table or f"{me_name}'s table"
    t0 = time.perf_counter()
    try:
        session, result = asyncio.run(_host(args, me_name))
    except _Abort as exc:
        return _fail("host", str(exc), exc.code)
    except OSError as exc:
        return _fail("host", f"cannot open the table: {exc.strerror or exc} "
                     "(is the port in use? try another --port)")
    if session is None:
        print("The table was closed before the game started.")
        return EXIT_OK
    from cli.net_report import finish_report

    return finish_report(session, _transcript_path(args, args.table), None,
                         time.perf_counter() - t0, args.json, headless=args.headless,
                         quit_early=result == "quit", prog="silkroad host")


class _Abort(Exception):
    def __init__(self, text: str, code: int = EXIT_FAIL) -> None:
        super().__init__(text)
        self.code = code


async def _bot_peer(i: int, kind: str, args: argparse.Namespace, dial_host: str, port: int,
                    root: Path) -> dict[str, Any]:
    """One bot seat of the host: its own identity and listener, joins like anyone else, then
    plays the game in a child process (:mod:`p2p.peer_process`) so the host's bots share
    every core instead of the host's one.  Returns the child's final report."""
    from p2p.connection import Listener
    from p2p.identity import Identity
    from p2p.lobby import join_table
    from p2p.local_table import prepare_folder
    from p2p.netgame import setup_board
    from p2p.peer_process import spawn, stop, wait_all
    from p2p.store import game_folder

    lis = await Listener(Identity.generate(), host=_bind(args), port=0).start()
    try:
        setup = await join_table(lis, dial_host, port, name=BOT_NAMES[i % len(BOT_NAMES)],
                                 join_code=args.code, mesh_host=dial_host,
                                 start_timeout=None)
    finally:
        await lis.close()  # the child binds this port again for the game
    folder = game_folder(root / f"bot{i}", setup.game_id)
    prepare_folder(folder, list(setup.roster), setup.params, setup.my_seat, setup.game_id,
                   lis.identity, board=setup_board(setup))
    # people at the table may think for a long time: the same patience as play_setup's
    child = await spawn(setup.my_seat, folder, kind, 7919 * (i + 1), abandon=1800.0)
    try:
        return (await wait_all([child], None))[0]
    finally:
        await stop(child)


async def _host(args: argparse.Namespace, me_name: str) -> tuple[NetSession | None, str]:
    from p2p.connection import Listener
    from p2p.discovery import Discovery
    from p2p.identity import Identity
    from p2p.lobby import Table
    from p2p.netgame import play_setup

    kind = args.bot_kind or DEFAULT_KIND
    root = Path(args.folder)
    screen = app = None
    if not args.headless:
        # the screen comes up first: announcing the table on mDNS takes a second or two
        # (probing), and a blank terminal meanwhile looks like a hang
        from cli.lobby_app import LobbyScreen

        screen = LobbyScreen(f"hosting {args.table}")
        screen.show([("bold", f"Opening {args.table} on the network…")], "q cancel")
        app = asyncio.create_task(screen.app.run_async())
    listener = await Listener(Identity.generate(), host=_bind(args), port=args.port).start()
    disc = await Discovery(_interfaces(args)).start()
    table = Table(listener, name=args.table, seats=args.seats, host_name=me_name,
                  shuffle_mode=args.shuffle, join_code=args.code, discovery=disc,
                  advertise_addresses=_interfaces(args))
    bots: list[asyncio.Task[Any]] = []
    try:
        await table.open()
        addrs = disc.local_addresses()
        dial = args.interface or (addrs[0] if addrs else "127.0.0.1")
        _say(args, event="open", table=args.table, port=listener.port, host=dial,
             seats=args.seats, code_required=args.code is not None)
        for i in range(args.bots):
            bots.append(asyncio.create_task(_bot_peer(i, kind, args, dial, listener.port,
                                                      root)))
        if args.headless:
            try:
                await table.wait_for_players(timeout=args.timeout)
            except TimeoutError:
                raise _Abort(f"only {len(table.seated)} of {args.seats} seats were taken "
                             f"in {args.timeout:.0f} s") from None
            setup = await table.start()
        else:
            assert screen is not None
            try:
                chosen = await _host_lobby(table, args, dial, listener.port, bots, screen)
                if chosen is not None and not await show_words(screen, chosen.words):
                    chosen = None
            finally:
                await _close_screen(screen, app)
            if chosen is None:
                return None, "quit"
            setup = chosen
        _say(args, event="seated", seat=0, words=list(setup.words),
             players=[e.name for e in setup.roster])
        agent = None
        if args.headless:
            from engine.bots import make_bot

            agent = make_bot(kind, 1)
        bot_seats = {1 + i: kind for i in range(args.bots)}
        if args.headless:
            bot_seats[0] = kind  # a bot plays our seat: say so in the JSON

        async def runner(human: Any, attach: Attach) -> RunOutcome:
            t0 = time.perf_counter()
            res = await play_setup(setup, listener, root, agent=agent, human=human,
                                   on_table=attach)
            for b in bots:  # our bots finish their own game (their transcripts are theirs)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(b, 30)
            return RunOutcome(res.export, time.perf_counter() - t0)

        session = NetSession(_seats_from(setup, 0, bot_seats), 0,
                             _with_agent(runner) if args.headless else runner,
                             words=setup.words)
        return session, await _play(session, args)
    finally:
        if screen is not None:
            await _close_screen(screen, app)
        for b in bots:
            if not b.done():
                b.cancel()
            with contextlib.suppress(BaseException):
                await b
        with contextlib.suppress(Exception):
            await table.close()
        with contextlib.suppress(Exception):
            await disc.close()
        with contextlib.suppress(Exception):
            await listener.close()


def _with_agent(runner: Runner) -> Runner:
    """Headless: our seat is played by the bot given to the runner, so pass no human."""
    async def run(human: HumanDecider | None, attach: Attach) -> RunOutcome:
        return await runner(None, attach)
    return run


async def _host_lobby(table: Any, args: argparse.Namespace, dial: str, port: int,
                      bots: list[asyncio.Task[Any]], screen: Any) -> Any:
    """The host's lobby screen: seats filling; s starts early, q closes the table.

    Returns the game setup, or None when the host closed the table.  The seat list is
    polled (``table.seated``, public) a few times a second rather than awaiting the lobby's
    internal change event, so a seat that leaves shows as promptly as one that arrives."""
    from p2p.errors import LobbyError

    code = f" · join code {args.code}" if args.code else ""

    def redraw() -> None:
        lines = [("bold", f"{args.table} — {len(table.seated)}/{args.seats} seats{code}"),
                 ("", "")]
        for i, s in enumerate(table.seated):
            tag = " (you)" if i == 0 else (" (bot)" if 0 < i <= len(bots) else "")
            lines.append(("", f"seat {i}: {s.name}{tag}"))
        for i in range(len(table.seated), args.seats):
            lines.append(("muted", f"seat {i}: …"))
        lines += [("", ""), ("muted", f"Players join with: silkroad join '{args.table}'"),
                  ("muted", f"   or, without multicast: silkroad join {dial}:{port}")]
        screen.show(lines, "s start now (3 or more seated) · q close the table · the game "
                    "starts by itself when every seat is taken")

    shown: list[str] | None = None
    while True:
        now = [x.name for x in table.seated]
        if now != shown:
            shown = now
            redraw()
        if len(now) >= args.seats:
            break
        try:
            msg = await asyncio.wait_for(screen.inbox.get(), LOBBY_POLL)
        except TimeoutError:
            continue
        if msg[0] == "quit":
            return None
        if msg[0] == "start":
            if len(table.seated) >= 3:
                break
            screen.fail(f"a game needs at least 3 players ({len(table.seated)} seated)")
    screen.fail("")
    screen.show([("bold", "Starting… every seat is agreeing on the game.")])
    try:
        return await table.start()
    except LobbyError as exc:
        raise _Abort(f"the start failed: {exc.reason}") from None


LOBBY_POLL = 0.2
"""Seconds between looks at the host's seat list."""
WORDS_HOLD = 4.0
"""How long the words stay on the lobby screen before the table opens (Enter skips)."""


async def show_words(screen: Any, words: tuple[str, ...] | list[str],
                     hold: float | None = None) -> bool:
    """Show the authentication words in the lobby until Enter or ``hold`` seconds.

    Everyone reads them aloud: a man in the middle would give each side different words.
    They also stay in the table's banner.  Returns False when the player presses q (the
    words differ), True to sit down."""
    hold = WORDS_HOLD if hold is None else hold
    screen.show([("bold", "Everyone is seated. Read these words aloud and compare:"), ("", ""),
                 ("words", "   ".join(w.upper() for w in words)), ("", ""),
                 ("muted", "Every player must see the same words. If yours differ, someone"),
                 ("muted", "is between you and the others: press q and do not play.")],
                "Enter sit down now · q leave (the words differ) · the table opens by itself")
    try:
        msg = await asyncio.wait_for(screen.inbox.get(), hold)
    except TimeoutError:
        return True
    return bool(msg[0] != "quit")


async def _close_screen(screen: Any, app: asyncio.Task[Any] | None) -> None:
    """Leave a lobby screen (idempotent) so the table screen can take the terminal."""
    if screen.app.is_running:
        screen.app.exit()
    if app is not None:
        with contextlib.suppress(BaseException):
            await app


# --- join ------------------------------------------------------------------------------------
def run_join(args: argparse.Namespace) -> int:
    quiet_network_logs(args.verbose)
    if args.json and not args.headless:
        return _fail("join", "--json needs --headless", EXIT_USAGE)
    bad = _needs_terminal(args, "join")
    if bad is not None:
        return bad
    if args.resume and args.target:
        return _fail("join", "give either a table or --resume FOLDER, not both", EXIT_USAGE)
    if args.headless and not args.target and not args.resume:
        return _fail("join", "--headless needs a table name or HOST:PORT", EXIT_USAGE)
    t0 = time.perf_counter()
    try:
        session, result, label = asyncio.run(_join(args))
    except _Abort as exc:
        return _fail("join", str(exc), exc.code)
    if session is None:
        print("You left the lobby.")
        return EXIT_OK
    from cli.net_report import finish_report

    return finish_report(session, _transcript_path(args, label), None,
                         time.perf_counter() - t0, args.json, headless=args.headless,
                         quit_early=result == "quit", prog="silkroad join")


def _split_target(target: str) -> tuple[str, int] | None:
    host, sep, port = target.rpartition(":")
    if sep and host and port.isdigit() and 0 < int(port) < 65536:
        return host, int(port)
    return None


async def _join(args: argparse.Namespace) -> tuple[NetSession | None, str, str]:
    from engine.bots import make_bot
    from p2p.connection import Listener
    from p2p.errors import LobbyError
    from p2p.identity import Identity
    from p2p.lobby import join_table
    from p2p.netgame import play_setup

    kind = args.bot_kind or DEFAULT_KIND
    agent = make_bot(kind, 2) if args.headless else None
    if args.resume:
        return await _resume(args, agent)
    name = _human_name(args.player)
    listener = await Listener(Identity.generate(), host=_bind(args), port=0).start()
    try:
        target = _split_target(args.target) if args.target else None
        if args.target and target is None:
            if args.headless:
                info = await _find(args)
                target = (info.host, info.port)
            else:
                target = None
        if args.headless:
            assert target is not None
            try:
                setup = await join_table(listener, target[0], target[1], name=name,
                                         join_code=args.code, start_timeout=args.timeout)
            except LobbyError as exc:
                raise _Abort(_explain(exc.reason, args)) from None
            label = f"{target[0]}:{target[1]}"
        else:
            got = await _join_lobby(listener, args, name, target)
            if got is None:
                return None, "quit", ""
            setup, label = got
        _say(args, event="seated", seat=setup.my_seat, words=list(setup.words),
             players=[e.name for e in setup.roster])
        me = setup.my_seat

        async def runner(human: Any, attach: Attach) -> RunOutcome:
            t0 = time.perf_counter()
            res = await play_setup(setup, listener, Path(args.folder), agent=agent,
                                   human=human, on_table=attach)
            return RunOutcome(res.export, time.perf_counter() - t0)

        session = NetSession(_seats_from(setup, me, {me: kind} if args.headless else None), me,
                             _with_agent(runner) if args.headless else runner,
                             words=setup.words)
        return session, await _play(session, args), label
    finally:
        with contextlib.suppress(Exception):
            await listener.close()


def _explain(reason: str, args: argparse.Namespace) -> str:
    if "join code" in reason:
        hint = "ask the host for the code and pass --code CODE" if not args.code else \
            "check the code with the host (spaces, - and case do not matter)"
        return f"{reason} — {hint}"
    return reason


async def _find(args: argparse.Namespace) -> Any:
    """The advertised table called ``args.target`` (mDNS)."""
    def match(tables: dict[str, Any]) -> bool:
        return any(i.ad.name == args.target for i in tables.values())

    found = await browse(_interfaces(args), min(args.timeout, 10.0), until=match)
    hits = [i for i in found.values() if i.ad.name == args.target]
    if not hits:
        names = ", ".join(sorted({i.ad.name for i in found.values()})) or "none"
        raise _Abort(f"no table called {args.target!r} on the network (seen: {names}); "
                     "join by HOST:PORT if multicast does not get through")
    return hits[0]


async def _resume(args: argparse.Namespace, agent: Any) -> tuple[NetSession, str, str]:
    from p2p.errors import ProtocolError
    from p2p.netgame import resume_folder
    from p2p.store import GameStore, StoreError

    store = GameStore(args.resume)
    try:
        roster, params, seat, _gid = store.load_meta()
        params.check_playable()
        store.load_secrets()
    except (StoreError, OSError, ValueError, ProtocolError) as exc:
        raise _Abort(f"cannot resume from {args.resume}: {exc} (give the game folder "
                     "that holds meta.json and secrets.bin)", EXIT_USAGE) from None

    async def runner(human: Any, attach: Attach) -> RunOutcome:
        t0 = time.perf_counter()
        res = await resume_folder(args.resume, agent, human, on_table=attach)
        return RunOutcome(res.export, time.perf_counter() - t0)

    mine = (args.bot_kind or DEFAULT_KIND) if args.headless else "human"
    seats = [SeatInfo(e.name, mine if e.seat == seat else "peer") for e in roster]
    session = NetSession(seats, seat, _with_agent(runner) if args.headless else runner)
    return session, await _play(session, args), Path(args.resume).name


async def _join_lobby(listener: Any, args: argparse.Namespace, name: str,
                      target: tuple[str, int] | None,
                      screen: Any = None) -> tuple[Any, str] | None:
    """The joiner's lobby screen: pick a table, give the code, watch the seats fill, compare
    the words.  ``screen`` (a :class:`cli.lobby_app.LobbyScreen`) is for tests."""
    from cli.lobby_app import LobbyScreen
    from p2p.discovery import Discovery
    from p2p.lobby import join_discovered, join_table

    screen = screen or LobbyScreen("lobby")
    app = asyncio.create_task(screen.app.run_async())
    try:
        async with Discovery(_interfaces(args)) as disc, disc.browse() as browser:
            while True:
                info = None
                if target is None:
                    info = await _pick_table(screen, browser, args.target)
                    if info is None:
                        return None
                    label = info.ad.name
                    need_code = info.ad.code_required
                else:
                    label = f"{target[0]}:{target[1]}"
                    need_code = False  # a direct join learns of a code by being refused
                code = args.code
                if need_code and code is None:
                    screen.show([("bold", f"{label} needs a join code."), ("", ""),
                                 ("muted", "Ask the host; spaces, - and case do not matter.")],
                                "Enter to join · Esc to go back", prompt="join code: ")
                    msg = await screen.inbox.get()
                    if msg[0] == "quit":
                        if target is not None:
                            return None
                        continue
                    code = msg[1].strip() or None
                def on_lobby(seats: list[tuple[str, str]], total: int,
                             label: str = label) -> None:
                    lines = [("bold", f"{label} — {len(seats)}/{total} seats"), ("", "")]
                    lines += [("", f"seat {i}: {n}  [{fp}]") for i, (n, fp) in enumerate(seats)]
                    lines += [("", ""), ("muted", "Waiting for the host to start the game…")]
                    screen.show(lines, "q leave the table")

                screen.show([("bold", f"Joining {label}…")], "q cancel")
                if info is not None:
                    coro = join_discovered(listener, info, name=name, join_code=code,
                                           start_timeout=args.timeout, on_lobby=on_lobby)
                else:
                    assert target is not None  # no table picked: we were given HOST:PORT
                    coro = join_table(listener, target[0], target[1], name=name,
                                      join_code=code, start_timeout=args.timeout,
                                      on_lobby=on_lobby)
                joining = asyncio.create_task(coro)
                while True:
                    asked = asyncio.create_task(screen.inbox.get())
                    done, _ = await asyncio.wait({joining, asked},
                                                 return_when=asyncio.FIRST_COMPLETED)
                    if joining in done:
                        asked.cancel()
                        break
                    if asked.result()[0] == "quit":
                        joining.cancel()
                        with contextlib.suppress(BaseException):
                            await joining
                        return None
                exc = joining.exception()
                if exc is None:
                    setup = joining.result()
                    if not await show_words(screen, setup.words):
                        return None
                    return setup, label
                reason = getattr(exc, "reason", str(exc))
                if target is not None:
                    raise _Abort(_explain(reason, args))
                screen.fail(f"Refused: {_explain(reason, args)}")
    finally:
        await _close_screen(screen, app)


async def _pick_table(screen: Any, browser: Any, wanted: str | None) -> Any:
    """List tables as they appear; return the chosen one (None: the user quit)."""
    while True:
        rows = sorted(browser.tables.values(), key=lambda i: (i.ad.name, i.instance))
        if wanted:
            exact = [i for i in rows if i.ad.name == wanted]
            if exact:
                return exact[0]
        if rows:
            lines = [("bold", "Tables on your network:"), ("", "")]
            lines += [("entry", _describe(i)) for i in rows]
            screen.show(lines, "1-9 or ↑↓ Enter choose · q quit", selectable=len(rows))
        else:
            screen.show([("bold", "Looking for tables on your network…"), ("", ""),
                         ("muted", "None yet. Someone opens one with 'silkroad host'."),
                         ("muted", "No multicast here? Join directly: silkroad join "
                          "HOST:PORT")], "q quit")
        ev = asyncio.create_task(browser.next_event())
        asked = asyncio.create_task(screen.inbox.get())
        done, _ = await asyncio.wait({ev, asked}, return_when=asyncio.FIRST_COMPLETED)
        for t in (ev, asked):
            if t not in done:
                t.cancel()
        if asked in done:
            msg = asked.result()
            if msg[0] == "quit":
                return None
            if msg[0] == "pick" and msg[1] < len(rows):
                return rows[msg[1]]
