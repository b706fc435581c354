"""``silkroad audit PATH``: check a network game's transcript offline.

Every signature and hash chain, every zero-knowledge proof, every token decrypted with the
secrets the peers published at the end, and the rules engine replayed with full
information (:func:`p2p.game_audit.audit_game`).  Exit codes are for scripts: 0 fair
(certified), 1 unfair (the first violation is named), 2 unreadable, 3 not certified (a game
that stopped early, or a damaged file: nobody signed anything false, but it proves no
finished game).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crypto.audit import Violation


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "audit",
        help="check a game transcript: signatures, proofs, every token, the rules",
        description="Audit a signed game transcript (game.silkroad) written by a networked "
        "game, or a seat's game folder (the part played of a game that was left or "
        "stopped). Exit code 0: fair (certified); 1: unfair, the first violation is named "
        "(who, where, which rule); 2: it cannot be read; 3: not certified (the game did not "
        "reach its end, or the file is damaged: nobody signed anything false).",
        epilog="Examples:\n  silkroad audit games/20250101-120000-seed7.silkroad\n"
        "  silkroad audit game.silkroad --json\n"
        "  silkroad audit games/peers/3fa1c2d4e5f60718     (a game left mid-way)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", help="the transcript (game.silkroad) or a seat's game folder")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cli.net_report import verdict_of
    from p2p.game_audit import audit_folder, audit_game, summary

    folder = Path(args.path).is_dir()
    report = audit_folder(args.path) if folder else audit_game(args.path)
    code = report.exit_code
    out = summary(report)
    names = _folder_names(args.path) if folder else _roster_names(args.path)
    # a game left or stopped mid-way: nobody cheated in the part played, but it is not a
    # finished fair game either (the audit's exit code 3: not certified)
    incomplete, waiting = _incomplete(report.violation, folder, names)
    out["verdict"] = "incomplete" if incomplete else verdict_of(code)
    out["path"] = args.path
    if report.violation is not None:
        v = report.violation
        out["violation"] = {"party": v.party, "envelope": v.envelope, "rule": v.rule,
                            "detail": v.detail, "name": _who(v.party, names, bare=True)}
    if args.json:
        print(json.dumps(out))
        return code
    if code == 2:
        what = "a seat's game folder (with meta.json and transcript.bin)" if folder else \
            "a game.silkroad transcript written by 'silkroad play' (not --local), host or join"
        print(f"silkroad audit: {report.error} — is this {what}?", file=sys.stderr)
        return code
    if incomplete:
        stop = report.stopped or {}
        why = f"; the table stopped: {stop.get('detail') or stop.get('rule')}" if stop else ""
        print(f"INCOMPLETE: {report.steps} engine steps replayed and every signature, proof "
              f"and rule checks out so far, but the game did not reach its end{waiting}{why}.")
        return code
    if code == 0:
        print(f"FAIR: {report.steps} engine steps replayed; every signature, proof and token "
              f"checks out. Scores: {_scores(report.scores, names)}.")
        return code
    found = report.violation
    if code == 3 or (found is not None and report.status != "unfair"):
        print(str(report))  # not certified: damaged or incomplete, naming no one
        return code
    if found is None:
        print("UNFAIR: the transcript is incomplete (the game did not reach the final "
              "reveal)")
        return code
    where = "the end of the transcript" if found.envelope is None else \
        f"envelope #{found.envelope}"
    print(f"UNFAIR: {_who(found.party, names)} broke the rules at {where}: rule {found.rule}: "
          f"{found.detail}")
    return code


def _scores(scores: list[int] | None, names: list[str]) -> str:
    """"Ann 26, Marco 29, …" (seat numbers when the names cannot be read)."""
    if not scores:
        return "none"
    return ", ".join(f"{names[p] if p < len(names) else f'seat {p}'} {v}"
                     for p, v in enumerate(scores))


def _roster_names(path: str) -> list[str]:
    """The players' names from the transcript's roster (empty if it cannot be read)."""
    from p2p.store import StoreError, read_export

    try:
        return [e.name for e in read_export(path).roster]
    except (StoreError, OSError, ValueError):
        return []


def _incomplete(v: Violation | None, folder: bool, names: list[str]) -> tuple[bool, str]:
    """Whether the only finding is that the game stops early, and (for a folder) whom it
    was still waiting for, as words to append.

    A seat's folder ends wherever that seat left: an op still waiting for messages at the
    *end* of the transcript (``missing-message`` with no envelope) is the game stopping
    there, not a cheat — nobody can be blamed for messages the game never got to ask for.
    In an exported game (the finished transcript) a missing message stays unfair."""
    if v is None:
        return False, ""
    if v.rule == "incomplete":
        return True, ""
    if folder and v.rule == "missing-message" and v.envelope is None:
        who = _who(v.party, names) if v.party is not None else "some seats"
        return True, f" (it stopped while waiting for {who}: {v.detail})"
    return False, ""


def _folder_names(folder: str) -> list[str]:
    """The players' names from a game folder's ``meta.json`` (empty if unreadable)."""
    from p2p.store import GameStore, StoreError

    try:
        return [e.name for e in GameStore(folder).load_meta()[0]]
    except (StoreError, OSError, ValueError):
        return []


def _who(party: int | None, names: list[str], bare: bool = False) -> str | None:
    """"Marco (seat 1)" for a violation's party: a player reads names, not party numbers."""
    if party is None:
        return None if bare else "an unidentified party"
    if 0 <= party < len(names):
        return names[party] if bare else f"{names[party]} (seat {party})"
    return None if bare else f"seat {party}"
