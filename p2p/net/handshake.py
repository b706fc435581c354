"""Mutually authenticated, encrypted handshake (signed hellos, optional join code).

Messages (D = dialer, A = acceptor; ``purpose`` names what D wants: ``b"lobby"`` to join a
table, ``b"mesh/" + game_id`` for a link of a running game)::

    M1  D→A  ["hello", version, purpose, pk_D, eph_D, nonce_D, inc_D]      plaintext
    M2  A→D  ["hello-ack", pk_A, eph_A, nonce_A, inc_A, sig_A]              plaintext
    M3  D→A  ["hello-auth", sig_D, Y_D | nil]                               plaintext
   (M3a A→D  ["pake", Y_A, proof_A]                                         encrypted
    M3b D→A  ["pake-confirm", proof_D]                                      encrypted)
    M4  A→D  ["welcome", nil]  or  ["refuse", reason]                       encrypted
    any step before keys exist: A→D ["refuse", reason] plaintext, then close

M3a/M3b only when the table has a join code.

* ``pk`` are the per-game Ed25519 identity keys; ``eph`` are fresh X25519 keys; ``nonce`` 32
  random bytes; ``inc`` a 16-byte *incarnation* id (new each time a process starts), which
  the mesh uses to tell a reconnect from a restart.
* ``T = SHA-256(msgpack([DOMAIN, version, purpose, pk_D, eph_D, nonce_D, inc_D,
  pk_A, eph_A, nonce_A, inc_A]))`` is the transcript.  ``sig_A`` signs
  ``"…/acceptor" ‖ T`` and ``sig_D`` signs ``"…/dialer" ‖ T``: each signature covers both
  fresh nonces, so a recorded hello replayed on a new connection does not verify, and the
  role tags stop a signature from being reflected back.
* Join code: a PAKE (CPace, :mod:`p2p.net.join_pake`) on ``K = scrypt(code, salt = host key)``
  and ``T``: ``Y`` are the code-derived shares, ``proof`` the key confirmations.  Neither a
  bystander who records a join nor a peer (or fake table) that runs one can test code
  guesses offline: one guess per connection, and A welcomes D only after D's proof.
* Session keys: ``HKDF-SHA256(X25519(eph_D, eph_A), salt=T)`` → one ChaCha20-Poly1305 key
  per direction, counter nonces.  Everything after M3 is encrypted and authenticated, so a
  LAN attacker can neither read private messages (e.g. decryption shares addressed to one
  player) nor inject or reorder frames.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import unicodedata
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from ..errors import ConnectionClosed, FramingError, HandshakeError, NotSilkroad
from ..identity import KEY_LEN, SIG_LEN, Identity, fingerprint, is_signing_key, signature_ok
from ..sanitize import clean
from .framing import HANDSHAKE_LIMITS, HEADER, frame, pack, read_frame, unpack
from .join_pake import ACCEPTOR, DIALER, CodeExchange, proof, proof_ok

PROTOCOL_VERSION = 7
"""7: a seat may relay a line of talk a watcher of its table said (p2p.protocol.wire:
``[text, watcher]`` talk bodies); 6: every crypto body carries the signer's heads, the
last envelope of each other seat it had taken in (p2p.protocol.wire.crypto_heads_problem),
so a crypto failure is judged against the history its signer acknowledged; 5: a Grand
Vizier sets a good of its colour aside (withdrawn from the bag, then the ``aside`` op:
docs/rules.md, "The Grand Vizier's marker"); 4: every seat signs a closing
acknowledgement after the secrets (a game is certified only then), abort notices carry the
offending envelope, gap sync while playing; 3: the join code is checked by a PAKE
(p2p.net.join_pake); 2: cumulative acks (p2p.protocol.ack_chain); 1: an ack after every
step.  Games of 2 and 3 record the same transcript."""
DOMAIN = "silkroad/p2p/handshake/v1"
NONCE_LEN = 32
INCARNATION_LEN = 16
MAC_LEN = 32
TAG_LEN = 16
MAX_PURPOSE = 64
_SIG_ACCEPTOR = b"silkroad/p2p/hello/acceptor\0"
_SIG_DIALER = b"silkroad/p2p/hello/dialer\0"


def new_incarnation() -> bytes:
    """A random id for this process's lifetime (a restart gets a new one)."""
    return os.urandom(INCARNATION_LEN)


