"""Length-prefixed msgpack frames over asyncio streams, decoded strictly.

Wire format of one frame::

    +----------------------+---------------------------+
    | length: u32 big-end. | payload: `length` bytes   |
    +----------------------+---------------------------+

Before the handshake completes the payload is one msgpack object; afterwards it is the
ChaCha20-Poly1305 ciphertext of one msgpack object (see :mod:`p2p.net.handshake`).

Why so strict: every peer on the LAN can send us arbitrary bytes, so the reader refuses a
frame *before* allocating for it (the length is checked against the limit first), msgpack
is decoded with every container/string limit set, and the decoded value may only contain
the plain types our protocols use (no ext types, no timestamps, no floats by default, no
duplicate map keys, bounded nesting).  Any violation raises :class:`FramingError` whose
reason names the fault; the owner of the stream then closes that one connection and keeps
serving everybody else.
"""

from __future__ import annotations

import asyncio
import struct
from dataclasses import dataclass
from typing import Any

import msgpack

from ..errors import ConnectionClosed, FramingError

HEADER = struct.Struct(">I")
MIB = 1 << 20


@dataclass(frozen=True)
class FrameLimits:
    """Hard limits applied to every received frame.

    The 8 MiB default leaves room for a verifiable-shuffle proof of the 75-token bag;
    handshake frames use the much smaller :data:`HANDSHAKE_LIMITS` because an
    unauthenticated peer must not be able to make us buffer megabytes.
    """

    max_frame: int = 8 * MIB
    max_depth: int = 16
    max_array: int = 1 << 18
    max_map: int = 1 << 12
    max_str: int = 1 * MIB
    max_bin: int = 8 * MIB
    allow_float: bool = False


DEFAULT_LIMITS = FrameLimits()
HANDSHAKE_LIMITS = FrameLimits(
    max_frame=4096, max_depth=4, max_array=16, max_map=16, max_str=512, max_bin=256
)


def pack(obj: Any) -> bytes:
    """Encode ``obj`` as msgpack (bin type for bytes, str for text)."""
    return msgpack.packb(obj, use_bin_type=True)


def frame(payload: bytes) -> bytes:
    """Prefix ``payload`` with its 4-byte big-endian length."""
    if not payload:
        raise FramingError("refusing to send an empty frame")
    if len(payload) > 0xFFFFFFFF:
        raise FramingError(f"frame of {len(payload)} bytes cannot be length-prefixed")
    return HEADER.pack(len(payload)) + payload


def _no_duplicate_keys(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate map key {key!r}")
        out[key] = value
    return out


def _check_tree(obj: Any, limits: FrameLimits) -> None:
    """Walk the decoded value iteratively: bounded depth and only plain types."""
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > limits.max_depth:
            raise FramingError(f"nesting deeper than {limits.max_depth} levels")
        if value is None or isinstance(value, (bool, int, str, bytes)):
            continue
        if isinstance(value, float):
            if not limits.allow_float:
                raise FramingError("floats are not allowed on the wire")
            continue
        if isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
        elif isinstance(value, dict):
            for key, item in value.items():
                stack.append((key, depth + 1))
                stack.append((item, depth + 1))
        else:
            raise FramingError(f"type {type(value).__name__} is not allowed on the wire")


def unpack(data: bytes, limits: FrameLimits = DEFAULT_LIMITS) -> Any:
    """Decode exactly one msgpack object from ``data`` under ``limits``.

    Raises :class:`FramingError` naming the fault (trailing bytes, truncated data,
    oversized container, ext type, float, bad UTF-8, too deep, ...).
    """
    if len(data) > limits.max_frame:
        raise FramingError(f"payload of {len(data)} bytes exceeds the limit of {limits.max_frame}")
    try:
        obj = msgpack.unpackb(
            data,
            raw=False,
            use_list=True,
            strict_map_key=True,
            object_pairs_hook=_no_duplicate_keys,
            max_str_len=limits.max_str,
            max_bin_len=limits.max_bin,
            max_array_len=limits.max_array,
            max_map_len=limits.max_map,
            max_ext_len=0,
        )
    except msgpack.ExtraData as exc:
        raise FramingError(f"trailing bytes after the msgpack object ({exc})") from None
    except msgpack.StackError:
        raise FramingError("msgpack nesting exceeds the decoder stack") from None
    except UnicodeDecodeError as exc:
        raise FramingError(f"invalid UTF-8 in a string ({exc.reason})") from None
    except msgpack.FormatError as exc:
        raise FramingError(f"malformed msgpack ({str(exc) or 'reserved type byte'})") from None
    except (ValueError, TypeError) as exc:
        # msgpack reports truncation ("Unpack failed: incomplete input"), limit breaches,
        # ext types (max_ext_len=0), non-str map keys and our duplicate-key hook this way.
        raise FramingError(f"malformed msgpack: {exc}") from None
    except Exception as exc:  # pragma: no cover - defensive: never let a decoder bug escape
        raise FramingError(f"msgpack decoder error: {type(exc).__name__}: {exc}") from None
    _check_tree(obj, limits)
    return obj


async def read_frame(reader: asyncio.StreamReader, max_frame: int) -> bytes:
    """Read one length-prefixed frame payload, refusing oversize frames before buffering.

    A clean EOF *between* frames raises :class:`ConnectionClosed`; EOF inside a frame
    raises :class:`FramingError` (truncated).
    """
    try:
        header = await reader.readexactly(HEADER.size)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            raise ConnectionClosed("connection closed by peer") from None
        raise FramingError(
            f"truncated frame header ({len(exc.partial)} of {HEADER.size} bytes)"
        ) from None
    (length,) = HEADER.unpack(header)
    if length == 0:
        raise FramingError("empty frame (length 0)")
    if length > max_frame:
        raise FramingError(f"frame of {length} bytes exceeds the limit of {max_frame}")
    try:
        return await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise FramingError(f"truncated frame (got {len(exc.partial)} of {length} bytes)") from None
