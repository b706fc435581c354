"""Bot strength benchmark: the ``hard`` (search) bot against heuristic bots.

Plays ``--games`` games at each player count of ``--players``: one ``hard`` bot and
heuristic (``normal``) bots in the other seats, the hard bot's seat rotating with the
game number (seat order is not neutral). Engine-only games with the trusted
:class:`~engine.dealer.LocalDealer`, seeds derived from ``--seed`` exactly as
``silkroad simulate`` derives them, so a run is reproducible (timings aside).

Printed per player count: the hard bot's win rate (ties share a win) with a 95 % Wilson
confidence interval and the fair share (1 / players); its mean score margin (its score
minus the best rival's); and seconds per decision -- p50, p99 and max -- for the hard
bot and for the heuristic bots, counting only decisions with more than one legal
action (a bot returns a forced one at once). Decision times are wall-clock seconds in
the worker process: with ``--workers 2`` on a busy machine they come out higher, so the
hard bot's CPU seconds per decision (the process's CPU time) are printed too.

The product owner's targets: ``hard`` wins >= 40 % of 4-player games against 3
heuristic bots over >= 400 games (fair share 25 %), beats the heuristic with 2 and 5
opponents too, and decides in <= 1 s on one core.

Usage: ``silkroad bench bots [--games N] [--players 3,4,6] [--seed S] [--budget B]
[--workers W] [--json]`` or ``python -m bench.bots_bench``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from engine.actions import Action
from engine.bots import DEFAULT_BUDGET, HeuristicBot, SearchBot
from engine.dealer import LocalDealer
from engine.driver import Agent, play_game
from engine.scoring import score_lines
from engine.simulate import game_seed
from engine.state import make_config
from engine.view import PlayerView

TARGET_WIN_4P = 0.40
TARGET_SECONDS = 1.0
Z95 = 1.959964


class _Timed:
    """Wraps a bot: wall-clock and CPU seconds of each decision that had a real choice."""

    def __init__(self, bot: Agent) -> None:
        self.bot = bot
        self.times: list[float] = []
        self.cpu: list[float] = []

    def choose(self, view: PlayerView, legal: list[Action]) -> Action:
        if len(legal) == 1:
            return self.bot.choose(view, legal)
        t0, c0 = time.perf_counter(), time.process_time()
        a = self.bot.choose(view, legal)
        self.cpu.append(time.process_time() - c0)
        self.times.append(time.perf_counter() - t0)
        return a


def play_one(players: int, game: int, seed: int, budget: int) -> dict[str, Any]:
    """One game, the hard bot in seat ``game % players``: its result and decision times."""
    seat = game % players
    config = make_config(players)
    hard = _Timed(SearchBot(game_seed(seed, game, "hard"), budget=budget))
    agents: list[_Timed] = [
        hard if p == seat else _Timed(HeuristicBot(game_seed(seed, game, f"seat{p}")))
        for p in range(players)
    ]
    s, _ = play_game(config, LocalDealer(game_seed(seed, game, "dealer")), agents)
    assert s.final is not None
    totals = [line.total for line in score_lines(s.money, s.final)]
    best = max(totals)
    rival = max(t for p, t in enumerate(totals) if p != seat)
    share = 1.0 / totals.count(best) if totals[seat] == best else 0.0
    normal = [t for p, a in enumerate(agents) if p != seat for t in a.times]
    return {"win": share, "margin": totals[seat] - rival, "hard_times": hard.times,
            "hard_cpu": hard.cpu, "normal_times": normal}


def _play_star(job: tuple[int, int, int, int]) -> dict[str, Any]:
    return play_one(*job)


def wilson(share: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``share`` observed over ``n`` trials."""
    if n <= 0:
        return 0.0, 1.0
    d = 1 + z * z / n
    centre = (share + z * z / (2 * n)) / d
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / d
    return max(0.0, centre - half), min(1.0, centre + half)


def percentiles(times: list[float]) -> dict[str, float]:
    """p50, p99 and max of ``times`` (nearest rank), in seconds."""
    if not times:
        return {"p50": 0.0, "p99": 0.0, "max": 0.0, "decisions": 0}
    xs = sorted(times)

    def rank(q: float) -> float:
        return xs[min(len(xs) - 1, max(0, math.ceil(q * len(xs)) - 1))]

    return {"p50": round(rank(0.5), 5), "p99": round(rank(0.99), 5), "max": round(xs[-1], 5),
            "decisions": len(xs)}


