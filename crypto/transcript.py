"""Signed, hash-chained transcript envelopes (for every message of the game).

Wire format: a msgpack array ``[envelope_bytes, signature]`` where ``envelope_bytes`` is the
msgpack array ``[version, game_id, sender, seq, prev_hash, kind, body]`` and ``signature`` is
Ed25519 (pyca/cryptography) over ``DOMAIN ‖ envelope_bytes``. Verification always uses the
bytes as received: msgpack is not canonical, so re-encoding before verifying would be wrong.

* ``seq`` counts the sender's envelopes from 0; ``prev_hash`` is SHA-256 of the sender's
  previous *wire* bytes (32 zero bytes for seq 0). A :class:`TranscriptLog` accepts each
  sender's envelopes strictly in order.
* Two validly signed envelopes with the same (sender, seq) and different bytes are an
  :class:`EquivocationProof`, checkable by anyone holding the sender's public key.
* Bodies may contain only lists, bytes, ints, str, bool and None (no maps, no floats), so
  that nothing signed depends on dict order or float formatting.
* Round acknowledgements (kind ``"ack"``) carry ``[round, state_hash, heads]`` where heads
  lists ``[sender, seq, envelope_id]`` of the last envelope accepted from each sender.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgpack
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from . import remembered
from .errors import CheatDetected, MalformedInput
from .group import is_point

VERSION = 1
DOMAIN = b"silkroad/v1/envelope\x00"
ZERO_HASH = bytes(32)
MAX_WIRE = 8 * 1024 * 1024
ACK_KIND = "ack"
#: Envelope kind of every crypto-protocol body (``[op_index, op_name, op_args, step, payload]``).
CRYPTO_KIND = "crypto"


def check_msgpack_safe(obj: object, depth: int = 0) -> None:
    """Raise :class:`MalformedInput` unless ``obj`` uses only the allowed types."""
    if depth > 64:
        raise MalformedInput("message nested too deeply")
    if obj is None or isinstance(obj, bool | bytes | str):
        return
    if isinstance(obj, int):
        if not -(2**63) <= obj < 2**64:
            raise MalformedInput("integer out of msgpack range")
        return
    if isinstance(obj, list | tuple):
        for x in obj:
            t = type(x)
            if t is bytes or t is str or x is None:  # fast path for the common leaves
                continue
            check_msgpack_safe(x, depth + 1)
        return
    raise MalformedInput(f"type {type(obj).__name__} is not allowed in signed data")


def is_signing_key(raw: object) -> bool:
    """Whether ``raw`` is an Ed25519 public key we accept for a party.

    It must encode a point of the prime-order subgroup (canonical, not of small order, not
    the identity). OpenSSL's Ed25519 verification does not check this: with the identity
    as public key, the signature ``identity ‖ 0`` "verifies" for every message (tested in
    test_crypto_transcript.py). Such a key would let anybody sign in that party's name, so
    its envelopes could be forged and denied and no cheat of its would be attributable.
    Honestly generated keys (``a·B``) always pass."""
    return is_point(raw)


def signing_key(raw: object, what: str = "signing key") -> Ed25519PublicKey:
    """Load a party's Ed25519 public key, refusing weak ones (see :func:`is_signing_key`)."""
    if not is_signing_key(raw):
        raise MalformedInput(f"{what} is not a valid Ed25519 public key (32 bytes encoding a "
                             "point of the prime-order subgroup; small-order keys, such as "
                             "the identity, would verify forged signatures)")
    assert isinstance(raw, bytes)
    return Ed25519PublicKey.from_public_bytes(raw)


def _unpack(data: bytes, what: str) -> Any:
    try:
        return msgpack.unpackb(data, raw=False, use_list=True, strict_map_key=True)
    except Exception as exc:  # msgpack raises several unrelated types
        raise MalformedInput(f"{what} is not valid msgpack: {exc}") from exc


