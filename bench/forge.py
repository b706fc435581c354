"""An adversary for the audit: files a cheating player holding ONE seat's key could write.

Why this exists: ``silkroad audit`` must never name a seat that signed nothing false, never
say "unfair" without naming anyone, and never certify a file whose signed contents are not
the game that was played.  Hand-written tests check the forgeries someone thought of; this
module generates them by the thousand from real, certified games so that a search (the
``bench.adversary`` command, the hypothesis test) can look for counter-examples.

The threat model is the one of ``docs/security.md``: the forger F holds its own signing key
(it is in its game folder) and every envelope anybody sent it, and it writes the exported
file itself.  So it may

* leave out, reorder or repeat any envelope of anyone (the file's order and completeness
  are the exporter's choice);
* re-sign its own chain from any point on, with any change there (another move, another
  ack, a wrong link, an envelope left out or slipped in), every later envelope of its own
  re-chained to the new history;
* sign new envelopes of any kind and body (abort and stop notices, acks, closes, junk);
* edit the parts of the file nobody signs (roster names, params, board, λ, game id).

It cannot sign for another seat.  Every operator below stays inside that model; each is a
pair ``draw`` (pick concrete parameters with a seeded :class:`random.Random`) and ``apply``
(do it, deterministically, and say what was done), so that a violating file can be
re-made, described and shrunk (:func:`minimize`) step by step.

:func:`check` is the property: given the audit's report of a forged file it returns why the
verdict is wrong, or None.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import random
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)

from bench.frugal_bot import FrugalBot
from crypto import group, shuffle
from crypto.elgamal import decode_deck, encode_deck
from crypto.errors import CheatDetected, MalformedInput
from crypto.shuffle import DEFAULT_LAMBDA
from crypto.transcript import DOMAIN, VERSION, envelope_id, parse, signing_key
from engine import actions as engine_actions
from engine.actions import (
    ACTION_TYPES,
    Action,
    Bid,
    PassBid,
    decode,
    encode,
)
from engine.bots import make_bot
from engine.errors import DecodeError
from engine.legal import legal_actions
from engine.rules import actors
from p2p.game import GameParams, compute_game_id
from p2p.judge.game_audit import UNFAIR, GameAuditReport, audit_game
from p2p.local_table import finish_peer, make_local_setup, start_peer
from p2p.net.mesh import RosterEntry
from p2p.protocol.wire import (
    ABORT_KIND,
    ACK_KIND,
    ACTION_KIND,
    CLOSE_KIND,
    CRYPTO_KIND,
    MAX_TALK_CHARS,
    STOP_KIND,
    TALK_KIND,
)
from p2p.store import EXPORT_MAGIC, EXPORT_VERSION, ExportedGame, StoreError, read_export

Env = list[Any]
"""A decoded envelope: ``[VERSION, game_id, sender, seq, prev, kind, body]``."""
Params = dict[str, Any]

MODES = ("audit", "verified")
PLAY_TIMEOUT = 300.0
"""Seconds one honest game may take (a 6-seat verified game takes well under a minute)."""

# --- honest games ------------------------------------------------------------------------

BOTS = ("frugal", "heuristic")
"""The honest games' bots: :class:`FrugalBot` (fast), or the plain heuristic bot, whose bag
draws give every seat two or three times as many crypto envelopes (what some forgeries,
such as writing one seat's envelopes first, need to reach the audit's buffer bounds)."""


@dataclass(frozen=True)
class GameSpec:
    """Which honest game: seats, shuffle mode, the bots' seed and kind."""

    players: int
    mode: str
    seed: int
    bots: str = "frugal"

    @property
    def name(self) -> str:
        kind = "" if self.bots == "frugal" else f"-{self.bots}"
        return f"{self.players}p-{self.mode}-s{self.seed}{kind}"


@dataclass
class GameFacts:
    """What the replay of the honest game knows, for forgeries that look legal: the state
    before every step, the state-hash chain the acks sign, and every handle's colour."""

    states: list[Any]
    applied: list[Action]
    chain: list[bytes]
    truth: dict[int, int]

    def state_hash(self, step: Any) -> bytes | None:
        """The state hash before ``step`` (None for no such step: a forged body may hold
        anything where the step should be)."""
        ok = isinstance(step, int) and not isinstance(step, bool) and 0 <= step < len(self.states)
        return self.states[step].hash() if ok else None

    def alternatives(self, step: Any, seat: int) -> list[Action]:
        """Legal actions of ``seat`` before ``step`` other than the one played (empty when
        the seat is not to act there or its choice cannot be enumerated)."""
        if self.state_hash(step) is None:
            return []
        s = self.states[step]
        if seat not in actors(s):
            return []
        hand = {h: self.truth[h] for h in s.goods[seat] if h in self.truth}
        try:
            legal = legal_actions(s, seat, hand)
        except (ValueError, KeyError, IndexError):
            return []
        played = self.applied[step] if step < len(self.applied) else None
        return [a for a in legal if a != played]


@dataclass
class HonestGame:
    """A certified game and every seat's signing key (the forger uses one of them)."""

    spec: GameSpec
    path: Path
    keys: list[Ed25519PrivateKey]
    # caches, kept out of init so that reprs (hypothesis prints fixtures) stay short
    _export: ExportedGame | None = field(default=None, init=False, repr=False, compare=False)
    _signed: dict[int, frozenset[bytes]] | None = field(default=None, init=False, repr=False,
                                                        compare=False)
    _facts: GameFacts | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def players(self) -> int:
        return self.spec.players

    @property
    def export(self) -> ExportedGame:
        if self._export is None:
            self._export = read_export(self.path)
        return self._export

    @property
    def wires(self) -> list[bytes]:
        return list(self.export.wires)

    @property
    def game_id(self) -> bytes:
        return self.export.game_id

    def public_keys(self) -> list[Ed25519PublicKey]:
        return [signing_key(e.key) for e in self.export.roster]

    def signed(self) -> dict[int, frozenset[bytes]]:
        """Every seat's validly signed envelopes of this game (its chain, as a set)."""
        if self._signed is None:
            self._signed = signed_sets(self.export.wires, self.public_keys(), self.game_id)
        return self._signed

    def facts(self) -> GameFacts:
        """The honest game replayed once (about a second), kept for later forgeries."""
        if self._facts is None:
            report = audit_game(self.path, record=True)
            rp = report.replay
            if rp is None or report.status != "certified":
                raise RuntimeError(f"{self.path} is not a certified game: {report}")
            self._facts = GameFacts(rp.states, rp.applied, rp.chain, dict(rp.truth))
        return self._facts


def _bot(kind: str, seed: int) -> Any:
    return FrugalBot(seed) if kind == "frugal" else make_bot(kind, seed)


async def _play(root: Path, players: int, mode: str, seed: int,
                bots: str) -> tuple[list[Any], list[Any]]:
    peers = await make_local_setup(players, mode, root, lam=DEFAULT_LAMBDA)
    tables = [await start_peer(p, _bot(bots, seed * 10 + p.seat), lam=DEFAULT_LAMBDA)
              for p in peers]
    try:
        results = await asyncio.gather(*(t.run() for t in tables), return_exceptions=True)
    finally:
        for p in peers:
            with contextlib.suppress(Exception):
                await finish_peer(p, grace=1.0)
    return list(peers), list(results)


def make_honest_game(folder: str | Path, players: int, mode: str, seed: int,
                     bots: str = "frugal") -> HonestGame:
    """Play one game of bots (``bots``: see :data:`BOTS`) among ``players`` in-process
    peers over 127.0.0.1 and
    keep seat 0's export as ``folder/game.silkroad`` with every seat's key in
    ``folder/keys.json`` (hex).  The game must be certified: an adversary is only as good
    as the honest game it starts from."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    if bots not in BOTS:
        raise ValueError(f"bots must be one of {BOTS}, not {bots!r}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="silkroad-honest-") as tmp:

        async def bounded() -> tuple[list[Any], list[Any]]:
            async with asyncio.timeout(PLAY_TIMEOUT):
                return await _play(Path(tmp), players, mode, seed, bots)

        peers, results = asyncio.run(bounded())
        for r in results:
            if isinstance(r, BaseException):
                raise RuntimeError(f"honest game {players}p/{mode}/{seed} failed: {r!r}")
        export = results[0].export
        if export is None:
            raise RuntimeError("seat 0 wrote no export")
        dst = folder / "game.silkroad"
        shutil.copyfile(export, dst)
        keys = [Ed25519PrivateKey.from_private_bytes(p.identity.to_bytes()) for p in peers]
    game = HonestGame(GameSpec(players, mode, seed, bots), dst, keys)
    report = audit_game(dst)
    if report.status != "certified":
        raise RuntimeError(f"the honest game is not certified: {report}")
    (folder / "keys.json").write_text(json.dumps({
        "players": players, "mode": mode, "seed": seed, "bots": bots,
        "game_id": game.game_id.hex(),
        "keys": [_private_hex(k) for k in keys]}, indent=1))
    return game


def _private_hex(key: Ed25519PrivateKey) -> str:
    return key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption()).hex()


def load_honest_game(folder: str | Path) -> HonestGame:
    """A game :func:`make_honest_game` left in ``folder`` (its file and keys)."""
    folder = Path(folder)
    meta = json.loads((folder / "keys.json").read_text())
    keys = [Ed25519PrivateKey.from_private_bytes(bytes.fromhex(k)) for k in meta["keys"]]
    game = HonestGame(GameSpec(meta["players"], meta["mode"], meta["seed"],
                               meta.get("bots", "frugal")),
                      folder / "game.silkroad", keys)
    if game.game_id.hex() != meta["game_id"] or len(keys) != game.players:
        raise StoreError(f"{folder}: keys.json does not belong to its game.silkroad")
    for k, e in zip(keys, game.export.roster, strict=True):
        if k.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw) != e.key:
            raise StoreError(f"{folder}: a key in keys.json is not its seat's roster key")
    return game


def honest_games(cache_dir: str | Path, specs: Sequence[GameSpec],
                 log: Callable[[str], None] | None = None) -> list[HonestGame]:
    """The honest game of every spec, made once and reused from ``cache_dir/<spec name>``
    (why: a 6-seat game takes seconds to play and the adversary needs it in every run)."""
    out = []
    for spec in specs:
        folder = Path(cache_dir) / spec.name
        try:
            out.append(load_honest_game(folder))
            continue
        except (OSError, ValueError, KeyError, StoreError):
            pass
        if log is not None:
            log(f"playing honest game {spec.name}…")
        out.append(make_honest_game(folder, spec.players, spec.mode, spec.seed, spec.bots))
    return out


# --- envelopes -----------------------------------------------------------------------------

def read_wires(path: str | Path) -> list[bytes]:
    """A file's envelopes (wire bytes) in file order."""
    return list(read_export(path).wires)


