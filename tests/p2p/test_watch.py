"""Watchers: real sockets on 127.0.0.1, real crypto, real bots (and a real cheat).

A watcher joins a running table through the host's listener, catches up on what the host
holds, then follows live; it checks every envelope against the roster keys and runs the
offline audit on what it holds.  These tests show it ends where the seats end, names a
cheat as their audits do, and that a slow, surplus or hostile watcher costs the table
nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from table_kit import LAM, FrugalBot, run

from crypto.transcript import Signer
from engine.actions import Action, Bid, encode
from engine.rules import actors
from p2p.identity import Identity
from p2p.judge.game_audit import CERTIFIED, EXIT_UNFAIR, audit_folder, audit_game
from p2p.local_table import LocalPeer, finish_peer, make_local_setup, start_peer
from p2p.net.connection import dial
from p2p.net.framing import frame
from p2p.net.handshake import dial_handshake, new_incarnation
from p2p.protocol.wire import ACTION_KIND
from p2p.table import HumanDecider, LockstepTable, TableResult, TableStopped
from p2p.table.deciders import think_aside
from p2p.watch.client import Watcher, WatchError, WatchResult
from p2p.watch.hub import TALK_HARD_CAP, WatchHub
from p2p.watch.stream import PURPOSE, GameInfo


@dataclass
class Watched:
    peers: list[LocalPeer]
    results: list[Any]
    hub: WatchHub
    watched: list[WatchResult | BaseException]


async def watched_game(root: Path, *, players: int = 3, join_at: int = 4,
                       watchers: int = 1,
                       on_step: Callable[[LockstepTable, Action], None] | None = None,
                       hub_kw: dict[str, Any] | None = None,
                       during: Callable[[WatchHub, LocalPeer], Any] | None = None,
                       humans: dict[int, HumanDecider] | None = None) -> Watched:
    """Play one game among local peers with a hub on seat 0; ``watchers`` watchers come
    once seat 0 applied step ``join_at`` (mid-game).  ``during(hub, host)`` runs then too.
    ``humans``: deciders in place of some seats' bots."""
    peers = await make_local_setup(players, "audit", root, lam=LAM)
    host = peers[0]
    hub = await WatchHub(host.listener, **(hub_kw or {})).open()
    reached = asyncio.Event()

    def hook(t: LockstepTable, a: Action) -> None:
        if t.me == 0 and t.step >= join_at:
            reached.set()
        if on_step is not None:
            on_step(t, a)

    tables = [await start_peer(p, FrugalBot(10 + p.seat), (humans or {}).get(p.seat),
                               lam=LAM, abandon_timeout=60)
              for p in peers]
    for t in tables:
        t.on_step = hook
    hub.start(GameInfo("t", host.roster, host.params, host.board, host.game_id, LAM, []))
    hub.attach(tables[0])
    games = [asyncio.ensure_future(t.run()) for t in tables]
    watch_tasks: list[asyncio.Task[WatchResult]] = []
    extra: Any = None
    try:
        await reached.wait()
        for i in range(watchers):
            w = Watcher(every=0.2)
            watch_tasks.append(asyncio.ensure_future(w.watch(
                "127.0.0.1", host.listener.port, transcript=root / f"watched{i}.silkroad")))
        if during is not None:
            extra = asyncio.ensure_future(during(hub, host))
        results = await asyncio.gather(*games, return_exceptions=True)
        await hub.finish("the game ended")
        watched = list(await asyncio.gather(*watch_tasks, return_exceptions=True))
        if extra is not None:
            await extra
    finally:
        for g in games:
            g.cancel()
        await hub.close()
        for p in peers:
            with contextlib.suppress(Exception):
                await finish_peer(p, grace=1.0)
    return Watched(peers, list(results), hub, watched)


def _ok(w: WatchResult | BaseException) -> WatchResult:
    if isinstance(w, BaseException):
        raise w
    return w


def _framing(hub: WatchHub, host: LocalPeer) -> Any:
    """A host relaying, besides the game, an illegal move in seat 1's name that it signed
    with a key of its own: the watcher must drop it (seat 1 never signed it)."""
    async def relay() -> None:
        await hub.wait_for(lambda h: h.count == 1, 60)
        forger = Signer(host.game_id, 1, Ed25519PrivateKey.generate())
        hub._fan(forger.sign(ACTION_KIND, [0, encode(Bid(1_000_000))]))
    return relay()


