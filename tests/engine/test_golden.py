"""Golden playthroughs (tests/golden/*.txt): replay each file's wire actions and compare
every state hash, and re-render the game to compare the whole text. A rule change shows
up here as a diff; regenerate with ``python scripts/regen_golden.py`` when intended.

A file replays by the rules its header names: without a ``vizier_marker 1`` line, those
from before the Grand Vizier's marker (engine ``Config.vizier_marker`` off), so the files
recorded then still pin that behaviour hash for hash."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from engine.actions import decode
from engine.game import new_game
from engine.rules import apply
from engine.state import Config, GameState, make_config

ROOT = Path(__file__).resolve().parents[2]


def _regen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("regen_golden", ROOT / "scripts/regen_golden.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


REGEN = _regen()
GAMES = REGEN.GAMES


def _parse(text: str) -> tuple[Config, list[tuple[bytes, str]]]:
    players = reverse = None
    marker = False
    steps: list[tuple[bytes, str]] = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith("players "):
            players = int(line.split()[1])
        elif line.startswith("reverse "):
            reverse = bool(int(line.split()[1]))
        elif line.startswith("vizier_marker "):
            marker = bool(int(line.split()[1]))
        else:
            _, wire, digest = (part.strip() for part in line.rsplit("|", 2))
            steps.append((bytes.fromhex(wire), digest))
    assert players is not None and reverse is not None
    return make_config(players, reverse)._replace(vizier_marker=marker), steps


@pytest.mark.parametrize("game", GAMES, ids=[g.name for g in GAMES])
def test_golden_file_replays_hash_for_hash(game: Any) -> None:
    path: Path = game.path
    config, steps = _parse(path.read_text(encoding="utf-8"))
    assert config.vizier_marker == game.marker
    assert len(steps) > 100
    s = new_game(config)
    for i, (wire, digest) in enumerate(steps, 1):
        apply(s, decode(wire))
        assert s.hash().hex() == digest, f"{path.name}: state hash differs after step {i}"
    assert s.final is not None, "the playthrough reaches the end of the game"


@pytest.mark.parametrize("game", GAMES, ids=[g.name for g in GAMES])
def test_golden_file_is_up_to_date(game: Any) -> None:
    path: Path = game.path
    assert REGEN.render(game) == path.read_text(encoding="utf-8"), (
        f"{path.name} is stale: run python scripts/regen_golden.py and review the diff"
    )


def test_golden_games_cover_the_required_tables() -> None:
    assert {(g.players, g.reverse) for g in GAMES} >= {(3, False), (4, True), (6, False)}
    assert {g.marker for g in GAMES} == {False, True}, "both Vizier rules are pinned"


def _final(game: Any) -> GameState:
    config, steps = _parse(game.path.read_text(encoding="utf-8"))
    s = new_game(config)
    for wire, _digest in steps:
        apply(s, decode(wire))
    return s


@pytest.mark.parametrize("game", GAMES, ids=[g.name for g in GAMES])
def test_golden_games_set_goods_aside_only_under_the_marker_rule(game: Any) -> None:
    s = _final(game)
    assert s.locked, "every golden game has a revealed Grand Vizier"
    # the bag never ran out of a chosen colour in these games: one good per Vizier
    assert s.set_aside == (s.locked if game.marker else [])
    assert sum(len(g) for g in s.goods) + len(s.bag) + len(s.set_aside) == 75