def envelope(wire: bytes) -> Env:
    """Decode a wire (``msgpack [raw, sig]``, raw = the 7 fields); ValueError if garbage."""
    try:
        outer = msgpack.unpackb(wire)
        env = msgpack.unpackb(outer[0])
    except Exception as exc:  # msgpack raises several unrelated types on garbage
        raise ValueError(f"not an envelope: {exc}") from None
    if not isinstance(env, list) or len(env) != 7:
        raise ValueError("not a 7-field envelope")
    return env


def try_envelope(wire: bytes) -> Env | None:
    """:func:`envelope`, or None for garbage (a forged file may hold any bytes)."""
    try:
        return envelope(wire)
    except ValueError:
        return None


def sign(key: Ed25519PrivateKey, env: Env) -> bytes:
    """Sign an envelope as its sender would (Ed25519 is deterministic: signing the same
    fields again gives the same wire, hence the same envelope id)."""
    raw = msgpack.packb(env, use_bin_type=True)
    return msgpack.packb([raw, key.sign(DOMAIN + raw)], use_bin_type=True)


def header_of(game: ExportedGame) -> dict[str, Any]:
    """The unsigned parts of a file, in the raw form :func:`write_file` writes."""
    return {"roster": [e.to_wire() for e in game.roster], "params": game.params.to_wire(),
            "game_id": game.game_id, "lam": game.lam, "board": game.board}


def encode_file(header: dict[str, Any], wires: Sequence[bytes]) -> bytes:
    """Bytes of a ``game.silkroad`` with this header (possibly edited) and these wires."""
    return msgpack.packb([EXPORT_MAGIC, EXPORT_VERSION, header["roster"], header["params"],
                          header["game_id"], header["lam"], list(wires), header["board"]],
                         use_bin_type=True)


def write_file(dst: str | Path, base: ExportedGame, wires: Sequence[bytes],
               header: dict[str, Any] | None = None) -> Path:
    """Write a file with ``base``'s header (or ``header``'s edits over it) and ``wires``."""
    full = header_of(base)
    full.update(header or {})
    path = Path(dst)
    path.write_bytes(encode_file(full, wires))
    return path


def signed_sets(wires: Sequence[bytes], keys: Sequence[Ed25519PublicKey], game_id: bytes,
                known: dict[int, frozenset[bytes]] | None = None,
                ) -> dict[int, frozenset[bytes]]:
    """Per sender, the set of ``wires`` validly signed for ``game_id``: the signed contents
    of a file, whatever its order or repetitions.  ``known`` (an honest game's sets) saves
    verifying the signatures of wires already known to be valid."""
    valid: dict[int, set[bytes]] = {}
    known_sender = {w: s for s, ws in (known or {}).items() for w in ws}
    for w in set(wires):
        s = known_sender.get(w)
        if s is None:
            try:
                s = parse(w, keys, game_id).sender
            except (CheatDetected, MalformedInput):
                continue
        valid.setdefault(s, set()).add(w)
    return {s: frozenset(ws) for s, ws in valid.items()}


def resign_from(wires: Sequence[bytes], key: Ed25519PrivateKey, seat: int, seq: int,
                change: Callable[[Env], list[Env]],
                tamper: Callable[[Env], None] | None = None) -> list[bytes]:
    """``seat`` rewrites its own chain from ``seq`` on.

    ``change(env)`` returns what replaces that envelope (``[]`` drops it, two envelopes
    insert one); every later envelope of the seat is re-signed with new ``seq``/``prev`` so
    that its chain links up again (gaps the file already had close up too).  ``tamper``
    edits the first re-signed envelope after its link is set (a wrong prev or seq that the
    later ones then chain to).  Every other wire stays byte for byte where it was; the new
    wires take the old ones' places in the file (every copy of a duplicated one)."""
    mine: dict[int, tuple[bytes, Env]] = {}
    for w in wires:
        e = try_envelope(w)
        if e is not None and e[2] == seat and isinstance(e[3], int) and e[3] >= seq \
                and e[3] not in mine:
            mine[e[3]] = (w, e)
    if seq not in mine:
        return list(wires)
    prev = mine[seq][1][4]
    next_seq = seq
    replace: dict[bytes, list[bytes]] = {}
    for q in sorted(mine):
        w, e = mine[q]
        outs = change(list(e)) if q == seq else [list(e)]
        new: list[bytes] = []
        for k, o in enumerate(outs):
            o[3], o[4] = next_seq, prev
            if q == seq and k == 0 and tamper is not None:
                tamper(o)
            nw = sign(key, o)
            new.append(nw)
            prev = envelope_id(nw)
            next_seq = (o[3] + 1) if isinstance(o[3], int) else next_seq + 1
        replace[w] = new
    out: list[bytes] = []
    for w in wires:
        out.extend(replace.get(w, [w]))
    return out


def last_of(wires: Sequence[bytes], seat: int) -> tuple[int, bytes] | None:
    """``(seq, wire)`` of the seat's highest-numbered envelope in the file."""
    best: tuple[int, bytes] | None = None
    for w in wires:
        e = try_envelope(w)
        if e is not None and e[2] == seat and isinstance(e[3], int) \
                and (best is None or e[3] > best[0]):
            best = (e[3], w)
    return best


def new_envelope(wires: Sequence[bytes], key: Ed25519PrivateKey, seat: int, game_id: bytes,
                 kind: Any, body: Any) -> bytes:
    """An envelope ``seat`` signs after its last one in the file (seq + 1, prev = its id)."""
    last = last_of(wires, seat)
    seq, prev = (last[0] + 1, envelope_id(last[1])) if last is not None else (0, bytes(32))
    return sign(key, [VERSION, game_id, seat, seq, prev, kind, body])


def describe(env: Env | None) -> str:
    """A short human description of an envelope (for mutation texts and reports)."""
    if env is None:
        return "garbage"
    kind, body = env[5], env[6]
    who = f"{env[2]}/{env[3]}"
    try:
        if kind == ACTION_KIND:
            return f"{who} action step {body[0]} {_act(body[1])}"
        if kind in (ACK_KIND, CLOSE_KIND):
            return f"{who} {kind} round {body[0]}"
        if kind == CRYPTO_KIND:
            return f"{who} crypto {body[1]}/{body[3]} (op {body[0]})"
        if kind == ABORT_KIND:
            return f"{who} abort naming {body[0]} for {body[1]!r}"
        if kind == STOP_KIND:
            return f"{who} stop {body[0]!r}"
    except (TypeError, IndexError, KeyError):
        pass
    return f"{who} {str(kind)[:20]!r}"


def _act(data: Any) -> str:
    if not isinstance(data, bytes):
        return f"<{type(data).__name__}>"
    try:
        return repr(decode(data))
    except DecodeError:
        return f"<undecodable {data[:8].hex()}>"


# --- the forger's work state ---------------------------------------------------------------

@dataclass
class Step:
    """One operator applied: its name, its concrete parameters and what it did."""

    op: str
    params: Params
    text: str


@dataclass
class Forge:
    """A forged file in the making: the honest game, the forger, its key, the wires and
    the unsigned header edits so far, and the steps taken."""

    honest: HonestGame
    forger: int
    wires: list[bytes]
    header: dict[str, Any] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)

    @property
    def key(self) -> Ed25519PrivateKey:
        return self.honest.keys[self.forger]

    @property
    def n(self) -> int:
        return self.honest.players

    @property
    def game_id(self) -> bytes:
        return self.honest.game_id

    def envs(self) -> list[tuple[bytes, Env | None]]:
        return [(w, try_envelope(w)) for w in self.wires]

    def chain(self, seat: int) -> list[Env]:
        """The seat's envelopes in the file, one per seq, by seq."""
        seen: dict[int, Env] = {}
        for _w, e in self.envs():
            if e is not None and e[2] == seat and isinstance(e[3], int) and e[3] not in seen:
                seen[e[3]] = e
        return [seen[q] for q in sorted(seen)]

    def position(self, sender: int, seq: int) -> int | None:
        for i, (_w, e) in enumerate(self.envs()):
            if e is not None and e[2] == sender and e[3] == seq:
                return i
        return None

    def write(self, dst: str | Path) -> Path:
        return write_file(dst, self.honest.export, self.wires, self.header)

    def record(self) -> dict[str, Any]:
        """JSON-able account of the forgery (to reproduce and explain it)."""
        return {"honest": self.honest.spec.name, "forger": self.forger,
                "steps": [{"op": s.op, "params": to_json(s.params), "text": s.text}
                          for s in self.steps]}

    def text(self) -> str:
        return f"forger seat {self.forger}: " + "; then ".join(s.text for s in self.steps)


