"""Audit benchmark: wall time of ``silkroad audit`` on one game, with 1, 2, … worker processes.

The audit of a 6-player game is dominated by independent proof checks (the DLEQ proofs of
the withdraw blindings and the batched PET share proofs), which crypto.parallel spreads
over worker processes (``with crypto.parallel.workers(n)``; 1 = everything in this process,
the serial path). Each figure is the wall time of the whole audit of the file (reading,
signatures, every proof, decryption, engine replay), pool start-up included, the best of
``--repeat`` runs, with the CPU seconds spent here and in the workers; the verdicts of
every worker count are printed too, and must be identical.

Every figure above is a cold audit, as ``silkroad audit FILE`` in a new process: the memory
of passed checks (:mod:`crypto.remembered`) is emptied first, and after a game played here
the audits run in a new process indeed (the game's heap would cost them its garbage
collection). Without ``--transcript`` a 6-seat game of bots (verified shuffles, as
``silkroad play``) is played first in a temporary folder, which takes about a minute on two
cores; seat 0 plays in this process and audits its folder ahead as the game goes, as a
seat's table screen does (:mod:`p2p.audit_ahead`), so the bench also times the audit at
the game's end (``warm``) -- from the moment seat 0's table wrote its transcript (right
after the last closing acknowledgement) to the verdict. Wired to ``silkroad bench audit``.
The figures depend on the machine and its load: say which.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from crypto import parallel, remembered
from crypto import shuffle as sh
from p2p.audit_ahead import AuditAhead
from p2p.handle import TableHandle
from p2p.judge.game_audit import audit_game, summary
from p2p.local_table import run_local_game


def make_game(folder: Path, players: int = 6, seed: int = 1, pace: float = 0.0
              ) -> tuple[Path, dict[str, Any]]:
    """Play one game of bot peers (seats 1… each in its own process, seat 0 here, audited
    ahead as a seat's screen does: :class:`p2p.audit_ahead.AuditAhead`); its transcript, and
    the figures of the verdict at its end (``warm``).  ``pace``: seconds each bot waits
    before a move (people think; bots alone leave the passes no time)."""

    async def play() -> tuple[Path, dict[str, Any]]:
        handle = TableHandle()
        ahead = AuditAhead(None).follow(handle)
        res = await run_local_game(players, "heuristic", seed, "verified", folder,
                                   lam=sh.DEFAULT_LAMBDA, audit=False, bot_processes=True,
                                   handle=handle, pace=pace)
        report = await ahead.audit(res.transcript)
        warm = {"wall_s": ahead.timing["verdict_s"],
                "passes": ahead.passes,
                "steps": ahead.steps, "verdict": summary(report).get("status"), **ahead.timing,
                "remembered": remembered.stats()}
        return Path(res.transcript), warm

    return asyncio.run(play())


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def time_audit(path: Path, processes: int) -> tuple[dict[str, float], dict[str, Any]]:
    """One audit of ``path`` with ``processes`` checking processes: wall seconds, CPU seconds
    of this process and of the workers (counted once they have exited), and the summary.
    On a machine others are loading, the CPU split shows what the wall time cannot.  It
    starts cold: nothing remembered (:mod:`crypto.remembered`), as in a new process."""
    remembered.forget()
    t0, c0, w0 = time.perf_counter(), time.process_time(), _children_cpu()
    with parallel.workers(processes):
        report = audit_game(path)
    figures = {"wall_s": time.perf_counter() - t0, "cpu_here_s": time.process_time() - c0,
               "cpu_workers_s": _children_cpu() - w0}
    return {k: round(v, 3) for k, v in figures.items()}, summary(report)


def run(path: Path, counts: list[int], repeat: int) -> dict[str, Any]:
    """Audit ``path`` with every worker count; JSON-able figures and verdicts."""
    out: dict[str, Any] = {"transcript": str(path), "cores": os.cpu_count(), "runs": {}}
    verdicts = {}
    for n in counts:
        best: dict[str, float] | None = None
        summ: dict[str, Any] = {}
        for _ in range(repeat):
            figures, summ = time_audit(path, n)
            if best is None or figures["wall_s"] < best["wall_s"]:
                best = figures
        verdicts[n] = {k: summ.get(k) for k in ("fair", "status", "text", "culprit", "rule",
                                                 "final_hash")}
        out["runs"][str(n)] = {**(best or {}), "verdict": summ.get("status", summ.get("fair"))}
    out["identical_verdicts"] = len({json.dumps(v, sort_keys=True) for v in verdicts.values()}) == 1
    out["target_s"] = 5.0
    return out


def _run_fresh(path: Path, workers: str, repeat: int) -> dict[str, Any]:
    """:func:`run` in a new process, as ``silkroad audit FILE`` runs: the process that
    played the game holds its heap (a million objects), whose garbage collection would
    be timed with the cold audits."""
    out = subprocess.run([sys.executable, "-m", "bench.audit_bench", "--transcript", str(path),
                          "--workers", workers, "--repeat", str(repeat), "--json"],
                         check=True, capture_output=True, text=True)
    res: dict[str, Any] = json.loads(out.stdout)
    return res


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``--transcript PATH``, ``--workers 1,2``, ``--repeat K``, ``--json``."""
    ap = argparse.ArgumentParser(prog="python -m bench.audit_bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--transcript", type=Path, default=None,
                    help="a game.silkroad to audit (default: play a 6-seat game first)")
    ap.add_argument("--workers", default=f"1,{max(2, os.cpu_count() or 1)}",
                    help="comma-separated numbers of checking processes (default 1,<cores>)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per figure (the best counts)")
    ap.add_argument("--pace", type=float, default=0.0,
                    help="seconds each bot waits before a move in the played game (default "
                    "0; a person's pace leaves the audit ahead time to keep up)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    try:
        counts = [int(x) for x in a.workers.split(",") if x.strip()]
    except ValueError:
        ap.error("--workers takes numbers such as 1,2")
    if not counts or min(counts) < 1 or a.repeat < 1:
        ap.error("--workers and --repeat take positive numbers")
    with tempfile.TemporaryDirectory(prefix="silkroad-audit-bench-") as tmp:
        path = a.transcript
        if path is None:
            print("playing a 6-seat game to audit…", file=sys.stderr)
            path, warm = make_game(Path(tmp), pace=a.pace)
            res = _run_fresh(path, a.workers, a.repeat)
            res["warm"] = warm
        else:
            res = run(path, counts, a.repeat)
    if a.json:
        print(json.dumps(res, indent=2))
        return 0
    print(f"audit bench: {res['transcript']} ({res['cores']} cores; target "
          f"{res['target_s']} s)")
    for n, r in res["runs"].items():
        print(f"  {n} process{'es' if n != '1' else ''}: {r['wall_s']:6.2f} s wall   "
              f"cpu {r['cpu_here_s']:.2f} s here + {r['cpu_workers_s']:.2f} s in workers   "
              f"({r['verdict']})")
    if "warm" in res:
        w = res["warm"]
        print(f"  from the transcript written to the verdict (audited ahead, 1 process): "
              f"{w['wall_s']:6.2f} s wall   ({w['verdict']}; {w['passes']} passes "
              f"over {w['steps']} steps; {w['remembered']['hits']} checks from memory; "
              f"{w['wait_for_pass_s']:.2f} s waiting for the pass that ran at the end, "
              f"{w['final_audit_s']:.2f} s the audit of the file)")
    print("  verdicts identical: " + ("yes" if res["identical_verdicts"] else "NO"))
    return 0 if res["identical_verdicts"] else 1


if __name__ == "__main__":
    sys.exit(main())
