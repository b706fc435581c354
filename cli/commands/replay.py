"""``silkroad replay PATH``: step through a saved game in the replay viewer."""

from __future__ import annotations

import argparse
import sys

from cli.table.save_file import SaveFileError, load_game


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "replay",
        help="step forward and back through a saved game",
        description="Open the replay viewer on a game record: a network transcript (game.silkroad, "
        "from play, host or join; it is audited first) or a 'silkroad play --local' record. "
        "Watch from any player's point of view (their hand visible, others hidden) or "
        "as the auditor, who sees every colour.",
        epilog="Examples:\n  silkroad replay games/20250101-120000-seed7.silkroad\n"
        "  silkroad replay game.silkroad --as 2\n  silkroad replay game.silkroad --summary\n"
        "Keys: → / n next, ← / p back, Home/End, 0-6 choose a seat, a auditor, q quit.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", help="the .silkroad game record")
    p.add_argument("--as", dest="seat", default=None, metavar="SEAT",
                   help="start from this seat's view (number or name; default: auditor)")
    p.add_argument("--summary", action="store_true",
                   help="print the game's log and result instead of opening the viewer")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cli.replay.model import ReplayError, build_replay
    from cli.replay.network import build_net_replay, is_network_transcript

    try:
        if is_network_transcript(args.path):
            model = build_net_replay(args.path)  # audits it: the auditor view needs the keys
        else:
            model = build_replay(load_game(args.path))
    except (SaveFileError, ReplayError) as exc:
        print(f"silkroad replay: {exc}", file=sys.stderr)
        return 2
    seat: int | None = None
    if args.seat is not None:
        try:
            seat = model.seat_of(args.seat)
        except ValueError as exc:
            print(f"silkroad replay: {exc}", file=sys.stderr)
            return 2
    if args.summary:
        for line in model.all_lines(seat):
            print(line)
        if not model.complete:
            print("(the record ends before the game did: it was interrupted)")
        return 0
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("silkroad replay: the viewer needs a terminal; use --summary to print the game",
              file=sys.stderr)
        return 2
    from cli.replay.app import run_replay

    run_replay(model, seat)
    return 0
