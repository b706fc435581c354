"""Local game records say whether the Grand Vizier's marker applied: a record written
before the rule existed (no ``vizier_marker`` key) replays without it, a new one with it."""

from __future__ import annotations

from pathlib import Path

import msgpack

from cli.table.save_file import GameHeader, SaveWriter, load_game
from engine.bots import RandomBot
from engine.dealer import LocalDealer
from engine.driver import play_game
from engine.game import replay
from engine.state import make_config


def _header() -> GameHeader:
    board_digest = make_config(3).board.digest.hex()
    return GameHeader(players=3, reverse=False, board_path=None, board_digest=board_digest,
                      dealer_seed=7, names=["A", "B", "C"], kinds=["random"] * 3, seat=None,
                      created="")


def test_a_new_record_replays_with_the_marker(tmp_path: Path) -> None:
    config = make_config(3)
    final, log = play_game(config, LocalDealer(7), [RandomBot(p) for p in range(3)])
    assert final.set_aside, "this game sets a good aside"
    path = tmp_path / "game.silkroad"
    w = SaveWriter(path, _header())
    for a in log:
        w.append(a)
    w.close()
    saved = load_game(path)
    assert saved.header.vizier_marker and saved.config.vizier_marker
    assert replay(saved.config, saved.actions).hash() == final.hash()


def test_a_record_from_before_the_marker_replays_without_it(tmp_path: Path) -> None:
    path = tmp_path / "old.silkroad"
    old = _header().to_map()
    del old["vizier_marker"]
    path.write_bytes(msgpack.packb(old, use_bin_type=True))
    saved = load_game(path)
    assert not saved.header.vizier_marker and not saved.config.vizier_marker
