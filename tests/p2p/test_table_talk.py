"""Table talk: signed lines in the transcript, cleaned on every screen, bounded per seat,
judged the same way live and in the audit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from table_kit import finished, play_tables, run

from crypto.audit import EnvelopeEvent
from crypto.errors import CheatDetected
from crypto.transcript import Envelope
from p2p.judge.engine_replay import EngineReplay
from p2p.judge.game_audit import CERTIFIED, UNFAIR, audit_folder, audit_game
from p2p.protocol.wire import (
    MAX_TALK_CHARS,
    MAX_TALK_LINES,
    MAX_WATCHER_TAG,
    TALK_KIND,
    talk_problem,
)
from p2p.table import LockstepTable, TableStopped
from p2p.table.talk import SEND_BURST, SHOW_BURST, SHOW_WINDOW, TalkBook


def _talk_at(step: int, seat: int, act: Any) -> Any:
    """An ``on_step`` hook that runs ``act(table)`` once, on ``seat``'s table at ``step``."""
    done: list[bool] = []

    def on_step(t: LockstepTable, _a: object) -> None:
        if t.me == seat and t.step == step and not done:
            done.append(True)
            act(t)

    return on_step


def test_a_line_reaches_every_screen_cleaned_and_the_audit_certifies(tmp_path: Path) -> None:
    said: list[str | None] = []

    def speak(t: LockstepTable) -> None:
        said.append(t.say("gg \x1b[2J\x1b[31mwell\u202e   played"))
        said.append(t.say("x" * (MAX_TALK_CHARS * 3)))

    peers, results = run(lambda: play_tables(tmp_path, 3, on_step=_talk_at(3, 1, speak)))
    res = finished(results)
    assert said == [None, None]
    assert len({r.state_hash for r in res}) == 1
    for p in peers:
        t = p.table
        assert t is not None
        lines = [(x.seat, x.text) for x in t.talk.lines]
        assert lines[0] == (1, "gg well? played")  # escapes gone, the bidi override shown
        assert lines[1][0] == 1 and len(lines[1][1]) == MAX_TALK_CHARS
    export = res[0].export
    assert export is not None
    report = audit_game(export)
    assert report.status == CERTIFIED, report
    assert report.replay is not None and report.replay.talk is not None
    assert report.replay.talk[0].envelope.body[0] == "gg well? played"


def _flood(t: LockstepTable) -> None:
    """A hacked peer: signs more lines than a seat may, past its own table's pace."""
    for i in range(MAX_TALK_LINES + 1):
        t.emit(TALK_KIND, [f"spam {i}"])


def _bad_line(t: LockstepTable) -> None:
    t.emit(TALK_KIND, ["y" * (MAX_TALK_CHARS + 1)])


def _named(tmp_path: Path, act: Any, rule: str) -> None:
    peers, results = run(lambda: play_tables(tmp_path, 3, on_step=_talk_at(2, 2, act)))
    for p, r in zip(peers, results, strict=True):
        if p.seat == 2:
            continue
        assert isinstance(r, TableStopped), r
        assert (r.culprit, r.rule) == (2, rule), r
        report = audit_folder(p.folder)
        assert report.status == UNFAIR, report
        assert report.violation is not None
        assert (report.violation.party, report.violation.rule) == (2, rule), report


def _no_watcher(t: LockstepTable) -> None:
    t.emit(TALK_KIND, ["hello", ""])


def _long_watcher(t: LockstepTable) -> None:
    t.emit(TALK_KIND, ["hello", "w" * (MAX_WATCHER_TAG + 1)])


def _three(t: LockstepTable) -> None:
    t.emit(TALK_KIND, ["hello", "Kim", "more"])


@pytest.mark.parametrize("act", [_no_watcher, _long_watcher, _three])
def test_a_relayed_line_naming_no_proper_watcher_names_its_signer(tmp_path: Path,
                                                                  act: Any) -> None:
    _named(tmp_path, act, "malformed-talk")


