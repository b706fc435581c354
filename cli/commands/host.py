"""``silkroad host``: open a table on the LAN, fill seats with bots if asked, play at seat 0.

The table (listener, mDNS advertisement, lobby, bot seats) is a
:class:`p2p.front_door.HostedTable`; this module parses the options and draws the host's
lobby screen.  It starts when the table is full (or on ``s`` with at least 3 players).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from cli.bots import BOT_LEVELS, BUDGET_HELP, LEVEL_HELP, BotUnavailable, bot_spec
from cli.commands.net import (
    EXIT_OK,
    EXIT_USAGE,
    Abort,
    close_screen,
    common_options,
    fail,
    needs_terminal,
    play_session,
    report_game,
    say,
    say_how_to_resume,
    seats_from,
    show_words,
    with_agent,
)
from cli.commands.play import _human_name, bot_names
from cli.lobby_app import LobbyScreen
from cli.table.net_session import NetSession, RunOutcome, quiet_network_logs
from cli.table.panels import YOU
from p2p.front_door import (
    AUTO,
    MAX_SERIES,
    MONEY_MODES,
    GameSetup,
    HostedTable,
    HumanDecider,
    LobbyError,
    TableHandle,
    estimate_bits,
    generate_code,
    headless_agent,
    normalize_code,
)

LOBBY_POLL = 0.2
"""Seconds between looks at the host's seat list."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    h = sub.add_parser(
        "host", help="open a table on the LAN and play at it",
        description="Open a table others can join (they see it with 'silkroad tables'). "
        "The game starts when every seat is taken, or when you press s with 3 or more.",
        epilog="Examples:\n  silkroad host --table 'Friday tea' --name Ann --seats 4\n"
        "  silkroad host --seats 4 --bots 2 --code silk7\n"
        "  silkroad host --seats 4 --bots 3 --bot-level hard\n"
        "  silkroad host --code auto --money hidden   (a 4-word code is printed)\n"
        "  silkroad host --interface 127.0.0.1 --bots 2 --headless --json\n"
        "  silkroad host --seats 3 --bots 2 --headless --games 5   (a series of 5)\n"
        "  silkroad host --seats 3 --bots 2 --games 3   (n on the end screen: play again)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    h.add_argument("--table", "--title", dest="table", default=None, metavar="TABLE",
                   help="table name shown on the LAN (default: '<your name>'s table')")
    h.add_argument("--seats", type=int, default=4, metavar="N", help="3..6 seats (default 4)")
    h.add_argument("--code", default=None, metavar="CODE|auto",
                   help="join code players must give. 'auto' makes one of 4 words from "
                   "the word list (32 bits: cannot be guessed over the network). A typed "
                   "code is only as strong as it is unpredictable: at most about 4.7 bits "
                   "per letter and 3.3 per digit if chosen at random ('silk7' is at most "
                   "26 bits, a word, name or date far less). Each network address may "
                   "give 8 wrong codes, with growing delays between them; then the lobby "
                   "is closed to it")
    h.add_argument("--bots", type=int, default=0, metavar="K",
                   help="fill K seats with bot peers (each plays in its own process)")
    h.add_argument("--bot-level", choices=BOT_LEVELS, default=None,
                   help=LEVEL_HELP + "; same as --bot-kind easy/normal/hard")
    h.add_argument("--bot-budget", type=int, default=None, metavar="N", help=BUDGET_HELP)
    h.add_argument("--port", type=int, default=0, metavar="P", help="TCP port (default: any)")
    h.add_argument("--shuffle", choices=("audit", "verified"), default="verified",
                   help="verified (default): every shuffle proven as it happens; audit: "
                   "faster but NOT private (a seat can learn every hand unseen) and a "
                   "cheat shows only in 'silkroad audit' afterwards: for tables that "
                   "trust each other")
    h.add_argument("--money", choices=MONEY_MODES, default="open",
                   help="open (default): everyone's money shows; hidden: others' money is "
                   "behind their screens (shows as $?, the log still says who paid what). "
                   "Agreed by every seat, like the variant")
    h.add_argument("--json", action="store_true", help="with --headless: JSON lines only")
    h.add_argument("--games", type=int, default=None, metavar="N",
                   help="a series at this table: same seats and keys, a new game id each "
                   "game, the first leader rotating, the bots kept; a seat that does not "
                   "come back frees its place for a new joiner. Wins are counted in "
                   "series.json in each game's folder. With --headless: play N games in "
                   "a row (default 1). At the table screen the end screen offers 'n' "
                   "play again, up to N games in all (default "
                   f"{MAX_SERIES})")
    common_options(h)
    h.set_defaults(func=run_host)


