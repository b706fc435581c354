"""Prime-order group layer over libsodium's edwards25519 functions (via PyNaCl).

Why this module exists: every other module manipulates points and scalars only through it,
so the safety rules live in one place:

* points travel as 32-byte canonical encodings; every point received from a peer goes through
  :func:`decode_point`, which uses ``crypto_core_ed25519_is_valid_point`` (canonical, on the
  curve, in the main subgroup, not of small order) — the identity is rejected too;
* scalars are Python ints in ``[1, L)``; scalar 0 is never used (libsodium's multiplication
  refuses it, and a zero would e.g. turn a re-encryption into the identity map);
* multiplication results that would be the identity raise :class:`InvalidPoint` instead of
  returning garbage;
* hashing is domain separated and length prefixed (:func:`hash_fields`), so two different
  field lists can never hash the same bytes.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Sequence

from nacl import bindings as _nb
from nacl import exceptions as _nexc

from .errors import InvalidPoint, InvalidScalar, MalformedInput

#: Order of the prime-order subgroup of edwards25519.
L = 2**252 + 27742317777372353535851937790883648493
POINT_BYTES = 32
SCALAR_BYTES = 32
#: Canonical encoding of the neutral element (never transmitted, only compared against).
IDENTITY = bytes([1]) + bytes(31)
DOMAIN = b"silkroad-crypto/v1/"

Point = bytes
Scalar = int


def _sb(s: Scalar) -> bytes:
    return s.to_bytes(SCALAR_BYTES, "little")


def check_scalar(s: Scalar, what: str = "scalar") -> Scalar:
    """Return ``s`` if it is an int in ``[1, L)``; raise :class:`InvalidScalar` otherwise."""
    if not isinstance(s, int) or isinstance(s, bool) or not 0 < s < L:
        raise InvalidScalar(f"{what} must be an integer in [1, L), got {s!r:.80}")
    return s


def decode_scalar(b: object, what: str = "scalar") -> Scalar:
    """Decode a received 32-byte little-endian scalar; must be canonical and non-zero."""
    if not isinstance(b, bytes) or len(b) != SCALAR_BYTES:
        raise InvalidScalar(f"{what} must be {SCALAR_BYTES} bytes")
    return check_scalar(int.from_bytes(b, "little"), what)


def encode_scalar(s: Scalar) -> bytes:
    """Encode a scalar as 32 little-endian bytes."""
    return _sb(check_scalar(s))


def random_scalar() -> Scalar:
    """Uniform non-zero scalar from the OS CSPRNG (64 bytes reduced: negligible bias)."""
    while True:
        s = int.from_bytes(secrets.token_bytes(64), "little") % L
        if s:
            return s


def is_point(b: object) -> bool:
    """True iff ``b`` encodes a valid non-identity point of the prime-order subgroup."""
    return (
        isinstance(b, bytes)
        and len(b) == POINT_BYTES
        and bool(_nb.crypto_core_ed25519_is_valid_point(b))
    )


def decode_point(b: object, what: str = "point") -> Point:
    """Validate a received point; raise :class:`InvalidPoint` naming ``what`` otherwise."""
    if not isinstance(b, bytes) or len(b) != POINT_BYTES:
        raise InvalidPoint(f"{what} must be {POINT_BYTES} bytes")
    if not _nb.crypto_core_ed25519_is_valid_point(b):
        raise InvalidPoint(
            f"{what} is not a canonical point of the prime-order subgroup "
            "(off-curve, small order, identity or non-canonical)"
        )
    return b


def base_mul(s: Scalar) -> Point:
    """``s·G`` for a non-zero scalar."""
    return _nb.crypto_scalarmult_ed25519_base_noclamp(_sb(check_scalar(s)))


def mul(s: Scalar, p: Point, what: str = "point") -> Point:
    """``s·P``. libsodium re-validates ``P``; an invalid ``P`` raises :class:`InvalidPoint`."""
    try:
        return _nb.crypto_scalarmult_ed25519_noclamp(_sb(check_scalar(s)), p)
    except (_nexc.RuntimeError, _nexc.TypeError, _nexc.ValueError) as exc:
        raise InvalidPoint(f"{what} rejected by scalar multiplication") from exc


def add(p: Point, q: Point) -> Point:
    """``P + Q`` (inputs must already be valid points; the result may be the identity)."""
    try:
        return _nb.crypto_core_ed25519_add(p, q)
    except (_nexc.RuntimeError, _nexc.TypeError, _nexc.ValueError) as exc:
        raise InvalidPoint("point addition failed on an invalid operand") from exc


def sub(p: Point, q: Point) -> Point:
    """``P − Q`` (inputs must already be valid points; the result may be the identity)."""
    try:
        return _nb.crypto_core_ed25519_sub(p, q)
    except (_nexc.RuntimeError, _nexc.TypeError, _nexc.ValueError) as exc:
        raise InvalidPoint("point subtraction failed on an invalid operand") from exc


def sum_points(points: Iterable[Point]) -> Point:
    """Sum of at least one point."""
    it = iter(points)
    try:
        acc = next(it)
    except StopIteration:
        raise MalformedInput("sum of no points") from None
    for p in it:
        acc = add(acc, p)
    return acc


#: The standard base point G (1·G).
G: Point = base_mul(1)


def _encode_field(f: object) -> bytes:
    """Length-prefixed, type-tagged encoding of one hash field (recursive for lists)."""
    if type(f) is bytes:  # the common case (points): same encoding as the branch below
        return b"y" + len(f).to_bytes(8, "big") + f
    if isinstance(f, bool):
        body, tag = (b"\x01" if f else b"\x00"), b"b"
    elif isinstance(f, int):
        if f < 0:
            raise MalformedInput("negative integers are not hashable fields")
        body, tag = f.to_bytes((f.bit_length() + 7) // 8 or 1, "big"), b"i"
    elif isinstance(f, bytes):
        body, tag = f, b"y"
    elif isinstance(f, str):
        body, tag = f.encode("utf-8"), b"s"
    elif isinstance(f, list | tuple):
        body, tag = b"".join(_encode_field(x) for x in f), b"l"
    elif f is None:
        body, tag = b"", b"n"
    else:
        raise MalformedInput(f"unhashable field type {type(f).__name__}")
    return tag + len(body).to_bytes(8, "big") + body


def hash_fields(tag: str, fields: Sequence[object], digest: str = "sha512") -> bytes:
    """Domain-separated hash of a list of fields: ``H(DOMAIN‖tag ‖ enc(f1) ‖ enc(f2) …)``."""
    h = hashlib.new(digest)
    t = DOMAIN + tag.encode("utf-8")
    h.update(len(t).to_bytes(2, "big") + t)
    for f in fields:
        h.update(_encode_field(f))
    return h.digest()


def hash_to_scalar(tag: str, fields: Sequence[object]) -> Scalar:
    """Fiat–Shamir challenge: SHA-512 of the fields reduced mod L (never zero)."""
    s = int.from_bytes(hash_fields(tag, fields), "little") % L
    return s or 1


def hash_to_point(tag: str, fields: Sequence[object]) -> Point:
    """Hash to the prime-order subgroup with libsodium's ``from_uniform`` (Elligator 2)."""
    p = _nb.crypto_core_ed25519_from_uniform(hash_fields(tag, fields)[:32])
    if p == IDENTITY or not is_point(p):  # pragma: no cover - probability 2^-250
        raise InvalidPoint(f"hash_to_point({tag}) produced an unusable point")
    return p
