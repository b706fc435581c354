"""Bot tournaments: many complete engine-only games with the trusted LocalDealer.

Used by ``silkroad simulate`` and the benchmark. Two jobs at once:

* statistics (win shares, scores, game length) to compare bots fairly: the seat
  assignment rotates every game, because the seat order (who bids first, who holds
  the pawn) is not neutral;
* a soak test of the engine: after every step the invariants below are checked, and
  any breach, illegal bot action or runaway game is counted in ``invariant_violations``
  instead of stopping the run.

Invariants: money is never negative and bag + holdings + the goods Grand Viziers set
aside always make all 75 goods (cheap counts, every step); with the dealer's truth the
goods in play are distinct handles and, with the colours set aside, 15 of each colour (a
full census after the deal, every theft, which re-handles goods, and the final reveal);
goods drawn from the bag are the colour the engine recorded, a Vizier's marker the
colour it set aside (every withdrawal: only those goods moved); every game reaches its
end within a step cap. The census costs ~10 us, so it does not run on every step.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.actions import Action, Dealt, FinalReveal, Seed, Stolen, Withdrawn
from engine.board import Board, load_board_file
from engine.bots import make_bot, parse_kind
from engine.colours import GOODS_PER_COLOUR, NCOLOURS, TOTAL_GOODS
from engine.dealer import LocalDealer
from engine.driver import play_game
from engine.scoring import score_lines, winners_of
from engine.state import GameState, Phase, make_config

MAX_STEPS = 20_000
"""A game is a few hundred steps; more means the engine is looping."""

MAX_REPORTED = 10
"""How many violation messages are kept in the result (all are counted)."""

_CENSUS = frozenset((Dealt, Stolen, FinalReveal))
"""Steps after which the dealer-truth colour census runs (they deal or re-handle goods)."""
_FULL_DECK = [GOODS_PER_COLOUR] * NCOLOURS


class _StepLimit(Exception):
    pass


def game_seed(seed: int, game: int, role: str) -> bytes:
    """Independent 16-byte seeds per game and role (dealer, seat n), derived from ``seed``."""
    return hashlib.sha256(f"silkroad/simulate/v1/{seed}/{game}/{role}".encode()).digest()[:16]


def resolve_bots(players: int, bots: Sequence[str]) -> list[str]:
    """One bot kind per seat: a single kind fills every seat. Raises ValueError."""
    kinds = [b.strip() for b in bots]
    if len(kinds) == 1:
        kinds = kinds * players
    if len(kinds) != players:
        raise ValueError(
            f"--bots lists {len(kinds)} bot kinds for {players} players: give one per seat "
            "or a single kind for all"
        )
    for k in kinds:
        parse_kind(k)  # raises ValueError naming an unknown kind or a bad budget
    return kinds


def simulate(
    players: int,
    games: int,
    seed: int,
    bots: Sequence[str],
    reverse: bool = False,
    board: Board | str | Path | None = None,
) -> dict[str, Any]:
    """Play ``games`` games and return statistics (see the module docstring).

    ``bots`` gives the bot kind of each seat in game 0 (or one kind for all); in game
    ``g`` seat ``p`` is played by ``bots[(p + g) % players]``. ``board`` is a Board or
    a board file. Results are a pure function of the arguments (timings aside).
    """
    kinds = resolve_bots(players, bots)
    if games < 0:
        raise ValueError("the number of games cannot be negative")
    if isinstance(board, (str, Path)):
        board = load_board_file(board, reverse=reverse)
    config = make_config(players, reverse=reverse, board=board)
    cfg_board = config.board
    tiles_at_start = config.tiles_per_city * len(cfg_board.tile_cities)

    wins: dict[str, float] = dict.fromkeys(kinds, 0.0)
    score_sum: dict[str, int] = dict.fromkeys(kinds, 0)
    seats_of: dict[str, int] = dict.fromkeys(kinds, 0)
    for k in kinds:
        seats_of[k] += 1
    actions = tiles = auctions = 0
    violations = 0
    messages: list[str] = []

    def report(game: int, msg: str) -> None:
        nonlocal violations
        violations += 1
        if len(messages) < MAX_REPORTED:
            messages.append(f"game {game}: {msg}")

    start = time.perf_counter()
    for g in range(games):
        seat_kinds = [kinds[(p + g) % players] for p in range(players)]
        dealer = LocalDealer(game_seed(seed, g, "dealer"))
        agents = [make_bot(k, game_seed(seed, g, f"seat{p}")) for p, k in enumerate(seat_kinds)]
        checker = _Checker(dealer)
        failure = None
        try:
            s, log = play_game(config, dealer, agents, on_step=checker.on_step)
        except _StepLimit:
            failure = f"no end after {MAX_STEPS} steps"
        except Exception as exc:  # a soak test reports engine/bot bugs instead of stopping
            failure = f"{type(exc).__name__}: {exc}"
        for msg in checker.problems:
            report(g, msg)
        if failure is not None:
            report(g, failure)
            continue
        if s.phase != Phase.OVER or s.final is None:
            report(g, "the game stopped before its end")
            continue
        lines = score_lines(s.money, s.final)
        totals = [line.total for line in lines]
        won = winners_of(totals)
        for p in won:
            wins[seat_kinds[p]] += 1.0 / len(won)
        for p, t in enumerate(totals):
            score_sum[seat_kinds[p]] += t
        actions += len(log)
        tiles += tiles_at_start - sum(map(len, s.layout))
        # every move of the caravan follows exactly one auction, except the last one into
        # the end city after the last market (docs/rules.md, "the end")
        auctions += s.visit - int(config.final_move)
    seconds = time.perf_counter() - start

    n = max(games, 1)
    return {
        "games": games,
        "players": players,
        "seed": seed,
        "variant": "reverse" if reverse else "normal",
        "board": cfg_board.name,
        "bots": kinds,
        "seconds": round(seconds, 4),
        "games_per_second": round(games / seconds, 1) if seconds > 0 else 0.0,
        "mean_actions_per_game": round(actions / n, 2),
        "mean_tiles_taken_per_game": round(tiles / n, 2),
        "mean_auctions_per_game": round(auctions / n, 2),
        "win_rate_by_bot": {k: round(w / n, 4) for k, w in wins.items()},
        "fair_share_by_bot": {k: round(c / players, 4) for k, c in seats_of.items()},
        "mean_score_by_bot": {
            k: round(score_sum[k] / (n * seats_of[k]), 2) for k in score_sum
        },
        "invariant_violations": violations,
        "violations": messages,
    }


class _Checker:
    """The invariant checks of one game. ``on_step`` is the driver callback: a closure,
    because it runs after every step and a closure call is cheaper than ``__call__``."""

    __slots__ = ("_dealer", "on_step", "problems")

    def __init__(self, dealer: LocalDealer) -> None:
        self._dealer = dealer  # its colour map is re-bound when dealing: read it lazily
        self.problems: list[str] = []
        problems = self.problems
        steps = 0

        def on_step(s: GameState, a: Action) -> None:
            nonlocal steps
            steps += 1
            if steps > MAX_STEPS:
                raise _StepLimit
            cls = type(a)
            if cls is Seed:
                return
            if min(s.money) < 0:
                problems.append(f"negative money {s.money} after {cls.__name__}")
            held = len(s.bag) + sum(map(len, s.goods)) + len(s.set_aside)
            if held != TOTAL_GOODS:
                problems.append(f"{held} goods in bag, hands and set aside after "
                                f"{cls.__name__}")
            elif isinstance(a, Withdrawn):
                self._withdrawn(s, a)
            elif cls in _CENSUS:
                self._census(s, cls.__name__)

        self.on_step = on_step

    def _withdrawn(self, s: GameState, a: Withdrawn) -> None:
        """The goods drawn are held now, and are the colour the engine made public (or,
        a Grand Vizier's marker, held by nobody and the colour the engine set aside)."""
        colour = self._dealer.colour
        known = s.known
        for h in a.handles:
            if h not in known and not any(h in g for g in s.goods):
                want = s.set_aside[-1] if len(a.handles) == 1 and s.set_aside else -2
            else:
                want = known.get(h, -2)
            if h in s.bag or colour.get(h, -1) != want:
                self.problems.append(f"good #{h} drawn from the bag is not what was asked")

    def _census(self, s: GameState, after: str) -> None:
        everything = list(s.bag)
        for g in s.goods:
            everything += g
        if len(set(everything)) != TOTAL_GOODS - len(s.set_aside):
            self.problems.append(f"a good is in two places after {after}")
            return
        try:  # colours as one byte string: C-speed counting of 75 goods
            colours = bytes(map(self._dealer.colour.__getitem__, everything))
        except KeyError:
            self.problems.append(f"a good has no colour after {after}")
            return
        per = [colours.count(c) for c in range(NCOLOURS)]
        for c in s.set_aside:
            per[c] += 1
        if per != _FULL_DECK:
            self.problems.append(f"colour census {per} after {after}")