def envelope_id(wire: bytes) -> bytes:
    """Identifier (and chain link) of an envelope: SHA-256 of its wire bytes."""
    return hashlib.sha256(wire).digest()


@dataclass(frozen=True)
class Envelope:
    """A parsed, signature-checked envelope. ``wire`` is kept byte for byte."""

    game_id: bytes
    sender: int
    seq: int
    prev_hash: bytes
    kind: str
    body: Any
    wire: bytes

    @property
    def id(self) -> bytes:
        """SHA-256 of the wire bytes."""
        return envelope_id(self.wire)


class Signer:
    """Builds and signs one party's envelopes, keeping its own chain."""

    def __init__(self, game_id: bytes, sender: int, key: Ed25519PrivateKey | None = None):
        self.game_id = game_id
        self.sender = sender
        self.key = key or Ed25519PrivateKey.generate()
        self.seq = 0
        self.prev = ZERO_HASH

    @property
    def public_key(self) -> Ed25519PublicKey:
        """Verification key to distribute in the handshake."""
        return self.key.public_key()

    def sign(self, kind: str, body: Any) -> bytes:
        """Return the wire bytes of the next envelope."""
        if not isinstance(kind, str) or not kind:
            raise MalformedInput("kind must be a non-empty string")
        check_msgpack_safe(body)
        env = msgpack.packb([VERSION, self.game_id, self.sender, self.seq, self.prev, kind,
                             body], use_bin_type=True)
        wire = msgpack.packb([env, self.key.sign(DOMAIN + env)], use_bin_type=True)
        self.seq += 1
        self.prev = envelope_id(wire)
        return wire


def parse(wire: object, keys: Sequence[Ed25519PublicKey], game_id: bytes,
          via: int | None = None) -> Envelope:
    """Parse wire bytes and verify the signature against the claimed sender's key.

    ``via`` is the peer that delivered the bytes; unattributable failures (bad signature,
    garbage) are blamed on it, since the claimed sender may be the forger's victim.
    """
    if not isinstance(wire, bytes) or len(wire) > MAX_WIRE:
        raise CheatDetected(via, "malformed", "envelope must be bytes within the size limit")
    try:
        outer = _unpack(wire, "envelope")
        if not (isinstance(outer, list) and len(outer) == 2 and isinstance(outer[0], bytes)
                and isinstance(outer[1], bytes)):
            raise MalformedInput("wire must be [envelope_bytes, signature]")
        env_bytes, sig = outer
        if msgpack.packb(outer, use_bin_type=True) != wire:
            # the signature covers env_bytes only: a relay could re-encode the wrapper
            # (e.g. a bin16 header for a short body) into other wire bytes, hence another
            # envelope id, and frame the honest sender for a broken chain or equivocation
            raise MalformedInput("envelope wrapper is not in canonical msgpack form "
                                 "(re-encoded on the way?)")
        env = _unpack(env_bytes, "envelope body")
        if not isinstance(env, list) or len(env) != 7:
            raise MalformedInput("envelope must be a 7-element array")
        version, gid, sender, seq, prev, kind, body = env
        if version != VERSION:
            raise MalformedInput(f"unsupported envelope version {version!r}")
        if gid != game_id:
            raise MalformedInput("envelope belongs to another game")
        if isinstance(sender, bool) or not isinstance(sender, int) or not 0 <= sender < len(keys):
            raise MalformedInput(f"unknown sender {sender!r}")
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
            raise MalformedInput("bad sequence number")
        if not isinstance(prev, bytes) or len(prev) != 32 or not isinstance(kind, str):
            raise MalformedInput("bad prev_hash or kind")
        check_msgpack_safe(body)
    except MalformedInput as exc:
        raise CheatDetected(via, "malformed", str(exc)) from exc
    try:
        signed(keys[sender], sig, DOMAIN + env_bytes)
    except InvalidSignature:
        raise CheatDetected(via, "bad-signature",
                            f"signature of envelope claiming sender {sender} seq {seq} "
                            "is invalid") from None
    return Envelope(gid, sender, seq, prev, kind, body, wire)