def run_host(args: argparse.Namespace) -> int:
    quiet_network_logs(args.verbose)
    if not 3 <= args.seats <= 6:
        return fail("host", f"--seats must be 3..6, not {args.seats}", EXIT_USAGE)
    if not 0 <= args.bots < args.seats:
        return fail("host", f"--bots must be 0..{args.seats - 1} (you take a seat too)",
                    EXIT_USAGE)
    if args.json and not args.headless:
        return fail("host", "--json needs --headless", EXIT_USAGE)
    if args.games is not None and not 1 <= args.games <= MAX_SERIES:
        return fail("host", f"--games must be 1..{MAX_SERIES}, not {args.games}", EXIT_USAGE)
    if args.games is None:  # headless: one game; the table screen: play again at the end
        args.games = 1 if args.headless else MAX_SERIES
    try:
        args.bot_spec = bot_spec(args.bot_kind, args.bot_level, args.bot_budget)
    except BotUnavailable as exc:
        return fail("host", str(exc), EXIT_USAGE)
    bad = needs_terminal(args, "host")
    if bad is not None:
        return bad
    me_name = _human_name(args.player)
    args.table = args.table or f"{me_name}'s table"
    args.code_generated = args.code is not None and args.code.strip().casefold() == AUTO
    if args.code_generated:
        args.code = generate_code()
    elif args.code is not None and not normalize_code(args.code):
        return fail("host", "--code is empty (give a code, or auto)", EXIT_USAGE)
    made: list[NetSession] = []
    try:
        code = asyncio.run(_host(args, me_name, made))
    except KeyboardInterrupt:
        say_how_to_resume("host", made)
        raise
    except Abort as exc:
        return fail("host", str(exc), exc.code)
    except OSError as exc:
        return fail("host", f"cannot open the table: {exc.strerror or exc} "
                    "(is the port in use? try another --port)")
    if code is None:
        print("The table was closed before the game started.")
        return EXIT_OK
    return code


async def _host(args: argparse.Namespace, me_name: str,
                made: list[NetSession]) -> int | None:
    """Open the table, then for each game of the series (``--games``): run its lobby,
    play, report.  ``made`` receives each game's session once it exists (so an
    interrupted run can still say how to resume).  Returns the exit code, None when the
    table was closed before the first game started."""
    kind: str = args.bot_spec  # the kind string each bot peer process is started with
    screen: LobbyScreen | None = None
    app: asyncio.Task[None] | None = None
    if not args.headless:
        # the screen comes up first: announcing the table on mDNS takes a second or two
        # (probing), and a blank terminal meanwhile looks like a hang
        screen, app = _lobby_screen(args, f"Opening {args.table} on the network…")
    hosted = HostedTable(name=args.table, seats=args.seats, player=me_name,
                         root=Path(args.folder), code=args.code, shuffle=args.shuffle,
                         interface=args.interface, port=args.port, bots=args.bots,
                         bot_kind=kind, bot_names=bot_names(args.bots, me_name),
                         money=args.money)
    try:
        await hosted.open()
        say(args, event="open", table=args.table, port=hosted.port, host=hosted.dial,
            seats=args.seats, code_required=args.code is not None,
            **({"code": args.code} if args.code_generated else {}),
            **({"games": args.games} if args.games > 1 else {}))
        code = EXIT_OK
        for game_no in range(1, args.games + 1):
            if game_no > 1:
                if not args.headless:  # "play again": the lobby screen for the next game
                    screen, app = _lobby_screen(args, f"Opening game {game_no} at "
                                                f"{args.table}…")
                await hosted.next_game()
                say(args, event="next", game=game_no, port=hosted.port)
            code, result = await _one_game(hosted, args, kind, made, screen, app,
                                           again=game_no < args.games)
            if result is None:  # the host closed the lobby
                return None if game_no == 1 else code
            # headless plays every game asked for; at the screen the player chose
            if code != EXIT_OK or result != ("over" if args.headless else "again"):
                break
        return code
    finally:
        if screen is not None:
            await close_screen(screen, app)
        await hosted.close()


def _lobby_screen(args: argparse.Namespace,
                  opening: str) -> tuple[LobbyScreen, asyncio.Task[None]]:
    """The host's lobby screen, up and saying ``opening`` (one per game: the table screen
    takes the terminal in between)."""
    rules = " · hidden money" if args.money == "hidden" else ""
    screen = LobbyScreen(f"hosting {args.table}{rules}")
    screen.show([("bold", opening)], "q cancel")
    return screen, asyncio.create_task(screen.app.run_async())


