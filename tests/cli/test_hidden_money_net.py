"""Hidden money at networked tables: ``silkroad host --money hidden``
and networked ``silkroad play --money hidden`` put the option in the agreed params, so
every seat's params (hence the game id) carry it, and the table screen is told.  The host
game also uses ``--code auto``: a generated 4-word code its bots join with.

Real peers on 127.0.0.1 only (the host's bot seats join through the lobby and play in
their own processes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import cli.commands.host
import cli.commands.play
from cli.main import main
from cli.replay.network import build_net_replay
from cli.table.net_session import NetSession
from p2p.game import GameParams, compute_game_id, wordlist
from p2p.store import GameStore, read_export


def _seat_folders(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob("meta.json"))


def _check_every_seat(root: Path, transcript: Path, players: int) -> None:
    folders = _seat_folders(root)
    assert len(folders) == players, folders
    ids = set()
    for folder in folders:
        roster, params, _seat, game_id = GameStore(folder).load_meta()
        assert params.money == "hidden" and params.hidden_money, folder
        assert compute_game_id(roster, params) == game_id  # the option is in the id
        open_params = GameParams(params.players, params.variant, params.board_digest,
                                 params.shuffle_mode, params.protocol_version)
        assert compute_game_id(roster, open_params) != game_id
        ids.add(game_id)
    assert len(ids) == 1  # every seat agreed on one game
    export = read_export(transcript)
    assert export.params.money == "hidden" and export.game_id in ids


def _spy(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[bool]:
    """Record what the table screen would be told (the session's ``hidden_money``)."""
    told: list[bool] = []
    real = getattr(module, name)

    async def spy(session: NetSession, *args: Any, **kwargs: Any) -> Any:
        told.append(session.hidden_money)
        return await real(session, *args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return told


@pytest.mark.timeout(240)
def test_host_money_hidden_reaches_every_seat(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    told = _spy(monkeypatch, cli.commands.host, "play_session")
    root, transcript = tmp_path / "peers", tmp_path / "t.silkroad"
    # with a generated join code: the bot seats join with it like anyone
    code = main(["host", "--table", "Hidden tea", "--seats", "3", "--bots", "2", "--money",
                 "hidden", "--code", "auto", "--interface", "127.0.0.1", "--headless",
                 "--json", "--folder", str(root), "--transcript", str(transcript),
                 "--timeout", "60"])
    out = capsys.readouterr().out
    assert code == 0, out
    opened = next(json.loads(ln) for ln in out.splitlines() if '"open"' in ln)
    words = opened["code"].split("-")
    assert opened["code_required"] and len(words) == 4 and set(words) <= set(wordlist())
    seated = [json.loads(ln) for ln in out.splitlines() if '"seated"' in ln]
    assert seated and seated[0]["money"] == "hidden"
    assert told == [True]
    _check_every_seat(root, transcript, 3)  # the host's folder and both bots' (joiners)


@pytest.mark.timeout(240)
def test_networked_play_money_hidden(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[NetSession] = []
    real = cli.commands.play.__dict__.get("NetSession")
    assert real is None  # imported inside run_networked: spy on the class instead
    original_init = NetSession.__init__

    def init(self: NetSession, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(NetSession, "__init__", init)
    transcript = tmp_path / "games" / "t.silkroad"
    code = main(["play", "--headless", "--json", "--bots", "2", "--seed", "3", "--money",
                 "hidden", "--transcript", str(transcript)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert [s.hidden_money for s in made] == [True]
    _check_every_seat(tmp_path / "games" / "peers", transcript, 3)
    # the replay reads the option from the transcript: a seat's view keeps the screens
    model = build_net_replay(transcript)
    assert model.hidden_money and model.hides_money(0) and not model.hides_money(None)
    assert (tmp_path / "games" / "peers").stat().st_mode & 0o777 == 0o700


def test_host_help_states_a_typed_codes_strength(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["host", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "'auto' makes one of 4 words" in text and "32 bits" in text
    assert "4.7 bits per letter" in text and "'silk7' is at most 26 bits" in text
    assert "8 wrong codes" in text and "--money {open,hidden}" in text
