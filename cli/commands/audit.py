"""``silkroad audit PATH``: check a network game's transcript offline.

Every signature and hash chain, every zero-knowledge proof, every token decrypted with the
secrets the peers published at the end, every action against the rules, every ack against
the replay, and every seat's closing acknowledgement (:func:`p2p.judge.game_audit.audit_game`).
Exit codes are for scripts: 0 certified, 1 unfair (always naming the seat whose own signed
envelopes prove the violation), 2 unreadable, 3 not certified (disputed, stopped, damaged,
incomplete, or not closed by every seat: nobody is accused).
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

from cli.verdict import CHECKED, verdict_of, verdict_text
from cli.verdict import who as _who
from p2p.front_door import (
    UNREADABLE,
    audit_folder,
    audit_game,
    summary,
    workers,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "audit",
        help="check a game transcript: signatures, proofs, every token, the rules",
        description=_wrapped(
        "Audit a signed game transcript (game.silkroad) written by a networked game, or "
        "a seat's game folder (the part played of a game that was left or stopped). "
        "It checks " + CHECKED + "; and whether every seat signed the final "
        "state (certification). A seat is named only on envelopes it signed, read against "
        "the history it itself acknowledged; what the file lacks, its order, and two "
        "seats' words that disagree name no one (docs/security.md, \"The evidence rule\")."
        "\n\nExit codes: 0: fair (certified); 1: unfair (the seat, its envelope and the "
        "rule are named); 2: it cannot be read; 3: not certified, naming no one: disputed "
        "(seats' signed words disagree and the file cannot tell who lied), stopped (a seat "
        "signed that it stopped the table: its reason is shown as its claim), damaged (an "
        "unsigned part was edited, or envelopes garbled), incomplete (the game did not "
        "reach its end, or envelopes or secrets are missing), or not certified (a seat "
        "never acknowledged the end, or envelopes the game never used). Games of protocol "
        "versions before 4 have no closing acknowledgements: at best 3."),
        epilog="Examples:\n  silkroad audit games/20250101-120000-seed7.silkroad\n"
        "  silkroad audit game.silkroad --json\n"
        "  silkroad audit games/peers/3fa1c2d4e5f60718-9a0b1c2d  (LAN, left mid-way)\n"
        "  silkroad audit games/peers/seat0/3fa1c2d4e5f60718      (play, left mid-way)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", help="the transcript (game.silkroad) or a seat's game folder")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _wrapped(text: str) -> str:
    """Paragraphs wrapped for a terminal (the raw formatter keeps the examples' lines)."""
    return "\n\n".join(textwrap.fill(par, 88) for par in text.split("\n\n"))


def run(args: argparse.Namespace) -> int:
    folder = Path(args.path).is_dir()
    show = None if args.json or not sys.stderr.isatty() else _progress
    with workers():  # independent proof checks on every core (the same verdicts)
        report = audit_folder(args.path, show) if folder else audit_game(args.path,
                                                                         progress=show)
    if show is not None:
        print("\r\033[K", end="", file=sys.stderr, flush=True)
    code = report.exit_code
    out = summary(report)
    out["verdict"] = verdict_of(code)  # fair / unfair / unreadable / not certified
    out["path"] = args.path
    v = report.violation
    if v is not None:
        out["violation"] = {"party": v.party, "envelope": v.envelope, "rule": v.rule,
                            "detail": v.detail,
                            "name": _who(v.party, report.names, bare=True)}
    if args.json:
        print(json.dumps(out))
        return code
    if report.status == UNREADABLE:
        what = "a seat's game folder (with meta.json and transcript.bin)" if folder else \
            "a game.silkroad transcript written by 'silkroad play' (not --local), host or join"
        print(f"silkroad audit: {report.error} — is this {what}?", file=sys.stderr)
        return code
    print(verdict_text(report))
    return code


def _progress(done: int, total: int) -> None:
    print(f"\rauditing: {done}/{total} envelopes checked…", end="", file=sys.stderr,
          flush=True)
