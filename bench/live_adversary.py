"""Live adversary bench: games with one randomly misbehaving seat; no honest seat is named.

Each game is real (every peer its own identity, 127.0.0.1 listener, mesh, crypto session
and game folder, all in this process), played by frugal bots so a game takes seconds.  One
seat — chosen per game — is armed by :mod:`bench.live_cheats` with a misbehaviour drawn at
random (partial delivery, delays, equivocation, false accusations, stop notices, withheld
messages, wrong hashes, illegal actions, unknown kinds, corrupted crypto) that fires at a
random point of the game.  Short stall and abandon timeouts make a silent cheater named
by timeout within seconds; every game also has a hard timeout (a hang is a violation).

For every honest seat it checks that

(a) its table's verdict (the stop it raised, and ``table.failure``) names no honest seat
    (nobody or the cheater is fine);
(b) its verdicts on the others' abort notices (``table.abort_verdicts``) name no honest
    seat;
(c) the audit of its folder, and of its ``game.silkroad`` if it wrote one, is never
    "unfair" naming an honest seat, nor "unfair" naming nobody.

It prints the outcomes by (misbehaviour, verdict rule, culprit: cheater / none / honest),
every violation with the game's description and seed, and ``N games, V honest seats
named``.  Game ``i`` uses seed ``SEED + i`` and ``players[i % len(players)]`` seats:
``--games 1 --seed SEED+i --players P`` plays it again (the network's timing and the
crypto's randomness are not replayed; the cheater's choices are).

Usage: ``python -m bench.live_adversary --games N --seed S --players 3[,4] [--only KIND,...]
[--timeout SECONDS] [--root DIR] [--json] [-v]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.frugal_bot import FrugalBot
from crypto.shuffle import DEFAULT_LAMBDA
from p2p.judge.game_audit import UNFAIR, GameAuditReport, audit_folder, audit_game
from p2p.local_table import LocalPeer, finish_peer, make_local_setup, start_peer
from p2p.table import LockstepTable, TableResult, TableStopped

from .live_cheats import MISBEHAVIOURS, Adversary, Plan, arm, choose_plan

STALL = 1.0
"""Seconds before a table warns that it waits (it asks for what it lacks after 1 s)."""
ABANDON = 8.0
"""Seconds a table waits for a silent seat before it stops naming it."""
GAME_TIMEOUT = 90.0
"""Hard bound on one game (every table has stopped long before, unless something hangs)."""

CHEATER_GRACE = 3.0
"""Seconds the cheater's table gets to stop once every honest table is done."""

@dataclass
class Finding:
    """An honest seat's verdict that names an honest seat (or nobody, for an audit that
    says "unfair"), or a game that did not end by itself."""

    seat: int
    where: str
    named: int | None
    rule: str
    detail: str

    def __str__(self) -> str:
        if self.rule in ("hang", "crash"):
            return f"seat {self.seat}'s table: {self.rule}: {self.detail[:400]}"
        who = "nobody" if self.named is None else f"honest seat {self.named}"
        return f"seat {self.seat}'s {self.where} named {who} ({self.rule}): {self.detail[:400]}"


@dataclass
class SeatOutcome:
    """What one honest seat concluded: live, and in the audit of its folder."""

    seat: int
    rule: str
    culprit: int | None
    audit: str
    audit_party: int | None


@dataclass
class GameReport:
    """One game: the cheater's plan (with what it did), each honest seat's outcome, and
    the violations found."""

    plan: Plan
    seconds: float
    audit_seconds: float = 0.0
    hung: bool = False
    seats: list[SeatOutcome] = field(default_factory=list)
    violations: list[Finding] = field(default_factory=list)

    @property
    def description(self) -> str:
        return self.plan.describe()

    def as_dict(self) -> dict[str, Any]:
        p = self.plan
        return {"seed": p.seed, "players": p.players, "cheater": p.cheater, "kind": p.kind,
                "point": p.point, "fired": p.fired, "description": self.description,
                "seconds": round(self.seconds, 2), "audit_seconds": round(self.audit_seconds, 2),
                "hung": self.hung,
                "seats": [vars(s) for s in self.seats],
                "violations": [vars(f) for f in self.violations]}