@pytest.mark.timeout(180)
def test_a_watcher_joining_mid_game_ends_where_the_seats_end(tmp_path: Path) -> None:
    out = run(lambda: watched_game(tmp_path, during=_framing), timeout=170)
    results: list[TableResult] = out.results
    assert all(isinstance(r, TableResult) for r in results), results
    w = _ok(out.watched[0])
    assert w.seen_to_end, w.ended
    assert w.forged == 1  # the host's forgery in seat 1's name, dropped
    assert w.report.status == CERTIFIED, str(w.report)
    assert w.report.final_hash == results[0].state_hash
    assert len({r.state_hash for r in results}) == 1
    assert results[0].export is not None
    seat_report = audit_game(results[0].export)
    assert seat_report.status == CERTIFIED
    # the watcher leaves with a file the offline audit certifies on its own
    assert w.transcript is not None
    again = audit_game(str(w.transcript))
    assert again.status == CERTIFIED and again.final_hash == results[0].state_hash
    assert out.hub.departed and "end" in out.hub.departed[0][1]


@pytest.mark.timeout(180)
def test_a_cheat_is_named_by_the_watcher_as_by_the_seats(tmp_path: Path) -> None:
    done: list[int] = []

    def cheat(t: LockstepTable, _a: Action) -> None:
        # seat 1 bids more than anyone has, at its first turn after the watcher came (in
        # any phase: a seat without money never bids, and a bid out of turn is as illegal)
        if t.me == 1 and not done and t.step >= 6 and actors(t.state) == (t.me,):
            done.append(t.step)
            t.emit(ACTION_KIND, [t.step, encode(Bid(1_000_000))])

    out = run(lambda: watched_game(tmp_path, on_step=cheat), timeout=170)
    assert done
    for r in out.results:
        assert isinstance(r, TableStopped) and r.culprit == 1, r
    seats = [audit_folder(p.folder) for p in out.peers]
    for rep in seats:
        assert rep.exit_code == EXIT_UNFAIR and rep.violation is not None, str(rep)
    w = _ok(out.watched[0])
    v = w.report.violation
    assert w.report.exit_code == EXIT_UNFAIR and v is not None, str(w.report)
    first = seats[0].violation
    assert first is not None and (v.party, v.rule) == (first.party, first.rule)
    assert v.party == 1
    assert w.transcript is not None and audit_game(w.transcript).exit_code == EXIT_UNFAIR


class _Stalled:
    """A "watcher" that completes the handshake and then never reads a byte (with a small
    receive window, so that the host's queue, not the kernel, holds what it leaves)."""

    def __init__(self) -> None:
        self.writer: Any = None

    async def sit(self, port: int) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
        reader, self.writer = await asyncio.open_connection(sock=sock)
        await dial_handshake(reader, self.writer, Identity.generate(), PURPOSE,
                             incarnation=new_incarnation())


@pytest.mark.timeout(180)
def test_a_watcher_that_stops_reading_is_dropped_and_costs_the_table_nothing(
        tmp_path: Path) -> None:
    stalled = _Stalled()

    async def during(hub: WatchHub, host: LocalPeer) -> None:
        await stalled.sit(host.listener.port)
        # dropped with a reason once its live queue passes the bound, never waited for
        await hub.wait_for(lambda h: any("fell behind" in r for _f, r in h.departed), 150)

    out = run(lambda: watched_game(tmp_path, join_at=2, watchers=0, during=during,
                                   hub_kw={"queue_bytes": 16 * 1024,
                                                           "send_buffer": 4096}), timeout=170)
    assert all(isinstance(r, TableResult) for r in out.results), out.results
    reasons = [r for _f, r in out.hub.departed]
    assert any("fell behind" in r for r in reasons), reasons
    assert audit_game(str(out.results[0].export)).status == CERTIFIED


@pytest.mark.timeout(180)
def test_the_ninth_watcher_is_refused_and_garbage_never_hurts_the_host(
        tmp_path: Path) -> None:
    refused: list[str] = []

    async def during(hub: WatchHub, host: LocalPeer) -> None:
        port = host.listener.port
        await hub.wait_for(lambda h: h.count == 8, 60)
        with pytest.raises(WatchError) as exc:
            await Watcher().watch("127.0.0.1", port, timeout=5)
        refused.append(str(exc.value))
        # raw garbage at the listener, then garbage and a message inside a watch stream
        for junk in (b"\x00" * 7, b"GET / HTTP/1.1\r\n\r\n", frame(b"\xc1" * 40)):
            _r, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(junk)
            await writer.drain()
            writer.close()

    out = run(lambda: watched_game(tmp_path, watchers=8, during=during), timeout=170)
    assert refused and "8 watchers" in refused[0], refused
    assert all(isinstance(r, TableResult) for r in out.results), out.results
    assert all(_ok(w).report.status == CERTIFIED for w in out.watched)


