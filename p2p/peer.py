"""One table peer as its own process: ``python -m p2p.peer FOLDER [--bot KIND] [--seed N]``.

``FOLDER`` is a game folder (:mod:`p2p.store`) holding ``meta.json`` (roster with addresses,
params, our seat) and ``secrets.bin`` (our identity and ElGamal key).  If the folder already
holds a transcript the peer *resumes* — so restarting a killed peer is simply running the
same command again.  Progress is printed as JSON lines (``started``, ``done`` with the final
state hash and scores, or ``stopped`` naming the culprit) for tests and the CLI.

``--pace S`` makes the bot wait S seconds before each move (a person at the table can follow
the log); ``--watch-stdin`` makes the peer leave when its stdin closes — how
:mod:`p2p.peer_process` keeps bot children from outliving the player's process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

from engine.bots import make_bot

from .netgame import resume_folder
from .store import FolderInUse, GameStore, StoreError
from .table import TableStopped
from .table.pacing import paced


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


async def _leave_when_orphaned(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` once stdin reaches end of file (the parent closed it or died)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while await reader.read(4096):
        pass
    task.cancel()


async def run_peer(folder: Path, bot: str, seed: int, abandon: float, pace: float = 0.0,
                   watch_stdin: bool = False) -> int:
    store = GameStore(folder)
    _roster, _params, seat, _gid = store.load_meta()
    emit(event="started", seat=seat, resumed=store.transcript_path.exists())
    agent = make_bot(bot, seed * 1000 + seat)
    play = asyncio.ensure_future(resume_folder(
        folder, agent, paced(agent, pace) if pace > 0 else None, abandon_timeout=abandon))
    watch = asyncio.ensure_future(_leave_when_orphaned(play)) if watch_stdin else None
    try:
        result = await play
    except asyncio.CancelledError:
        emit(event="stopped", seat=seat, culprit=None, rule="left",
             detail="the parent process closed our stdin")
        return 3
    except TableStopped as exc:
        # a stop at the end of the game still wrote the export: say where
        emit(event="stopped", seat=seat, culprit=exc.culprit, rule=exc.rule, detail=exc.detail,
             export=None if exc.export is None else str(exc.export))
        return 1
    except FolderInUse as exc:  # a local mistake (two processes, one seat), not a cheat
        emit(event="stopped", seat=seat, culprit=None, rule="folder-in-use", detail=str(exc))
        return 1
    except StoreError as exc:  # a folder this peer must not play from (e.g. a wrong λ)
        emit(event="stopped", seat=seat, culprit=None, rule="bad-folder", detail=str(exc))
        return 1
    finally:
        if watch is not None:
            watch.cancel()
    emit(event="done", seat=seat, hash=result.state_hash.hex(), scores=result.scores,
         steps=result.steps, export=str(result.export),
         timings=[list(t) for t in result.step_times], applied=result.applied_at,
         decided=sorted(result.decided_at.items()))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m p2p.peer")
    ap.add_argument("folder", type=Path)
    ap.add_argument("--bot", default="heuristic")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--abandon", type=float, default=120.0)
    ap.add_argument("--pace", type=float, default=0.0, help="seconds before each bot move")
    ap.add_argument("--watch-stdin", action="store_true", help="leave when stdin closes")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR)
    return asyncio.run(run_peer(args.folder, args.bot, args.seed, args.abandon, args.pace,
                                args.watch_stdin))


if __name__ == "__main__":
    sys.exit(main())