def normalize_code(code: str) -> str:
    """Join codes are compared case-, space- and dash-insensitively (they are read aloud)."""
    text = unicodedata.normalize("NFKC", code).casefold()
    return "".join(ch for ch in text if not ch.isspace() and ch not in "-_")


def join_key(code: str, host_key: bytes) -> bytes:
    """Derive the HMAC key of a table's join code.

    scrypt (16 MiB, ~50 ms) salted with the host's per-game key: it runs once per process,
    and makes each offline guess by a LAN eavesdropper cost the same, with no precomputation
    across tables.  It does not make a short code strong; see docs/network.md.
    """
    norm = normalize_code(code)
    if not norm:
        raise ValueError("empty join code")
    kdf = Scrypt(salt=b"silkroad/p2p/join/v1\0" + host_key, length=32, n=1 << 14, r=8, p=1)
    return kdf.derive(norm.encode())


class Cipher:
    """One direction of an AEAD stream: ChaCha20-Poly1305 with a 64-bit frame counter.

    TCP delivers in order, so both ends advance the counter in lock-step; a dropped,
    repeated, reordered or altered frame fails authentication.
    """

    __slots__ = ("_aead", "_counter")

    def __init__(self, key: bytes) -> None:
        self._aead = ChaCha20Poly1305(key)
        self._counter = 0

    def _nonce(self) -> bytes:
        nonce = b"\0\0\0\0" + self._counter.to_bytes(8, "big")
        self._counter += 1
        return nonce

    def seal(self, plaintext: bytes) -> bytes:
        return self._aead.encrypt(self._nonce(), plaintext, None)

    def open(self, ciphertext: bytes) -> bytes:
        if len(ciphertext) < TAG_LEN:
            raise FramingError("encrypted frame shorter than its authentication tag")
        try:
            return self._aead.decrypt(self._nonce(), ciphertext, None)
        except Exception:
            raise FramingError(
                "frame failed authentication (tampered, replayed or reordered)"
            ) from None


class JoinCodeGuard(Protocol):
    """What the acceptor asks of a join-code guard (:class:`p2p.lobby.code_guard.CodeGuard` is
    the one we have).  Named here as a protocol so that the handshake does not import the
    guard, which imports the handshake's code normalisation: no import cycle."""

    def locked(self, host: str) -> bool: ...

    def lockout_reason(self, host: str) -> str: ...

    def turn(self, host: str) -> AbstractAsyncContextManager[str | None]: ...

    def guessed(self, host: str) -> None: ...

    def right(self, host: str) -> None: ...


@dataclass(frozen=True)
class AcceptPolicy:
    """What the acceptor enforces for one purpose (a lobby, or the mesh of one game).

    ``authorize(remote_key)`` returns ``None`` to admit the peer or a refusal reason.
    ``known(remote_key)`` says whether the key is one the service expects (a seat of the
    game's roster): the listener keeps room for those while strangers hold connections.
    ``guard`` (with a ``join_key``) slows and then shuts out addresses that guess the
    join code (:class:`p2p.lobby.code_guard.CodeGuard`).
    """

    authorize: Callable[[bytes], str | None]
    join_key: bytes | None = None
    known: Callable[[bytes], bool] | None = None
    guard: JoinCodeGuard | None = None


@dataclass
class HandshakeResult:
    """Everything a :class:`~p2p.net.connection.Connection` needs after a successful handshake."""

    purpose: bytes
    remote_key: bytes
    remote_incarnation: bytes
    send_cipher: Cipher
    recv_cipher: Cipher
    transcript: bytes
    policy: AcceptPolicy | None = field(default=None)


async def _send_plain(writer: asyncio.StreamWriter, msg: list[Any]) -> None:
    writer.write(frame(pack(msg)))
    await writer.drain()


async def _recv_plain(reader: asyncio.StreamReader) -> Any:
    payload = await read_frame(reader, HANDSHAKE_LIMITS.max_frame)
    return unpack(payload, HANDSHAKE_LIMITS)


def _bytes(value: Any, length: int, what: str) -> bytes:
    if not isinstance(value, bytes) or len(value) != length:
        raise HandshakeError(f"{what} must be {length} bytes")
    return value


def _key(value: Any, what: str) -> bytes:
    """A peer's identity key: 32 bytes and not a weak (small-order) Ed25519 key."""
    key = _bytes(value, KEY_LEN, what)
    if not is_signing_key(key):
        raise HandshakeError(f"{what} is not a valid Ed25519 public key (small order)")
    return key