def culprit_class(culprit: int | None, cheater: int) -> str:
    """How a verdict's culprit stands: the cheater, nobody, or an honest seat."""
    if culprit is None:
        return "none"
    return "cheater" if culprit == cheater else "honest"


async def play_game(root: Path, plan: Plan, timeout: float = GAME_TIMEOUT) -> GameReport:
    """Play one game with ``plan``'s cheater and judge every honest seat's verdicts."""
    n = plan.players
    t0 = time.perf_counter()
    peers = await make_local_setup(n, "audit", root, lam=DEFAULT_LAMBDA)
    tables: list[LockstepTable] = []
    adversary: Adversary | None = None
    results: list[Any] = []
    hung = False
    try:
        for p in peers:
            t = await start_peer(p, FrugalBot(plan.seed * 10 + p.seat), lam=DEFAULT_LAMBDA,
                                 stall_timeout=STALL, abandon_timeout=ABANDON)
            if p.seat == plan.cheater:
                adversary = arm(t, plan)
            tables.append(t)
        tasks = [asyncio.ensure_future(t.run()) for t in tables]
        honest = [task for t, task in zip(tables, tasks, strict=True) if t.me != plan.cheater]
        _done, pending = await asyncio.wait(honest, timeout=timeout)
        hung = bool(pending)
        cheat = tasks[plan.cheater]
        if not cheat.done():
            # the honest seats are done: the cheater would only wait for them until its own
            # abandon timeout, which says nothing about them
            tables[plan.cheater].stop(None, "bench-over", "every honest seat is done")
            await asyncio.wait([cheat], timeout=CHEATER_GRACE)
        for task in tasks:
            task.cancel()
        results = list(await asyncio.gather(*tasks, return_exceptions=True))
    finally:
        if adversary is not None:
            adversary.close()
        for p in peers:
            with contextlib.suppress(Exception):
                await finish_peer(p, grace=1.0)
    played = time.perf_counter() - t0
    report = GameReport(plan, played, hung=hung)
    a0 = time.perf_counter()
    for p, t, r in zip(peers, tables, results, strict=True):
        if p.seat != plan.cheater:
            judge_seat(report, p, t, r)
    report.audit_seconds = time.perf_counter() - a0
    return report


def judge_seat(report: GameReport, peer: LocalPeer, table: LockstepTable, result: Any) -> None:
    """Check one honest seat's live verdict, its verdicts on abort notices and the audits
    of what it stored; record its outcome and any violation in ``report``."""
    cheater = report.plan.cheater
    me = peer.seat
    found: list[Finding] = []

    def named_honest(culprit: int | None) -> bool:
        return culprit_class(culprit, cheater) == "honest"

    if isinstance(result, TableResult):
        rule, culprit = "finished", None
    elif isinstance(result, TableStopped):
        rule, culprit = result.rule, result.culprit
        if named_honest(culprit):
            found.append(Finding(me, "live verdict", culprit, rule, result.detail))
    elif isinstance(result, asyncio.CancelledError):
        rule, culprit = "hung", None
        found.append(Finding(me, "table", None, "hang", "still running at the game's hard "
                                                      "timeout (cancelled)"))
    else:
        rule, culprit = f"crashed:{type(result).__name__}", None
        found.append(Finding(me, "table", None, "crash", repr(result)))
    failure = table.failure
    if failure is not None and named_honest(failure.culprit) and not (
            isinstance(result, TableStopped) and failure.culprit == result.culprit
            and failure.rule == result.rule):
        found.append(Finding(me, "table.failure", failure.culprit, failure.rule,
                             failure.detail))
    for accuser, verdict in table.abort_verdicts:
        if named_honest(verdict.culprit):
            found.append(Finding(me, f"verdict on seat {accuser}'s abort notice",
                                 verdict.culprit, verdict.rule, verdict.detail))
    folder = audit_folder(peer.folder)
    found.extend(_audit_findings(me, "folder audit", folder, cheater))
    export = peer.folder / "game.silkroad"
    if export.exists():
        found.extend(_audit_findings(me, "game.silkroad audit", audit_game(export), cheater))
    v = folder.violation
    report.seats.append(SeatOutcome(me, rule, culprit,
                                    f"{folder.status}:{v.rule}" if v is not None
                                    else folder.status,
                                    v.party if v is not None and folder.status == UNFAIR
                                    else None))
    report.violations.extend(found)


