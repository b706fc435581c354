"""The Grand Vizier's marker at a networked table (protocol version 5).

The marker is the withdraw a purchase of one good of the Vizier's colour makes (the same
op, the same arguments: so it is proven by the same plaintext-equality tests and shows
what a purchase shows), by the Vizier's player, then an ``aside`` op that takes the good
out of play.  First the script itself, step by step; then a whole game among real peers
whose bots seek Grand Viziers, audited certified and replayed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from table_kit import finished, play_tables, run

from bench.frugal_bot import FrugalBot
from cli.replay.network import build_net_replay
from engine.actions import Action, Dealt, Move, Seed, TakeTile, Vizier, VizierReveals, Withdrawn
from engine.colours import COLOURS, TOTAL_GOODS
from engine.game import new_game
from engine.rules import apply
from engine.state import BUY, MARKER, GameState, Phase, make_config
from engine.tiles import VIZIER
from engine.view import PlayerView
from p2p.game import VIZIER_MARKER_SINCE, GameParams, game_config
from p2p.judge.game_audit import CERTIFIED, EXIT_FAIR, audit_game
from p2p.net.handshake import PROTOCOL_VERSION
from p2p.protocol import resolution
from p2p.protocol.resolution import OpCall
from p2p.protocol.zones import ZoneMap
from p2p.store import read_export

SILK = COLOURS.index("silk")


@dataclass
class _Result:
    """A completed op as the script sees it (what the transcript would hold)."""

    result: dict[str, Any]
    learned_calls: list[int] = field(default_factory=list)

    def learned(self) -> None:
        self.learned_calls.append(1)


def _at_withdraw(purpose: int) -> tuple[GameState, ZoneMap]:
    """Seat 0 asks the bag for one silk, for ``purpose``, just after the deal."""
    s = new_game(make_config(3))
    apply(s, Seed(bytes(32)))
    apply(s, Dealt())
    zones = ZoneMap(3)
    zones.dealt(3)
    s.actor = 0
    s.pending = (purpose, (SILK,), True)
    s.phase = Phase.WITHDRAW
    return s, zones


def test_the_marker_is_a_purchase_of_one_then_set_aside() -> None:
    buy, _ = _at_withdraw(BUY)
    s, zones = _at_withdraw(MARKER)
    want = OpCall("withdraw", (0, [["silk", 1]], False))
    assert next(resolution.resolve(buy, ZoneMap(3), lambda h: None, False)) == want
    script = resolution.resolve(s, zones, lambda h: None, False)
    assert next(script) == want, "the very op (and arguments) a purchase of one silk runs"
    bag_pos = 5
    handle = zones.bag[bag_pos]
    aside = script.send(_Result({"taken": [[bag_pos]]}))
    assert aside == OpCall("aside", (0, [3])), "seat 0's new token, at the end of its hand"
    assert zones.hands[0] == [0, 1, 2, handle]
    with pytest.raises(StopIteration) as done:
        script.send(_Result({"party": 0, "aside_positions": [0]}))
    assert done.value.value == Withdrawn((handle,))
    assert zones.hands[0] == [0, 1, 2] and zones.aside == [handle]
    assert handle not in zones.bag
    apply(s, done.value.value)
    assert s.set_aside == [SILK] and handle not in s.bag and s.goods[0] == [0, 1, 2]
    zones.check(s)
    # the op a transcript must hold there: anything else is named as a mismatch
    assert aside.mismatch("return", [0, [3]]) is not None
    assert aside.mismatch("aside", [0, [3]]) is None


def test_no_silk_in_the_bag_means_no_aside_op() -> None:
    s, zones = _at_withdraw(MARKER)
    script = resolution.resolve(s, zones, lambda h: None, False)
    next(script)
    with pytest.raises(StopIteration) as done:
        script.send(_Result({"taken": [[]]}))
    assert done.value.value == Withdrawn(())
    apply(s, done.value.value)
    assert s.set_aside == [] and zones.aside == []


def test_the_rule_follows_the_protocol_version() -> None:
    assert PROTOCOL_VERSION >= VIZIER_MARKER_SINCE == 5
    for version, marker in ((3, False), (4, False), (5, True)):
        params = GameParams(3, protocol_version=version)
        assert game_config(params).vizier_marker is marker


class VizierSeeker:
    """The frugal bot, but it takes every Grand Vizier it is offered, always names a
    colour, and steers the caravan towards cities that still have one: so the game has
    Viziers (the layout comes from a fresh coin, whatever the seed)."""

    def __init__(self, seed: int) -> None:
        self.inner = FrugalBot(seed)

    def choose(self, view: PlayerView, legal: list[Action]) -> Action:
        s = view.state
        tiles = s.board.tileset.tiles

        def has(city: int) -> bool:
            return any(tiles[t].kind == VIZIER for t in s.layout[city])

        for a in legal:
            if isinstance(a, Vizier) or (isinstance(a, TakeTile)
                                         and tiles[a.tile].kind == VIZIER):
                return a
        moves = [a for a in legal if isinstance(a, Move)]
        for near in (has, lambda c: any(has(n) for n in s.board.succ[c])):
            for a in moves:
                if near(a.city):
                    return a
        return self.inner.choose(view, legal)


@pytest.mark.timeout(200)
def test_a_version_5_game_with_viziers_audits_certified_and_replays(tmp_path: Path) -> None:
    agents = {p: VizierSeeker(40 + p) for p in range(3)}
    _peers, results = run(lambda: play_tables(tmp_path, 3, seed=4, agents=agents),
                          timeout=150)
    res = finished(results)
    assert len({r.state_hash for r in res}) == 1, "peers disagree on the final state"
    export = res[0].export
    assert export is not None
    assert read_export(export).params.protocol_version == PROTOCOL_VERSION >= 5

    report = audit_game(export, record=True)
    assert report.status == CERTIFIED and report.exit_code == EXIT_FAIR, str(report)
    assert report.final_hash == res[0].state_hash and report.scores == res[0].scores
    replay = report.replay
    assert replay is not None
    final = replay.state
    assert final.set_aside, "a Grand Vizier set a good aside"
    assert sum(map(len, final.goods)) + len(final.bag) + len(final.set_aside) == TOTAL_GOODS
    # one aside op per good set aside, each right after a one-good withdraw by the same seat
    names = [ev.name for ev in replay.ops]
    asides = [i for i, n in enumerate(names) if n == "aside"]
    assert len(asides) == len(final.set_aside)
    for k, i in enumerate(asides):
        label = COLOURS[final.set_aside[k]]
        withdraw, aside = replay.ops[i - 1], replay.ops[i]
        assert withdraw.name == "withdraw" and withdraw.args[1:] == [[[label, 1]], False]
        assert withdraw.args[0] == aside.args[0], "the Vizier's player takes and sets aside"
        assert aside.zones[-2] == [COLOURS[c] for c in final.set_aside[: k + 1]]
    # every revealed Vizier is followed by the bag's answer for its marker
    acts, states = replay.applied, replay.states  # states[k + 1]: after acts[k]
    for i, a in enumerate(acts):
        if isinstance(a, VizierReveals):
            asked = states[i + 1].pending
            assert asked is not None and asked[0] == MARKER
            nxt = acts[i + 1]
            assert isinstance(nxt, Withdrawn) and len(nxt.handles) <= 1
            got = list(asked[1][: len(nxt.handles)])
            assert states[i + 2].set_aside == states[i + 1].set_aside + got

    model = build_net_replay(export)
    assert model.complete and len(model.states) == report.steps + 1
    assert model.states[-1].hash() == res[0].state_hash
