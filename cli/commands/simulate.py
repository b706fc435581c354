"""``silkroad simulate``: bot tournaments on the engine alone (no network, no crypto).

Useful to compare bots, to soak-test the rules engine (every step is checked against
the game's invariants) and to measure engine speed.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from engine.bots import BOT_KINDS, DEFAULT_BUDGET, with_budget
from engine.errors import DataError
from engine.simulate import resolve_bots, simulate

EPILOG = """\
examples:
  silkroad simulate --players 4 --games 1000 --seed 1 --bots heuristic,random,random,random
  silkroad simulate --players 5 --games 200 --seed 7 --bots heuristic --variant reverse --json
  silkroad simulate --players 4 --games 20 --bots hard,heuristic,heuristic,heuristic \
      --bot-budget 48

Bot kinds: random; the levels easy, normal (= heuristic) and hard (= search, a Monte
Carlo search over the hidden goods it cannot see: about 0.05-0.15 s per decision at its
default budget, so a game takes seconds). A search kind may carry its own budget:
hard:48.

Seats rotate between games (seat p of game g is played by bot (p + g) mod players),
so the seat order does not bias the win shares. Ties share a win. Every step is
checked against the game's invariants; the exit code is 1 if any was violated,
2 for bad arguments.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``simulate`` sub-command to the CLI's sub-parsers."""
    p = sub.add_parser(
        "simulate",
        help="play many bot-only games and print statistics",
        description=(
            "Play complete engine-only games between bots with the in-process dealer,\n"
            "checking the game's invariants after every step, and report win shares,\n"
            "scores, game length and speed."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--players", type=int, default=4, help="players per game, 3 to 6 (default 4)")
    p.add_argument("--games", type=int, default=100, help="number of games (default 100)")
    p.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    p.add_argument(
        "--bots",
        default="random",
        help=(
            "comma-separated bot kind per seat, or one kind for every seat "
            f"(kinds: {', '.join(sorted(BOT_KINDS))}; default random)"
        ),
    )
    p.add_argument(
        "--bot-budget",
        type=int,
        default=None,
        metavar="N",
        help=f"playouts per decision of hard/search bots without their own (default "
        f"{DEFAULT_BUDGET})",
    )
    p.add_argument(
        "--variant",
        choices=("normal", "reverse"),
        default="normal",
        help="'reverse' plays from Antioch to Chang'An",
    )
    p.add_argument("--board", metavar="FILE", help="board JSON file (default: built-in board)")
    p.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the tournament; exit code 0, or 2 for bad arguments or data files."""
    try:
        if not 3 <= args.players <= 6:
            raise ValueError(f"Silk Road is for 3 to 6 players, not {args.players}")
        if args.games < 1:
            raise ValueError("--games must be at least 1")
        kinds = resolve_bots(args.players, [b for b in args.bots.split(",") if b.strip()] or [""])
        kinds = [with_budget(k, args.bot_budget) for k in kinds]
        result = simulate(
            args.players,
            args.games,
            args.seed,
            kinds,
            reverse=args.variant == "reverse",
            board=args.board,
        )
    except (ValueError, DataError) as exc:
        print(f"silkroad simulate: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(format_table(result))
    return 1 if result["invariant_violations"] else 0


def format_table(r: dict[str, Any]) -> str:
    """A short human summary of a :func:`engine.simulate.simulate` result."""
    lines = [
        f"{r['games']} games, {r['players']} players, {r['variant']} variant, seed {r['seed']}",
        f"seats (game 0): {', '.join(r['bots'])}",
        "",
        f"{'bot':<12}{'win share':>10}{'fair share':>12}{'mean score':>12}",
    ]
    for kind, share in r["win_rate_by_bot"].items():
        lines.append(
            f"{kind:<12}{share:>10.1%}{r['fair_share_by_bot'][kind]:>12.1%}"
            f"{r['mean_score_by_bot'][kind]:>12.2f}"
        )
    lines += [
        "",
        f"per game: {r['mean_actions_per_game']} actions, "
        f"{r['mean_tiles_taken_per_game']} tiles taken, {r['mean_auctions_per_game']} auctions",
        f"speed: {r['games_per_second']} games/s ({r['seconds']} s)",
        f"invariant violations: {r['invariant_violations']}",
    ]
    lines += [f"  {m}" for m in r["violations"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (``python -m cli.commands.simulate``) until the main CLI wires it in."""
    parser = argparse.ArgumentParser(prog="silkroad")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["simulate", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
