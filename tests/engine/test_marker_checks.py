"""The simulator's soak-test checker (engine/simulate.py) knows the Grand Vizier's marker:
the good set aside must be the colour the engine recorded, and goods set aside still count
towards the 75."""

from __future__ import annotations

from engine_kit import SILK, SPICE, bag_of, started

from engine.actions import Withdrawn
from engine.rules import apply
from engine.simulate import _Checker
from engine.state import MARKER, Phase


def _after_marker(colour_of_good: int) -> tuple[_Checker, list[str]]:
    s, d = started(3)
    s.actor, s.phase, s.pending = 0, Phase.WITHDRAW, (MARKER, (SILK,), True)
    a = Withdrawn((bag_of(s, d, colour_of_good)[0],))
    apply(s, a)  # the engine cannot see the colour: the resolver vouches for it
    checker = _Checker(d)
    checker.on_step(s, a)
    return checker, checker.problems


def test_a_true_marker_passes() -> None:
    _, problems = _after_marker(SILK)
    assert problems == []


def test_a_marker_of_another_colour_is_caught() -> None:
    _, problems = _after_marker(SPICE)
    assert problems and "not what was asked" in problems[0]


def test_goods_set_aside_count_towards_the_75() -> None:
    s, d = started(3)
    s.actor, s.phase, s.pending = 0, Phase.WITHDRAW, (MARKER, (SILK,), True)
    a = Withdrawn((bag_of(s, d, SILK)[0],))
    apply(s, a)
    s.set_aside.clear()  # a good gone without the state saying so
    checker = _Checker(d)
    checker.on_step(s, a)
    assert checker.problems and "74 goods" in checker.problems[0]
