"""A joiner checks the host's rotated first leader against its own series record
(p2p/lobby/series.py ``rotation_refusal``): the seat after the previous game's first leader
leads first, and a host that keeps the lead is refused with the reason, on real sockets
(127.0.0.1)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from p2p.front_door import HostedTable, JoiningSeat, RotationRefused
from p2p.lobby.series import NextGame, SeriesRecord, rotation_refusal

LIMIT = 30.0
NAMES = ["Host", "Bot", "Ann"]
GAME_1 = bytes(range(32))


def _played_one(first_leader: int | None) -> SeriesRecord:
    record = SeriesRecord("rotation")
    record.add(1, GAME_1, NAMES, [0], first_leader)
    return record


def test_the_seat_after_the_previous_first_leader_is_accepted() -> None:
    record = _played_one(1)
    assert rotation_refusal(record, 2, 2, NAMES) is None
    assert rotation_refusal(_played_one(2), 2, 0, NAMES) is None  # round the table
    # the previous leader unknown (None): the coin picks again, as the host does
    assert rotation_refusal(_played_one(None), 2, None, NAMES) is None
    # a seat that did not play the previous game takes the host's word: it cannot know
    assert rotation_refusal(SeriesRecord(), 2, 1, NAMES) is None
    assert rotation_refusal(record, 3, 1, NAMES) is None
    assert rotation_refusal(record, 1, None, NAMES) is None


def test_a_kept_or_skipped_lead_is_refused_with_the_reason() -> None:
    record = _played_one(1)
    kept = rotation_refusal(record, 2, 1, NAMES)
    assert kept is not None
    assert "seat 1 (Bot)" in kept and "began with Bot" in kept and "seat 2 (Ann)" in kept
    assert rotation_refusal(record, 2, 0, NAMES) is not None  # skipped back to the host
    assert rotation_refusal(record, 2, None, NAMES) is not None  # "the coin" instead


class KeptLead(NextGame):
    """A host that does not rotate: game k's first leader is game k-1's again."""

    def first_leader(self, players: int) -> int | None:
        return self.previous_leader


@pytest.mark.timeout(120)
def test_a_joiner_refuses_a_host_that_keeps_the_first_lead(tmp_path: Path) -> None:
    async def scenario() -> None:
        hosted = HostedTable(name="rotation", seats=3, player="Host", root=tmp_path / "host",
                             shuffle="audit", interface="127.0.0.1", bots=1,
                             bot_names=["Bot"])
        ann = JoiningSeat(name="Ann", interface="127.0.0.1")
        try:
            await hosted.open()
            await ann.open()
            assert hosted._listener is not None
            # game 1 was played by these three keys, Bot (seat 1) leading first: both the
            # host's record and Ann's say so (the game itself is test_series.py's)
            order = (hosted._listener.identity.public, hosted._plans[0].identity.public,
                     ann.listener.identity.public)
            hosted.series.add(1, GAME_1, NAMES, [0], 1)
            ann.series = _played_one(1)
            hosted._next_from = KeptLead(2, order, 1)
            assert await hosted.next_game() == 2
            joining = asyncio.create_task(ann.join(("127.0.0.1", hosted.port), code=None,
                                                   timeout=LIMIT, again=True))
            await hosted.wait_full(LIMIT)
            setup = await hosted.start()
            assert setup.params.game_no == 2 and setup.params.first_leader == 1
            assert [e.name for e in setup.roster] == NAMES  # Ann kept her seat
            with pytest.raises(RotationRefused) as refused:
                await joining
            assert "seat 1 (Bot)" in refused.value.reason
            assert "next seat, seat 2 (Ann)" in refused.value.reason
        finally:
            await ann.close()
            await hosted.close()

    asyncio.run(asyncio.wait_for(scenario(), 100))
