"""A hosted table's watch hub across a series (real sockets on 127.0.0.1, bot processes).

``HostedTable`` opens one hub per game: a watcher watches one game to its end and leaves
with that game's file; once a game is over its hub refuses newcomers saying so; the next
game's hub serves the next game (its own id and hash)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from p2p.front_door import HostedTable, WatchError, WatchResult, headless_agent, watch_table
from p2p.handle import TableHandle
from p2p.judge.game_audit import CERTIFIED, audit_game
from p2p.table import TableResult

LIMIT = 60.0


async def _watched_game(hosted: HostedTable, transcript: Path
                        ) -> tuple[TableResult, WatchResult]:
    """Bots fill the lobby; a watcher comes while it fills (it is told the game at the
    start); the host's seat plays; both end."""
    came = asyncio.Event()
    hosted.on_watchers = lambda n: came.set() if n else None
    watching = asyncio.ensure_future(watch_table(("127.0.0.1", hosted.port), code=None,
                                                 timeout=LIMIT, transcript=transcript,
                                                 every=0.5))
    await asyncio.wait_for(came.wait(), LIMIT)
    await hosted.wait_full(LIMIT)
    setup = await hosted.start()
    result = await hosted.play(setup, TableHandle(), headless_agent("heuristic", 1))
    return result, await asyncio.wait_for(watching, LIMIT)


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_each_game_of_a_series_is_watched_by_its_own_hub(tmp_path: Path) -> None:
    async def scenario() -> tuple[list[TableResult], list[WatchResult], str]:
        hosted = HostedTable(name="watched series", seats=3, player="Host",
                             root=tmp_path / "host", shuffle="audit", interface="127.0.0.1",
                             bots=2)
        try:
            await hosted.open()
            first, w1 = await _watched_game(hosted, tmp_path / "g1.silkroad")
            # game 1 is over: its hub refuses a newcomer, saying so
            with pytest.raises(WatchError) as late:
                await watch_table(("127.0.0.1", hosted.port), code=None, timeout=5,
                                  transcript=None)
            assert await hosted.next_game() == 2
            second, w2 = await _watched_game(hosted, tmp_path / "g2.silkroad")
            return [first, second], [w1, w2], str(late.value)
        finally:
            await hosted.close()

    results, watched, late = asyncio.run(asyncio.wait_for(scenario(), 380))
    assert "the game is over" in late, late
    assert results[0].state_hash != results[1].state_hash
    for result, w in zip(results, watched, strict=True):
        assert w.seen_to_end and w.ended == "the game ended", w.ended
        assert w.report.status == CERTIFIED, str(w.report)
        assert w.report.final_hash == result.state_hash
        assert w.transcript is not None
        kept = audit_game(w.transcript)
        assert kept.status == CERTIFIED and kept.final_hash == result.state_hash
    assert watched[0].info.game_id != watched[1].info.game_id
    assert watched[1].info.params.game_no == 2