def signed(key: Ed25519PublicKey, sig: bytes, message: bytes) -> None:
    """``key.verify(sig, message)``, remembered once it held (:mod:`crypto.remembered`):
    the audit at a game's end parses every envelope the table verified as it came, and
    signature checks are a fifth of what is left of that audit once its proof checks are
    remembered.  Raises :class:`InvalidSignature` as ``verify`` does."""
    _signature_holds(key.public_bytes_raw(), sig, message)


@remembered.remembered
def _signature_holds(raw_key: bytes, sig: bytes, message: bytes) -> None:
    """The remembered check, keyed by the raw key, the signature and the message."""
    _public_key(raw_key).verify(sig, message)


@functools.lru_cache(maxsize=64)
def _public_key(raw: bytes) -> Ed25519PublicKey:
    """A roster key's object, decoded once (a table has at most a few keys)."""
    return Ed25519PublicKey.from_public_bytes(raw)


@dataclass(frozen=True)
class EquivocationProof:
    """Two validly signed envelopes of one sender that cannot belong to one chain: the same
    sequence number with different bytes, or consecutive sequence numbers where the later
    one does not chain to the earlier (a fork: the sender signed two histories)."""

    first: bytes
    second: bytes

    def equivocator(self, keys: Sequence[Ed25519PublicKey], game_id: bytes) -> int:
        """The equivocating sender; raise :class:`MalformedInput` if this is not a proof.
        (Named for what it finds, not ``verify``: every ``verify`` returns nothing.)"""
        try:
            a = parse(self.first, keys, game_id)
            b = parse(self.second, keys, game_id)
        except CheatDetected as exc:
            raise MalformedInput(f"not an equivocation proof: {exc}") from exc
        if a.sender != b.sender:
            raise MalformedInput("not an equivocation proof: two senders")
        if a.seq == b.seq and a.wire != b.wire:
            return a.sender
        if b.seq == a.seq + 1 and b.prev_hash != a.id:
            return a.sender
        raise MalformedInput("not an equivocation proof: the envelopes fit one chain")

    def encode(self) -> list[bytes]:
        """msgpack-safe form (to broadcast the proof)."""
        return [self.first, self.second]


class Equivocation(CheatDetected):
    """Raised when a sender signed two envelopes with one sequence number (rule
    ``equivocation``) or an envelope that does not chain to its own predecessor (rule
    ``bad-chain``); either way :attr:`proof` convinces anybody else."""

    def __init__(self, culprit: int, proof: EquivocationProof, detail: str,
                 rule: str = "equivocation") -> None:
        super().__init__(culprit, rule, detail)
        self.proof = proof


