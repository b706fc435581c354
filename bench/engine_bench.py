"""Engine benchmark: complete bot games per second on one core (single process).

Runs the same code path as ``silkroad simulate`` (LocalDealer, per-step invariant
checks), so the figure is what a tournament run achieves. Two line-ups: four random
bots (the engine's own cost dominates) and one heuristic bot with three random ones
(adds the heuristic's decision cost). Target: >= 300 games/s for 4 random bots,
designed towards 1,000.

Usage: ``silkroad bench engine [--games N] [--players P] [--seed S] [--json]``
or ``python -m bench.engine_bench``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from engine.simulate import simulate

TARGET_RANDOM_GPS = 300


def run_bench(players: int, games: int, seed: int, repeat: int) -> list[dict[str, Any]]:
    """Best-of-``repeat`` games/s for each line-up (the best run is the least disturbed)."""
    lineups = [
        (f"random x{players}", ["random"] * players),
        (f"heuristic + random x{players - 1}", ["heuristic"] + ["random"] * (players - 1)),
    ]
    out = []
    for name, bots in lineups:
        best: dict[str, Any] | None = None
        for _ in range(repeat):
            r = simulate(players, games, seed, bots)
            if best is None or r["games_per_second"] > best["games_per_second"]:
                best = r
        assert best is not None
        out.append(
            {
                "lineup": name,
                "bots": bots,
                "players": players,
                "games": games,
                "games_per_second": best["games_per_second"],
                "mean_actions_per_game": best["mean_actions_per_game"],
                "actions_per_second": round(
                    best["games_per_second"] * best["mean_actions_per_game"]
                ),
                "invariant_violations": best["invariant_violations"],
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="silkroad bench engine",
        description="Engine-only games per second on one core (random and heuristic bots).",
        epilog="example: silkroad bench engine --games 1000 --json",
    )
    parser.add_argument("--games", type=int, default=1000, help="games per run (default 1000)")
    parser.add_argument("--players", type=int, default=4, help="players (default 4)")
    parser.add_argument("--seed", type=int, default=1, help="master seed (default 1)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per line-up, best kept")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    if not 3 <= args.players <= 6 or args.games < 1 or args.repeat < 1:
        print("engine bench: need 3-6 players, games >= 1, repeat >= 1", file=sys.stderr)
        return 2
    results = run_bench(args.players, args.games, args.seed, args.repeat)
    if args.json:
        print(json.dumps({"target_random_games_per_second": TARGET_RANDOM_GPS,
                          "results": results}, indent=2))
    else:
        for r in results:
            print(
                f"{r['lineup']:<24} {r['games_per_second']:>8.1f} games/s  "
                f"({r['actions_per_second']} actions/s, {r['games']} games, "
                f"violations {r['invariant_violations']})"
            )
        print(f"target for random x4: >= {TARGET_RANDOM_GPS} games/s on one core")
    return 0 if all(r["invariant_violations"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
