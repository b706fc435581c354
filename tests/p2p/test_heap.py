"""The process-wide freeze of long-lived objects (p2p.heap): held by a table while it plays
and by a seat's final audit, released only when the last holder lets go."""

from __future__ import annotations

import gc

from p2p import heap


def test_the_heap_is_unfrozen_when_the_last_holder_leaves() -> None:
    assert gc.get_freeze_count() == 0
    table = heap.held()
    table.__enter__()  # a table playing
    long_lived = [[k] for k in range(2000)]
    heap.settle()  # after a crypto step
    frozen = gc.get_freeze_count()
    assert frozen >= len(long_lived)
    with heap.held():  # the final audit starts before the table's run has ended
        table.__exit__(None, None, None)
        assert gc.get_freeze_count() >= frozen  # still frozen: the audit holds it
    assert gc.get_freeze_count() == 0  # the last holder left: everything collectable again
