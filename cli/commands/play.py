"""``silkroad play``: you against bots on this machine (or all bots with --headless).

By default every seat is a real peer over loopback (:class:`cli.table.net_session.NetSession`
over :mod:`p2p.local_table`), each bot in its own process: own keys, mental-poker deal,
signed transcript that ``silkroad audit`` checks.  ``--local`` keeps the quick in-process table
(:class:`cli.table.local_session.LocalSession`, a trusted dealer, a replayable seed).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import sys
import time
from pathlib import Path

from cli.bots import BOT_KINDS, BOT_LEVELS, BUDGET_HELP, LEVEL_HELP, BotUnavailable, bot_spec
from cli.table.local_session import LocalSession
from cli.table.save_file import GameHeader, SaveWriter, default_save_path
from cli.table.session import SeatInfo
from engine.board import Board, default_board, load_board_file
from engine.colours import COLOURS
from engine.errors import DataError
from engine.game import score_table, winners
from engine.state import make_config
from p2p.front_door import (
    MONEY_MODES,
    private_dirs,
)

BOT_NAMES = ("Marco", "Leyla", "Zhang", "Omar", "Roxana")
EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "play",
        help="play a game against bots on this machine",
        description="Sit at a table with bots. The full-screen table needs a terminal of "
        "at least 80x24; --headless plays all seats with bots and prints the result.",
        epilog="Examples:\n  silkroad play\n  silkroad play --bots 4 --seed 7 --name Ann\n"
        "  silkroad play --variant reverse --bot-kind random\n"
        "  silkroad play --bot-level hard --bot-budget 48\n"
        "  silkroad play --headless --json --seed 3\n"
        "  silkroad play --local --seed 7     (in-process, no crypto: quick)\n"
        "  silkroad play --money hidden       (others' money behind their screens)\n"
        "Keys at the table: digits pick a menu entry, or type a command (Tab completes);\n"
        "? or F1 shows the rules and keys; q quits.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--bots", type=int, default=3, metavar="N",
                   help="number of bots, 2..5 (default 3)")
    p.add_argument("--bot-kind", choices=BOT_KINDS, default=None,
                   help="how the bots play (default: heuristic); easy/normal/hard are "
                   "the levels")
    p.add_argument("--bot-level", choices=BOT_LEVELS, default=None, help=LEVEL_HELP)
    p.add_argument("--bot-budget", type=int, default=None, metavar="N", help=BUDGET_HELP)
    p.add_argument("--seed", type=int, default=None, metavar="S",
                   help="seeds the bots; with --local also the dealer (same seed, same "
                   "game). Real peers deal with a fresh shared coin every game.")
    p.add_argument("--variant", choices=("reverse",), default=None,
                   help="reverse: travel from Antioch to Chang'An")
    p.add_argument("--board", metavar="FILE", default=None, help="a board JSON file")
    p.add_argument("--money", choices=MONEY_MODES, default="open",
                   help="open (default): everyone's money shows; hidden: others' money "
                   "shows as $? (behind the screen, as in the rulebook) and the log still "
                   "says who paid what")
    p.add_argument("--name", default=None, help="your name at the table")
    p.add_argument("--save", metavar="PATH", default=None,
                   help="where to write the game record (default ./games/<time>-seed<S>.silkroad)")
    p.add_argument("--no-save", action="store_true", help="do not write a game record")
    p.add_argument("--delay", type=float, default=0.7, metavar="SECONDS",
                   help="pause before each bot move so you can follow (default 0.7)")
    p.add_argument("--headless", action="store_true",
                   help="no table: every seat is a bot; print the result")
    p.add_argument("--json", action="store_true", help="with --headless: one JSON object")
    p.add_argument("--local", action="store_true",
                   help="quick in-process table with a trusted dealer (no peers, no crypto)")
    p.add_argument("--shuffle", choices=("audit", "verified"), default="verified",
                   help="verified: every shuffle proven as it happens (default); audit: "
                   "faster, shuffles checked by 'silkroad audit' after the game; not "
                   "private (any seat could learn every hand), harmless among your own "
                   "bots")
    p.add_argument("--transcript", metavar="PATH", default=None,
                   help="where to write the signed game transcript "
                   "(default ./games/<time>-seed<S>.silkroad)")
    p.add_argument("--one-process", action="store_true",
                   help="run the bot peers inside this process instead of one process each "
                   "(slower crypto with several bots: one core does all of it)")
    p.add_argument("--verbose", action="store_true", help="show the network layer's log")
    p.set_defaults(func=run)


def _fail(msg: str) -> int:
    print(f"silkroad play: {msg}", file=sys.stderr)
    return EXIT_USAGE


def _human_name(given: str | None) -> str:
    if given:
        return given.strip()[:12] or "You"
    try:
        user = getpass.getuser()
    except Exception:  # no passwd entry in some containers
        user = ""
    return (user.capitalize() or "You")[:12]


def bot_names(count: int, human: str) -> list[str]:
    """``count`` bot names, none the same as ``human``'s (ignoring case): a player called
    Marco next to a bot Marco could not tell from the log which of them did what."""
    pool = [n for n in (*BOT_NAMES, "Yusuf") if n.casefold() != human.strip().casefold()]
    return pool[:count]


def load_board(path: str | None, reverse: bool) -> Board:
    return load_board_file(path, reverse=reverse) if path else default_board(reverse)


def open_session(
    board: Board,
    seats: list[SeatInfo],
    seat: int | None,
    seed: int,
    delay: float,
    save: SaveWriter | None,
    hidden_money: bool = False,
) -> LocalSession:
    """The in-process table's session: engine + LocalDealer + bots."""
    config = make_config(len(seats), board.reverse, board)
    return LocalSession(config, seats, seat, seed, bot_delay=delay, save=save,
                        hidden_money=hidden_money)