async def _one_game(hosted: HostedTable, args: argparse.Namespace, kind: str,
                    made: list[NetSession], screen: LobbyScreen | None,
                    app: asyncio.Task[None] | None,
                    again: bool = False) -> tuple[int, str | None]:
    """Seat, play and report the table's next game: ``(exit code, how it ended)``, the
    latter None when the host closed the lobby.  ``again``: the end screen offers "play
    again" (a next game may follow)."""
    if args.headless:
        try:
            await hosted.wait_full(args.timeout)
        except TimeoutError:
            raise Abort(f"only {len(hosted.seated)} of {args.seats} seats were taken "
                        f"in {args.timeout:.0f} s") from None
        try:
            setup = await hosted.start()
        except LobbyError as exc:
            raise Abort(f"the start failed: {exc.reason}") from None
    else:
        assert screen is not None
        try:
            chosen = await host_lobby(hosted, args, screen)
            if chosen is not None and not await show_words(screen, chosen.words):
                chosen = None
        finally:
            await close_screen(screen, app)
        if chosen is None:
            return EXIT_OK, None
        setup = chosen
    say(args, event="seated", seat=0, words=list(setup.words),
        players=[e.name for e in setup.roster], money=setup.params.money,
        **({"game": setup.params.game_no} if args.games > 1 else {}))
    agent = headless_agent(kind, 1) if args.headless else None
    bot_seats = {1 + i: kind for i in range(args.bots)}
    if args.headless:
        bot_seats[0] = kind  # a bot plays our seat: say so in the JSON

    async def runner(human: HumanDecider | None, handle: TableHandle) -> RunOutcome:
        t0 = time.perf_counter()
        res = await hosted.play(setup, handle, agent, human)
        return RunOutcome(res.export, time.perf_counter() - t0)

    session = NetSession(seats_from(setup.roster, 0, bot_seats), 0,
                         with_agent(runner) if args.headless else runner,
                         words=setup.words, hidden_money=setup.params.hidden_money)
    made[:] = [session]  # the games before it ended: nothing of theirs to resume
    session.set_watching(hosted.watchers)

    def watching(count: int) -> None:  # "2 watching" in the table's header
        session.set_watching(count)
        say(args, event="watchers", count=count)

    hosted.on_watchers = watching
    t0 = time.perf_counter()
    result = await play_session(session, args, again=again)
    code = await report_game(session, args, args.table, setup.params.game_no,
                             time.perf_counter() - t0, result, "silkroad host")
    return code, result


async def host_lobby(hosted: HostedTable, args: argparse.Namespace,
                     screen: LobbyScreen) -> GameSetup | None:
    """The host's lobby screen: seats filling; s starts early, q closes the table.

    Returns the game setup, or None when the host closed the table.  The seat list is
    polled (``hosted.seated``) a few times a second rather than awaiting the lobby's
    internal change event, so a seat that leaves shows as promptly as one that arrives."""
    code = f" · join code {args.code} (≈{estimate_bits(args.code):.0f} bits)" if args.code \
        else ""

    def redraw(seated: list[str]) -> None:
        lines = [("bold", f"{args.table} — {len(seated)}/{args.seats} seats{code}"),
                 ("", "")]
        for i, name in enumerate(seated):
            tag = f" {YOU}" if i == 0 else (" (bot)" if 0 < i <= hosted.bots else "")
            lines.append(("", f"seat {i}: {name}{tag}"))
        for i in range(len(seated), args.seats):
            lines.append(("muted", f"seat {i}: …"))
        lines += [("", ""), ("muted", f"Players join with: silkroad join '{args.table}'"),
                  ("muted", "   or, without multicast: silkroad join "
                   f"{hosted.dial}:{hosted.port}")]
        screen.show(lines, "s start now (3 or more seated) · q close the table · the game "
                    "starts by itself when every seat is taken")

    shown: list[str] | None = None
    while True:
        now = hosted.seated
        if now != shown:
            shown = now
            redraw(now)
        if len(now) >= args.seats:
            break
        try:
            msg = await asyncio.wait_for(screen.inbox.get(), LOBBY_POLL)
        except TimeoutError:
            continue
        if msg[0] == "quit":
            return None
        if msg[0] == "start":
            if len(hosted.seated) >= 3:
                break
            screen.fail(f"a game needs at least 3 players ({len(hosted.seated)} seated)")
    screen.fail("")
    screen.show([("bold", "Starting… every seat is agreeing on the game.")])
    try:
        return await hosted.start()
    except LobbyError as exc:
        raise Abort(f"the start failed: {exc.reason}") from None
