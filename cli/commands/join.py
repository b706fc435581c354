"""``silkroad join``: sit at a table on the LAN (by name or ``HOST:PORT``), or resume a seat.

The seat is a :class:`p2p.front_door.JoiningSeat` (found by mDNS, or dialled directly where
multicast does not get through); ``--resume FOLDER`` comes back to a game from this seat's
folder with :func:`p2p.front_door.resume_seat`, bringing back the bot seats it ran.  This
module parses the options and draws the joiner's lobby screen.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from pathlib import Path

from cli.bots import DEFAULT_KIND
from cli.commands.net import (
    EXIT_OK,
    EXIT_USAGE,
    Abort,
    close_screen,
    common_options,
    describe,
    explain,
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
from cli.commands.play import _human_name
from cli.lobby_app import LobbyScreen
from cli.table.net_session import NetSession, RunOutcome, quiet_network_logs
from cli.table.panels import YOU
from cli.table.session import SeatInfo
from p2p.front_door import (
    MAX_SERIES,
    Agent,
    GameSetup,
    HumanDecider,
    JoiningSeat,
    LobbyError,
    NoSuchTable,
    P2PError,
    RotationRefused,
    StoreError,
    TableBrowser,
    TableHandle,
    TableInfo,
    find_table,
    follow_watchers,
    headless_agent,
    read_seat,
    resume_seat,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    j = sub.add_parser(
        "join", help="join a table on the LAN (by name, or HOST:PORT)",
        description="Join a table. Without TABLE the lobby lists the tables on the LAN. "
        "Where multicast does not work, give HOST:PORT as printed by the host.",
        epilog="Examples:\n  silkroad join\n  silkroad join 'Friday tea' --code silk7\n"
        "  silkroad join 192.168.1.5:40123 --name Ann\n"
        "  silkroad join --resume games/peers/3fa1c2d4e5f60718-6777b308  (a LAN seat)\n"
        "  silkroad join --resume games/peers/seat0/3fa1c2d4e5f60718      (silkroad play)\n"
        "  silkroad join 192.168.1.5:40123 --headless --games 5   (a host's series)\n"
        "  silkroad join 'Friday tea'   (n on the end screen: play the host's next game)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    j.add_argument("target", nargs="?", default=None, metavar="TABLE|HOST:PORT")
    j.add_argument("--code", default=None, help="the table's join code")
    j.add_argument("--resume", metavar="FOLDER", default=None,
                   help="rejoin a game this seat was playing (its game folder)")
    j.add_argument("--json", action="store_true", help="with --headless: JSON lines only")
    j.add_argument("--games", type=int, default=None, metavar="N",
                   help="stay for up to N games of the host's series (silkroad host "
                   "--games, or its 'play again'): after a game this seat joins the same "
                   "host again, with the same key; when the host opens no next game the "
                   "series ends there. With --headless every game follows by itself "
                   "(default 1); at the table screen the end screen offers 'n' play "
                   f"again (default up to {MAX_SERIES} games)")
    common_options(j)
    j.set_defaults(func=run_join)


def run_join(args: argparse.Namespace) -> int:
    quiet_network_logs(args.verbose)
    if args.json and not args.headless:
        return fail("join", "--json needs --headless", EXIT_USAGE)
    bad = needs_terminal(args, "join")
    if bad is not None:
        return bad
    if args.resume and args.target:
        return fail("join", "give either a table or --resume FOLDER, not both", EXIT_USAGE)
    if args.headless and not args.target and not args.resume:
        return fail("join", "--headless needs a table name or HOST:PORT", EXIT_USAGE)
    if args.games is not None and not 1 <= args.games <= MAX_SERIES:
        return fail("join", f"--games must be 1..{MAX_SERIES}, not {args.games}", EXIT_USAGE)
    if args.games is not None and args.games > 1 and args.resume:
        return fail("join", "--games N (a series) needs a table, not --resume", EXIT_USAGE)
    if args.games is None:  # headless: one game; the table screen: play again at the end
        args.games = 1 if args.headless or args.resume else MAX_SERIES
    made: list[NetSession] = []
    try:
        code = asyncio.run(_join(args, made))
    except KeyboardInterrupt:
        say_how_to_resume("join", made)
        raise
    except Abort as exc:
        return fail("join", str(exc), exc.code)
    if code is None:
        print("You left the lobby.")
        return EXIT_OK
    return code


def split_target(target: str) -> tuple[str, int] | None:
    """``HOST:PORT`` as a pair, None for anything else (a table name)."""
    host, sep, port = target.rpartition(":")
    if sep and host and port.isdigit() and 0 < int(port) < 65536:
        return host, int(port)
    return None


async def _join(args: argparse.Namespace, made: list[NetSession]) -> int | None:
    """Join (or resume), play and report each game (``--games``: the host's series);
    ``made`` receives each game's session once it exists (so an interrupted run can still
    say how to resume).  Returns the exit code, None when the player left the lobby."""
    kind = args.bot_kind or DEFAULT_KIND
    agent = headless_agent(kind, 2) if args.headless else None
    if args.resume:
        session, result, label = await _resume(args, agent, made)
        return await report_game(session, args, label, 1, session_wall(session), result,
                                 "silkroad join")
    seat = await JoiningSeat(name=_human_name(args.player), interface=args.interface).open()
    try:
        target: TableInfo | tuple[str, int] | None = \
            split_target(args.target) if args.target else None
        code = EXIT_OK
        for game_no in range(1, args.games + 1):
            got = await _seat_at(seat, args, target, again=game_no > 1)
            if got is None:
                return None if game_no == 1 else code
            setup, label, target = got
            session, result = await _play(seat, setup, args, kind, agent, made,
                                          again=game_no < args.games)
            code = await report_game(session, args, label, setup.params.game_no,
                                     session_wall(session), result, "silkroad join")
            # headless follows every game asked for; at the screen the player chose
            if code != EXIT_OK or result != ("over" if args.headless else "again"):
                break
        return code
    finally:
        await seat.close()


def session_wall(session: NetSession) -> float:
    """How long the game took at this seat (0 when it never started)."""
    return session.outcome.wall_time if session.outcome is not None else 0.0


async def _seat_at(seat: JoiningSeat, args: argparse.Namespace,
                   target: TableInfo | tuple[str, int] | None, *, again: bool
                   ) -> tuple[GameSetup, str, TableInfo | tuple[str, int]] | None:
    """Take the seat (the lobby screen, or headless straight to ``target``); ``again``:
    the host's next game, where a host that opens none ends the series (None), and a host
    that does not rotate the first leader is refused (:class:`RotationRefused`)."""
    if not args.headless:
        try:
            return await join_lobby(seat, args, target, again=again)
        except RotationRefused as exc:
            raise Abort(explain(exc.reason, args)) from None
        except LobbyError as exc:  # only for ``again`` (join_lobby): the series is over
            print(f"The host opened no next game ({exc.reason}); the series is over.")
            return None
    if isinstance(target, TableInfo):
        target = (target.host, target.port)
    if target is None:
        try:
            info = await find_table(args.interface, args.target, min(args.timeout, 10.0))
        except NoSuchTable as exc:
            raise Abort(str(exc)) from None
        target = (info.host, info.port)
    try:
        setup = await seat.join(target, code=args.code, timeout=args.timeout, again=again)
    except RotationRefused as exc:
        raise Abort(explain(exc.reason, args)) from None
    except LobbyError as exc:
        if not again:
            raise Abort(explain(exc.reason, args)) from None
        # the host stopped after its last game (or left): the series is over, not failed
        say(args, event="series-over", reason=exc.reason)
        if not args.json:
            print(f"The host opened no next game ({exc.reason}); the series is over.")
        return None
    return setup, f"{target[0]}:{target[1]}", target


async def _play(seat: JoiningSeat, setup: GameSetup, args: argparse.Namespace, kind: str,
                agent: Agent | None, made: list[NetSession],
                again: bool = False) -> tuple[NetSession, str]:
    """Play one seated game at this seat to its end (or until the player leaves);
    ``again``: the end screen offers "play again" (the host's next game)."""
    say(args, event="seated", seat=setup.my_seat, words=list(setup.words),
        players=[e.name for e in setup.roster], money=setup.params.money,
        **({"game": setup.params.game_no} if args.games > 1 else {}))
    me = setup.my_seat

    async def runner(human: HumanDecider | None, handle: TableHandle) -> RunOutcome:
        t0 = time.perf_counter()
        res = await seat.play(setup, Path(args.folder), handle, agent, human)
        return RunOutcome(res.export, time.perf_counter() - t0)

    session = NetSession(seats_from(setup.roster, me, {me: kind} if args.headless
                                    else None), me,
                         with_agent(runner) if args.headless else runner,
                         words=setup.words, hidden_money=setup.params.hidden_money)
    made[:] = [session]  # the games before it ended: nothing of theirs to resume

    def watching(count: int) -> None:  # "2 watching" in the header, as at the host's
        if count != session.watching:
            session.set_watching(count)
            say(args, event="watchers", count=count)

    follow = asyncio.ensure_future(follow_watchers(args.interface, setup.roster[0].key,
                                                   watching))
    try:
        return session, await play_session(session, args, again=again)
    finally:
        follow.cancel()
        with contextlib.suppress(BaseException):
            await follow


async def _resume(args: argparse.Namespace, agent: Agent | None,
                  made: list[NetSession]) -> tuple[NetSession, str, str]:
    """Come back to a game from this seat's folder; bot seats it ran come back too."""
    try:
        record = read_seat(args.resume)
    except (StoreError, OSError, ValueError) as exc:
        raise Abort(f"cannot resume from {args.resume}: {exc} (give the game folder "
                    "that holds meta.json and secrets.bin)", EXIT_USAGE) from None

    async def runner(human: HumanDecider | None, handle: TableHandle) -> RunOutcome:
        t0 = time.perf_counter()
        res = await resume_seat(args.resume, handle, agent, human)
        return RunOutcome(res.export, time.perf_counter() - t0)

    mine = (args.bot_kind or DEFAULT_KIND) if args.headless else "human"
    bots = {b.seat: b.kind for b in record.bots}
    seats = [SeatInfo(e.name, mine if e.seat == record.seat else bots.get(e.seat, "peer"))
             for e in record.roster]
    session = NetSession(seats, record.seat, with_agent(runner) if args.headless else runner,
                         hidden_money=record.params.hidden_money)
    made.append(session)
    # the transcript is named after the table, as on the first run (older folders: by id)
    return session, await play_session(session, args), record.table or Path(args.resume).name


async def join_lobby(seat: JoiningSeat, args: argparse.Namespace,
                     target: TableInfo | tuple[str, int] | None,
                     screen: LobbyScreen | None = None, *, again: bool = False
                     ) -> tuple[GameSetup, str, TableInfo | tuple[str, int]] | None:
    """The joiner's lobby screen: pick a table, give the code, watch the seats fill, compare
    the words; returns the setup, the table's label and where it was joined (to dial again
    for the host's next game).  ``screen`` is for tests.  Only tables ``seat.match``
    accepts are listed.  ``again``: the host's next game at ``target``; a refusal is
    raised as the :class:`LobbyError` it is (the caller tells the series' end from a
    refused rotation), and the code that let us in the first time is given again."""
    screen = screen or LobbyScreen("lobby")
    mine = seat.listener.identity.fingerprint[:8]
    app = asyncio.create_task(screen.app.run_async())
    try:
        async with seat.discovery() as disc, disc.browse(match=seat.match) as browser:
            while True:
                where: TableInfo | tuple[str, int]
                if target is None:
                    info = await pick_table(screen, browser, args.target)
                    if info is None:
                        return None
                    where, label, need_code = info, info.ad.name, info.ad.code_required
                elif isinstance(target, TableInfo):  # the same table, for its next game
                    where, label, need_code = target, target.ad.name, False
                else:
                    where, label = target, f"{target[0]}:{target[1]}"
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
                    screen.show(seat_lines(label, seats, total, mine), "q leave the table")

                screen.show([("bold", f"Joining {label}…")], "q cancel")
                joining = asyncio.create_task(seat.join(where, code=code, timeout=args.timeout,
                                                        on_lobby=on_lobby, again=again))
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
                    args.code = code  # the series' next game is dialled with it again
                    if not await show_words(screen, setup.words):
                        return None
                    return setup, label, where
                if again and isinstance(exc, LobbyError):
                    raise exc
                reason = exc.reason if isinstance(exc, P2PError) else str(exc)
                if target is not None:
                    raise Abort(explain(reason, args))
                screen.fail(f"Refused: {explain(reason, args)}")
    finally:
        await close_screen(screen, app)


def seat_lines(label: str, seats: list[tuple[str, str]], total: int,
               mine: str) -> list[tuple[str, str]]:
    """The joiner's view of the seats, ``(name, fingerprint prefix)`` each: our own row
    (our key's ``mine`` prefix) says ``(you)``.  Why by key: the host may have renamed us
    ("Root (2)" when a Root sat first), and the row with our key is the name we play as."""
    lines = [("bold", f"{label} — {len(seats)}/{total} seats"), ("", "")]
    for i, (name, fp) in enumerate(seats):
        you = f" {YOU}" if fp == mine else ""
        lines.append(("bold" if you else "", f"seat {i}: {name}{you}  [{fp}]"))
    lines += [("", ""), ("muted", "Waiting for the host to start the game…")]
    return lines


async def pick_table(screen: LobbyScreen, browser: TableBrowser,
                     wanted: str | None) -> TableInfo | None:
    """List tables as they appear; return the chosen one (None: the user quit)."""
    while True:
        rows = sorted(browser.tables.values(), key=lambda i: (i.ad.name, i.instance))
        if wanted:
            exact = [i for i in rows if i.ad.name == wanted]
            if exact:
                return exact[0]
        if rows:
            lines = [("bold", "Tables on your network:"), ("", "")]
            lines += [("entry", describe(i)) for i in rows]
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