def run_bench(players: int, games: int, seed: int, budget: int, workers: int,
              progress: bool = False) -> dict[str, Any]:
    """``games`` games at ``players``: the summary described in the module docstring."""
    jobs = [(players, g, seed, budget) for g in range(games)]
    t0 = time.perf_counter()
    results: list[dict[str, Any]] = []
    if workers <= 1:
        for j in jobs:
            results.append(_play_star(j))
            _progress(progress, players, results, games)
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for r in pool.map(_play_star, jobs):
                results.append(r)
                _progress(progress, players, results, games)
    wins = sum(r["win"] for r in results)
    share = wins / games
    lo, hi = wilson(share, games)
    return {
        "players": players,
        "games": games,
        "seed": seed,
        "budget": budget,
        "workers": workers,
        "wins": round(wins, 2),
        "win_rate": round(share, 4),
        "win_ci95": [round(lo, 4), round(hi, 4)],
        "fair_share": round(1 / players, 4),
        "mean_margin": round(sum(r["margin"] for r in results) / games, 3),
        "seconds_per_decision": {
            "hard": percentiles([t for r in results for t in r["hard_times"]]),
            "normal": percentiles([t for r in results for t in r["normal_times"]]),
        },
        "cpu_seconds_per_decision": {
            "hard": percentiles([t for r in results for t in r["hard_cpu"]]),
        },
        "wall_seconds": round(time.perf_counter() - t0, 1),
    }


def _progress(on: bool, players: int, results: list[dict[str, Any]], games: int) -> None:
    if on and (len(results) % 20 == 0 or len(results) == games):
        share = sum(r["win"] for r in results) / len(results)
        print(f"  {players} players: {len(results)}/{games} games, hard wins {share:.1%}",
              file=sys.stderr, flush=True)


def format_result(r: dict[str, Any]) -> str:
    sp = r["seconds_per_decision"]
    lo, hi = r["win_ci95"]
    lines = [
        f"{r['players']} players, {r['games']} games (hard bot budget {r['budget']} playouts, "
        f"seed {r['seed']}, {r['workers']} worker(s), {r['wall_seconds']} s)",
        f"  hard win rate   {r['win_rate']:.1%}  (95% CI {lo:.1%} .. {hi:.1%}; "
        f"fair share {r['fair_share']:.1%})",
        f"  mean margin     {r['mean_margin']:+.2f} points over the best rival",
    ]
    rows = [("hard", sp["hard"]), ("normal", sp["normal"]),
            ("hard cpu", r["cpu_seconds_per_decision"]["hard"])]
    for who, t in rows:
        lines.append(f"  s/decision {who:<8} p50 {t['p50']:.4f}  p99 {t['p99']:.4f}  "
                     f"max {t['max']:.4f}  ({t['decisions']} decisions)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench.bots_bench",
        description="The hard (search) bot against heuristic bots: win rate with a 95% "
        "Wilson interval, mean score margin, seconds per decision.",
        epilog="example: python -m bench.bots_bench --games 400 --players 4 --workers 2\n"
        f"targets: hard wins >= {TARGET_WIN_4P:.0%} of 4-player games (fair share 25%), "
        f"beats the heuristic at 3 and 6 players too, <= {TARGET_SECONDS:g} s per decision",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--games", type=int, default=100,
                    help="games per player count (default 100)")
    ap.add_argument("--players", default="4",
                    help="player counts, comma-separated, e.g. 3,4,6 (default 4)")
    ap.add_argument("--seed", type=int, default=1, help="master seed (default 1)")
    ap.add_argument("--budget", type=int, default=DEFAULT_BUDGET,
                    help=f"the hard bot's playouts per decision (default {DEFAULT_BUDGET}, "
                    "the hard level's)")
    ap.add_argument("--workers", type=int, default=1,
                    help="worker processes, one game each at a time (default 1)")
    ap.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    a = ap.parse_args(argv)
    try:
        counts = [int(x) for x in a.players.split(",") if x.strip()]
    except ValueError:
        ap.error(f"--players takes numbers such as 3,4,6, not {a.players!r}")
    if not counts or any(not 3 <= n <= 6 for n in counts):
        ap.error("--players: each player count must be 3 to 6")
    if a.games < 1 or a.workers < 1:
        ap.error("--games and --workers must be at least 1")
    if not 1 <= a.budget <= 100_000:
        ap.error("--budget must be 1..100000 playouts")
    out = []
    for n in counts:
        r = run_bench(n, a.games, a.seed, a.budget, a.workers, progress=not a.quiet)
        out.append(r)
        if not a.json:
            print(format_result(r), flush=True)
    if a.json:
        print(json.dumps({"target_win_rate_4p": TARGET_WIN_4P,
                          "target_seconds_per_decision": TARGET_SECONDS,
                          "results": out}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
