"""Reaching a table's lobby: one dial, and the redials a lossy link needs.

A joiner's first packets may be lost (a SYN-ACK, its hello: TCP resends after about 3 s),
or the host may be restarting: such a failure may pass, so the joiner dials again with
backoff for :data:`DIAL_TIMEOUT` seconds.  An answer that is not silkroad, a refusal by the
table or an unknown host would get the same answer again: those fail at once, each with
its reason (never an empty one).
"""

from __future__ import annotations

import asyncio
import logging
import socket

from ..errors import HandshakeError, LobbyError, NotSilkroad, P2PError
from ..net.connection import Connection, Listener, dial

log = logging.getLogger("p2p.lobby")

LOBBY = b"lobby"
"""The listener's service a joiner dials (the lobby, before any game exists)."""
DIAL_TIMEOUT = 15.0
"""Seconds a joiner keeps dialling a table whose connection fails for a passing reason."""
REDIAL_FIRST = 0.5
REDIAL_MAX = 4.0
"""Pause before the first redial, doubling up to this (a lossy link or a busy listener)."""


def _os_reason(exc: OSError) -> str:
    """A socket error in words: never empty (a bare ``TimeoutError`` prints as nothing)."""
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ConnectionResetError):
        return "the connection was reset"
    text = exc.strerror or str(exc)
    return text or type(exc).__name__


async def reach(listener: Listener, host: str, port: int, join_code: str | None,
                 budget: float) -> Connection:
    """Dial the table's lobby, dialling again (pausing 0.5, 1, 2, 4, 4… s) until
    ``budget`` seconds are spent while the failure may pass: refused, reset, or closed
    before the handshake ended — a lossy link that lost the first packets, or a host
    restarting or busy.  Fails at once, with the reason, when the address answered with
    something that is not silkroad, the table refused us (wrong code, full, another
    protocol version), or the name does not resolve: asking again would get the same."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    deadline = start + budget
    delay = REDIAL_FIRST
    attempts = 0
    while True:
        attempts += 1
        verb = "join"  # it answered; "reach": it did not
        try:
            return await dial(host, port, listener.identity, LOBBY,
                              incarnation=listener.incarnation, join_code=join_code,
                              timeout=max(deadline - loop.time(), 0.1),
                              version=listener.version)
        except NotSilkroad as exc:
            raise LobbyError(f"{host}:{port} answered, but it is not a silkroad table: "
                             f"{exc.reason} (check the host and port the host printed)"
                             ) from None
        except HandshakeError as exc:
            if not exc.transient:
                raise LobbyError(f"could not join {host}:{port}: {exc.reason}") from None
            reason = exc.reason
        except P2PError as exc:  # dial raises only handshake errors; any other is final
            raise LobbyError(f"could not join {host}:{port}: {exc.reason}") from None
        except socket.gaierror as exc:
            raise LobbyError(f"could not reach {host}:{port}: unknown host "
                             f"({exc.strerror or type(exc).__name__})") from None
        except TimeoutError as exc:  # the attempt had all the time left
            reason, verb = str(exc) or f"timed out after {budget:g} s", "reach"
            break
        except OSError as exc:
            reason, verb = _os_reason(exc), "reach"
        if loop.time() + delay >= deadline:
            break
        log.info("dialling %s:%d again in %.1f s: %s", host, port, delay, reason)
        await asyncio.sleep(delay)
        delay = min(delay * 2, REDIAL_MAX)
    tries = f" ({attempts} attempts in {loop.time() - start:.0f} s)" if attempts > 1 else ""
    raise LobbyError(f"could not {verb} {host}:{port}: {reason}{tries}")
