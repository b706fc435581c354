"""Keeping a game's long-lived objects out of the garbage collector's walks, process-wide.

Why: a table's crypto steps leave thousands of long-lived containers (decoded decks,
proofs, log entries), and by a game's end a seat's process holds about a million objects;
with them tracked, a full collection walks them all: 50 ms pauses in the middle of a game
with six peers in one process, 0.65 s of a 1.1 s verdict at its end (the final audit's own
allocations trigger one).  :func:`gc.freeze` stops the walks (reference counting still
frees what dies; only cyclic garbage waits).

The freeze is one switch for the whole process, and several holders may want it at once
(the tables of a process, a seat's final audit): each holds it with :func:`held` for as
long as it needs it, and the objects are unfrozen when the last holder lets go, so a
process playing many games still frees each one.  :func:`settle` freezes what is alive now
(a table calls it after each crypto step).  Used on the event loop's thread only.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

_holders = 0


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Keep what :func:`settle` froze (and what is alive now) frozen within the block;
    unfrozen when the last holder leaves."""
    global _holders
    _holders += 1
    gc.freeze()
    try:
        yield
    finally:
        _holders -= 1
        if _holders == 0:
            gc.unfreeze()


def settle() -> None:
    """Freeze everything alive now (within :func:`held`: the holder's unfreeze frees it)."""
    gc.freeze()