@dataclass
class TranscriptLog:
    """Append-only verified log: per-sender chains in order, plus the arrival order."""

    game_id: bytes
    keys: Sequence[Ed25519PublicKey]
    entries: list[Envelope] = field(default_factory=list)
    by_sender: dict[int, list[Envelope]] = field(default_factory=dict)

    def add(self, wire: bytes, via: int | None = None) -> Envelope:
        """Verify and append. Raises :class:`CheatDetected` (rules: ``malformed``,
        ``bad-signature``, ``equivocation``, ``replay``, ``out-of-order``, ``bad-chain``)."""
        return self.link(parse(wire, self.keys, self.game_id, via), via)

    def link(self, env: Envelope, via: int | None = None) -> Envelope:
        """Append an envelope already parsed and signature-checked (:func:`parse`): the
        per-sender chain checks of :meth:`add` without verifying the signature again."""
        chain = self.by_sender.setdefault(env.sender, [])
        if env.seq < len(chain):
            old = chain[env.seq]
            if old.wire == env.wire:
                raise CheatDetected(via if via is not None else env.sender, "replay",
                                    f"envelope {env.sender}/{env.seq} delivered again")
            proof = EquivocationProof(old.wire, env.wire)
            raise Equivocation(env.sender, proof,
                               f"two different envelopes with seq {env.seq}")
        if env.seq > len(chain):
            raise CheatDetected(via if via is not None else env.sender, "out-of-order",
                                f"seq {env.seq} from {env.sender} before seq {len(chain)}")
        expect = chain[-1].id if chain else ZERO_HASH
        if env.prev_hash != expect:
            detail = f"envelope {env.sender}/{env.seq} does not chain to its predecessor"
            if not chain:
                raise CheatDetected(env.sender, "bad-chain", detail)
            raise Equivocation(env.sender, EquivocationProof(chain[-1].wire, env.wire),
                               detail, rule="bad-chain")
        chain.append(env)
        self.entries.append(env)
        return env

    def append_own(self, wire: bytes, me: int) -> Envelope:
        """Append an envelope party ``me`` just signed (with :class:`Signer`).

        We made the signature and chained it to our own last envelope, so re-verifying it
        (:meth:`add`, ~0.2 ms of Ed25519) is skipped; the body is still decoded from the wire
        exactly as the peers will decode it.  Anything that is not our plain next envelope
        (a test's deliberate equivocation, say) takes the full check of :meth:`add`."""
        outer = _unpack(wire, "own envelope")
        gid, sender, seq, prev, kind, body = _unpack(outer[0], "own envelope")[1:]
        chain = self.by_sender.setdefault(sender, [])
        if sender != me or seq != len(chain) or prev != (chain[-1].id if chain else ZERO_HASH):
            return self.add(wire, via=me)
        env = Envelope(gid, sender, seq, prev, kind, body, wire)
        chain.append(env)
        self.entries.append(env)
        return env

    def heads(self) -> list[list[Any]]:
        """``[[sender, seq, id], …]`` of the last envelope from each sender, by seat."""
        return [[s, len(c) - 1, c[-1].id] for s, c in sorted(self.by_sender.items()) if c]

    def wires(self) -> list[bytes]:
        """All accepted envelopes in arrival order (the transcript to store/audit)."""
        return [e.wire for e in self.entries]


def ack_body(round_no: int, state_hash: bytes, log: TranscriptLog) -> list[Any]:
    """Body of a round acknowledgement carrying the caller's state hash."""
    if not isinstance(state_hash, bytes):
        raise MalformedInput("state hash must be bytes")
    return [round_no, state_hash, log.heads()]


def compare_acks(acks: Sequence[Envelope]) -> list[tuple[int, str]]:
    """Disagreements among acks of one round: ``[(acker, reason)]`` (empty if consistent).

    The reference is the most common state hash; ackers that differ are listed. For heads,
    a (sender, seq) acknowledged with two different ids means either that the sender showed
    different envelopes to different peers or that an acker lies about what it received;
    an ack is only the acker's word, so the ackers in the minority are listed
    (``head-mismatch``).  A real equivocation is proved by the two signed envelopes
    themselves (:class:`EquivocationProof`): the caller must give them a chance to surface
    before acting on this list (p2p's table relays what it received first).
    """
    out: list[tuple[int, str]] = []
    hashes: dict[bytes, int] = {}
    for a in acks:
        hashes[a.body[1]] = hashes.get(a.body[1], 0) + 1
    if not hashes:
        return out
    ref = max(sorted(hashes), key=lambda h: hashes[h])
    for a in acks:
        if a.body[1] != ref:
            out.append((a.sender, "state-hash-mismatch"))
    claims: dict[tuple[int, int], dict[bytes, list[int]]] = {}
    for a in acks:
        for sender, seq, eid in a.body[2]:
            claims.setdefault((sender, seq), {}).setdefault(eid, []).append(a.sender)
    for key in sorted(claims):
        ids = claims[key]
        if len(ids) > 1:
            ref_id = max(sorted(ids), key=lambda i: len(ids[i]))
            out.extend((acker, "head-mismatch") for eid in sorted(ids) if eid != ref_id
                       for acker in ids[eid])
    return sorted(set(out))