def to_json(obj: Any) -> Any:
    """Parameters as JSON (bytes as hex strings prefixed ``0x``)."""
    if isinstance(obj, bytes):
        return "0x" + obj.hex()
    if isinstance(obj, list | tuple):
        return [to_json(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): to_json(v) for k, v in obj.items()}
    if isinstance(obj, float):
        return repr(obj)
    return obj


# --- operators -----------------------------------------------------------------------------

Draw = Callable[[Forge, random.Random], Params | None]
Apply = Callable[[Forge, Params], str]


@dataclass(frozen=True)
class Op:
    """A mutation operator: ``draw`` picks parameters (None: not applicable to this file),
    ``apply`` performs them and returns what it did."""

    name: str
    family: str
    weight: float
    draw: Draw
    apply: Apply


OPS: dict[str, Op] = {}


def _op(name: str, family: str, weight: float, draw: Draw) -> Callable[[Apply], Apply]:
    def register(fn: Apply) -> Apply:
        OPS[name] = Op(name, family, weight, draw, fn)
        return fn
    return register


def _keys(f: Forge) -> list[tuple[int, int]]:
    return [(e[2], e[3]) for _w, e in f.envs() if e is not None
            and isinstance(e[2], int) and isinstance(e[3], int)]


def _drop_where(f: Forge, pred: Callable[[Env], bool]) -> int:
    before = len(f.wires)
    f.wires = [w for w, e in f.envs() if e is None or not pred(e)]
    return before - len(f.wires)


# drop ---------------------------------------------------------------------------------------

