"""Read an envelope's sender, sequence number and kind straight from its wire bytes.

The pump looks at every arriving envelope before verifying it (to put the move everyone
waits for first, and to hold envelopes that arrive early); building two msgpack
``Unpacker`` objects for that cost ~20-45 µs per envelope.  The wire is
``[bin envelope, bin signature]`` and the envelope ``[version, game id, sender, seq, prev,
kind, body]`` (crypto/transcript.py); this reads just the fixed-shape prefix.  Anything
unexpected raises ``ValueError`` and the caller refuses the bytes (the full check happens
in :meth:`crypto.transcript.TranscriptLog.add`).
"""

from __future__ import annotations

import struct

_U = {0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q"}
_S = {0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q"}


def _int(b: bytes, i: int) -> tuple[int, int]:
    t = b[i]
    if t <= 0x7F:
        return t, i + 1
    if t >= 0xE0:
        return t - 0x100, i + 1
    fmt = _U.get(t) or _S.get(t)
    if fmt is None:
        raise ValueError("expected an integer")
    size = struct.calcsize(fmt)
    return struct.unpack_from(fmt, b, i + 1)[0], i + 1 + size


def _len(b: bytes, i: int, fix: tuple[int, int] | None, sized: dict[int, str]) -> tuple[int, int]:
    """Length and start of a str/bin item at ``i``."""
    t = b[i]
    if fix is not None and fix[0] <= t <= fix[1]:
        return t - fix[0], i + 1
    fmt = sized.get(t)
    if fmt is None:
        raise ValueError("expected a string or bytes")
    size = struct.calcsize(fmt)
    return struct.unpack_from(fmt, b, i + 1)[0], i + 1 + size


_BIN = {0xC4: ">B", 0xC5: ">H", 0xC6: ">I"}
_STR = {0xD9: ">B", 0xDA: ">H", 0xDB: ">I"}


def _skip_any_short(b: bytes, i: int) -> int:
    """Skip a version / game id / prev item (an integer or bytes)."""
    t = b[i]
    if t in _BIN:
        n, j = _len(b, i, None, _BIN)
        return j + n
    return _int(b, i)[1]


def peek_header(wire: bytes) -> tuple[int, int, str]:
    """``(sender, seq, kind)`` of an envelope wire without decoding its body.

    Raises ``ValueError`` (or ``IndexError``/``struct.error``, both caught by callers as
    malformed input) for anything that is not an envelope's shape."""
    try:
        if wire[0] != 0x92:
            raise ValueError("wire must be [envelope, signature]")
        n, i = _len(wire, 1, None, _BIN)
        end = i + n
        if end > len(wire):
            raise ValueError("truncated envelope")
        if wire[i] != 0x97:
            raise ValueError("envelope must have 7 fields")
        i = _skip_any_short(wire, i + 1)  # version
        i = _skip_any_short(wire, i)  # game id
        sender, i = _int(wire, i)
        seq, i = _int(wire, i)
        i = _skip_any_short(wire, i)  # prev
        n, i = _len(wire, i, (0xA0, 0xBF), _STR)
        if i + n > end:
            raise ValueError("truncated kind")
        kind = wire[i:i + n].decode("utf-8")
    except (IndexError, struct.error, UnicodeDecodeError) as exc:
        raise ValueError(f"malformed envelope header: {exc}") from None
    return sender, seq, kind
