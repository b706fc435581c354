"""One table peer as its own process: ``python -m p2p.peer FOLDER [--bot KIND] [--seed N]``.

``FOLDER`` is a game folder (:mod:`p2p.store`) holding ``meta.json`` (roster with addresses,
params, our seat) and ``secrets.bin`` (our identity and ElGamal key).  If the folder already
holds a transcript the peer *resumes* — so restarting a killed peer is simply running the
same command again.  Progress is printed as JSON lines (``started``, ``done`` with the final
state hash and scores, or ``stopped`` naming the culprit) for tests and the CLI.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

from crypto import group as g
from engine.bots import make_bot

from .identity import Identity
from .lockstep import TableStopped
from .mesh import RosterEntry
from .netgame import resume_folder
from .store import GameStore, Secrets


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


def prepare_folder(folder: Path, roster: list[RosterEntry], params: Any, seat: int,
                   game_id: bytes, identity: Identity, lam: int = 40) -> GameStore:
    """Write ``meta.json`` and the initial ``secrets.bin`` for one peer's process."""
    store = GameStore(folder)
    store.create(roster, params, seat, game_id, lam)
    store.save_secrets(Secrets(identity.to_bytes(), g.random_scalar(), None))
    return store


async def run_peer(folder: Path, bot: str, seed: int, abandon: float) -> int:
    store = GameStore(folder)
    _roster, _params, seat, _gid = store.load_meta()
    emit(event="started", seat=seat, resumed=store.transcript_path.exists())
    try:
        result = await resume_folder(folder, make_bot(bot, seed * 1000 + seat),
                                     abandon_timeout=abandon)
    except TableStopped as exc:
        emit(event="stopped", seat=seat, culprit=exc.culprit, rule=exc.rule, detail=exc.detail)
        return 1
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
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR)
    return asyncio.run(run_peer(args.folder, args.bot, args.seed, args.abandon))


if __name__ == "__main__":
    sys.exit(main())
