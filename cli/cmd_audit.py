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
    if report.violation is not None:
        v = report.violation
        out["violation"] = {"party": v.party, "envelope": v.envelope, "rule": v.rule,
                            "detail": v.detail}
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
    print(f"UNFAIR: {report.violation or 'the transcript is incomplete'}")
    return code
