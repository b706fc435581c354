"""What ``silkroad host``, ``join`` and ``tables`` share: options, messages, the lobby's
words screen, and running the table screen (or a bot, headless) over a :class:`NetSession`.

The commands themselves live in :mod:`cli.commands.host`, :mod:`cli.commands.join` and
:mod:`cli.commands.tables`; they parse arguments and draw screens, and reach the network only
through :mod:`p2p.front_door`.

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
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from cli.bots import BOT_KINDS
from cli.commands.net_report import finish_report, resume_hint
from cli.lobby_app import LobbyScreen
from cli.table.app import run_table
from cli.table.net_session import NetSession, Runner, RunOutcome
from cli.table.session import SeatInfo
from p2p.front_door import (
    HumanDecider,
    RosterEntry,
    TableHandle,
    TableInfo,
)

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2

WORDS_HOLD = 4.0
"""How long the words stay on the lobby screen before the table opens (Enter skips)."""


class Abort(Exception):
    """Leave the command with this message (one line on stderr) and exit code."""

    def __init__(self, text: str, code: int = EXIT_FAIL) -> None:
        super().__init__(text)
        self.code = code


def common_options(p: argparse.ArgumentParser) -> None:
    """The options ``host`` and ``join`` share."""
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


def fail(prog: str, msg: str, code: int = EXIT_FAIL) -> int:
    print(f"silkroad {prog}: {msg}", file=sys.stderr)
    return code


def say(args: argparse.Namespace, **fields: object) -> None:
    """One JSON progress line (headless) — scripts follow the game with these."""
    if args.headless:
        print(json.dumps(fields), flush=True)


def transcript_path(args: argparse.Namespace, label: str) -> Path:
    if args.transcript:
        return Path(args.transcript)
    safe = "".join(c if c.isalnum() else "-" for c in label)[:24].strip("-") or "table"
    return Path("games") / f"{time.strftime('%Y%m%d-%H%M%S')}-{safe}.silkroad"


def describe(info: TableInfo) -> str:
    """One table as a line of the list (``tables`` and the joiner's lobby)."""
    ad = info.ad
    code = "  code needed" if ad.code_required else ""
    rules = "".join(f"  {x}" for x in (
        ad.variant if ad.variant != "base" else "", "hidden money" if ad.money == "hidden"
        else "") if x)
    watching = f"  {ad.watchers} watching" if ad.watchers else ""
    return (f"{ad.name:<24.24} {ad.seats_taken}/{ad.seats_total} seats  {ad.phase:<7}"
            f"{code}{rules}{watching}")


def needs_terminal(args: argparse.Namespace, prog: str) -> int | None:
    if args.headless or (sys.stdin.isatty() and sys.stdout.isatty()):
        return None
    return fail(prog, "the lobby and table need a terminal; use --headless to let a bot "
                "play this seat", EXIT_USAGE)


NOT_A_TABLE = re.compile(r"(?:could not join (?P<addr>\S+): )?bad handshake frame from \S+: "
                         r"|expected a 'hello-ack' message, got a non-message")
"""What an older dialer said when the address answered with something that is not our
handshake (an HTTP server answers "HTTP/1.1 …", read as a frame of 1213486160 bytes).
:func:`p2p.lobby.seating.join_table` now says "HOST:PORT answered, but it is not a silkroad
table" itself, which is passed through unchanged."""


def explain(reason: str, args: argparse.Namespace) -> str:
    """A refusal in the player's terms: what to do about a join code, or that the address
    answered but is not a silkroad table (instead of the framing error's numbers)."""
    if "is not a silkroad table" in reason:
        return reason
    bad = NOT_A_TABLE.search(reason)
    if bad is not None:
        addr = bad.group("addr")
        where = f"{addr} answered" if addr else "that address answered"
        return (f"{where}, but it is not a silkroad table: it sent something else (check "
                "the host and port the host printed)")
    if "join code" in reason:
        hint = "ask the host for the code and pass --code CODE" if not args.code else \
            "check the code with the host (spaces, - and case do not matter)"
        return f"{reason} — {hint}"
    return reason


def seats_from(roster: Sequence[RosterEntry], me: int,
               kinds: dict[int, str] | None = None) -> list[SeatInfo]:
    """Seat labels: ``kinds`` first (our bots, or the bot kind of a headless seat), then
    "human" for us and "peer" for everyone else (we cannot know who plays them)."""
    kinds = kinds or {}
    return [SeatInfo(e.name, kinds.get(e.seat, "human" if e.seat == me else "peer"))
            for e in roster]


def say_how_to_resume(prog: str, sessions: Sequence[NetSession]) -> None:
    """After Ctrl-C (headless, or before the table screen took the keys): where this
    seat's game is and the command that resumes it, if the game had begun."""
    for session in sessions:
        if session.folder is not None and session.folder.exists():
            print(f"silkroad {prog}: interrupted; this seat's record is in {session.folder} "
                  f"(resume with: {resume_hint(session.folder)})", file=sys.stderr)


def with_agent(runner: Runner) -> Runner:
    """Headless: our seat is played by the bot given to the runner, so pass no human."""
    async def run(human: HumanDecider | None, handle: TableHandle) -> RunOutcome:
        return await runner(None, handle)
    return run


async def play_session(session: NetSession, args: argparse.Namespace,
                       again: bool = False) -> str:
    """Run the table screen (or headless to the end); always leave the table cleanly.
    ``again``: the end screen offers "play again" (the result is then "again")."""
    try:
        if args.headless:
            await session.play_to_end()
            return "over"
        return await run_table(session, again=again)
    finally:
        await session.close()


async def show_words(screen: LobbyScreen, words: Sequence[str],
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


async def close_screen(screen: LobbyScreen, app: asyncio.Task[None] | None) -> None:
    """Leave a lobby screen (idempotent) so the table screen can take the terminal."""
    if screen.app.is_running:
        screen.app.exit()
    if app is not None:
        with contextlib.suppress(BaseException):
            await app


def series_transcript(args: argparse.Namespace, label: str, game_no: int) -> Path:
    """Where game ``game_no``'s transcript is copied: the usual path, and in a series
    with ``-gN`` before the suffix, so no game overwrites another.  At the table screen
    the series is decided game by game ("play again"), so its first game keeps the usual
    path; a headless series (``--games`` > 1) numbers every game."""
    path = transcript_path(args, label)
    if game_no == 1 and (args.games == 1 or not args.headless):
        return path
    return path.with_name(f"{path.stem}-g{game_no}{path.suffix}")


async def report_game(session: NetSession, args: argparse.Namespace, label: str,
                      game_no: int, wall: float, result: str, prog: str) -> int:
    """The result of one game (:func:`cli.commands.net_report.finish_report`), in a worker thread:
    its audit takes a moment, and the table (its listener, advertisement, bot seats) must
    keep answering meanwhile."""
    return await asyncio.to_thread(
        finish_report, session, series_transcript(args, label, game_no), None, wall,
        args.json, headless=args.headless, quit_early=result == "quit", prog=prog)