@pytest.mark.timeout(120)
def test_a_watcher_that_sends_envelopes_is_dropped_and_the_game_goes_on(
        tmp_path: Path) -> None:
    async def during(hub: WatchHub, host: LocalPeer) -> None:
        conn = await dial("127.0.0.1", host.listener.port, Identity.generate(), PURPOSE,
                          incarnation=new_incarnation())
        conn.send(["env", [b"\x00" * 100]])
        await hub.wait_for(lambda h: any("only listen" in r for _f, r in h.departed), 60)

    out = run(lambda: watched_game(tmp_path, during=during), timeout=110)
    assert all(isinstance(r, TableResult) for r in out.results), out.results
    assert any("only listen" in r for _f, r in out.hub.departed)


@pytest.mark.timeout(180)
def test_watchers_lines_reach_every_seat_and_the_transcript_paced_and_cleaned(
        tmp_path: Path) -> None:
    """Watchers talk mid-game (seat 1 waits to move until they did): the host relays each
    line under its own signature, marked with the watcher's cleaned name; past a watcher's
    pace (2 in 10 s) and the watchers' pace together (3) a line is answered ``unsaid``; a
    watcher that floods is dropped.  Every seat hears the same lines, the audit certifies
    them, and the watchers' own verdicts hold them too."""
    started, gate = asyncio.Event(), asyncio.Event()
    unsaid: list[str] = []
    results: list[WatchResult] = []
    bot = FrugalBot(11)

    async def seat1(view: Any, legal: list[Action]) -> Action:
        if started.is_set() and not gate.is_set():
            await gate.wait()
        return await think_aside(bot, view, legal)

    async def during(hub: WatchHub, host: LocalPeer) -> None:
        started.set()
        table = host.table
        assert table is not None
        changed = asyncio.Event()
        table.talk.on_line = lambda _line: changed.set()

        def on_event(kind: str, fields: dict[str, Any]) -> None:
            if kind == "unsaid":
                unsaid.append(str(fields["reason"]))
                changed.set()

        async def settled(lines: int, refused: int) -> None:
            while (table.talk.count[0], len(unsaid)) != (lines, refused):
                changed.clear()
                await asyncio.wait_for(changed.wait(), 60)

        async def sit(name: str) -> tuple[Watcher, asyncio.Future[WatchResult]]:
            known = asyncio.Event()

            def events(kind: str, fields: dict[str, Any]) -> None:
                if kind == "table":
                    known.set()
                on_event(kind, fields)

            w = Watcher(name=name, on_event=events, every=0.2)
            task = asyncio.ensure_future(w.watch("127.0.0.1", host.listener.port))
            await asyncio.wait_for(known.wait(), 60)
            return w, task

        kim, kim_task = await sit("Kim\x1b[31m: I resign")
        for text in ("nice \x1b[2Jmove\u202e", "again", "more", "and more"):
            assert kim.say(text) is None
        await settled(2, 2)  # Kim's pace: 2 lines in 10 s
        lee, lee_task = await sit("")
        assert lee.say("hello") is None and lee.say("hello again") is None
        await settled(3, 3)  # the watchers' pace together: 3
        conn = await dial("127.0.0.1", host.listener.port, Identity.generate(), PURPOSE,
                          incarnation=new_incarnation())
        for i in range(TALK_HARD_CAP + 1):
            conn.send(["talk", f"flood {i}", "F"])
        await hub.wait_for(lambda h: any("lines of talk in" in r for _f, r in h.departed),
                           60)
        gate.set()
        results.extend([await kim_task, await lee_task])

    out = run(lambda: watched_game(tmp_path, during=during, humans={1: seat1}), timeout=170)
    res: list[TableResult] = out.results
    assert all(isinstance(r, TableResult) for r in res), res
    assert unsaid[:2] == ["not so fast: at most 2 lines in 10 s; wait a moment"] * 2, unsaid
    assert unsaid[2].startswith("the watchers are talking a lot"), unsaid
    lee_tag = ""
    expected = [(0, "nice move?", "Kim I resign"), (0, "again", "Kim I resign")]
    for p in out.peers:
        assert p.table is not None
        heard = [(x.seat, x.text, x.watcher) for x in p.table.talk.lines]
        assert heard[:2] == expected, (p.seat, heard)
        assert len(heard) == 3 and heard[2][1] == "hello", heard
        lee_tag = str(heard[2][2])
        assert lee_tag.startswith("watcher ") and len(lee_tag) == 14, lee_tag
    assert res[0].export is not None
    report = audit_game(res[0].export)
    assert report.status == CERTIFIED, str(report)
    assert report.replay is not None and report.replay.talk is not None
    bodies = [e.envelope.body for e in report.replay.talk]
    assert bodies == [[t, w] for _s, t, w in expected] + [["hello", lee_tag]]
    for w in [*map(_ok, out.watched), *results]:
        assert w.report.status == CERTIFIED and w.report.replay is not None
        assert [e.envelope.body for e in w.report.replay.talk or []] == bodies
