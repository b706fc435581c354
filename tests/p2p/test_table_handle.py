"""The table handle the CLI follows (p2p.handle): empty before the table exists, then the
player's view, links, progress and whom the table waits for; step subscribers are a list
(a hook set on the table before is kept), and the result is on the handle at the end."""

from __future__ import annotations

from pathlib import Path

import pytest
from table_kit import LAM, run

from engine.actions import Action
from engine.state import Phase
from p2p.front_door import TableHandle
from p2p.handle import OpProgress
from p2p.local_table import run_local_game
from p2p.table import LockstepTable


def test_an_unattached_handle_is_empty() -> None:
    h = TableHandle()
    assert not h.ready and h.seat is None and h.state() is None and h.view() is None
    assert h.hand() == {} and h.links() == {} and h.progress() is None
    assert h.waiting_for() is None and h.abandon("x") is False and not h.done


@pytest.mark.timeout(120)
def test_a_handle_follows_a_whole_game(tmp_path: Path) -> None:
    handle = TableHandle()
    seen: dict[str, list[object]] = {"a": [], "b": [], "hook": [], "links": [],
                                     "progress": [], "view": []}
    ready: list[int | None] = []
    handle.when_ready(lambda: ready.append(handle.step))

    def a(action: Action) -> None:
        seen["a"].append(action)
        seen["links"].append(handle.links())
        view = handle.view()
        assert view is not None
        seen["view"].append(set(view.hand) <= set(view.state.goods[0]))
        op = handle.progress()
        if op is not None:
            seen["progress"].append(op)

    handle.subscribe(a)
    stop_b = handle.subscribe(lambda action: seen["b"].append(action))

    def hook(t: LockstepTable, action: Action) -> None:  # set before the handle attaches
        seen["hook"].append(action)
        if len(seen["hook"]) == 5:
            stop_b()

    def on_tables(tables: list[LockstepTable]) -> None:
        tables[0].on_step = hook

    async def body() -> object:
        return await run_local_game(3, "random", 5, "audit", tmp_path, lam=LAM, audit=False,
                                    bot_processes=False, on_tables=on_tables, handle=handle)

    res = run(body, timeout=110)
    assert ready == [0]  # attached before the first step
    assert handle.ready and handle.seat == 0 and handle.done
    assert seen["a"] == seen["hook"] and len(seen["a"]) > 20
    # the hook runs first: it unsubscribed b during the fifth step, before b saw it
    assert seen["b"] == seen["a"][:4]
    assert all(seen["view"])
    assert any(links == {1: True, 2: True} for links in seen["links"])
    assert all(isinstance(op, OpProgress) for op in seen["progress"])
    state = handle.state()
    assert state is not None and state.phase == Phase.OVER
    assert handle.result is not None and handle.result.state_hash == state.hash()
    assert handle.folder is not None and (handle.folder / "meta.json").exists()
    assert handle.waiting_for() is None and handle.abandon("late") is False
    assert res is not None