def test_a_relayed_line_is_malformed_before_the_protocol_had_them() -> None:
    assert talk_problem(["hi", "Kim"], 0) is None
    assert talk_problem(["hi", "Kim"], 0, relayed=False) == (
        "malformed-talk", "signed a malformed line of talk")
    env = Envelope(b"g" * 16, 1, 0, b"\0" * 32, TALK_KIND, ["hi", "Kim"], b"")
    with pytest.raises(CheatDetected) as exc:
        EngineReplay(3, relayed_talk=False)(EnvelopeEvent(0, env))
    assert (exc.value.culprit, exc.value.rule) == (1, "malformed-talk")
    replay = EngineReplay(3)  # version 7: a watcher's line, relayed by seat 1
    replay(EnvelopeEvent(0, env))
    assert replay.talk is not None and replay.talk[0].envelope.body == ["hi", "Kim"]


def test_a_seat_never_signs_more_lines_than_the_game_allows() -> None:
    book = TalkBook(3, 0)
    book.count[0] = MAX_TALK_LINES - 101
    assert book.may_sign(100) is None
    book.count[0] += 1
    why = book.may_sign(100)  # relaying stops 100 lines short: those are our player's
    assert why is not None and "used up" in why
    assert book.may_sign() is None
    book.count[0] = MAX_TALK_LINES
    assert book.may_sign() is not None


def test_a_flood_of_talk_names_its_signer_live_and_in_the_audit(tmp_path: Path) -> None:
    _named(tmp_path, _flood, "talk-flood")


def test_an_overlong_line_names_its_signer_live_and_in_the_audit(tmp_path: Path) -> None:
    _named(tmp_path, _bad_line, "malformed-talk")


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_our_own_pace_is_bounded() -> None:
    clock = _Clock()
    book = TalkBook(3, 0, clock)
    assert [book.may_send() for _ in range(SEND_BURST)] == [None] * SEND_BURST
    why = book.may_send()
    assert why is not None and "not so fast" in why
    clock.now += 11
    assert book.may_send() is None


def test_a_fast_sender_is_summarised_on_screen_not_scrolled_away() -> None:
    clock = _Clock()
    book = TalkBook(3, 0, clock)
    shown: list[Any] = []
    book.on_line = shown.append
    for i in range(SHOW_BURST + 12):
        book.heard(1, f"line {i}")
    book.heard(2, "hello")  # another seat is not held back by seat 1's flood
    assert [x.text for x in shown if x.seat == 1] == [f"line {i}" for i in range(SHOW_BURST)]
    assert shown[-1].text == "hello"
    clock.now += SHOW_WINDOW + 1
    book.heard(1, "later")
    assert (shown[-1].text, shown[-1].hidden) == ("later", 12)
    assert book.count[1] == SHOW_BURST + 13


def test_talk_is_an_unknown_kind_in_games_before_it() -> None:
    """An older game's audit keeps its own rules: a talk envelope there is its signer's
    unknown kind (no older silkroad ever signed one); from the talk version on it is a
    line of talk."""
    env = Envelope(b"g" * 16, 1, 0, b"\0" * 32, TALK_KIND, ["hi"], b"")
    with pytest.raises(CheatDetected) as caught:
        EngineReplay(3, talk=False)(EnvelopeEvent(0, env))
    assert (caught.value.culprit, caught.value.rule) == (1, "unknown-kind")
    replay = EngineReplay(3, talk=True)
    replay(EnvelopeEvent(0, env))
    assert replay.talk is not None and [ev.envelope.body for ev in replay.talk] == [["hi"]]


def test_relayed_lines_are_paced_on_the_relaying_seats_own_screen_too() -> None:
    """Our player's own lines always show; the watchers' lines we relay are paced like any
    other seat's, so watchers cannot push the game off the host's own log."""
    clock = _Clock()
    book = TalkBook(3, 0, clock)
    shown: list[Any] = []
    book.on_line = shown.append
    for i in range(SHOW_BURST + 3):
        book.heard(0, f"w{i}", "Kim")
    book.heard(0, "mine")
    assert [x.text for x in shown] == [f"w{i}" for i in range(SHOW_BURST)] + ["mine"]
