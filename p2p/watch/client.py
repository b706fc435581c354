"""The watcher: sits at a running table, trusts nothing the host says, and audits as it goes.

What it checks, and why that is enough not to trust the host that relays everything:

* the ``table`` message: the roster and params must hash to the game id
  (:func:`p2p.game.compute_game_id`), the board must be the one whose digest the params
  bind, λ must be the protocol's.  Every seat signs every envelope over that game id, so
  a host that made up another roster would make up another game, in which no real seat
  signed anything; the words (from the seats' lobby nonces) are shown so the players can
  compare them with their own;
* each envelope, on arrival, must verify under its sender's roster key and the game id
  (:func:`crypto.transcript.parse`): a forged one is counted and dropped, never kept, so
  a host relaying forgeries cannot frame a seat;
* what it holds is judged by the offline audit itself
  (:func:`p2p.judge.game_audit.audit_wires`: signatures, proofs, acks, rules, the evidence
  rule), re-run on the whole transcript when new envelopes came, at most every ``every``
  seconds and never more than a third of the time (an incremental judge would be faster;
  the same judge as ``silkroad audit`` cannot disagree with it).

At the end the transcript is written as a ``game.silkroad`` file that ``silkroad audit``
reads, so a watcher leaves with an audited file.  What it cannot do: see hidden goods
(nobody but their holder can, until the final reveal), know of an envelope the host never
relayed (the host can withhold, which leaves the game incomplete, naming no one), or
compare the words for the players.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from crypto.errors import CheatDetected, MalformedInput
from crypto.transcript import parse, signing_key
from engine.state import Config

from ..errors import HandshakeError, NotSilkroad, P2PError, ProtocolError
from ..game import BoardMismatch, auth_words, compute_game_id, game_config, lambda_problem
from ..identity import Identity
from ..judge.game_audit import GameAuditReport, audit_wires, shown_names
from ..net.connection import Connection, dial
from ..net.handshake import new_incarnation
from ..protocol.wire import MAX_TALK_CHARS
from ..sanitize import clean
from ..store import encode_export, write_private
from .stream import (
    MAX_ENVELOPES,
    MAX_TRANSCRIPT_BYTES,
    PURPOSE,
    GameInfo,
    envelopes_of,
    said,
    watcher_name,
)

log = logging.getLogger("p2p.watch")

EVERY = 1.0
"""Default seconds between two audits of what a watcher holds (``watch --every``)."""
DIAL_TIMEOUT = 15.0


class WatchError(P2PError):
    """The watcher could not watch (refused, unreachable, or the host sent nonsense)."""


@dataclass
class WatchResult:
    """How a watch ended: the last audit, what the host said, and the transcript file."""

    report: GameAuditReport
    info: GameInfo
    wires: list[bytes]
    #: the host's ``end`` reason, or why the watch ended without one
    ended: str
    #: the host ended the game and we took every envelope it sent
    seen_to_end: bool
    forged: int = 0
    transcript: Path | None = None


Event = Callable[[str, dict[str, Any]], None]
"""What a watcher tells its screen: ``(kind, fields)``; kinds ``connected``, ``table``,
``progress``, ``end``."""


@dataclass
class _Held:
    wires: list[bytes] = field(default_factory=list)
    seen: set[bytes] = field(default_factory=set)
    size: int = 0
    forged: int = 0


class Watcher:
    """One watch of one table: ``await watch(host, port)`` returns a :class:`WatchResult`.

    ``record`` keeps every replayed state (the screen's log needs them; headless does
    not).  ``on_event`` hears progress as the audit goes."""

    def __init__(self, *, every: float = EVERY, record: bool = False,
                 on_event: Event | None = None, name: str = "") -> None:
        self.every = every
        #: the name our lines of talk carry ("" lets the host name us by our key)
        self.name = watcher_name(name)
        self.record = record
        self.on_event = on_event
        self.identity = Identity.generate()
        self.info: GameInfo | None = None
        self.words: tuple[str, ...] = ()
        self.report: GameAuditReport | None = None
        self._held = _Held()
        self._new = asyncio.Event()
        #: the audit running on a worker thread, if any: cancelling the task that awaits
        #: it does not stop the thread, so the final audit waits for it rather than run
        #: beside it (and takes its checks from memory, :mod:`crypto.remembered`)
        self._in_flight: asyncio.Future[GameAuditReport] | None = None
        self._pubs: list[Ed25519PublicKey | None] = []
        self._config: Config | None = None
        self._audits = 0
        self._conn: Connection | None = None

    def say(self, text: str) -> str | None:
        """Send a line of talk for the host's table to relay to every seat and watcher (it
        shows in the log once relayed, signed by the host, marked as ours); returns why it
        was not sent, or None.  The host answers a refused line with ``unsaid``."""
        line = clean(text, MAX_TALK_CHARS)
        if not line:
            return "nothing to say"
        conn = self._conn
        if conn is None or conn.closed or self.info is None:
            return "not watching a game: nobody to talk to"
        try:
            conn.send(["talk", line, self.name])
        except (P2PError, OSError) as exc:
            return f"could not send: {exc}"
        return None

    # ---------------------------------------------------------------- connecting
    async def _dial(self, host: str, port: int, code: str | None,
                    fingerprint: str | None, timeout: float) -> Connection:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        delay = 0.2
        while True:
            try:
                conn = await dial(host, port, self.identity, PURPOSE,
                                  incarnation=new_incarnation(), join_code=code,
                                  timeout=max(deadline - loop.time(), 0.1))
                break
            except NotSilkroad as exc:
                raise WatchError(f"{host}:{port} answered, but it is not a silkroad table: "
                                 f"{exc.reason}") from None
            except HandshakeError as exc:
                if not exc.transient or loop.time() + delay >= deadline:
                    raise WatchError(f"could not watch {host}:{port}: {exc.reason}") from None
            except OSError as exc:
                if loop.time() + delay >= deadline:
                    raise WatchError(f"could not reach {host}:{port}: "
                                     f"{exc.strerror or exc or type(exc).__name__}") from None
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)
        if fingerprint is not None and conn.remote_fingerprint != fingerprint:
            conn.close()
            raise WatchError("the table's key does not match its advertisement")
        return conn

    def _emit(self, kind: str, **fields: Any) -> None:
        if self.on_event is not None:
            try:
                self.on_event(kind, fields)
            except Exception:  # a screen's bug must not stop the watch
                log.exception("watch event listener failed")

    # ---------------------------------------------------------------- the game's setup
    def _take_info(self, msg: Any) -> GameInfo:
        try:
            info = GameInfo.from_wire(msg)
        except P2PError as exc:
            raise WatchError(f"the host sent a bad game description: {exc.reason}") from None
        if compute_game_id(info.roster, info.params) != info.game_id:
            raise WatchError("the host's roster and params do not hash to its game id")
        try:
            self._config = game_config(info.params, info.board)
        except BoardMismatch as exc:
            raise WatchError(f"the host's board is not the agreed one: {exc.reason}") from None
        why = lambda_problem(info.params.protocol_version, info.lam)
        if why is not None:
            raise WatchError(f"the host says {why}")
        self._pubs = []
        for seat, entry in enumerate(info.roster):
            try:
                self._pubs.append(signing_key(entry.key, f"seat {seat}'s key"))
            except MalformedInput:
                self._pubs.append(None)  # the audit names that seat; nothing is checked here
        self.words = auth_words(info.game_id, info.nonces) if info.nonces else ()
        self.info = info
        self._emit("table", table=clean(info.table), names=shown_names(info.roster),
                   words=list(self.words), game_id=info.game_id.hex(),
                   hidden_money=info.params.hidden_money, players=len(info.roster))
        return info

    def _take(self, wires: list[bytes]) -> None:
        """Keep each new envelope that verifies under its sender's roster key."""
        assert self.info is not None
        held = self._held
        fresh = False
        for wire in wires:
            if wire in held.seen:
                continue
            if not self._genuine(wire):
                held.forged += 1
                continue
            if len(held.wires) >= MAX_ENVELOPES or held.size + len(wire) > MAX_TRANSCRIPT_BYTES:
                raise WatchError(f"the host sent more than {MAX_ENVELOPES} envelopes or "
                                 f"{MAX_TRANSCRIPT_BYTES >> 20} MiB: that is no game")
            held.seen.add(wire)
            held.wires.append(wire)
            held.size += len(wire)
            fresh = True
        if fresh:
            self._new.set()

    def _genuine(self, wire: bytes) -> bool:
        assert self.info is not None
        keys = [k for k in self._pubs if k is not None]
        if len(keys) != len(self._pubs):
            return True  # a weak roster key: the audit names its seat at once
        try:
            parse(wire, keys, self.info.game_id)
        except CheatDetected:
            return False
        return True

    # ---------------------------------------------------------------- judging
    def _audit(self, wires: list[bytes], record: bool) -> GameAuditReport:
        assert self.info is not None
        info = self.info
        try:
            report = audit_wires(wires, [e.key for e in info.roster], info.game_id, info.lam,
                                 self._config, record, info.params.protocol_version,
                                 info.params.shuffle_mode)
        except Exception as exc:  # a bug, reported as the audit reports its own
            log.exception("the watcher's audit failed")
            report = GameAuditReport(False, None, None,
                                     error=f"the audit itself failed (a bug): {exc!r}")
        report.names = shown_names(info.roster)
        return report

    async def _judge(self, record: bool) -> GameAuditReport:
        wires = list(self._held.wires)
        if self._in_flight is not None and not self._in_flight.done():
            await asyncio.wait([self._in_flight])  # its outcome is superseded by ours
        self._in_flight = asyncio.ensure_future(asyncio.to_thread(self._audit, wires, record))
        report = await asyncio.shield(self._in_flight)
        self.report = report
        self._audits += 1
        rep = report.crypto
        self._emit("progress", envelopes=len(wires), steps=report.steps,
                   ops=rep.ops if rep is not None else 0, status=report.status,
                   culprit=(report.violation.party if report.violation is not None
                            and report.status == "unfair" else None),
                   rule=report.violation.rule if report.violation is not None else None,
                   text=str(report), forged=self._held.forged, report=report)
        return report

    async def _judging(self) -> None:
        """Audit what we hold whenever something new came: at most every ``every`` s,
        and waiting twice as long as the last audit took, so that judging a long game
        leaves the watcher's machine two thirds of its time."""
        while True:
            await self._new.wait()
            self._new.clear()
            began = time.monotonic()
            await self._judge(self.record)
            took = time.monotonic() - began
            await asyncio.sleep(max(self.every - took, 2 * took))

    def save(self, transcript: str | Path) -> Path | None:
        """Write what this watcher holds as a ``game.silkroad`` file (0600), None before
        the game is known: at the end, or when the watcher leaves early (the file then
        audits as incomplete, naming no one unless a seat signed something false)."""
        info = self.info
        if info is None:
            return None
        return write_private(transcript, encode_export(
            info.roster, info.params, info.game_id, info.lam, self._held.wires, info.board))

    # ---------------------------------------------------------------- watching
    async def watch(self, host: str, port: int, *, code: str | None = None,
                    fingerprint: str | None = None, timeout: float = DIAL_TIMEOUT,
                    transcript: str | Path | None = None) -> WatchResult:
        """Watch the table at ``host:port`` to its end (or until the host goes);
        :class:`WatchError` if it cannot start watching.  ``transcript``: where to write
        the ``game.silkroad`` file of what it saw (0600)."""
        conn = await self._dial(host, port, code, fingerprint, timeout)
        self._conn = conn
        self._emit("connected", host=host, port=port, table_key=conn.remote_fingerprint)
        judging: asyncio.Task[None] | None = None
        ended, to_end = "", False
        try:
            while True:
                try:
                    msg = await conn.recv()
                except P2PError as exc:
                    ended = f"the host closed the connection: {exc.reason}"
                    break
                except OSError as exc:
                    ended = f"the connection failed: {exc}"
                    break
                wires = envelopes_of(msg)
                if wires is not None:
                    if self.info is None:
                        raise WatchError("the host sent envelopes before saying which game")
                    self._take(wires)
                    if judging is None:
                        judging = asyncio.get_running_loop().create_task(self._judging())
                    continue
                for tag in ("refuse", "drop"):
                    reason = said(msg, tag)
                    if reason is not None:
                        if self.info is None:
                            raise WatchError(f"the table refused: {clean(reason)}")
                        ended = f"the host dropped this watcher: {clean(reason)}"
                        break
                if ended:
                    break
                reason = said(msg, "unsaid")
                if reason is not None:
                    self._emit("unsaid", reason=clean(reason))
                    continue
                reason = said(msg, "end")
                if reason is not None:
                    ended, to_end = clean(reason), True
                    break
                if self.info is None:
                    self._take_info(msg)
                    continue
                raise WatchError("the host sent a message that is not part of the watch "
                                 "stream")
        except ProtocolError as exc:
            raise WatchError(f"the host broke the watch stream: {exc.reason}") from None
        finally:
            conn.close()
            if judging is not None:
                judging.cancel()
                with contextlib.suppress(BaseException):
                    await judging
        if self.info is None:
            raise WatchError(f"the watch ended before the game began ({ended})")
        self._emit("judging", ended=ended, seen_to_end=to_end)  # the final audit follows
        report = await self._judge(self.record)
        path = self.save(transcript) if transcript is not None else None
        self._emit("end", ended=ended, seen_to_end=to_end, report=report,
                   transcript=str(path) if path else None)
        return WatchResult(report, self.info, self._held.wires, ended, to_end,
                           self._held.forged, path)