def _shape(msg: Any, name: str, arity: int) -> list[Any]:
    if not isinstance(msg, list) or not msg or not isinstance(msg[0], str):
        raise HandshakeError(f"expected a {name!r} message, got a non-message")
    if msg[0] == "refuse" and len(msg) == 2 and isinstance(msg[1], str):
        # the remote's words: cleaned before they reach a screen or a log (p2p.sanitize)
        raise HandshakeError(f"refused by peer: {clean(msg[1])}", refused_by_remote=True)
    if msg[0] != name:
        raise HandshakeError(f"expected a {name!r} message, got {clean(msg[0], 32)!r}")
    if len(msg) != arity:
        raise HandshakeError(f"{name!r} message has {len(msg)} fields, expected {arity}")
    return msg


def _ephemeral() -> tuple[X25519PrivateKey, bytes]:
    key = X25519PrivateKey.generate()
    return key, key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def _transcript(version: int, purpose: bytes, d: tuple[bytes, ...], a: tuple[bytes, ...]) -> bytes:
    return hashlib.sha256(pack([DOMAIN, version, purpose, *d, *a])).digest()


def _session(
    eph: X25519PrivateKey, remote_eph: bytes, transcript: bytes, dialer: bool
) -> tuple[Cipher, Cipher]:
    try:
        shared = eph.exchange(X25519PublicKey.from_public_bytes(remote_eph))
    except ValueError:
        raise HandshakeError("ephemeral key is a low-order point") from None
    okm = HKDF(
        algorithm=hashes.SHA256(), length=64, salt=transcript, info=b"silkroad/p2p/session/v1"
    ).derive(shared)
    d2a, a2d = Cipher(okm[:32]), Cipher(okm[32:])
    return (d2a, a2d) if dialer else (a2d, d2a)


def _preview(data: bytes, more: bool = False) -> str:
    """The first bytes a stranger sent, printable and short (``repr`` escapes them)."""
    return repr(bytes(data[:16])) + ("…" if more or len(data) > 16 else "")


async def _recv_hello_ack(reader: asyncio.StreamReader) -> list[Any]:
    """M2, telling three answers apart: a table that answers or refuses; a connection
    closed before any byte came back (dialling again may work: :class:`ConnectionClosed`);
    and bytes that are no silkroad handshake at all (:class:`NotSilkroad` — a web server's
    "HTTP/1.1 400" would otherwise read as a frame of 1213486160 bytes).

    A peer that closes without reading our hello makes the kernel reset the connection,
    and asyncio then reports the reset before the bytes that came first; those bytes
    (still in the stream's buffer, a private attribute: without it the reset stands) are
    what tells a web server from a lost connection, so they are read after all."""
    seen = bytearray()
    try:
        return await _parse_hello_ack(reader, seen)
    except ConnectionResetError:
        seen += bytes(getattr(reader, "_buffer", b""))
        if not seen:
            raise
        salvage = asyncio.StreamReader()
        salvage.feed_data(bytes(seen))
        salvage.feed_eof()
        return await _parse_hello_ack(salvage, bytearray())


async def _parse_hello_ack(reader: asyncio.StreamReader, seen: bytearray) -> list[Any]:
    """:func:`_recv_hello_ack`'s reading; ``seen`` collects the bytes consumed."""
    try:
        header = await reader.readexactly(HEADER.size)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            raise ConnectionClosed("connection closed by peer") from None
        raise NotSilkroad(f"it sent {_preview(exc.partial)} and closed the connection") \
            from None
    seen += header
    (length,) = HEADER.unpack(header)
    if not 0 < length <= HANDSHAKE_LIMITS.max_frame:
        raise NotSilkroad(f"it sent {_preview(header, more=True)} instead of a silkroad "
                          "handshake")
    try:
        payload = await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise NotSilkroad(f"it sent {_preview(header + exc.partial)} and closed the "
                          "connection") from None
    try:
        msg = unpack(payload, HANDSHAKE_LIMITS)
    except FramingError as exc:
        raise NotSilkroad(f"its answer is not a silkroad handshake ({exc.reason})") from None
    if not (isinstance(msg, list) and msg and msg[0] in ("hello-ack", "refuse")):
        raise NotSilkroad("its answer is not a silkroad handshake")
    return _shape(msg, "hello-ack", 6)


