"""A lossy wire between two TUN devices: copies IP packets both ways and drops chosen ones.

Test rig of ``test_lossy_door_netns.py``, not product code.  The machine has no netem and
no packet filter, so the loss is made in user space::

    python tests/p2p/lossy_link.py --host-dev DEV_A --join-dev DEV_B --port P [--every-synack]

It creates the two TUN devices (``IFF_TUN | IFF_NO_PI``, not persistent: they vanish when
this process dies), prints ``{"event": "ready"}`` and then forwards every packet read from
one device to the other.  The test moves each device into its own network namespace
afterwards: the open file descriptors stay attached to the devices.

What it drops (IPv4/TCP only; everything else passes untouched):

* the FIRST SYN-ACK sent from the host's port ``P`` towards the joiner (``--every-synack``:
  every one of them, a link on which no connection can ever be made);
* the FIRST TCP segment carrying payload from the joiner to port ``P``: the joiner's first
  handshake message (its hello).

Each drop, and each later packet that shows what TCP did about it (a SYN or SYN-ACK sent
again, the dropped hello's bytes resent, then the host's first answer on that connection:
``answer`` with payload, or ``closed`` if it sent FIN or RST first), is printed as one JSON
line at once, so the test can assert that the drops really happened.  The forwarder holds
no queue: a packet is written to the other device as soon as it is read, or dropped.  It
exits when its stdin reaches end of file (the test closed it, or the test process died) or
on SIGTERM, printing ``{"event": "stats", ...}`` first.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import select
import signal
import socket
import struct
import sys
import time
from dataclasses import dataclass, field
from typing import Any

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
PROTO_TCP = 6
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
MAX_PACKET = 65535
BATCH = 64
"""Packets read from one device per wake-up before the other gets its turn (fairness)."""


def open_tun(name: str) -> int:
    """Create the TUN device ``name`` and return its non-blocking file descriptor."""
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    try:
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH22x", name.encode(), IFF_TUN | IFF_NO_PI))
    except OSError:
        os.close(fd)
        raise
    return fd


@dataclass(frozen=True)
class Tcp:
    """The fields of one IPv4/TCP packet the drop rules look at."""

    src: str
    dst: str
    sport: int
    dport: int
    seq: int
    flags: int
    payload: int

    def brief(self) -> dict[str, Any]:
        """The packet as the JSON log shows it."""
        return {"src": f"{self.src}:{self.sport}", "dst": f"{self.dst}:{self.dport}",
                "seq": self.seq, "flags": self.flags, "payload": self.payload}


def parse_tcp(pkt: bytes) -> Tcp | None:
    """The TCP header of an unfragmented IPv4 packet, or None for anything else."""
    if len(pkt) < 20 or pkt[0] >> 4 != 4 or pkt[9] != PROTO_TCP:
        return None
    ihl = (pkt[0] & 0x0F) * 4
    (total,) = struct.unpack_from("!H", pkt, 2)
    (frag,) = struct.unpack_from("!H", pkt, 6)
    if frag & 0x1FFF or len(pkt) < ihl + 20:
        return None  # a later fragment has no TCP header
    sport, dport, seq = struct.unpack_from("!HHI", pkt, ihl)
    tcp_len = (pkt[ihl + 12] >> 4) * 4
    flags = pkt[ihl + 13]
    return Tcp(socket.inet_ntoa(pkt[12:16]), socket.inet_ntoa(pkt[16:20]), sport, dport,
               seq, flags, total - ihl - tcp_len)


@dataclass
class Rules:
    """The drop decisions and what they log; one instance sees both directions."""

    port: int
    every_synack: bool
    start: float = field(default_factory=time.monotonic)
    dropped_synack: bool = False
    dropped_hello: tuple[int, int] | None = None
    """(joiner's source port, sequence number) of the dropped hello."""
    answered: bool = False
    """Whether the host's side already answered (or closed) the hello's connection."""
    seen_syn: set[tuple[int, int]] = field(default_factory=set)
    counts: dict[str, int] = field(default_factory=dict)

    def emit(self, event: str, tcp: Tcp, **extra: Any) -> None:
        """One JSON line, flushed at once (the test waits on these lines)."""
        self.counts[event] = self.counts.get(event, 0) + 1
        line = {"event": event, "t": round(time.monotonic() - self.start, 3), **tcp.brief(),
                **extra}
        print(json.dumps(line), flush=True)

    def host_to_joiner(self, tcp: Tcp) -> bool:
        """Whether to forward a packet the host's side sent; logs SYN-ACKs of port P, and
        how the host's side first answers on the connection whose hello was dropped."""
        if tcp.sport != self.port:
            return True
        if (self.dropped_hello is not None and not self.answered
                and tcp.dport == self.dropped_hello[0]):
            if tcp.payload > 0:
                self.answered = True
                self.emit("pass", tcp, what="answer")
            elif tcp.flags & (FIN | RST):
                self.answered = True
                self.emit("pass", tcp, what="closed")
        if tcp.flags & (SYN | ACK) != SYN | ACK:
            return True
        if self.every_synack or not self.dropped_synack:
            self.dropped_synack = True
            self.emit("drop", tcp, what="syn-ack")
            return False
        self.emit("pass", tcp, what="syn-ack")
        return True

    def joiner_to_host(self, tcp: Tcp) -> bool:
        """Whether to forward a packet the joiner's side sent to port P; logs SYNs and the
        hello (dropped the first time, shown again when TCP resends the same bytes)."""
        if tcp.dport != self.port:
            return True
        if tcp.flags & (SYN | ACK) == SYN:
            key = (tcp.sport, tcp.seq)
            self.emit("pass", tcp, what="syn", again=key in self.seen_syn)
            self.seen_syn.add(key)
            return True
        if tcp.payload <= 0:
            return True
        if self.dropped_hello is None:
            self.dropped_hello = (tcp.sport, tcp.seq)
            self.emit("drop", tcp, what="hello")
            return False
        if (tcp.sport, tcp.seq) == self.dropped_hello:
            self.emit("pass", tcp, what="hello-resent")
        return True


def forward(src: int, dst: int, decide: Any, stats: dict[str, int]) -> None:
    """Copy up to :data:`BATCH` waiting packets from ``src`` to ``dst``, dropping those
    ``decide`` refuses; nothing is kept between calls."""
    for _ in range(BATCH):
        try:
            pkt = os.read(src, MAX_PACKET)
        except BlockingIOError:
            return
        tcp = parse_tcp(pkt)
        if tcp is not None and not decide(tcp):
            continue
        try:
            os.write(dst, pkt)
            stats["forwarded"] += 1
        except OSError:  # the other device is down or its queue is full: the wire loses it
            stats["write_errors"] += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host-dev", required=True, help="TUN device of the host's side")
    parser.add_argument("--join-dev", required=True, help="TUN device of the joiner's side")
    parser.add_argument("--port", type=int, required=True, help="the host's listening port")
    parser.add_argument("--every-synack", action="store_true",
                        help="drop every SYN-ACK from the port, not only the first")
    args = parser.parse_args()
    host_fd, join_fd = open_tun(args.host_dev), open_tun(args.join_dev)
    rules = Rules(args.port, args.every_synack)
    stats = {"forwarded": 0, "write_errors": 0}

    def finish(*_: object) -> None:
        print(json.dumps({"event": "stats", **stats, **rules.counts}), flush=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, finish)
    print(json.dumps({"event": "ready", "host_dev": args.host_dev,
                      "join_dev": args.join_dev}), flush=True)
    stdin = sys.stdin.fileno()
    while True:
        ready, _, _ = select.select([host_fd, join_fd, stdin], [], [])
        if stdin in ready and not os.read(stdin, 4096):
            finish()
        if host_fd in ready:
            forward(host_fd, join_fd, rules.host_to_joiner, stats)
        if join_fd in ready:
            forward(join_fd, host_fd, rules.joiner_to_host, stats)


if __name__ == "__main__":
    main()
