"""Board and tile data files: the default board's facts, and a DataError naming the
problem for every kind of invalid file."""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from engine_kit import PROPERTY
from hypothesis import given
from hypothesis import strategies as st

from engine.board import default_board, default_board_data, load_board, load_board_file
from engine.colours import COLOURS
from engine.errors import DataError
from engine.tiles import (
    BARTERER,
    BUYER,
    CROOK,
    SELLER,
    THIEF,
    TRADER,
    VIZIER,
    load_tileset,
)


def test_default_board_facts() -> None:
    b = default_board()
    assert len(b.cities) == 20
    assert Counter(b.colour) == {0: 9, 1: 9, -1: 2}
    assert all(1 <= len(s) <= 2 for i, s in enumerate(b.succ) if i != b.end)
    printed = {b.cities[i]: (t.kind, t.n) for i, t in enumerate(b.printed) if t is not None}
    assert printed == {
        "Dunhuang": (3, 2), "Koria": (3, 2), "Kashgar": (3, 4), "Merv": (3, 2), "Susia": (3, 4),
    }
    tiles = b.tileset.tiles
    assert [t.id for t in tiles] == list(range(90))
    for back in (0, 1):
        kinds = Counter(t.kind for t in tiles if t.back == back)
        buyers, sellers = (15, 5) if back == 0 else (5, 15)
        assert kinds == {
            BUYER: buyers, SELLER: sellers, TRADER: 12, THIEF: 4, VIZIER: 3, CROOK: 3,
            BARTERER: 3,
        }
    assert sum(1 for t in tiles if t.kind == VIZIER) == 6, "the rule about a 6th Vizier"
    assert default_board().digest == b.digest
    assert default_board(True).digest == b.digest, "the direction is part of the config"


RULES_ARROWS = (
    "Chang'An>Lanzhou Chang'An>Yumen Lanzhou>Dunhuang Yumen>Dunhuang Yumen>Turfan "
    "Dunhuang>Koria Dunhuang>Khotan Turfan>Koria Koria>Kucha Khotan>Yarkand Kucha>Kashgar "
    "Yarkand>Kashgar Kashgar>Samarkand Kashgar>Balkh Samarkand>Bukhara Samarkand>Merv "
    "Balkh>Merv Bukhara>Susia Merv>Susia Merv>Ecbatana Susia>Baghdad Ecbatana>Baghdad "
    "Baghdad>Aleppo Baghdad>Tyre Aleppo>Antioch Tyre>Antioch"
)
ORANGE_TRADERS = (
    "ivory>silk+spice silk>ivory+jewels fruit>jewels+spice jewels>ivory+fruit "
    "spice>silk+fruit ivory>fruit+fruit silk>spice+spice fruit>ivory+ivory jewels>silk+silk "
    "spice>jewels+jewels ivory+silk>jewels+spice+fruit fruit+spice>ivory+silk+jewels"
)
PURPLE_TRADERS = (
    "ivory>silk silk>fruit fruit>jewels jewels>spice spice>ivory ivory>jewels silk>spice "
    "fruit>ivory jewels>silk spice>fruit ivory+fruit>silk+jewels silk+spice>fruit+jewels"
)


def test_default_board_matches_the_rules_text() -> None:
    b = default_board()
    arrows = {(b.cities[a], b.cities[c]) for a, succ in enumerate(b.succ) for c in succ}
    assert arrows == {tuple(x.split(">")) for x in RULES_ARROWS.split()}
    for back, text in ((0, ORANGE_TRADERS), (1, PURPLE_TRADERS)):
        got = Counter(
            "+".join(COLOURS[c] for c in t.give) + ">" + "+".join(COLOURS[c] for c in t.receive)
            for t in b.tileset.tiles
            if t.kind == TRADER and t.back == back
        )
        assert got == Counter(text.split())


def _small() -> dict[str, Any]:
    """A valid minimal board: S -> A -> {B, C} -> E."""
    return {
        "start": "S",
        "end": "E",
        "cities": [
            {"name": "S", "colour": None},
            {"name": "A", "colour": "orange"},
            {"name": "B", "colour": "purple"},
            {"name": "C", "colour": "purple", "printed": {"kind": "exchange", "n": 2}},
            {"name": "E", "colour": None},
        ],
        "arrows": [["S", "A"], ["A", "B"], ["A", "C"], ["B", "E"], ["C", "E"]],
        "no_crook_barterer": ["B", "C"],
        "reverse_no_crook_barterer": ["A"],
    }


def test_small_board_is_valid_both_ways() -> None:
    b = load_board(_small())
    assert b.succ[b.index("A")] == (2, 3)
    r = load_board(_small(), reverse=True)
    assert r.cities[r.start] == "E" and r.succ[r.index("B")] == (1,)
    assert r.no_crook_barterer == (1,)