async def _recv_sealed(reader: asyncio.StreamReader, recv: Cipher) -> Any:
    """The next encrypted handshake message."""
    payload = await read_frame(reader, HANDSHAKE_LIMITS.max_frame)
    return unpack(recv.open(payload), HANDSHAKE_LIMITS)


async def dial_handshake(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    identity: Identity,
    purpose: bytes,
    *,
    incarnation: bytes,
    expected_key: bytes | None = None,
    join_code: str | None = None,
    version: int = PROTOCOL_VERSION,
) -> HandshakeResult:
    """Run the dialer side; raises :class:`HandshakeError` with the reason on failure
    (:class:`NotSilkroad` when the other end does not speak this protocol at all,
    :class:`ConnectionClosed` when it closed before answering).

    ``join_code`` is the code as typed; its key is derived here, after M2, because it is
    salted with the acceptor's key (which a joiner dialing a bare ``host:port`` only learns
    from M2).
    """
    eph, eph_pub = _ephemeral()
    nonce = os.urandom(NONCE_LEN)
    d_part = (identity.public, eph_pub, nonce, incarnation)
    await _send_plain(writer, ["hello", version, purpose, *d_part])

    m2 = await _recv_hello_ack(reader)
    pk_a = _key(m2[1], "acceptor key")
    eph_a = _bytes(m2[2], KEY_LEN, "acceptor ephemeral key")
    nonce_a = _bytes(m2[3], NONCE_LEN, "acceptor nonce")
    inc_a = _bytes(m2[4], INCARNATION_LEN, "acceptor incarnation")
    sig_a = _bytes(m2[5], SIG_LEN, "acceptor signature")
    if expected_key is not None and pk_a != expected_key:
        raise HandshakeError(
            f"remote key {fingerprint(pk_a)[:8]} is not the expected "
            f"{fingerprint(expected_key)[:8]}"
        )
    if pk_a == identity.public:
        raise HandshakeError("connected to ourselves")
    t = _transcript(version, purpose, d_part, (pk_a, eph_a, nonce_a, inc_a))
    if not signature_ok(pk_a, sig_a, _SIG_ACCEPTOR + t):
        raise HandshakeError("acceptor's hello signature does not verify")
    send, recv = _session(eph, eph_a, t, dialer=True)
    code: CodeExchange | None = None
    if join_code is not None:
        if not normalize_code(join_code):
            raise HandshakeError("empty join code")
        key = await asyncio.get_running_loop().run_in_executor(None, join_key, join_code, pk_a)
        code = CodeExchange(key, t)
    await _send_plain(writer, ["hello-auth", identity.sign(_SIG_DIALER + t),
                               code.share if code is not None else None])
    table_proved = True
    if code is not None:
        m3a = _shape(await _recv_sealed(reader, recv), "pake", 3)
        isk = code.key(code.share, _bytes(m3a[1], KEY_LEN, "table's join-code share"),
                       m3a[1])
        table_proved = proof_ok(isk, ACCEPTOR, m3a[2])
        # sent even when the table's proof failed: it lets an honest table name a wrong
        # code, and a proof under our code is worthless to a fake table (see join_pake)
        writer.write(frame(send.seal(pack(["pake-confirm", proof(isk, DIALER)]))))
        await writer.drain()

    _shape(await _recv_sealed(reader, recv), "welcome", 2)
    if not table_proved:
        raise HandshakeError("the table did not prove it knows the join code")
    return HandshakeResult(purpose, pk_a, inc_a, send, recv, t)


