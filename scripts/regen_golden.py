#!/usr/bin/env python3
"""Regenerate the golden playthrough files in tests/golden/.

Each file is one seeded engine-only game (LocalDealer + random bots) written as
readable text: every logged action with the seat that took it, its canonical wire
bytes and the state hash after it. ``tests/engine/test_golden.py`` replays the wire
bytes and compares every hash, and re-renders the game and compares the whole text,
so any change to the rules, the state encoding, the dealer or the bots shows up as
a diff. After an *intended* rule change, run ``python scripts/regen_golden.py`` and
review the diff before committing it.

The first three games pin the rules as they were before the Grand Vizier's marker
(``marker=False``: engine config ``vizier_marker=False``, the rules networked games of
protocol versions up to 4 are replayed by); their files are unchanged by it. The games
with ``marker=True`` play by the current rules and say so in a ``vizier_marker 1`` line.

Usage: python scripts/regen_golden.py [--check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, NamedTuple

from engine.actions import RESOLVER, Action, Move, TakeTile, Vizier, encode
from engine.board import Board
from engine.bots.random_bot import RandomBot
from engine.colours import COLOURS
from engine.dealer import LocalDealer
from engine.driver import play_game
from engine.game import scores, winners
from engine.rules import actors
from engine.state import GameState, make_config

GOLDEN_DIR = Path(__file__).resolve().parent.parent / "tests" / "golden"
FORMAT = "silkroad-golden v1"


class GoldenGame(NamedTuple):
    name: str
    players: int
    reverse: bool
    seed: int
    #: the Grand Vizier's marker (engine ``Config.vizier_marker``)
    marker: bool = False

    @property
    def path(self) -> Path:
        return GOLDEN_DIR / f"{self.name}.txt"


GAMES: tuple[GoldenGame, ...] = (
    GoldenGame("game_3p", 3, False, 101),
    GoldenGame("game_4p_reverse", 4, True, 202),
    GoldenGame("game_6p", 6, False, 303),
    GoldenGame("game_5p_marker", 5, False, 505, marker=True),
)


def describe(a: Action, board: Board) -> str:
    """A readable, stable rendering of an action (bytes in hex, names for ids)."""
    parts = []
    for name, v in zip(a._fields, a, strict=True):
        shown: Any = v.hex() if isinstance(v, bytes) else v
        parts.append(f"{name}={shown}")
    text = f"{type(a).__name__}({', '.join(parts)})"
    if isinstance(a, Move):
        text += f" [{board.cities[a.city]}]"
    elif isinstance(a, TakeTile):
        text += f" [{board.tileset.tiles[a.tile].describe()}]"
    elif isinstance(a, Vizier):
        text += f" [{COLOURS[a.colour]}]"
    return text


def render(game: GoldenGame) -> str:
    """Play ``game`` and render it as the golden text."""
    config = make_config(game.players, game.reverse)._replace(vizier_marker=game.marker)
    dealer = LocalDealer(game.seed)
    bots = [RandomBot(game.seed * 10 + p) for p in range(game.players)]
    rows: list[str] = []
    who: list[str] = []

    def on_step(s: GameState, a: Action) -> None:
        step = f"{len(rows) + 1:04d} {who[-1]:>4}"
        rows.append(f"{step} {describe(a, s.board)} | {encode(a).hex()} | {s.hash().hex()}")

    class Recorder:
        """Notes who decides each step before the driver applies it."""

        def resolve(self, s: GameState) -> Action:
            who.append("res")
            return dealer.resolve(s)

        def check(self, s: GameState, a: Action) -> None:
            acts = actors(s)
            if acts != (RESOLVER,):
                who.append("all" if len(acts) > 1 else f"p{acts[0]}")
            dealer.check(s, a)

        def hand(self, s: GameState, seat: int) -> dict[int, int]:
            return dealer.hand(s, seat)

    final, log = play_game(config, Recorder(), bots, on_step=on_step)
    header = [
        f"# {FORMAT}",
        f"# {game.players} players, {'reverse' if game.reverse else 'normal'} direction, "
        f"default board; LocalDealer({game.seed}), RandomBot({game.seed}*10 + seat)",
        "# Regenerate with: python scripts/regen_golden.py (review the diff!)",
        "# step  who  action | wire (msgpack hex) | state hash after (sha256 hex)",
        f"players {game.players}",
        f"reverse {int(game.reverse)}",
        *(["vizier_marker 1"] if game.marker else []),
    ]
    footer = [
        f"# steps {len(log)}",
        f"# scores {scores(final)}",
        f"# winners {winners(final)}",
    ]
    return "\n".join(header + rows + footer) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report files that differ")
    args = ap.parse_args(argv)
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    stale = 0
    for game in GAMES:
        text = render(game)
        old = game.path.read_text(encoding="utf-8") if game.path.exists() else None
        if old == text:
            print(f"unchanged {game.path.name}")
            continue
        stale += 1
        if args.check:
            print(f"differs   {game.path.name}")
        else:
            game.path.write_text(text, encoding="utf-8")
            print(f"wrote     {game.path.name}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
