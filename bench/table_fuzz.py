"""Malformed and mutated inputs for a live table (the fuzz test and ``net_bench --fuzz``).

Every input is derived from *real* signed envelopes of a game in progress, so the fuzz
reaches deep into the parser instead of dying at the first byte: bit flips, truncations,
swapped or re-typed fields, a wrong game id or sequence number, and bodies with bad
contents re-signed by a real roster key (for another game, or far ahead in the chain so
they can never take a real envelope's place).  A table must refuse each one with a reason
and leave its state untouched.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import msgpack
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from crypto.transcript import DOMAIN, VERSION
from p2p.protocol.wire import ENV_TAG, SYNC_TAG

if TYPE_CHECKING:
    from p2p.table import LockstepTable

_JUNK_VALUES: list[object] = [None, True, -1, 2**63, "x" * 300, b"", [], [[[]]], 1.5,
                              {"k": 1}, b"\xff" * 33]


def _pack(obj: object) -> bytes:
    return msgpack.packb(obj, use_bin_type=True)


def _resign(key: Ed25519PrivateKey, env: list[object]) -> bytes:
    raw = _pack(env)
    return _pack([raw, key.sign(DOMAIN + raw)])


def mutations(wires: list[bytes], rng: random.Random, count: int, key: Ed25519PrivateKey,
              seat: int, game_id: bytes) -> Iterator[bytes]:
    """Yield ``count`` mesh bodies (mostly ``b"E" + mutated wire``) that must all be refused.

    ``key``/``seat`` are a real roster member's signing key and seat: re-signed inputs use
    them with a wrong game id or a sequence number beyond the table's hold-back window.
    """
    parsed = []
    for w in wires:
        outer = msgpack.unpackb(w)
        parsed.append((w, outer, msgpack.unpackb(outer[0])))
    for _ in range(count):
        w, outer, env = parsed[rng.randrange(len(parsed))]
        kind = rng.randrange(10)
        if kind == 0:  # bit flips
            b = bytearray(w)
            for _ in range(rng.randint(1, 4)):
                b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
            yield ENV_TAG + bytes(b)
        elif kind == 1:  # truncation / extension
            cut = rng.randrange(1, len(w))
            yield ENV_TAG + (w[:cut] if rng.random() < 0.8 else w + w[:cut])
        elif kind == 2:  # fields of the signed envelope swapped (signature no longer fits)
            e = list(env)
            i, j = rng.sample(range(len(e)), 2)
            e[i], e[j] = e[j], e[i]
            yield ENV_TAG + _pack([_pack(e), outer[1]])
        elif kind == 3:  # a field of the envelope re-typed
            e = list(env)
            e[rng.randrange(len(e))] = rng.choice([*_JUNK_VALUES[:-3], b"\x00" * 32])
            yield ENV_TAG + _pack([_pack(e), outer[1]])
        elif kind == 4:  # outer array damaged
            choice = rng.randrange(4)
            if choice == 0:
                yield ENV_TAG + _pack([outer[1], outer[0]])
            elif choice == 1:
                yield ENV_TAG + _pack([outer[0]])
            elif choice == 2:
                yield ENV_TAG + _pack([outer[0], outer[1], b""])
            else:
                yield ENV_TAG + _pack(rng.choice([[1, 2], "str", 7, None]))
        elif kind == 5:  # wrong game id, validly re-signed by a real roster key
            e = [VERSION, bytes(rng.randrange(256) for _ in range(32)), seat, env[3], env[4],
                 env[5], env[6]]
            if e[1] == game_id:
                e[1] = b"\x00" * 32
            yield ENV_TAG + _resign(key, e)
        elif kind == 6:  # bad contents re-signed by a real key far beyond the hold-back window
            body: list[Any] | None = rng.choice([["not", "an", "action"], [1, b"\xc1"],
                                                 [b"x"] * 5, None, [0, "op", [], "s", None]])
            e = [VERSION, game_id, seat, 10**6 + rng.randrange(10**6), bytes(32),
                 rng.choice(["action", "ack", "crypto", "abort", "zzz"]), body]
            yield ENV_TAG + _resign(key, e)
        elif kind == 7:  # wrong sequence number or sender (signature breaks)
            e = list(env)
            if rng.random() < 0.5:
                e[3] = e[3] + rng.choice([-1, 1, 2, 10**9]) if isinstance(e[3], int) else 0
            else:
                e[2] = rng.choice([-1, 99, seat, "0"])
            yield ENV_TAG + _pack([_pack(e), outer[1]])
        elif kind == 8:  # unknown tags, empty, bad sync requests
            yield rng.choice([b"", b"Q" + w, SYNC_TAG + b"\xc1", SYNC_TAG + _pack([-1, 2]),
                              SYNC_TAG + _pack("all"), SYNC_TAG + _pack([0] * 99), b"E",
                              ENV_TAG + b"\x92\xc4"])
        else:  # random bytes behind a valid tag
            yield ENV_TAG + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80)))


def fuzz_table(target: LockstepTable, source: LockstepTable, count: int,
               seed: int) -> dict[str, Any]:
    """Feed ``count`` mutations of ``source``'s log to ``target``; check nothing changed."""
    rng = random.Random(seed)
    key = source.signer.key
    before = (target.state.hash(), len(target.log.entries), target.session.next_index,
              target.step)
    unrefused = 0
    t0 = time.perf_counter()
    # only envelopes the target already holds: an intact one still in flight would simply
    # be a (valid) relay
    held = {e.wire for e in target.log.entries}
    wires = [w for w in source.log.wires() if w in held]
    for body in mutations(wires, rng, count, key, source.me, target.setup.game_id):
        n = len(target.refusals)
        target.inbox.on_bytes(source.me, body)
        if len(target.refusals) == n:
            unrefused += 1
    after = (target.state.hash(), len(target.log.entries), target.session.next_index,
             target.step)
    return {"unrefused": unrefused, "unchanged": before == after, "failure": target.failure,
            "seconds": time.perf_counter() - t0, "early": target.inbox.held}
