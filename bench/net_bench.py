"""Network table benchmark: lockstep latency on loopback and complete-game wall times.

Every peer is real (own identity, listener on 127.0.0.1, mesh, TokenSession, game
folder with fsynced transcript).  By default they run in **one process**, so each crypto
step costs N peers' CPU on one core; ``--processes`` runs one OS process per peer (as
``silkroad play`` does), sharing this machine's cores — on a real LAN each peer has its own
machine and crypto steps are faster still.  Reported:

* per-step latency (decision + broadcast + verification + ack round of all peers) for
  moves without crypto (bids, tile choice, moves, pawn passes) — targets p50 <= 5 ms,
  p99 <= 50 ms;
* crypto-backed steps separately (withdraw, steal, Vizier, sales, the deal);
* complete 4-bot and 6-bot games: wall time (targets 30 s / 60 s with a verified deal),
  envelopes and transcript size; the saved transcript is audited (engine replayed).

Usage: ``python -m bench.net_bench [--players 4 6] [--mode verified] [--bot heuristic]
[--processes] [--json]`` (``--processes``: one OS process per peer).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from crypto.shuffle import DEFAULT_LAMBDA
from p2p.judge.game_audit import audit_game
from p2p.local_table import run_local_game

TARGETS = {"plain_p50_ms": 5.0, "plain_p99_ms": 50.0, 4: 30.0, 6: 60.0}


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


def move_latencies(step_times: list[tuple[str, float, int, int]], applied: list[list[float]],
                   decided: list[dict[int, float]]) -> list[float]:
    """Per plain move (no crypto op): seconds from the actor's decision until the *last*
    peer applied it (acks are checked as they arrive and no longer block the next step, so
    this — not one peer's loop time — is the latency players see)."""
    out = []
    for k, (_kind, _dt, ops, actor) in enumerate(step_times):
        if ops or actor < 0 or k not in decided[actor]:
            continue
        if all(k < len(a) for a in applied):
            out.append(max(a[k] for a in applied) - decided[actor][k])
    return out


def summarise(step_times: list[tuple[str, float, int, int]],
              moves: list[float] | None = None) -> dict[str, Any]:
    """Latency figures (ms) for plain moves and per crypto-backed kind."""
    plain = ([dt * 1000 for dt in moves] if moves is not None else
             [dt * 1000 for _kind, dt, ops, _actor in step_times if ops == 0])
    crypto: dict[str, list[float]] = {}
    for kind, dt, ops, _actor in step_times:
        if ops:
            crypto.setdefault(kind, []).append(dt * 1000)
    return {
        "plain_steps": len(plain),
        "plain_p50_ms": round(_pct(plain, 0.5), 2),
        "plain_p99_ms": round(_pct(plain, 0.99), 2),
        "crypto_steps": {k: {"n": len(v), "p50_ms": round(_pct(v, 0.5), 1),
                             "max_ms": round(max(v), 1)} for k, v in sorted(crypto.items())},
    }


async def bench_game(players: int, mode: str, bot: str, seed: int, lam: int,
                     processes: bool = False) -> dict[str, Any]:
    """One complete game; ``processes``: seats 1… as child processes (what ``silkroad
    play`` does), seat 0 in this process."""
    with tempfile.TemporaryDirectory() as root:
        r = await run_local_game(players, bot, seed, mode, root, lam=lam, audit=False,
                                 bot_processes=processes)
        t0 = time.perf_counter()
        report = audit_game(r.transcript)
        audit_s = time.perf_counter() - t0
        applied = [x.applied_at for x in r.results] + [e["applied"] for e in r.peer_events]
        decided = [x.decided_at for x in r.results] + \
            [{k: t for k, t in e["decided"]} for e in r.peer_events]
        return {
            "players": players,
            "mode": mode,
            "bot": bot,
            "processes": processes,
            "wall_s": round(r.wall_time, 2),
            "target_s": TARGETS.get(players),
            "steps": r.results[0].steps,
            "envelopes": r.envelopes,
            "transcript_bytes": r.transcript_bytes,
            "same_hash": len(set(r.state_hashes)) == 1,
            "audit_fair": report.fair,
            "audit_s": round(audit_s, 2),
            **summarise(r.step_times, move_latencies(r.step_times, applied, decided)),
        }


async def bench_fuzz(count: int, seed: int) -> dict[str, Any]:
    """Feed ``count`` mutated envelopes to a live 3-peer table mid-game (see bench.table_fuzz)."""
    from bench.table_fuzz import fuzz_table
    from engine.bots import make_bot
    from p2p.local_table import finish_peer, make_local_setup, start_peer

    with tempfile.TemporaryDirectory() as root:
        peers = await make_local_setup(3, "audit", Path(root))
        tables = [await start_peer(p, make_bot("heuristic", seed * 10 + p.seat))
                  for p in peers]
        out: dict[str, Any] = {}

        def hook(t: Any, _a: Any) -> None:
            if t.me == 1 and t.step == 12 and not out:
                out.update(fuzz_table(tables[0], t, count, seed))

        for t in tables:
            t.on_step = hook
        try:
            results = await asyncio.gather(*(t.run() for t in tables))
        finally:
            for p in peers:
                await finish_peer(p, grace=1.0)
        export = results[0].export
        if export is None:
            raise RuntimeError("the fuzzed game left no transcript export")
        report = audit_game(export)
        return {"fuzz_inputs": count, **{k: v for k, v in out.items() if k != "failure"},
                "failure": str(out.get("failure")),
                "same_hash": len({r.state_hash for r in results}) == 1,
                "audit_fair": report.fair}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench.net_bench",
        description="Lockstep latency of plain moves (p50/p99), crypto steps, and whole "
                    "bot games' wall time, with real peers on 127.0.0.1; each game's "
                    "transcript is audited.",
        epilog="Examples:\n  silkroad bench net --players 4 6 --processes\n"
               "  silkroad bench net --players 3 --mode audit --json\n"
               "  silkroad bench net --fuzz 10000",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--players", type=int, nargs="+", default=[4, 6],
                    help="one game per count given (default: 4 6)")
    ap.add_argument("--mode", choices=["audit", "verified"], default="verified",
                    help="shuffle mode of the deal (default: verified)")
    ap.add_argument("--bot", default="heuristic", help="the bots' kind (default: heuristic)")
    ap.add_argument("--seed", type=int, default=1, help="game seed (default: 1)")
    ap.add_argument("--lam", type=int, default=DEFAULT_LAMBDA,
                    help="cut-and-choose rounds (the protocol's own by default)")
    ap.add_argument("--processes", action="store_true",
                    help="one OS process per peer (seats 1… run python -m p2p.peer, as "
                    "silkroad play does) instead of every peer in this process")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--fuzz", type=int, default=0, metavar="N",
                    help="instead: feed N mutated envelopes to a live table and report")
    args = ap.parse_args(argv)
    if args.fuzz:
        res = asyncio.run(bench_fuzz(args.fuzz, args.seed))
        print(json.dumps(res, indent=1, default=str))
        return 0 if res.get("unrefused") == 0 and res.get("unchanged") and \
            res["audit_fair"] else 1
    out = [asyncio.run(bench_game(p, args.mode, args.bot, args.seed, args.lam, args.processes))
           for p in args.players]
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for g in out:
            if "error" in g:
                print(f"{g['players']} peers: FAILED {g['error']}")
                continue
            where = "one process per peer" if g.get("processes") else "one process"
            print(f"{g['players']} peers, {where} ({g['mode']} deal, {g['bot']} bots): "
                  f"{g['wall_s']} s wall (target {g['target_s']} s), {g['steps']} steps, "
                  f"{g.get('envelopes', '?')} envelopes, {g['transcript_bytes']} bytes; "
                  f"same hash {g['same_hash']}, audit fair {g['audit_fair']}")
            print(f"  plain steps: n={g['plain_steps']} p50 {g['plain_p50_ms']} ms, "
                  f"p99 {g['plain_p99_ms']} ms (targets 5 / 50 ms)")
            for k, v in g["crypto_steps"].items():
                print(f"  {k}: n={v['n']} p50 {v['p50_ms']} ms, max {v['max_ms']} ms")
    ok = all(g.get("same_hash") and g.get("audit_fair") for g in out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
