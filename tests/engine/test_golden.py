"""Golden playthroughs (tests/golden/*.txt): replay each file's wire actions and compare
every state hash, and re-render the game to compare the whole text. A rule change shows
up here as a diff; regenerate with ``python scripts/regen_golden.py`` when intended."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from engine.actions import decode
from engine.game import new_game
from engine.rules import apply
from engine.state import make_config

ROOT = Path(__file__).resolve().parents[2]


def _regen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("regen_golden", ROOT / "scripts/regen_golden.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


REGEN = _regen()
GAMES = REGEN.GAMES


def _parse(text: str) -> tuple[int, bool, list[tuple[bytes, str]]]:
    players = reverse = None
    steps: list[tuple[bytes, str]] = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith("players "):
            players = int(line.split()[1])
        elif line.startswith("reverse "):
            reverse = bool(int(line.split()[1]))
        else:
            _, wire, digest = (part.strip() for part in line.rsplit("|", 2))
            steps.append((bytes.fromhex(wire), digest))
    assert players is not None and reverse is not None
    return players, reverse, steps


@pytest.mark.parametrize("game", GAMES, ids=[g.name for g in GAMES])
def test_golden_file_replays_hash_for_hash(game: Any) -> None:
    path: Path = game.path
    players, reverse, steps = _parse(path.read_text(encoding="utf-8"))
    assert len(steps) > 100
    s = new_game(make_config(players, reverse))
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
