"""Bot peers as child processes (``python -m p2p.peer``) for a table on this machine.

Why: a Python process runs on one core.  With every peer of ``silkroad play`` in the
player's process, six peers' signatures, shuffles and proofs queue on one core (a plain
move took ~10 ms, the verified deal and each withdraw several times their one-peer cost);
as separate processes they share every core, exactly as peers on different laptops do.

Each child gets a prepared game folder (:func:`p2p.local_table.prepare_folder`), binds the port
its roster entry names, plays its seat and prints JSON lines (``started``, then ``done``
with its final state hash, or ``stopped``).  A child watches its stdin and leaves when it
closes, so children never outlive a parent that was killed; its log goes to ``peer.log``
in its folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

GRACE = 1.0
"""Seconds a child gets to leave after its stdin closed before it is terminated (its
transcript is crash-safe, so a termination loses nothing)."""


@dataclass
class PeerProcess:
    """One running child peer and the JSON events it printed so far."""

    seat: int
    folder: Path
    proc: asyncio.subprocess.Process
    log_file: BinaryIO
    events: list[dict[str, Any]] = field(default_factory=list)
    reader: asyncio.Task[None] | None = None

    @property
    def last(self) -> dict[str, Any] | None:
        return self.events[-1] if self.events else None


async def spawn(seat: int, folder: Path, bot: str, seed: int, *, pace: float = 0.0,
                abandon: float = 120.0) -> PeerProcess:
    """Start ``python -m p2p.peer FOLDER`` for a prepared folder (see the module doc)."""
    # private like every file of a seat's folder (p2p.store); closed by stop() / wait_all()
    log_file = os.fdopen(os.open(folder / "peer.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                                 0o600), "ab")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "p2p.peer", str(folder), "--bot", bot, "--seed", str(seed),
        "--pace", repr(pace), "--abandon", repr(abandon), "--watch-stdin",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=log_file,
        limit=1 << 24)
    child = PeerProcess(seat, folder, proc, log_file)
    child.reader = asyncio.get_running_loop().create_task(_read_events(child))
    return child


async def _read_events(child: PeerProcess) -> None:
    """Collect the child's JSON lines as they come (a full pipe would block the child)."""
    out = child.proc.stdout
    assert out is not None
    while line := await out.readline():
        if line.startswith(b"{"):
            with contextlib.suppress(ValueError):
                child.events.append(json.loads(line))


def final_event(child: PeerProcess) -> dict[str, Any]:
    """The child's ``done``/``stopped`` report, or ``{"event": "lost"}`` if it printed none."""
    ev = child.last
    if ev is not None and ev.get("event") in ("done", "stopped"):
        return ev
    return {"event": "lost", "seat": child.seat, "returncode": child.proc.returncode,
            "detail": f"the peer process exited without a report (see "
                      f"{child.folder / 'peer.log'})"}


async def watch(children: list[PeerProcess],
                on_early_exit: Callable[[PeerProcess, dict[str, Any]], None]) -> None:
    """Call ``on_early_exit(child, final_event)`` for each child that exits without
    finishing its game (crashed, stopped, killed); runs until every child exited."""
    async def one(c: PeerProcess) -> None:
        await c.proc.wait()
        if c.reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(c.reader), GRACE)
        ev = final_event(c)
        if ev["event"] != "done":
            on_early_exit(c, ev)

    await asyncio.gather(*(one(c) for c in children))


async def wait_all(children: list[PeerProcess], timeout: float | None) -> list[dict[str, Any]]:
    """Wait for every child to exit (``timeout`` s in all, None: no limit) and return each
    one's final event (:func:`final_event`); a child still running then is stopped."""
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    out = []
    for c in children:
        try:
            await asyncio.wait_for(c.proc.wait(), None if deadline is None
                                   else max(0.0, deadline - loop.time()))
            if c.reader is not None:
                await asyncio.wait_for(c.reader, GRACE)
        except TimeoutError:
            await stop(c)
        out.append(final_event(c))
        _close_log(c)
    return out


async def stop(child: PeerProcess) -> None:
    """Ask a child to leave (close its stdin), then terminate, then kill it."""
    proc = child.proc
    if proc.returncode is None:
        if proc.stdin is not None:
            with contextlib.suppress(Exception):
                proc.stdin.close()
        for signal_it in (None, proc.terminate, proc.kill):
            if signal_it is not None:
                with contextlib.suppress(ProcessLookupError):
                    signal_it()
            try:
                await asyncio.wait_for(proc.wait(), GRACE)
                break
            except TimeoutError:
                continue
    if child.reader is not None and not child.reader.done():
        child.reader.cancel()
        with contextlib.suppress(BaseException):
            await child.reader
    _close_log(child)


def _close_log(child: PeerProcess) -> None:
    with contextlib.suppress(Exception):
        child.log_file.close()