def run(args: argparse.Namespace) -> int:
    if not 2 <= args.bots <= 5:
        return _fail(f"--bots must be 2..5 (a table seats 3 to 6), not {args.bots}")
    if args.json and not args.headless:
        return _fail("--json needs --headless (the table is interactive)")
    if args.delay < 0:
        return _fail("--delay cannot be negative")
    try:
        kind = bot_spec(args.bot_kind, args.bot_level, args.bot_budget)
    except BotUnavailable as exc:
        return _fail(str(exc))
    reverse = args.variant == "reverse"
    try:
        board = load_board(args.board, reverse)
    except DataError as exc:
        return _fail(str(exc))
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big") >> 1
    players = args.bots + 1
    if not args.local:
        return run_networked(args, kind, seed, players)
    if args.headless:
        seats = [SeatInfo(n, kind) for n in (*BOT_NAMES, "Yusuf")[:players]]
        me: int | None = None
    else:
        seats = [SeatInfo(_human_name(args.name), "human")]
        seats += [SeatInfo(n, kind) for n in bot_names(args.bots, seats[0].name)]
        me = 0
    save_path: Path | None = None
    writer: SaveWriter | None = None
    if not args.no_save:
        save_path = Path(args.save) if args.save else default_save_path(seed)
        header = GameHeader(
            players=players, reverse=reverse,
            board_path=str(Path(args.board).resolve()) if args.board else None,
            board_digest=board.digest.hex(), dealer_seed=seed,
            names=[s.name for s in seats], kinds=[s.kind for s in seats], seat=me,
            created=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        )
        try:
            writer = SaveWriter(save_path, header)
        except OSError as exc:
            return _fail(f"cannot write the game record {save_path}: {exc.strerror or exc}")
    try:
        if args.headless:
            return _headless(board, seats, seed, writer, save_path, args.json)
        return _interactive(board, seats, seed, args.delay, writer, save_path,
                            hidden_money=args.money == "hidden")
    except BotUnavailable as exc:
        return _fail(str(exc))
    finally:
        if writer is not None:
            writer.close()


