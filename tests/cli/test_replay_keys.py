"""The replay viewer driven by keystrokes (pipe input, no terminal) on a saved local game;
the same drive on a network transcript is in test_net.py (it reuses that module's game)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cli.main import main
from cli.replay.model import build_replay
from cli.table.save_file import load_game
from tests.cli.helpers import drive_replay


@pytest.mark.timeout(30)
def test_replay_keys_on_a_saved_local_game(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    save = tmp_path / "g.silkroad"
    assert main(["play", "--local", "--headless", "--seed", "4", "--bots", "3",
                 "--save", str(save)]) == 0
    capsys.readouterr()
    model = build_replay(load_game(save))
    assert model.complete and model.players == 4
    asyncio.run(asyncio.wait_for(drive_replay(model), 20))
