"""``silkroad audit PATH``: check a network game's transcript offline.

Every signature and hash chain, every zero-knowledge proof, every token decrypted with the
secrets the peers published at the end, and the rules engine replayed with full
information (:func:`p2p.game_audit.audit_game`).  Exit codes are for scripts: 0 fair,
1 unfair (the first violation is named), 2 unreadable.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser(
        "audit",
        help="check a game transcript: signatures, proofs, every token, the rules",
        description="Audit a signed game transcript (game.silkroad) written by a networked "
        "game. Exit code 0: fair; 1: unfair, the first violation is named (who, where, "
        "which rule); 2: the file cannot be read.",
        epilog="Examples:\n  silkroad audit games/20250101-120000-seed7.silkroad\n"
        "  silkroad audit game.silkroad --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", help="the transcript (game.silkroad)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cli.net_report import verdict_of
    from p2p.game_audit import audit_game, summary

    report = audit_game(args.path)
    code = report.exit_code
    out = summary(report)
    out["verdict"] = verdict_of(code)
    out["path"] = args.path
    names = _roster_names(args.path)
    if report.violation is not None:
        v = report.violation
        out["violation"] = {"party": v.party, "envelope": v.envelope, "rule": v.rule,
                            "detail": v.detail, "name": _who(v.party, names, bare=True)}
    if args.json:
        print(json.dumps(out))
        return code
    if code == 2:
        print(f"silkroad audit: {report.error} — is this a game.silkroad transcript "
              "written by 'silkroad play' (not --local), host or join?", file=sys.stderr)
        return code
    if code == 0:
        print(f"FAIR: {report.steps} engine steps replayed; every signature, proof and token "
              f"checks out. Scores {report.scores}.")
        return code
    v = report.violation
    if v is None:
        print("UNFAIR: the transcript is incomplete (the game did not reach the final "
              "reveal)")
        return code
    where = "the end of the transcript" if v.envelope is None else f"envelope #{v.envelope}"
    print(f"UNFAIR: {_who(v.party, names)} broke the rules at {where}: rule {v.rule}: "
          f"{v.detail}")
    return code


def _roster_names(path: str) -> list[str]:
    """The players' names from the transcript's roster (empty if it cannot be read)."""
    from p2p.store import StoreError, read_export

    try:
        return [e.name for e in read_export(path).roster]
    except (StoreError, OSError, ValueError):
        return []


def _who(party: int | None, names: list[str], bare: bool = False) -> str | None:
    """"Marco (seat 1)" for a violation's party: a player reads names, not party numbers."""
    if party is None:
        return None if bare else "an unidentified party"
    if 0 <= party < len(names):
        return names[party] if bare else f"{names[party]} (seat {party})"
    return None if bare else f"seat {party}"