async def accept_handshake(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    identity: Identity,
    policy_for: Callable[[bytes], AcceptPolicy | str],
    *,
    incarnation: bytes,
    version: int = PROTOCOL_VERSION,
    peer_host: str = "?",
    hello_timeout: float | None = None,
    on_hello: Callable[[bytes, AcceptPolicy], None] | None = None,
) -> HandshakeResult:
    """Run the acceptor side.

    ``policy_for(purpose)`` returns the policy or a refusal reason (unknown table/game).
    Every refusal is sent to the dialer (when it can be) and raised as
    :class:`HandshakeError` so the listener logs it.  ``hello_timeout`` bounds the wait
    for the first message (an honest dialer sends it at once; an idle socket is closed);
    ``on_hello(key, policy)`` tells the listener who claims to be dialing, before any
    costly work, so it can keep room for known seats.  ``peer_host`` is the remote
    address the policy's join-code guard counts guesses against.
    """

    async def refuse(reason: str, cipher: Cipher | None = None) -> HandshakeError:
        payload = pack(["refuse", reason])
        try:
            writer.write(frame(cipher.seal(payload) if cipher else payload))
            await writer.drain()
        except (ConnectionError, OSError):
            pass
        return HandshakeError(reason)

    try:
        async with asyncio.timeout(hello_timeout):
            m1 = await _recv_plain(reader)
    except TimeoutError:
        raise HandshakeError(f"no hello within {hello_timeout:g} s") from None
    if not isinstance(m1, list) or len(m1) < 2 or m1[0] != "hello":
        raise await refuse("expected a hello")
    if not isinstance(m1[1], int) or isinstance(m1[1], bool) or m1[1] != version:
        raise await refuse(f"protocol version {clean(repr(m1[1]), 40)} not supported (this peer "
                           f"speaks {version})")
    if len(m1) != 7:
        raise await refuse(f"hello has {len(m1)} fields, expected 7")
    purpose = m1[2]
    if not isinstance(purpose, bytes) or not 0 < len(purpose) <= MAX_PURPOSE:
        raise await refuse("bad purpose field")
    try:
        pk_d = _key(m1[3], "dialer key")
        eph_d = _bytes(m1[4], KEY_LEN, "dialer ephemeral key")
        nonce_d = _bytes(m1[5], NONCE_LEN, "dialer nonce")
        inc_d = _bytes(m1[6], INCARNATION_LEN, "dialer incarnation")
    except HandshakeError as exc:
        raise await refuse(exc.reason) from None
    if pk_d == identity.public:
        raise await refuse("connected to ourselves")
    policy = policy_for(purpose)
    if isinstance(policy, str):
        raise await refuse(policy)
    if policy.guard is not None and policy.join_key is not None \
            and policy.guard.locked(peer_host):
        raise await refuse(policy.guard.lockout_reason(peer_host))
    if on_hello is not None:
        on_hello(pk_d, policy)

    eph, eph_pub = _ephemeral()
    nonce = os.urandom(NONCE_LEN)
    a_part = (identity.public, eph_pub, nonce, incarnation)
    t = _transcript(version, purpose, (pk_d, eph_d, nonce_d, inc_d), a_part)
    await _send_plain(writer, ["hello-ack", *a_part, identity.sign(_SIG_ACCEPTOR + t)])
    send, recv = _session(eph, eph_d, t, dialer=False)

    m3 = await _recv_plain(reader)
    try:
        m3 = _shape(m3, "hello-auth", 3)
        sig_d = _bytes(m3[1], SIG_LEN, "dialer signature")
    except HandshakeError as exc:
        raise await refuse(exc.reason, send) from None
    if not signature_ok(pk_d, sig_d, _SIG_DIALER + t):
        raise await refuse(
            "hello signature does not verify (bad signature or replayed hello)", send
        )
    if policy.join_key is None and m3[2] is not None:
        raise await refuse("join-code proof sent, but this table has no join code", send)
    if policy.join_key is not None:
        if m3[2] is None:
            raise await refuse("wrong or missing join code", send)
        code = CodeExchange(policy.join_key, t)
        try:
            isk = code.key(_bytes(m3[2], KEY_LEN, "join-code share"), code.share, m3[2])
        except HandshakeError as exc:
            raise await refuse(exc.reason, send) from None

        async def pake() -> bool:
            writer.write(frame(send.seal(pack(["pake", code.share, proof(isk, ACCEPTOR)]))))
            await writer.drain()
            try:
                m3b = _shape(await _recv_sealed(reader, recv), "pake-confirm", 2)
            except HandshakeError as exc:
                raise await refuse(exc.reason, send) from None
            return proof_ok(isk, DIALER, m3b[1])

        guard = policy.guard
        if guard is None:
            right = await pake()
        else:
            # one guess at a time per address, after its backoff; counted before our
            # proof goes out (the proof tells the dialer whether its guess was right)
            async with guard.turn(peer_host) as refusal:
                if refusal is not None:
                    raise await refuse(refusal, send)
                guard.guessed(peer_host)
                right = await pake()
                if right:
                    guard.right(peer_host)
        if not right:
            raise await refuse("wrong or missing join code", send)
    reason = policy.authorize(pk_d)
    if reason is not None:
        raise await refuse(reason, send)
    writer.write(frame(send.seal(pack(["welcome", None]))))
    await writer.drain()
    return HandshakeResult(purpose, pk_d, inc_d, send, recv, t, policy)
