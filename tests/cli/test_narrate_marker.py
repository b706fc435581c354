"""The table's log tells the Grand Vizier's marker (docs/rules.md, "The Grand Vizier's
marker"): the good set aside, or that the bag had none of the colour."""

from __future__ import annotations

from cli.table.narrate import Narrator
from engine.actions import Dealt, Seed, Withdrawn
from engine.colours import COLOURS
from engine.game import new_game
from engine.rules import apply
from engine.state import MARKER, GameState, Phase, make_config

JEWELS = COLOURS.index("jewels")


def _marker_step() -> GameState:
    s = new_game(make_config(3))
    apply(s, Seed(bytes(32)))
    apply(s, Dealt())
    s.actor, s.phase, s.pending = 1, Phase.WITHDRAW, (MARKER, (JEWELS,), True)
    return s


def test_the_log_tells_the_good_set_aside() -> None:
    before = _marker_step()
    after = before.copy()
    a = Withdrawn((before.bag[0],))
    apply(after, a)
    lines = Narrator(["Ann", "Bo", "Cy"]).tell(before, a, after)
    assert lines == ["The Grand Vizier is set aside on one jewel from the bag: it leaves "
                     "the game."]


def test_the_log_tells_when_the_bag_has_none() -> None:
    before = _marker_step()
    after = before.copy()
    apply(after, Withdrawn(()))
    lines = Narrator(["Ann", "Bo", "Cy"]).tell(before, Withdrawn(()), after)
    assert lines == ["The bag has no jewels left: the Grand Vizier sets none aside."]
