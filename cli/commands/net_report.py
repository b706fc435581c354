"""What ``play``, ``host`` and ``join`` print after a networked game, and their exit codes.

Shared so the three commands agree: the transcript is copied where the user asked (a
``0600`` file, like the game folder's own), a headless run audits it (the verdict is part
of the result a script reads), and a table that stopped names the culprit on stderr with
exit code 1 (and where its transcript is, if the game had reached its end).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from cli.table.net_session import NetSession
from cli.verdict import audit_summary
from engine.colours import COLOURS
from engine.game import score_table, winners
from p2p.front_door import (
    SeriesRecord,
    StoreError,
    read_series,
    write_private,
)

EXIT_OK, EXIT_FAIL = 0, 1


def silkroad_command() -> str:
    """How to run ``silkroad`` from where the player is: ``silkroad`` when that is what
    the shell finds, else the path this process was started as (``./dev play`` runs
    ``.venv/bin/silkroad``, which is not on the PATH), else ``python -m cli.main``."""
    me = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if me is None or me.name != "silkroad" or not me.exists():
        on_path = shutil.which("silkroad")
        return "silkroad" if on_path else f"{shlex.quote(sys.executable)} -m cli.main"
    on_path = shutil.which("silkroad")
    if on_path is not None and os.path.samefile(on_path, me):
        return "silkroad"
    try:
        shown = me.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        shown = me.resolve()
    return shlex.quote(str(shown) if shown.is_absolute() else f"./{shown}")


def resume_hint(folder: Path) -> str:
    """The command that resumes this seat (its bot seats come back with it)."""
    return f"{silkroad_command()} join --resume {shlex.quote(str(folder))}"


def left_line(session: NetSession) -> str:
    """The lines after leaving a game mid-way: where this seat's game folder is (it is
    kept: it holds every signed envelope so far), how to resume it and how to check the
    part played."""
    folder = session.folder
    if folder is None or not folder.exists():
        return "You left the table before the end."
    where = shlex.quote(str(folder))
    return (f"You left the table before the end. The game so far is in {where}.\n"
            f"Check the part played with: {silkroad_command()} audit {where}\n"
            f"Resume it with: {resume_hint(folder)}")


def series_of(session: NetSession) -> SeriesRecord | None:
    """The series this seat's game belongs to (``series.json`` in its game folder), when
    it is one: more than one game, or a game after the first.  A damaged file is said on
    stderr and shown as no series (the game's own result stands)."""
    if session.folder is None:
        return None
    try:
        record = read_series(session.folder)
    except StoreError as exc:
        print(f"silkroad: {exc}", file=sys.stderr)
        return None
    if record is None or not record.games:
        return None
    if len(record.games) < 2 and record.games[-1].game_no < 2:
        return None
    return record


def finish_report(session: NetSession, target: Path, seed: int | None, wall: float,
                  as_json: bool, *, headless: bool, quit_early: bool, prog: str) -> int:
    """Copy the transcript, audit it, print the result and the verdict; return the exit
    code (1 if the audit finds the game unfair)."""
    problem = None
    if session.stopped is not None:
        problem = session.describe_stop(session.stopped)
    elif session.error is not None:
        problem = session.error
    outcome = session.outcome
    source = outcome.transcript if outcome is not None else None
    if source is None and session.stopped is not None:
        source = session.stopped.export  # the game reached its end, but not every seat closed
    copied: Path | None = None
    if source is not None and source.exists():
        try:
            # 0600, atomically: the transcript holds what only this seat was sent
            write_private(target, source.read_bytes())
            copied = target
        except OSError as exc:
            print(f"{prog}: cannot write the transcript {target}: {exc.strerror or exc}; "
                  f"it is still at {source}", file=sys.stderr)
            copied = source
    if problem is not None:
        print(f"{prog}: {problem}", file=sys.stderr)
        if copied is not None:
            cmd, q = silkroad_command(), shlex.quote(str(copied))
            print(f"{prog}: the game reached its end; its transcript is {copied} "
                  f"('{cmd} audit {q}' says which seats acknowledged the end)",
                  file=sys.stderr)
        if session.folder is not None:
            print(f"{prog}: this seat's record is in {session.folder} "
                  f"(resume with: {resume_hint(session.folder)})", file=sys.stderr)
        return EXIT_FAIL
    s = session.state
    if s.final is None:
        if quit_early:
            print(left_line(session))
            return EXIT_OK
        print(f"{prog}: the game stopped before the end", file=sys.stderr)
        return EXIT_FAIL
    names = session.names
    series = series_of(session)
    table = score_table(s)
    win = winners(s)
    # the end screen audited the transcript already (the copy has the very same bytes)
    audit: dict[str, Any] | None = dict(session.verdict) if session.verdict else None
    if audit is None and copied is not None:
        if not headless:
            # the player at the table gets the verdict too (a headless run: in its JSON)
            print("Auditing the transcript (every signature, proof and rule)…", flush=True)
        audit = audit_summary(copied)
    if as_json:
        out = {
            "seed": seed,
            "players": s.players,
            "variant": "reverse" if s.board.reverse else "normal",
            "names": names,
            "kinds": [x.kind for x in session.seats],
            "seat": session.seat,
            "scores": [
                {"seat": ln.seat, "name": names[ln.seat], "total": ln.total, "money": ln.money,
                 "goods": ln.goods, "per_colour": dict(zip(COLOURS, ln.per_colour, strict=True)),
                 "majorities": [COLOURS[c] for c in ln.majorities]}
                for ln in table
            ],
            "winners": [names[p] for p in win],
            "wall_time_s": round(wall, 3),
            "transcript": str(copied) if copied else None,
            "audit": audit,
            "verdict": audit["verdict"] if audit else None,
        }
        if series is not None:
            out["series"] = series.to_json()
        print(json.dumps(out))
        return EXIT_OK if audit is None or audit["exit_code"] == 0 else EXIT_FAIL
    if headless:
        print(f"{s.players} peers · {wall:.1f} s")
        for ln in sorted(table, key=lambda x: -x.total):
            star = "  ★ winner" if ln.seat in win else ""
            print(f"  {names[ln.seat]:<8} {ln.total:>4}  (money {ln.money}, goods {ln.goods})"
                  f"{star}")
    if copied is not None:
        cmd, q = silkroad_command(), shlex.quote(str(copied))
        print(f"Transcript: {copied}  ({cmd} audit {q} · {cmd} replay {q})")
    if series is not None:
        print(series.line())
    if audit is not None:
        print(f"Audit: {audit['text']}")
        return EXIT_OK if audit["exit_code"] == 0 else EXIT_FAIL
    return EXIT_OK