def _audit_findings(me: int, where: str, report: GameAuditReport,
                    cheater: int) -> list[Finding]:
    v = report.violation
    if report.status != UNFAIR or v is None or v.party == cheater:
        return []
    return [Finding(me, where, v.party, v.rule, v.detail)]


def run_game(root: Path, seed: int, players: int, kinds: tuple[str, ...] | None = None,
             timeout: float = GAME_TIMEOUT) -> GameReport:
    """Play the game of ``seed`` (a fresh event loop per game)."""
    plan = choose_plan(seed, players, kinds)
    return asyncio.run(play_game(root, plan, timeout))


def run_games(games: int, seed: int, players: list[int], root: Path,
              kinds: tuple[str, ...] | None = None, timeout: float = GAME_TIMEOUT,
              progress: Any = None) -> list[GameReport]:
    """Games ``seed``, ``seed + 1``…; ``progress(report)`` hears each as it ends."""
    out = []
    for i in range(games):
        r = run_game(root / f"game{i}", seed + i, players[i % len(players)], kinds, timeout)
        out.append(r)
        if progress is not None:
            progress(r)
    return out


def outcomes(reports: list[GameReport]) -> Counter[tuple[str, str, str]]:
    """Honest seats' live verdicts by (misbehaviour, rule, culprit class)."""
    c: Counter[tuple[str, str, str]] = Counter()
    for r in reports:
        kind = r.plan.kind if r.plan.fired else f"{r.plan.kind} (never fired)"
        for s in r.seats:
            who = "-" if s.rule == "finished" else culprit_class(s.culprit, r.plan.cheater)
            c[(kind, s.rule, who)] += 1
    return c


def audit_outcomes(reports: list[GameReport]) -> Counter[tuple[str, str, str]]:
    """Honest seats' folder audits by (misbehaviour, status:rule, culprit class)."""
    c: Counter[tuple[str, str, str]] = Counter()
    for r in reports:
        kind = r.plan.kind if r.plan.fired else f"{r.plan.kind} (never fired)"
        for s in r.seats:
            who = (culprit_class(s.audit_party, r.plan.cheater)
                   if s.audit.startswith(UNFAIR) else "-")
            c[(kind, s.audit, who)] += 1
    return c


def named_seats(reports: list[GameReport]) -> int:
    """Honest seats named at least once (by anyone's verdict or audit), over all games."""
    return sum(len({f.named for f in r.violations if f.named is not None}) for r in reports)


def _table(counts: Counter[tuple[str, str, str]], head: tuple[str, str, str]) -> list[str]:
    rows = [(*k, str(v)) for k, v in sorted(counts.items())]
    widths = [max(len(x) for x in col) for col in zip((*head, "n"), *rows, strict=True)]
    return ["  " + "  ".join(x.ljust(w) for x, w in zip(row, widths, strict=True)).rstrip()
            for row in [(*head, "n"), *rows]]