def _headless(
    board: Board, seats: list[SeatInfo], seed: int, writer: SaveWriter | None,
    save_path: Path | None, as_json: bool,
) -> int:
    t0 = time.perf_counter()

    async def go() -> LocalSession:
        session = open_session(board, seats, None, seed, 0.0, writer)
        await session.play_to_end()
        return session

    session = asyncio.run(go())
    wall = time.perf_counter() - t0
    s = session.state
    if s.final is None:
        print("silkroad play: the game stopped before the end", file=sys.stderr)
        return EXIT_FAIL
    table = score_table(s)
    win = winners(s)
    names = session.names
    if as_json:
        out = {
            "seed": seed,
            "players": s.players,
            "variant": "reverse" if board.reverse else "normal",
            "names": names,
            "kinds": [x.kind for x in seats],
            "scores": [
                {
                    "seat": ln.seat, "name": names[ln.seat], "total": ln.total,
                    "money": ln.money, "goods": ln.goods,
                    "per_colour": dict(zip(COLOURS, ln.per_colour, strict=True)),
                    "majorities": [COLOURS[c] for c in ln.majorities],
                }
                for ln in table
            ],
            "winners": [names[p] for p in win],
            "actions": len(session.log),
            "wall_time_s": round(wall, 4),
            "save": str(save_path) if save_path else None,
        }
        print(json.dumps(out))
        return EXIT_OK
    print(f"Seed {seed} · {s.players} players · {len(session.log)} actions · {wall:.2f} s")
    for ln in sorted(table, key=lambda x: -x.total):
        maj = ", ".join(COLOURS[c] for c in ln.majorities) or "-"
        star = "  ★ winner" if ln.seat in win else ""
        print(f"  {names[ln.seat]:<8} {ln.total:>4}  (money {ln.money}, goods {ln.goods}, "
              f"majorities {maj}){star}")
    if save_path:
        from cli.commands.net_report import silkroad_command

        print(f"Saved to {save_path}  ({silkroad_command()} replay {save_path})")
    return EXIT_OK


def _names(args: argparse.Namespace, players: int) -> tuple[list[str], int | None]:
    if args.headless:
        return list((*BOT_NAMES, "Yusuf")[:players]), None
    human = _human_name(args.name)
    return [human, *bot_names(players - 1, human)], 0


def run_networked(args: argparse.Namespace, kind: str, seed: int, players: int) -> int:
    """Every seat a real peer on 127.0.0.1; the transcript is copied to ``--transcript``."""
    from cli.table.net_session import NetSession, local_runner, quiet_network_logs

    quiet_network_logs(args.verbose)
    names, me = _names(args, players)
    kinds = ["human" if i == me else kind for i in range(players)]
    seats = [SeatInfo(n, k) for n, k in zip(names, kinds, strict=True)]
    target = Path(args.transcript or args.save or default_save_path(seed))
    root = target.parent / "peers"
    try:
        private_dirs(root)  # 0700: the seats' secrets go in here (p2p.store)
    except OSError as exc:
        return _fail(f"cannot create {root}: {exc.strerror or exc}")
    if me is None or args.headless:
        pass
    elif not (sys.stdin.isatty() and sys.stdout.isatty()):
        return _fail("the table needs a terminal; use --headless to let bots play it out")
    t0 = time.perf_counter()

    async def go() -> tuple[NetSession, str]:
        session = NetSession(seats, me, local_runner(names, kind, seed, args.shuffle, root,
                                                     delay=args.delay, variant=args.variant,
                                                     board=args.board,
                                                     one_process=args.one_process,
                                                     money=args.money),
                             hidden_money=args.money == "hidden")
        try:
            if me is None:
                await session.play_to_end()
                return session, "over"
            from cli.table.app import run_table

            return session, await run_table(session)  # session.hidden_money says it
        finally:
            await session.close()

    try:
        session, result = asyncio.run(go())
    except BotUnavailable as exc:
        return _fail(str(exc))
    wall = time.perf_counter() - t0
    from cli.commands.net_report import finish_report

    return finish_report(session, target, seed, wall, args.json if args.headless else False,
                         headless=args.headless, quit_early=result == "quit",
                         prog="silkroad play")


def _interactive(
    board: Board, seats: list[SeatInfo], seed: int, delay: float,
    writer: SaveWriter | None, save_path: Path | None, hidden_money: bool = False,
) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return _fail("the table needs a terminal; use --headless to let bots play it out")
    from cli.table.app import run_table

    async def go() -> str:
        session = open_session(board, seats, 0, seed, delay, writer, hidden_money)
        try:
            return await run_table(session)
        finally:
            await session.close()

    result = asyncio.run(go())
    if save_path:
        from cli.commands.net_report import silkroad_command

        print(f"Game saved to {save_path}  ({silkroad_command()} replay {save_path})")
    return EXIT_OK if result in ("over", "quit") else EXIT_FAIL