def _draw_drop(f: Forge, rng: random.Random) -> Params | None:
    keys = sorted(set(_keys(f)))
    if not keys:
        return None
    k = rng.choice([1, 1, 1, 2, 3, max(1, len(keys) // 10)])
    return {"keys": [list(x) for x in rng.sample(keys, min(k, len(keys)))]}


@_op("drop", "drop", 5, _draw_drop)
def _apply_drop(f: Forge, p: Params) -> str:
    keys = {tuple(k) for k in p["keys"]}
    shown = [describe(e) for _w, e in f.envs() if e is not None and (e[2], e[3]) in keys]
    n = _drop_where(f, lambda e: (e[2], e[3]) in keys)
    more = f" (+{len(shown) - 4} more)" if len(shown) > 4 else ""
    return f"drop {n} envelope(s): {', '.join(shown[:4])}{more}"


def _draw_drop_kind(f: Forge, rng: random.Random) -> Params | None:
    kinds = sorted({(e[2], e[5]) for _w, e in f.envs() if e is not None
                    and isinstance(e[5], str)})
    if not kinds:
        return None
    seat, kind = rng.choice(kinds)
    return {"seat": rng.choice([seat, seat, None]), "kind": kind}


@_op("drop_kind", "drop", 2, _draw_drop_kind)
def _apply_drop_kind(f: Forge, p: Params) -> str:
    n = _drop_where(f, lambda e: e[5] == p["kind"] and p["seat"] in (None, e[2]))
    who = "every seat" if p["seat"] is None else f"seat {p['seat']}"
    return f"drop every {p['kind']!r} envelope of {who} ({n})"


def _draw_truncate(f: Forge, rng: random.Random) -> Params | None:
    seat = rng.randrange(f.n)
    chain = f.chain(seat)
    if not chain:
        return None
    return {"seat": seat, "keep": rng.randrange(len(chain))}


@_op("truncate_seat", "drop", 4, _draw_truncate)
def _apply_truncate(f: Forge, p: Params) -> str:
    s, keep = p["seat"], p["keep"]
    chain = f.chain(s)
    at = describe(chain[keep]) if keep < len(chain) else "its end"
    n = _drop_where(f, lambda e: e[2] == s and isinstance(e[3], int) and e[3] >= keep)
    return f"drop seat {s}'s envelopes from seq {keep} on ({at}; {n} dropped)"


def _draw_truncate_all(f: Forge, rng: random.Random) -> Params | None:
    keep = []
    for s in range(f.n):
        c = len(f.chain(s))
        keep.append(rng.randrange(c + 1) if c else 0)
    return {"keep": keep}


@_op("truncate_all", "drop", 2, _draw_truncate_all)
def _apply_truncate_all(f: Forge, p: Params) -> str:
    keep = p["keep"]
    n = _drop_where(f, lambda e: isinstance(e[2], int) and 0 <= e[2] < len(keep)
                    and isinstance(e[3], int) and e[3] >= keep[e[2]])
    return f"truncate every seat's chain (keep seqs below {keep}; {n} dropped)"


def _draw_cut(f: Forge, rng: random.Random) -> Params | None:
    if len(f.wires) < 2:
        return None
    return {"keep": rng.randrange(1, len(f.wires))}


@_op("cut_file", "drop", 2, _draw_cut)
def _apply_cut(f: Forge, p: Params) -> str:
    n = len(f.wires) - p["keep"]
    last = try_envelope(f.wires[p["keep"] - 1]) if 0 < p["keep"] <= len(f.wires) else None
    f.wires = f.wires[:p["keep"]]
    return f"cut the file after envelope #{p['keep'] - 1} ({describe(last)}; {n} dropped)"


def _draw_after_next_action(f: Forge, rng: random.Random) -> Params | None:
    keys = _keys(f)
    if not keys:
        return None
    at = rng.choice(keys)
    return {"seat": rng.randrange(f.n), "at": list(at)}


def drop_after_next_action(f: Forge, seat: int, index: int) -> tuple[str, int]:
    """Drop every envelope of ``seat`` after its first action at file index ``index`` or
    later (all of them after ``index`` if it has none): the file of a table that crashed
    right after that seat's next move."""
    cut: int | None = None
    for i, (_w, e) in enumerate(f.envs()):
        if i >= index and e is not None and e[2] == seat and e[5] == ACTION_KIND:
            cut = e[3]
            break
    if cut is None:
        later = [e[3] for i, (_w, e) in enumerate(f.envs()) if i >= index and e is not None
                 and e[2] == seat and isinstance(e[3], int)]
        cut = min(later) - 1 if later else None
    if cut is None:
        return "nothing after", 0
    n = _drop_where(f, lambda e: e[2] == seat and isinstance(e[3], int) and e[3] > cut)
    return f"after {seat}/{cut}", n


@_op("drop_after_next_action", "drop", 3, _draw_after_next_action)
def _apply_after_next_action(f: Forge, p: Params) -> str:
    pos = f.position(*p["at"])
    if pos is None:
        return "nothing (reference envelope gone)"
    where, n = drop_after_next_action(f, p["seat"], pos)
    return (f"drop everything of seat {p['seat']} after its next action from envelope "
            f"{p['at'][0]}/{p['at'][1]} on ({where}; {n} dropped)")


# reorder ------------------------------------------------------------------------------------

def _draw_seed(f: Forge, rng: random.Random) -> Params | None:
    return {"seed": rng.randrange(2**32)}


def _by_seat(f: Forge) -> dict[int | None, list[bytes]]:
    out: dict[int | None, list[bytes]] = {}
    for w, e in f.envs():
        s = e[2] if e is not None and isinstance(e[2], int) else None
        out.setdefault(s, []).append(w)
    return out


@_op("interleave", "reorder", 3, _draw_seed)
def _apply_interleave(f: Forge, p: Params) -> str:
    rng = random.Random(p["seed"])
    queues = [list(reversed(q)) for q in _by_seat(f).values()]
    # a uniformly random merge: shuffle the seats' turns, then take each seat's next one
    turns = [k for k, q in enumerate(queues) for _ in q]
    rng.shuffle(turns)
    f.wires = [queues[k].pop() for k in turns]
    return f"another interleaving of the seats keeping each seat's order (seed {p['seed']})"


def _draw_window(f: Forge, rng: random.Random) -> Params | None:
    return {"seed": rng.randrange(2**32), "window": rng.choice([2, 3, 5, 10, 40])}


@_op("shuffle_windows", "reorder", 2, _draw_window)
def _apply_shuffle_windows(f: Forge, p: Params) -> str:
    rng = random.Random(p["seed"])
    w = p["window"]
    out: list[bytes] = []
    for i in range(0, len(f.wires), w):
        part = f.wires[i:i + w]
        rng.shuffle(part)
        out.extend(part)
    f.wires = out
    return f"shuffle the file within windows of {w} (seed {p['seed']})"


@_op("shuffle", "reorder", 1, _draw_seed)
def _apply_shuffle(f: Forge, p: Params) -> str:
    random.Random(p["seed"]).shuffle(f.wires)
    return f"shuffle the whole file (seed {p['seed']})"


@_op("reverse", "reorder", 1, lambda f, rng: {})
def _apply_reverse(f: Forge, p: Params) -> str:
    f.wires.reverse()
    return "reverse the file"


def _draw_seat(f: Forge, rng: random.Random) -> Params | None:
    return {"seat": rng.randrange(f.n)}


@_op("seat_first", "reorder", 2, _draw_seat)
def _apply_seat_first(f: Forge, p: Params) -> str:
    mine = _by_seat(f).get(p["seat"], [])
    taken = set(mine)
    f.wires = mine + [w for w in f.wires if w not in taken]
    return f"write seat {p['seat']}'s envelopes first (each seat's order kept)"


@_op("seat_last", "reorder", 1, _draw_seat)
def _apply_seat_last(f: Forge, p: Params) -> str:
    mine = _by_seat(f).get(p["seat"], [])
    taken = set(mine)
    f.wires = [w for w in f.wires if w not in taken] + mine
    return f"write seat {p['seat']}'s envelopes last (each seat's order kept)"


@_op("sort_by_seq", "reorder", 1, lambda f, rng: {})
def _apply_sort(f: Forge, p: Params) -> str:
    def key(item: tuple[bytes, Env | None]) -> tuple[int, int]:
        e = item[1]
        if e is None or not isinstance(e[3], int) or not isinstance(e[2], int):
            return (1 << 62, 0)
        return (e[3], e[2])
    f.wires = [w for w, _e in sorted(f.envs(), key=key)]
    return "sort the file by (seq, sender)"


def _draw_move(f: Forge, rng: random.Random) -> Params | None:
    keys = _keys(f)
    if not keys:
        return None
    return {"key": list(rng.choice(keys)), "to": rng.random()}


@_op("move_one", "reorder", 3, _draw_move)
def _apply_move(f: Forge, p: Params) -> str:
    i = f.position(*p["key"])
    if i is None:
        return "nothing (envelope gone)"
    w = f.wires.pop(i)
    j = int(p["to"] * (len(f.wires) + 1))
    f.wires.insert(j, w)
    return f"move {describe(try_envelope(w))} from #{i} to #{j}"


# duplicate ----------------------------------------------------------------------------------

def _draw_dup(f: Forge, rng: random.Random) -> Params | None:
    keys = sorted(set(_keys(f)))
    if not keys:
        return None
    k = rng.choice([1, 1, 2, 5])
    return {"keys": [list(x) for x in rng.sample(keys, min(k, len(keys)))],
            "where": rng.choice(["adjacent", "end", "start", "random"]),
            "seed": rng.randrange(2**32)}


@_op("duplicate", "duplicate", 3, _draw_dup)
def _apply_dup(f: Forge, p: Params) -> str:
    rng = random.Random(p["seed"])
    keys = {tuple(k) for k in p["keys"]}
    copies = [(i, w) for i, (w, e) in enumerate(f.envs())
              if e is not None and (e[2], e[3]) in keys]
    for i, w in reversed(copies):
        where = p["where"]
        if where == "adjacent":
            f.wires.insert(i + 1, w)
        elif where == "end":
            f.wires.append(w)
        elif where == "start":
            f.wires.insert(0, w)
        else:
            f.wires.insert(rng.randrange(len(f.wires) + 1), w)
    shown = ", ".join(describe(try_envelope(w)) for _i, w in copies[:4])
    return f"repeat {len(copies)} envelope(s) ({p['where']}): {shown}"


def _draw_corrupt(f: Forge, rng: random.Random) -> Params | None:
    if not f.wires:
        return None
    return {"index": rng.randrange(len(f.wires)),
            "how": rng.choice(["flip", "truncate", "garbage", "other-game"]),
            "byte": rng.randrange(1 << 16), "seed": rng.randrange(2**32)}


@_op("corrupt", "damage", 2, _draw_corrupt)
def _apply_corrupt(f: Forge, p: Params) -> str:
    i = p["index"] % len(f.wires) if f.wires else 0
    if not f.wires:
        return "nothing"
    w = f.wires[i]
    what = describe(try_envelope(w))
    how = p["how"]
    if how == "flip":
        b = bytearray(w)
        b[p["byte"] % len(b)] ^= 0x01
        f.wires[i] = bytes(b)
        return f"flip a bit of envelope #{i} ({what}) without re-signing"
    if how == "truncate":
        f.wires[i] = w[: max(1, len(w) // 2)]
        return f"truncate envelope #{i} ({what})"
    if how == "garbage":
        f.wires.insert(i, random.Random(p["seed"]).randbytes(1 + p["byte"] % 200))
        return f"insert garbage bytes before envelope #{i}"
    e = try_envelope(w)
    if e is None:
        return "nothing"
    e[1] = hashlib.sha256(f.game_id).digest()
    f.wires.insert(i, sign(f.key, [*e[:2], f.forger, *e[3:]]))
    return f"insert a copy of {what} signed by the forger for another game id"


# the forger's own chain: re-sign from a point with a change ---------------------------------

ABORT_RULES = ("dleq-invalid", "illegal-action", "out-of-turn", "equivocation", "bad-chain",
               "rewritten-history", "invalid-proof", "bad-signature", "silent", "stall",
               "ack-mismatch", "made-up rule", "")


def junk(rng: random.Random, depth: int = 0) -> Any:
    """A random msgpack-able value (mostly safe types; sometimes a float or a map, which
    the transcript refuses to carry)."""
    r = rng.random()
    if depth > 2 or r < 0.25:
        return rng.choice([0, 1, -1, 2**40, None, True, "", "x" * rng.randrange(80),
                           rng.randbytes(rng.choice([0, 1, 31, 32, 33, 64]))])
    if r < 0.3:
        return rng.choice([1.5, {"k": 1}])
    return [junk(rng, depth + 1) for _ in range(rng.randrange(5))]


def random_action(f: Forge, rng: random.Random, step: int) -> bytes:
    """An encoded action for the forger at ``step``: another legal one where the replay can
    enumerate them, else any action of a random type with random fields, or garbage."""
    facts = f.honest.facts()
    alts = facts.alternatives(step, f.forger)
    r = rng.random()
    if alts and r < 0.6:
        return encode(rng.choice(alts))
    if r < 0.9:
        cls = rng.choice(ACTION_TYPES)
        kinds = engine_actions._FIELDS.get(cls, ())
        vals: list[Any] = []
        for k in kinds:
            if k == "i":
                vals.append(rng.choice([0, 1, 2, 3, 5, 10, 40, -1]))
            elif k == "b":
                vals.append(rng.randbytes(rng.choice([0, 8, 32])))
            elif k == "I":
                vals.append([rng.randrange(60) for _ in range(rng.randrange(4))])
            else:
                vals.append([[rng.randrange(60), rng.randrange(5)]
                             for _ in range(rng.randrange(3))])
        return msgpack.packb([engine_actions.CODE[cls], *vals], use_bin_type=True)
    return rng.choice([b"", b"\x90", rng.randbytes(8), msgpack.packb([99])])


def _real_wire(f: Forge, rng: random.Random, seat: int | None = None,
               kind: str | None = None) -> tuple[bytes, Env] | None:
    cands = [(w, e) for w, e in f.envs() if e is not None and (seat is None or e[2] == seat)
             and (kind is None or e[5] == kind)]
    return rng.choice(cands) if cands else None


def _fake_heads(f: Forge, rng: random.Random, heads: Any) -> tuple[Any, str]:
    """An edit of an ack's heads ``[[seat, seq, id], ...]`` and what it did."""
    hs = [list(h) for h in heads] if isinstance(heads, list) else []
    hs = [h for h in hs if isinstance(h, list) and len(h) == 3]
    choice = rng.choice(["drop", "seq+1", "seq-1", "id", "id-other", "add", "empty", "dup",
                         "seat"])
    if not hs and choice not in ("add", "empty"):
        choice = "add"
    i = rng.randrange(len(hs)) if hs else 0
    was = f"[{hs[i][0]}, {hs[i][1]}]" if hs else ""
    if choice == "drop":
        del hs[i]
        text = f"head {was} left out"
    elif choice in ("seq+1", "seq-1"):
        hs[i][1] = max(0, hs[i][1] + (1 if choice == "seq+1" else -1))
        text = f"head {was} given seq {hs[i][1]} (same id)"
    elif choice == "id":
        hs[i][2] = rng.randbytes(32)
        text = f"head {was} given a random id"
    elif choice == "id-other":
        other = _real_wire(f, rng, hs[i][0] if isinstance(hs[i][0], int) else None)
        hs[i][2] = envelope_id(other[0]) if other is not None else bytes(32)
        text = f"head {was} given the id of {describe(other[1] if other else None)}"
    elif choice == "add":
        real = _real_wire(f, rng)
        if real is not None and rng.random() < 0.5:
            hs.append([real[1][2], real[1][3], envelope_id(real[0])])
            text = f"a true head [{real[1][2]}, {real[1][3]}] added"
        else:
            hs.append([rng.randrange(f.n), rng.randrange(400), rng.randbytes(32)])
            text = f"a made-up head [{hs[-1][0]}, {hs[-1][1]}, random id] added"
    elif choice == "empty":
        hs = []
        text = "every head left out"
    elif choice == "dup":
        hs.append(list(hs[i]))
        text = f"head {was} repeated"
    else:
        hs[i][0] = (hs[i][0] + 1) % f.n if isinstance(hs[i][0], int) else 0
        text = f"head {was} given seat {hs[i][0]} (same seq and id)"
    return hs, text


def _leaf_paths(obj: Any, path: list[int], out: list[list[int]]) -> None:
    if isinstance(obj, list):
        for k, x in enumerate(obj):
            _leaf_paths(x, [*path, k], out)
    else:
        out.append(path)


def _set_leaf(obj: Any, path: list[int], value: Any) -> Any:
    if not path:
        return value
    obj = list(obj)
    obj[path[0]] = _set_leaf(obj[path[0]], path[1:], value)
    return obj


def _get_leaf(obj: Any, path: list[int]) -> Any:
    for k in path:
        obj = obj[k]
    return obj


def _tweak(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice([1, -1, 2, 1000])
    if isinstance(value, bytes):
        if not value:
            return b"\x00"
        b = bytearray(value)
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        return bytes(b)
    if isinstance(value, str):
        return value + "x"
    return junk(rng)


def draw_change(f: Forge, rng: random.Random, env: Env) -> Params:
    """A change of one of the forger's envelopes, fitting its kind."""
    kind, body = env[5], env[6]
    generic = rng.random() < 0.25
    if kind == ACTION_KIND and isinstance(body, list) and len(body) >= 2 and not generic:
        step = body[0] if isinstance(body[0], int) else 0
        what = rng.choice(["move", "move", "move", "step", "hash", "shape"])
        if what == "move":
            return {"what": "move", "action": random_action(f, rng, step)}
        if what == "step":
            return {"what": "step", "step": step + rng.choice([-2, -1, 1, 2, 50])}
        if what == "hash":
            h = f.honest.facts().state_hash(step + rng.choice([-1, 1, 2]))
            return {"what": "hash", "hash": rng.choice([h, rng.randbytes(32), None])}
        return {"what": "body", "body": rng.choice([[step], [step, *body[1:], 1],
                                                    [str(step), body[1]], junk(rng)])}
    if kind in (ACK_KIND, CLOSE_KIND) and isinstance(body, list) and len(body) == 3 \
            and not generic:
        what = rng.choice(["round", "value", "heads", "heads", "kind"])
        if what == "round":
            r = body[0] if isinstance(body[0], int) else 0
            return {"what": "round", "round": r + rng.choice([-1, 1, 2, 1000])}
        if what == "value":
            other = _real_wire(f, rng, None, ACK_KIND)
            v = other[1][6][1] if other is not None else rng.randbytes(32)
            return {"what": "value", "value": rng.choice([v, rng.randbytes(32)])}
        if what == "heads":
            heads, text = _fake_heads(f, rng, body[2])
            return {"what": "heads", "heads": heads, "how": text}
        return {"what": "kind", "kind": CLOSE_KIND if kind == ACK_KIND else ACK_KIND}
    if kind == CRYPTO_KIND and isinstance(body, list) and not generic:
        what = rng.choice(["leaf", "leaf", "other-body"])
        if what == "leaf":
            paths: list[list[int]] = []
            _leaf_paths(body, [], paths)
            if paths:
                path = rng.choice(paths)
                return {"what": "leaf", "path": path,
                        "value": _tweak(_get_leaf(body, path), rng)}
        other = _real_wire(f, rng, None, CRYPTO_KIND)
        if other is not None:
            return {"what": "body", "body": other[1][6],
                    "from": f"{other[1][2]}/{other[1][3]}"}
    what = rng.choice(["drop", "drop", "insert", "insert", "insert", "kind", "body",
                       "prev", "seq", "same-again"])
    if what == "insert":
        k, b, text = draw_new_body(f, rng)
        return {"what": "insert", "kind": k, "body": b, "how": text}
    if what == "kind":
        return {"what": "kind", "kind": rng.choice([ACTION_KIND, ACK_KIND, CLOSE_KIND,
                                                    ABORT_KIND, STOP_KIND, CRYPTO_KIND,
                                                    "junk", ""])}
    if what == "body":
        return {"what": "body", "body": junk(rng)}
    if what == "prev":
        return {"what": "prev", "prev": rng.choice([bytes(32), rng.randbytes(32)])}
    if what == "seq":
        return {"what": "seq", "delta": rng.choice([-1, 1, 2, 100])}
    if what == "same-again":
        return {"what": "same-again"}
    return {"what": "drop"}


def change_fn(f: Forge, ch: Params) -> tuple[Callable[[Env], list[Env]],
                                             Callable[[Env], None] | None, str]:
    """The ``change``/``tamper`` pair of :func:`resign_from` for a drawn change, and its text."""
    what = ch["what"]
    tamper: Callable[[Env], None] | None = None
    text = what

    def edit(e: Env) -> list[Env]:
        try:
            return change(e)
        except (TypeError, IndexError, KeyError):
            return [e]  # the envelope no longer has the shape the change was drawn for

    def change(e: Env) -> list[Env]:
        b = e[6]
        if what == "move":
            e[6] = [b[0], ch["action"], *b[2:]]
        elif what == "step":
            e[6] = [ch["step"], *b[1:]]
        elif what == "hash":
            e[6] = [b[0], b[1]] if ch["hash"] is None else [b[0], b[1], ch["hash"]]
        elif what == "round":
            e[6] = [ch["round"], *b[1:]]
        elif what == "value":
            e[6] = [b[0], ch["value"], b[2]]
        elif what == "heads":
            e[6] = [b[0], b[1], ch["heads"]]
        elif what == "kind":
            e[5] = ch["kind"]
        elif what in ("body",):
            e[6] = ch["body"]
        elif what == "leaf":
            try:
                e[6] = _set_leaf(b, ch["path"], ch["value"])
            except (IndexError, TypeError):
                pass
        elif what == "drop":
            return []
        elif what == "insert":
            return [[VERSION, e[1], e[2], 0, b"", ch["kind"], ch["body"]], e]
        elif what == "same-again":
            return [e, list(e)]  # the same envelope signed twice, at two seqs
        return [e]

    if what == "prev":
        def tamper_prev(e: Env) -> None:
            e[4] = ch["prev"]
        tamper = tamper_prev
    elif what == "seq":
        def tamper_seq(e: Env) -> None:
            e[3] = max(0, e[3] + ch["delta"])
        tamper = tamper_seq
    return edit, tamper, text


def _change_text(ch: Params, env: Env) -> str:
    """What a drawn change does to ``env``, in words."""
    try:
        return _change_words(ch, env)
    except (TypeError, IndexError, KeyError):
        return f"its {ch['what']} changed"


def _change_words(ch: Params, env: Env) -> str:
    what = ch["what"]
    if what == "move":
        return f"its move {_act(env[6][1])} -> {_act(ch['action'])}"
    if what == "step":
        return f"the action's step {env[6][0]} -> {ch['step']}"
    if what == "hash":
        h = ch["hash"]
        return "the action's state hash " + ("removed" if h is None else f"-> {h[:4].hex()}…")
    if what == "round":
        return f"the {env[5]}'s round {env[6][0]} -> {ch['round']}"
    if what == "value":
        return f"the {env[5]}'s chain value -> {ch['value'][:4].hex()}…"
    if what == "heads":
        return f"the {env[5]}'s {ch.get('how', 'heads changed')}"
    if what == "kind":
        return f"its kind {env[5]!r} -> {ch['kind']!r}"
    if what == "body":
        src = f" (the body of {ch['from']})" if "from" in ch else ""
        return f"its body replaced{src} -> {str(to_json(ch['body']))[:80]}"
    if what == "leaf":
        return f"a leaf of its body at {ch['path']} -> {str(to_json(ch['value']))[:40]}"
    if what == "drop":
        return "it left out"
    if what == "insert":
        return f"a new envelope inserted before it: {ch.get('how', ch['kind'])}"
    if what == "prev":
        return f"its prev link -> {ch['prev'][:4].hex()}…"
    if what == "seq":
        return f"its seq shifted by {ch['delta']}"
    if what == "same-again":
        return "it signed a second time at the next seq"
    return str(what)


def _draw_resign(f: Forge, rng: random.Random) -> Params | None:
    chain = f.chain(f.forger)
    if not chain:
        return None
    env = rng.choice(_targets(chain, rng))
    return {"seq": env[3], "change": draw_change(f, rng, env)}


def _targets(chain: list[Env], rng: random.Random) -> list[Env]:
    """Which of the forger's envelopes to rewrite: mostly moves, else acks and closes, its
    last few envelopes (the close, which no other seat's signature names), or any."""
    r = rng.random()
    if r < 0.45:
        return [e for e in chain if e[5] == ACTION_KIND] or chain
    if r < 0.65:
        return [e for e in chain if e[5] in (ACK_KIND, CLOSE_KIND)] or chain
    if r < 0.8:
        return chain[-3:]
    return chain


@_op("resign", "resign", 10, _draw_resign)
def _apply_resign(f: Forge, p: Params) -> str:
    chain = {e[3]: e for e in f.chain(f.forger)}
    env = chain.get(p["seq"])
    if env is None:
        return "nothing (envelope gone)"
    edit, tamper, _t = change_fn(f, p["change"])
    later = sum(1 for q in chain if q > p["seq"])
    f.wires = resign_from(f.wires, f.key, f.forger, p["seq"], edit, tamper)
    return (f"seat {f.forger} re-signs its chain from {describe(env)}: "
            f"{_change_text(p['change'], env)}; its {later} later envelope(s) re-chained")


# new envelopes ------------------------------------------------------------------------------

def draw_new_body(f: Forge, rng: random.Random) -> tuple[Any, Any, str]:
    """``(kind, body, description)`` of an envelope the forger may sign."""
    what = rng.choice(["abort", "abort", "abort", "stop", "close", "ack", "ack", "action",
                       "unknown", "crypto", "garbage", "talk"])
    facts = f.honest.facts()
    mine = f.chain(f.forger)
    if what == "abort":
        culprit = rng.choice([*range(f.n), *range(f.n), None, f.n, -1])
        rule = rng.choice(ABORT_RULES)
        ref: Any = None
        if rng.random() < 0.5 and isinstance(culprit, int) and 0 <= culprit < f.n:
            real = _real_wire(f, rng, culprit)
            if real is not None:
                ref = [real[1][2], real[1][3], envelope_id(real[0])]
        ev_how = rng.choice(["none", "empty", "one-real", "own", "two-real", "own-fork",
                             "garbage", "absent"])
        evidence: list[bytes] | None = None
        if ev_how == "empty":
            evidence = []
        elif ev_how == "one-real":
            real = _real_wire(f, rng, culprit if isinstance(culprit, int)
                              and 0 <= culprit < f.n else None)
            evidence = [real[0]] if real is not None else []
        elif ev_how == "own":
            real = _real_wire(f, rng, f.forger)
            evidence = [real[0]] if real is not None else []
        elif ev_how == "two-real":
            s = culprit if isinstance(culprit, int) and 0 <= culprit < f.n else f.forger
            chain = [(w, e) for w, e in f.envs() if e is not None and e[2] == s]
            chain.sort(key=lambda x: x[1][3] if isinstance(x[1][3], int) else 0)
            if len(chain) >= 2:
                k = rng.randrange(len(chain) - 1)
                evidence = [chain[k][0], chain[k + 1][0]]
            else:
                evidence = []
        elif ev_how == "own-fork" and mine:
            e = list(rng.choice(mine))
            alt = [*e[:6], junk(rng)]
            evidence = [sign(f.key, e), sign(f.key, alt)]
        elif ev_how == "absent":  # the culprit's real envelope that the file leaves out
            who = culprit if isinstance(culprit, int) and 0 <= culprit < f.n else f.forger
            present = set(f.wires)
            theirs = [w for w in f.honest.wires if envelope(w)[2] == who]
            gone = [w for w in theirs if w not in present]
            evidence = [rng.choice(gone or theirs)] if theirs else []
        elif ev_how == "garbage":
            evidence = [rng.randbytes(40)]
        body: list[Any] = [culprit, rule, rng.choice(["", "made up", "x" * 300]), ref]
        if evidence is not None:
            body.append(evidence)
        shown = "no evidence field" if evidence is None else \
            f"evidence {ev_how} [{', '.join(describe(try_envelope(w)) for w in evidence)}]"
        ref_text = f", ref {ref[0]}/{ref[1]}" if ref is not None else ""
        return ABORT_KIND, body, f"abort naming {culprit} for {rule!r}{ref_text}, {shown}"
    if what == "stop":
        body = rng.choice([["local", "disk on fire"], ["peer-silent", "seat 0 went quiet"],
                           ["abandoned", ""], ["x" * 70, "y"], ["a", "b", "c"],
                           ["illegal-action", "seat 2 cheated"]])
        return STOP_KIND, body, f"stop notice {to_json(body)}"[:80]
    acks = [e for e in mine if e[5] in (ACK_KIND, CLOSE_KIND)]
    if what in ("close", "ack"):
        src = rng.choice(acks) if acks else None
        picked = src[6] if src is not None else None
        base = list(picked) if isinstance(picked, list) and len(picked) == 3 \
            else [len(facts.chain) - 1, facts.chain[-1], []]
        how = rng.choice(["copy", "next-round", "final", "heads", "true-heads"])
        of = f"the body of {describe(src)}" if src is not None else "a final ack body"
        if how == "copy":
            how = f"a copy of {of}"
        elif how == "next-round" and isinstance(base[0], int):
            r = base[0] + 1
            base = [r, facts.chain[r] if r < len(facts.chain) else rng.randbytes(32), base[2]]
            how = f"{of} for the next round, with its true chain value"
        elif how == "final":
            base = [len(facts.chain) - 1, facts.chain[-1], base[2]]
            how = f"{of} for the final round, with the final chain value"
        elif how == "heads":
            base[2], t = _fake_heads(f, rng, base[2])
            how = f"heads: {t}"
        elif how == "true-heads":
            base[2] = [[s, c[-1][3], envelope_id(wire_of(f, s, c[-1][3]))]
                       for s in range(f.n) if (c := f.chain(s))]
            how = f"{of} with heads naming every seat's last envelope in the file"
        return what, base, f"{what} ({how}) round {base[0]}"
    if what == "action":
        step = rng.randrange(max(1, len(facts.states) + 3))
        body = [step, random_action(f, rng, step)]
        h = facts.state_hash(step)
        if h is not None and rng.random() < 0.8:
            body.append(h)
        return ACTION_KIND, body, f"action step {step} {_act(body[1])}"
    if what == "talk":  # a line of table talk: well-formed, too long, or malformed
        body = rng.choice([["gg"], ["z" * (MAX_TALK_CHARS + 1)], [7], ["a", "b"], []])
        return TALK_KIND, body, f"talk {to_json(body)}"[:80]
    if what == "unknown":
        odd = rng.choice(["junk", "ACTION", "acknowledge", "", "x" * 40])
        return odd, junk(rng), f"unknown kind {odd!r}"
    if what == "crypto":
        other = _real_wire(f, rng, None, CRYPTO_KIND)
        if other is not None:
            return CRYPTO_KIND, other[1][6], f"copy of the crypto body of {describe(other[1])}"
    known = rng.choice([ACTION_KIND, ACK_KIND, CLOSE_KIND, ABORT_KIND, STOP_KIND, CRYPTO_KIND,
                        TALK_KIND])
    return known, junk(rng), f"{known} with a garbage body"


def wire_of(f: Forge, seat: int, seq: int) -> bytes:
    """The wire of the seat's envelope ``seq`` in the file (first copy)."""
    for w, e in f.envs():
        if e is not None and e[2] == seat and e[3] == seq:
            return w
    return b""


def _draw_append(f: Forge, rng: random.Random) -> Params | None:
    kind, body, text = draw_new_body(f, rng)
    tamper = rng.choice([None, None, None, None, "prev", "seq+1", "seq-1", "seq0"])
    return {"kind": kind, "body": body, "how": text, "tamper": tamper,
            "where": rng.choice(["end", "end", "end", "random", "start"]),
            "pos": rng.random()}


@_op("append", "append", 8, _draw_append)
def _apply_append(f: Forge, p: Params) -> str:
    last = last_of(f.wires, f.forger)
    seq, prev = (last[0] + 1, envelope_id(last[1])) if last is not None else (0, bytes(32))
    t = p["tamper"]
    if t == "prev":
        prev = bytes(32)
    elif t == "seq+1":
        seq += 1
    elif t == "seq-1":
        seq = max(0, seq - 1)
    elif t == "seq0":
        seq = 0
    w = sign(f.key, [VERSION, f.game_id, f.forger, seq, prev, p["kind"], p["body"]])
    if p["where"] == "end":
        f.wires.append(w)
    elif p["where"] == "start":
        f.wires.insert(0, w)
    else:
        f.wires.insert(int(p["pos"] * (len(f.wires) + 1)), w)
    tt = f" with {t}" if t else ""
    return (f"seat {f.forger} signs a new envelope {f.forger}/{seq}{tt} after its last one: "
            f"{p['how']} (placed {p['where']})")


# the known bug pattern, as one operator -----------------------------------------------------

def _draw_truncated_rewrite(f: Forge, rng: random.Random) -> Params | None:
    chain = f.chain(f.forger)
    acts = [e for e in chain if e[5] == ACTION_KIND and isinstance(e[6], list)
            and len(e[6]) >= 2]
    if not acts:
        return None
    bids = [e for e in acts if isinstance(_decoded(e[6][1]), Bid | PassBid)]
    env = rng.choice(bids if bids and rng.random() < 0.6 else acts)
    step = env[6][0]
    alts = f.honest.facts().alternatives(step, f.forger)
    action = encode(rng.choice(alts)) if alts else random_action(f, rng, step)
    return {"seq": env[3], "action": action,
            "others": rng.choice(["next-action", "next-action", "none", "cut-here"])}


def _decoded(data: Any) -> Action | None:
    try:
        return decode(data) if isinstance(data, bytes) else None
    except DecodeError:
        return None


@_op("truncated_rewrite", "composite", 5, _draw_truncated_rewrite)
def _apply_truncated_rewrite(f: Forge, p: Params) -> str:
    chain = {e[3]: e for e in f.chain(f.forger)}
    env = chain.get(p["seq"])
    if env is None or env[5] != ACTION_KIND:
        return "nothing (action gone)"
    pos = f.position(f.forger, p["seq"])
    ch = {"what": "move", "action": p["action"]}
    edit, _tamper, _t = change_fn(f, ch)
    f.wires = resign_from(f.wires, f.key, f.forger, p["seq"], edit)
    n_mine = _drop_where(f, lambda e: e[2] == f.forger and isinstance(e[3], int)
                         and e[3] > p["seq"])
    others = ""
    if p["others"] == "next-action" and pos is not None:
        parts = []
        for s in range(f.n):
            if s != f.forger:
                where, n = drop_after_next_action(f, s, pos)
                parts.append(f"seat {s} {where} ({n})")
        others = "; every other seat's envelopes dropped after its next action: " + \
            ", ".join(parts)
    elif p["others"] == "cut-here" and pos is not None:
        keep = set(f.wires[:pos + 1])
        n = len(f.wires)
        f.wires = [w for w in f.wires if w in keep]
        others = f"; the file cut right after it ({n - len(f.wires)} more dropped)"
    return (f"seat {f.forger} re-signs {describe(env)} as {_act(p['action'])} and drops all "
            f"{n_mine} of its later envelopes{others}")


def _first_knowing(f: Forge, seat: int, forger: int, seq: int) -> int | None:
    """The seq of ``seat``'s first ack or close whose heads say it held the forger's
    envelope ``seq`` (or a later one): from there on its chain contradicts a rewrite."""
    for e in f.chain(seat):
        if e[5] in (ACK_KIND, CLOSE_KIND) and isinstance(e[6], list) and len(e[6]) == 3 \
                and isinstance(e[6][2], list):
            for h in e[6][2]:
                if isinstance(h, list) and len(h) == 3 and h[0] == forger \
                        and isinstance(h[1], int) and h[1] >= seq:
                    return int(e[3])
    return None


HIDE = ("keep", "before-ack", "next-action", "before-next-action", "random-cut")
"""What a forger that rewrote its history does with each other seat's envelopes: keep
them, drop them from the first ack that names its rewritten envelope on (so no signature
in the file contradicts the new history), keep them up to their next action, drop them
from their next action on, or cut them at a random point after the rewrite."""


def _drop_from(f: Forge, seat: int, seq: int) -> int:
    """Drop ``seat``'s envelopes from ``seq`` on; how many were dropped."""
    return _drop_where(f, lambda e: e[2] == seat and isinstance(e[3], int) and e[3] >= seq)


def _hide_others(f: Forge, q: int, others: list[str], cut: float) -> list[str]:
    """Do with each other seat's envelopes what ``others`` says (:data:`HIDE`, by seat)
    around the forger's rewritten envelope ``q``; what was done, per seat."""
    pos = f.position(f.forger, q) or 0
    parts = []
    for s in range(f.n):
        how = others[s] if s < len(others) else "keep"
        if s == f.forger or how == "keep":
            continue
        if how == "before-ack":
            k = _first_knowing(f, s, f.forger, q)
            n = 0 if k is None else _drop_from(f, s, k)
            parts.append(f"seat {s} from its first ack naming it ({'none' if k is None else k}"
                         f"; {n} dropped)")
        elif how == "next-action":
            where, n = drop_after_next_action(f, s, pos)
            parts.append(f"seat {s} after its next action ({where}; {n} dropped)")
        elif how == "before-next-action":
            nxt = next((e[3] for i, (_w, e) in enumerate(f.envs()) if i >= pos
                        and e is not None and e[2] == s and e[5] == ACTION_KIND), None)
            n = 0 if nxt is None else _drop_from(f, s, nxt)
            parts.append(f"seat {s} from its next action on ({nxt}; {n} dropped)")
        else:
            later = [e[3] for i, (_w, e) in enumerate(f.envs()) if i >= pos
                     and e is not None and e[2] == s and isinstance(e[3], int)]
            if later:
                k = later[int(cut * len(later))]
                n = _drop_from(f, s, k)
                parts.append(f"seat {s} from seq {k} on ({n} dropped)")
    return parts


def _draw_rewrite_and_hide(f: Forge, rng: random.Random) -> Params | None:
    chain = f.chain(f.forger)
    if not chain:
        return None
    env = rng.choice(_targets(chain, rng))
    return {"seq": env[3], "change": draw_change(f, rng, env),
            "mine": rng.choice(["drop-later", "drop-later", "keep", "keep-one"]),
            "others": [rng.choice(HIDE) for _ in range(f.n)], "cut": rng.random()}


@_op("rewrite_and_hide", "composite", 8, _draw_rewrite_and_hide)
def _apply_rewrite_and_hide(f: Forge, p: Params) -> str:
    chain = {e[3]: e for e in f.chain(f.forger)}
    env = chain.get(p["seq"])
    if env is None:
        return "nothing (envelope gone)"
    q = p["seq"]
    parts = _hide_others(f, q, p["others"], p["cut"])
    edit, tamper, _t = change_fn(f, p["change"])
    f.wires = resign_from(f.wires, f.key, f.forger, q, edit, tamper)
    mine = ""
    if p["mine"] in ("drop-later", "keep-one"):
        new_last = q + (1 if p["mine"] == "keep-one" else 0)
        n = _drop_where(f, lambda e: e[2] == f.forger and isinstance(e[3], int)
                        and e[3] > new_last)
        mine = f"; its envelopes after seq {new_last} dropped ({n})"
    hidden = ("; others: " + ", ".join(parts)) if parts else "; every other seat kept"
    return (f"seat {f.forger} re-signs its chain from {describe(env)}: "
            f"{_change_text(p['change'], env)}{mine}{hidden}")


def _is_shuffle(e: Env, seat: int) -> bool:
    """Whether ``e`` is ``seat``'s message of a shuffle chain (step ``shuffle_<seat>``)."""
    b = e[6]
    return (e[5] == CRYPTO_KIND and isinstance(b, list) and len(b) >= 5
            and b[3] == f"shuffle_{seat}" and isinstance(b[4], list) and len(b[4]) == 2
            and isinstance(b[2], list) and len(b[2]) >= 1)


def _shuffle_input(f: Forge, env: Env) -> list[Any] | None:
    """The deck the forger's shuffle ``env`` shuffled: the previous seat's output in the
    same op, as the file holds it (None for seat 0, whose input is the op's own)."""
    k = f.forger
    if k == 0:
        return None
    for e in f.chain(k - 1):
        if _is_shuffle(e, k - 1) and e[6][0] == env[6][0]:
            deck = e[6][4][0]
            return deck if isinstance(deck, list) else None
    return None


def _joint_key(f: Forge) -> Any:
    """The game's joint ElGamal key, from every seat's message of the ``keys`` op."""
    ys = []
    for s in range(f.n):
        msg = next((e[6] for e in f.chain(s) if e[5] == CRYPTO_KIND
                    and isinstance(e[6], list) and e[6][1] == "keys"), None)
        if msg is None:
            return None
        ys.append(group.decode_point(msg[4][0], "public key"))
    return group.sum_points(ys)


def _draw_fresh_shuffle(f: Forge, rng: random.Random) -> Params | None:
    mine = [e for e in f.chain(f.forger)
            if _is_shuffle(e, f.forger) and _shuffle_input(f, e) is not None]
    if not mine:
        return None
    return {"seq": rng.choice(mine)[3], "seed": rng.randrange(2**32),
            "others": rng.choice(["keep", "before-ack", "before-ack", "next-action",
                                  "random-cut"]), "cut": rng.random()}


@_op("fresh_shuffle", "composite", 6, _draw_fresh_shuffle)
def _apply_fresh_shuffle(f: Forge, p: Params) -> str:
    """The forger re-signs one of its shuffles with a fresh *valid* one of the same input
    deck (another permutation, a correct proof where the op proves it) and drops its later
    envelopes: the next seat's honest message was made on the forger's original deck, so
    it fails against this one.  A crypto body signs what it computes, not what it read,
    so only that seat's heads (protocol version 6) tell the judge it rested on another
    history.  The new deck follows from ``seed``; a proof has fresh nonces each time
    (a replay writes another valid proof of the same deck)."""
    env = next((e for e in f.chain(f.forger) if e[3] == p["seq"]), None)
    if env is None or not _is_shuffle(env, f.forger):
        return "nothing (shuffle gone)"
    raw = _shuffle_input(f, env)
    joint = _joint_key(f)
    if raw is None or joint is None:
        return "nothing (its input or the keys are gone)"
    k, body = f.forger, env[6]
    inp = decode_deck(raw, "deck")
    rng = random.Random(p["seed"])
    w = shuffle.Witness(tuple(rng.sample(range(len(inp)), len(inp))),
                        tuple(rng.randrange(1, group.L) for _ in inp))
    out = shuffle.apply(inp, w, joint)
    mode = body[2][-1]
    kind = (shuffle.PROOF_TW if mode == shuffle.AUDIT_LAST_PROVEN and k == f.n - 1
            else shuffle.parse_mode(mode))
    proof = None if kind is None else shuffle.prove_kind(
        kind, inp, out, w, joint, [f.game_id, body[0], body[1], k, "shuffle", k],
        f.honest.export.lam)
    new_body = [*body[:4], [encode_deck(out), proof], *body[5:]]
    q = p["seq"]
    parts = _hide_others(f, q, [p["others"]] * f.n, p["cut"])
    f.wires = resign_from(f.wires, f.key, f.forger, q,
                          lambda e: [[*e[:6], new_body]])
    n = _drop_where(f, lambda e: e[2] == f.forger and isinstance(e[3], int) and e[3] > q)
    hidden = ("; others: " + ", ".join(parts)) if parts else "; every other seat kept"
    return (f"seat {f.forger} re-signs {describe(env)} with a fresh valid shuffle of the "
            f"same deck and drops its {n} later envelopes{hidden}")


# unsigned edits -----------------------------------------------------------------------------

HEADER_FIELDS = ("name", "key-swap", "host", "port", "params-mode", "params-players",
                 "params-variant", "params-money", "game-id", "board", "lam", "rename-regid")


def _draw_header(f: Forge, rng: random.Random) -> Params | None:
    return {"field": rng.choice(HEADER_FIELDS), "seat": rng.randrange(f.n),
            "value": rng.choice(["Mallory", "", "bot0", "x" * 64]),
            "lam": rng.choice([1, DEFAULT_LAMBDA + 1, 0, -5, 10**6])}


@_op("header", "header", 2, _draw_header)
def _apply_header(f: Forge, p: Params) -> str:
    base = header_of(f.honest.export)
    base.update(f.header)
    roster = [list(e) for e in base["roster"]]
    params = list(base["params"])
    s, fld = p["seat"] % len(roster), p["field"]
    if fld == "name":
        roster[s][4] = p["value"] if p["value"] != roster[s][4] else p["value"] + "!"
        f.header["roster"] = roster
    elif fld == "key-swap":
        t = (s + 1) % len(roster)
        roster[s][1], roster[t][1] = roster[t][1], roster[s][1]
        f.header["roster"] = roster
    elif fld == "host":
        roster[s][2] = "10.9.9.9"
        f.header["roster"] = roster
    elif fld == "port":
        roster[s][3] = 1 + (roster[s][3] % 65000)
        f.header["roster"] = roster
    elif fld == "params-mode":
        params[4] = "audit" if params[4] == "verified" else "verified"
        f.header["params"] = params
    elif fld == "params-players":
        params[1] = params[1] + 1 if params[1] < 6 else 3
        f.header["params"] = params
    elif fld == "params-variant":
        params[2] = "reverse" if params[2] != "reverse" else "base"
        f.header["params"] = params
    elif fld == "params-money":
        params = params[:5] + ([] if len(params) == 6 else ["hidden"])
        f.header["params"] = params
    elif fld == "game-id":
        f.header["game_id"] = hashlib.sha256(base["game_id"]).digest()
    elif fld == "board":
        f.header["board"] = '{"cities": []}'
    elif fld == "lam":
        f.header["lam"] = p["lam"]
    else:  # rename a seat and write the matching game id: every signature is then void
        roster[s][4] = roster[s][4] + "!"
        f.header["roster"] = roster
        f.header["game_id"] = compute_game_id([RosterEntry(*e) for e in roster],
                                              GameParams.from_wire(params))
    return f"edit the unsigned header: {fld} (seat {s})"


# --- composing ---------------------------------------------------------------------------------

def apply_step(f: Forge, op: str, params: Params) -> None:
    """Apply one operator with given parameters and record it."""
    text = OPS[op].apply(f, params)
    f.steps.append(Step(op, params, text))


def draw_step(f: Forge, op: str, rng: random.Random) -> bool:
    """Draw parameters for ``op`` and apply it; False if it does not apply to this file."""
    params = OPS[op].draw(f, rng)
    if params is None:
        return False
    apply_step(f, op, params)
    return True


def weighted_op_names() -> list[str]:
    """Every operator name repeated by its weight (for a uniform draw that follows the
    weights, e.g. hypothesis's ``sampled_from``)."""
    return [name for name, op in sorted(OPS.items()) for _ in range(max(1, round(op.weight)))]


def pick_ops(rng: random.Random, count: int | None = None) -> list[str]:
    """A weighted random composition of operators (1 to 4, most often 1 or 2)."""
    if count is None:
        count = rng.choices([1, 2, 3, 4], weights=[40, 35, 18, 7])[0]
    names = list(OPS)
    weights = [OPS[n].weight for n in names]
    return rng.choices(names, weights=weights, k=count)


def forge(honest: HonestGame, forger: int, rng: random.Random,
          ops: Sequence[str] | None = None) -> Forge:
    """A forged file of ``forger`` made from ``honest`` by a random composition of
    operators (or the given ones, in order, with random parameters)."""
    f = Forge(honest, forger, honest.wires)
    for op in (ops if ops is not None else pick_ops(rng)):
        for _ in range(3):
            if draw_step(f, op, rng):
                break
    return f


def replay_steps(honest: HonestGame, forger: int, steps: Sequence[Step]) -> Forge:
    """Re-make a forgery from recorded steps (parameters as drawn, not JSON)."""
    f = Forge(honest, forger, honest.wires)
    for s in steps:
        apply_step(f, s.op, s.params)
    return f


# --- the property ------------------------------------------------------------------------------

_HASHED_HEADER = ("game_id", "lam", "board")
UNSIGNED_RULES = ("game-id", "board")
"""The rules the audit gives a file whose unsigned header does not fit its game id (it
reports them as ``unfair`` naming no one: accepted here only for such a header)."""


def _header_edited(honest: ExportedGame, forged: ExportedGame) -> bool:
    """Whether the forged file's unsigned header differs in what the audit must check
    (everything but roster hosts and ports, which the game id leaves out on purpose)."""
    if [[e.seat, e.key, e.name] for e in honest.roster] != \
            [[e.seat, e.key, e.name] for e in forged.roster]:
        return True
    if honest.params.to_wire() != forged.params.to_wire():
        return True
    return any(getattr(honest, k) != getattr(forged, k) for k in _HASHED_HEADER)


def check(report: GameAuditReport, forger: int, honest: HonestGame,
          forged: str | Path | ExportedGame) -> str | None:
    """Why the audit's verdict on a forged file is wrong, or None.

    * ``named-honest-seat``: unfair, naming a seat other than the forger (only the forger
      could sign anything new);
    * ``named-forger-for-nothing``: unfair, naming the forger although every envelope of
      its in the file is one it signed in the honest game (it only left out, reordered or
      repeated envelopes, which is the exporter's right and names no one);
    * ``unfair-naming-no-one``: unfair without a culprit;
    * ``certified-changed-content``: certified although the file's signed contents (each
      sender's set of validly signed envelopes) differ from the honest game's;
    * ``header-edit-named-seat``: an edit of the unsigned header (roster names, params,
      board, λ, game id) judged as a signed violation (a ``game-id`` or ``board`` error
      naming no one is the right verdict there);
    * ``audit-error``: the audit failed (it must judge every file)."""
    v = report.violation
    if v is not None and v.rule == "audit-error":
        return f"audit-error: {v.detail}"
    try:
        game = forged if isinstance(forged, ExportedGame) else read_export(forged)
    except StoreError:
        game = None
    if report.status == UNFAIR:
        assert v is not None
        if game is not None and _header_edited(honest.export, game):
            if v.party is None and v.rule in UNSIGNED_RULES:
                return None  # the file's header is judged as the file's fault: right
            return f"header-edit-named-seat: {report}"
        if v.party is None:
            return f"unfair-naming-no-one: {report}"
        if v.party != forger:
            return f"named-honest-seat: seat {v.party} (the forger is {forger}): {report}"
        if game is not None and not _forger_signed_new(honest, game, forger):
            return f"named-forger-for-nothing: {report}"
        return None
    if report.status == "certified":
        if game is None:
            return "certified an unreadable file"
        if game.game_id != honest.game_id:
            return f"certified-changed-content: the game id changed: {report}"
        sets = signed_sets(game.wires, honest.public_keys(), honest.game_id, honest.signed())
        if sets != honest.signed():
            diff = {s: (len(sets.get(s, frozenset()) - honest.signed().get(s, frozenset())),
                        len(honest.signed().get(s, frozenset()) - sets.get(s, frozenset())))
                    for s in range(honest.players)}
            diff = {s: d for s, d in diff.items() if d != (0, 0)}
            return (f"certified-changed-content: (new, missing) signed envelopes per seat "
                    f"{diff}: {report}")
    return None


def _forger_signed_new(honest: HonestGame, game: ExportedGame, forger: int) -> bool:
    """Whether the file holds an envelope validly signed by the forger for this game that
    the honest game does not (directly or as evidence carried by an abort notice)."""
    known = honest.signed().get(forger, frozenset())
    keys = honest.public_keys()
    todo = [w for w in set(game.wires) if w not in known]
    while todo:
        w = todo.pop()
        try:
            env = parse(w, keys, honest.game_id)
        except (CheatDetected, MalformedInput):
            continue
        if env.sender == forger and w not in known:
            return True
        if env.kind == ABORT_KIND and isinstance(env.body, list) and len(env.body) == 5 \
                and isinstance(env.body[4], list):
            todo.extend(x for x in env.body[4] if isinstance(x, bytes))
    return False


def violation_class(report: GameAuditReport, problem: str | None, forger: int) -> str:
    """A short class of a verdict (for counting): status, rule and whom it names."""
    v = report.violation
    rule = v.rule if v is not None else "-"
    if report.status == UNFAIR and v is not None:
        who = "no one" if v.party is None else ("forger" if v.party == forger else "other seat")
        base = f"unfair/{rule}/{who}"
    else:
        base = f"{report.status}/{rule}"
    if problem is not None:
        return f"{problem.split(':', 1)[0]} [{base}]"
    return base


# --- shrinking ---------------------------------------------------------------------------------

def simpler(step: Step) -> list[Params]:
    """Simpler parameters for one step, to try while shrinking: fewer envelopes dropped or
    repeated, no link tampering, the file end for a new envelope, and for a rewrite each
    other seat's envelopes kept, and the forger's later envelopes kept."""
    p = step.params
    out: list[Params] = []
    keys = p.get("keys")
    if isinstance(keys, list) and len(keys) > 1:
        out.append({**p, "keys": keys[: len(keys) // 2]})
        out.append({**p, "keys": keys[len(keys) // 2:]})
    if step.op == "append":
        if p.get("tamper") is not None:
            out.append({**p, "tamper": None})
        if p.get("where") != "end":
            out.append({**p, "where": "end"})
    if step.op == "rewrite_and_hide":
        others = list(p["others"])
        for s, how in enumerate(others):
            if how != "keep":
                out.append({**p, "others": [*others[:s], "keep", *others[s + 1:]]})
        if p["mine"] != "keep":
            out.append({**p, "mine": "keep"})
    if step.op == "truncated_rewrite" and p["others"] != "none":
        out.append({**p, "others": "none"})
    return out


def minimize(honest: HonestGame, forger: int, steps: Sequence[Step],
             same: Callable[[Forge], bool]) -> list[Step]:
    """Leave out steps and simplify their parameters (:func:`simpler`) while
    ``same(forge)`` still holds: the shortest account of a counter-example."""
    cur = list(steps)
    changed = True
    while changed:
        changed = False
        for i in range(len(cur)):
            if len(cur) > 1:
                trial = cur[:i] + cur[i + 1:]
                if same(replay_steps(honest, forger, trial)):
                    cur, changed = trial, True
                    break
            for params in simpler(cur[i]):
                trial = [*cur[:i], Step(cur[i].op, params, ""), *cur[i + 1:]]
                if same(replay_steps(honest, forger, trial)):
                    cur, changed = trial, True
                    break
            if changed:
                break
    # applied once more for every step's text with the shrunk parameters
    return replay_steps(honest, forger, cur).steps