def summarise(reports: list[GameReport]) -> dict[str, Any]:
    secs = [r.seconds for r in reports]
    audits = [r.audit_seconds for r in reports]
    return {
        "games": len(reports),
        "honest_seats_named": named_seats(reports),
        "violations": sum(len(r.violations) for r in reports),
        "hangs": sum(r.hung for r in reports),
        "seconds_per_game_mean": round(sum(secs) / len(secs), 2) if secs else 0.0,
        "seconds_per_game_max": round(max(secs), 2) if secs else 0.0,
        "audit_seconds_per_game_mean": round(sum(audits) / len(audits), 2) if audits else 0.0,
        "outcomes": [[*k, v] for k, v in sorted(outcomes(reports).items())],
        "audit_outcomes": [[*k, v] for k, v in sorted(audit_outcomes(reports).items())],
        "reports": [r.as_dict() for r in reports],
    }


def print_text(reports: list[GameReport]) -> None:
    s = summarise(reports)
    print(f"games played: {s['games']}  (play {s['seconds_per_game_mean']} s per game on "
          f"average, max {s['seconds_per_game_max']} s; audits "
          f"{s['audit_seconds_per_game_mean']} s per game)")
    print("live verdicts of honest seats (misbehaviour, rule, culprit):")
    print("\n".join(_table(outcomes(reports), ("misbehaviour", "rule", "culprit"))))
    print("audits of honest seats' folders (misbehaviour, status:rule, culprit):")
    print("\n".join(_table(audit_outcomes(reports), ("misbehaviour", "audit", "culprit"))))
    bad = [r for r in reports if r.violations]
    if bad:
        print("violations:")
    for r in bad:
        print(f"- {r.description}")
        for f in r.violations:
            print(f"    {f}")
    hangs = s["hangs"]
    if hangs:
        print(f"{hangs} games hung")
    print(f"{s['games']} games, {s['honest_seats_named']} honest seats named")


def _players(text: str) -> list[int]:
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of seat counts: {text!r}") from None
    if not out or any(not 3 <= p <= 6 for p in out):
        raise argparse.ArgumentTypeError("seat counts are 3 to 6, e.g. 3 or 3,4")
    return out


def _kinds(text: str) -> tuple[str, ...]:
    kinds = tuple(x.strip() for x in text.split(",") if x.strip())
    unknown = [k for k in kinds if k not in MISBEHAVIOURS]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(f"unknown misbehaviour(s) {unknown}; known: "
                                         f"{', '.join(MISBEHAVIOURS)}")
    return kinds


def main(argv: list[str] | None = None) -> int:
    """Run the bench; exit status 1 if any honest seat was named or a game hung."""
    ap = argparse.ArgumentParser(prog="python -m bench.live_adversary", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=20, help="games to play (default 20)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the first game (default 1)")
    ap.add_argument("--players", type=_players, default=[3],
                    help="seats per game, a list taken in turn (default 3; e.g. 3,4)")
    ap.add_argument("--only", type=_kinds, default=None, metavar="KIND[,KIND...]",
                    help=f"draw misbehaviours from these only ({', '.join(MISBEHAVIOURS)})")
    ap.add_argument("--timeout", type=float, default=GAME_TIMEOUT,
                    help=f"hard timeout per game in seconds (default {GAME_TIMEOUT:.0f})")
    ap.add_argument("--root", type=Path, default=None,
                    help="keep the game folders here (default: a temporary directory)")
    ap.add_argument("--json", action="store_true", help="print JSON")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="show the tables' log (refusals, stops) on stderr")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.CRITICAL,
                        format="%(name)s: %(message)s")

    def progress(r: GameReport) -> None:
        if not args.json:
            mark = "VIOLATION" if r.violations else "ok"
            print(f"[{mark}] {r.seconds:5.1f} s  {r.description}", file=sys.stderr,
                  flush=True)

    with contextlib.ExitStack() as stack:
        root = args.root or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        reports = run_games(args.games, args.seed, args.players, root, args.only,
                            args.timeout, progress)
    if args.json:
        print(json.dumps(summarise(reports), indent=1))
    else:
        print_text(reports)
    return 1 if any(r.violations for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