def _mutate(**changes: Any) -> dict[str, Any]:
    d = copy.deepcopy(_small())
    d.update(changes)
    return d


def _cities(*edit: tuple[int, dict[str, Any]]) -> list[dict[str, Any]]:
    cs = copy.deepcopy(_small()["cities"])
    for i, c in edit:
        cs[i] = c
    return cs


BAD: list[tuple[str, Any, str]] = [
    ("unknown city in an arrow", _mutate(arrows=[["S", "A"], ["A", "Z"], ["A", "C"], ["B", "E"],
                                                   ["C", "E"]]), "unknown city 'Z'"),
    ("unknown start", _mutate(start="Nowhere"), "unknown city 'Nowhere'"),
    ("unknown forbidden city", _mutate(no_crook_barterer=["Q"]), "unknown city 'Q'"),
    ("unknown reverse forbidden city", _mutate(reverse_no_crook_barterer=["Q"]),
     "unknown city 'Q'"),
    ("no arrows onward", _mutate(arrows=[["S", "A"], ["A", "B"], ["A", "C"], ["B", "E"]]),
     "'C' has 0 arrows"),
    ("three arrows onward", _mutate(arrows=[["S", "A"], ["A", "B"], ["A", "C"], ["A", "E"],
                                            ["B", "E"], ["C", "E"]]), "'A' has 3 arrows"),
    ("cycle", _mutate(arrows=[["S", "A"], ["A", "B"], ["B", "C"], ["C", "A"], ["C", "E"]]),
     "cycle"),
    ("unreachable city", _mutate(arrows=[["S", "A"], ["A", "B"], ["B", "E"], ["C", "E"]]),
     "'C' cannot be reached"),
    ("bad colour", _mutate(cities=_cities((1, {"name": "A", "colour": "green"}))),
     "colour 'green'"),
    ("tile city without colour", _mutate(cities=_cities((1, {"name": "A", "colour": None}))),
     "'A' needs a colour"),
    ("start with tiles", _mutate(cities=_cities((0, {"name": "S", "colour": "orange"}))),
     "must have no tiles"),
    ("forbidden city without tiles", _mutate(no_crook_barterer=["E"]), "'E' has no tiles"),
    ("too few tiles", _mutate(tiles={"orange": [{"kind": "thief", "count": 4}],
                                     "purple": [{"kind": "thief", "count": 10}]}),
     "need 5 orange-backed tiles"),
    ("malformed tile: unknown kind", _mutate(tiles={"orange": [{"kind": "wizard"}],
                                                    "purple": []}), "unknown tile kind"),
    ("malformed tile: trader without give",
     _mutate(tiles={"orange": [{"kind": "trader", "receive": ["silk"]}], "purple": []}),
     "malformed field"),
    ("malformed tile: bad goods colour",
     _mutate(tiles={"orange": [{"kind": "buyer", "colour": "gold"}], "purple": []}),
     "unknown goods colour 'gold'"),
    ("malformed tile: exchange n", _mutate(tiles={"orange": [{"kind": "exchange", "n": 0}],
                                                  "purple": []}), "'n' must be"),
    ("malformed tile: per_colour on a trader",
     _mutate(tiles={"orange": [{"kind": "trader", "per_colour": 1}], "purple": []}),
     "per_colour only applies"),
    ("malformed tile: negative count",
     _mutate(tiles={"orange": [{"kind": "thief", "count": -1}], "purple": []}),
     "count must be"),
    ("malformed tile: missing back list", _mutate(tiles={"orange": []}), "missing list 'purple'"),
    ("malformed tile: not an object", _mutate(tiles={"orange": ["thief"], "purple": []}),
     "must be an object"),
    ("printed crook", _mutate(cities=_cities((3, {"name": "C", "colour": "purple",
                                                  "printed": {"kind": "crook"}}))),
     "cannot be a crook"),
    ("printed action without tiles",
     _mutate(cities=_cities((0, {"name": "S", "colour": None, "printed": {"kind": "thief"}}))),
     "no printed action"),
    ("duplicate city", _mutate(cities=_cities((2, {"name": "A", "colour": "purple"}))),
     "appears twice"),
    ("loop arrow", _mutate(arrows=[["S", "A"], ["A", "A"], ["A", "B"], ["A", "C"], ["B", "E"],
                                   ["C", "E"]]), "loop or a duplicate"),
    ("end with arrows", _mutate(arrows=[*_small()["arrows"], ["E", "S"]]), "has arrows onward"),
    ("start equals end", _mutate(end="S"), "start and end must differ"),
    ("no cities", _mutate(cities=[]), "'cities'"),
    ("no arrows", _mutate(arrows=[]), "'arrows'"),
    ("not an object", [], "expected a JSON object"),
]


@pytest.mark.parametrize(("data", "message"), [(d, m) for _, d, m in BAD],
                         ids=[name for name, _, _ in BAD])
def test_invalid_board_names_the_problem(data: Any, message: str) -> None:
    with pytest.raises(DataError) as info:
        load_board(data)
    assert message in str(info.value)


def test_reverse_direction_checks_arrow_counts() -> None:
    """Three arrows *into* a city are fine one way but three arrows onward the other way."""
    d = _mutate(
        cities=[*_small()["cities"][:4], {"name": "D", "colour": "purple"},
                _small()["cities"][4]],
        arrows=[["S", "A"], ["S", "D"], ["A", "B"], ["A", "C"], ["D", "B"], ["C", "B"],
                ["B", "E"]],
    )
    load_board(d)
    with pytest.raises(DataError, match=r"'B' has 3 arrows onward \(reverse\)"):
        load_board(d, reverse=True)


@pytest.mark.parametrize("key", ["no_crook_barterer", "reverse_no_crook_barterer"])
@pytest.mark.parametrize(
    ("value", "message"),
    [(["S"], "'S' has no tiles"), (["Q"], "unknown city 'Q'"), ("A", "must be a list"),
     (5, "must be a list")],
)
def test_both_forbidden_lists_checked_in_both_directions(key: str, value: Any,
                                                         message: str) -> None:
    """A bad list for either direction is reported whichever direction is loaded.
    (Regression: the other direction's list was only name-checked, and a non-list
    crashed with TypeError instead of a DataError.)"""
    d = _mutate(**{key: value})
    for reverse in (False, True):
        with pytest.raises(DataError) as info:
            load_board(d, reverse=reverse)
        assert message in str(info.value)


def test_load_board_file(tmp_path: Path) -> None:
    p = tmp_path / "board.json"
    p.write_text(json.dumps(default_board_data()), encoding="utf-8")
    assert load_board_file(p).digest == default_board().digest
    p.write_text("{not json", encoding="utf-8")
    with pytest.raises(DataError, match="cannot read board file"):
        load_board_file(p)
    with pytest.raises(DataError, match="cannot read board file"):
        load_board_file(tmp_path / "missing.json")


def test_tileset_expansion() -> None:
    ts = load_tileset({"orange": [{"kind": "seller", "per_colour": 2},
                                  {"kind": "thief", "count": 3}],
                       "purple": [{"kind": "trader", "give": ["white"], "receive": ["red"]}]})
    assert [t.id for t in ts.tiles] == list(range(14))
    assert Counter(t.colour for t in ts.tiles if t.kind == SELLER) == dict.fromkeys(range(5), 2)
    assert ts.tiles[-1].give == (0,) and ts.tiles[-1].receive == (4,) and ts.tiles[-1].back == 1


_JUNK: list[Any] = [
    None, 0, 5, -1, 1.5, True, "", "A", "Z", "orange", "green", [], ["A"], [["A", "B"]], {},
    {"kind": "thief"}, {"kind": "trader", "give": ["ivory"], "receive": 3},
    {"kind": "exchange", "n": 3}, {"kind": "seller", "colour": "silk"},
]


def _mutate_once(obj: Any, rng: random.Random) -> Any:
    if isinstance(obj, dict) and obj:
        obj = dict(obj)
        k = rng.choice(list(obj))
        obj[k] = _mutate_once(obj[k], rng) if rng.random() < 0.6 else rng.choice(_JUNK)
        return obj
    if isinstance(obj, list) and obj:
        obj = list(obj)
        i = rng.randrange(len(obj))
        roll = rng.random()
        if roll < 0.5:
            obj[i] = _mutate_once(obj[i], rng)
        elif roll < 0.75:
            obj[i] = rng.choice(_JUNK)
        else:
            del obj[i]
        return obj
    return rng.choice(_JUNK)


@PROPERTY
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_mutated_boards_are_valid_or_a_data_error(seed: int) -> None:
    """Whatever is wrong with a board file, loading it raises DataError (never a crash)."""
    rng = random.Random(seed)
    for _ in range(20):
        d: Any = _small()
        d["tiles"] = {"orange": [{"kind": "thief", "count": 5}],
                      "purple": [{"kind": "seller", "per_colour": 2}]}
        for _ in range(rng.randrange(1, 4)):
            d = _mutate_once(d, rng)
        for reverse in (False, True):
            try:
                load_board(d, reverse=reverse)
            except DataError:
                pass
