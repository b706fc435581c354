"""A lossy link at the door: the host's first SYN-ACK and the joiner's hello are lost.

A user on a link that dropped 3 % of packets lost exactly those two packets and could not
join.  Here the two packets are really dropped, between two network namespaces: the host
(``silkroad host``, one bot) in one, the joiner (``silkroad join HOST:PORT``) in the other,
joined by two TUN devices and ``lossy_link.py``, a user-space forwarder that copies IP
packets between them and drops the FIRST SYN-ACK from the host's port and the FIRST segment
with payload from the joiner to that port (the machine has no netem or packet filter).
TCP must resend both, and the listener must still be waiting for the hello when it comes
(the forwarder shows the host answering on that first connection, not closing it); the
joiner must get its seat and the game must end certified fair for host and joiner alike.

Only the real commands are run, as processes; no product module is imported.  Needs root
and iproute2 (CI has both); without them the test fails with a clear message — it is never
skipped.  Addresses live in 10.214.0.0/24, which exists only inside the namespaces; the
forwarder, the namespaces and the devices are removed in teardown even on failure.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

HOST_ADDR = "10.214.0.1"
JOIN_ADDR = "10.214.0.2"
PREFIX = 24
PORT = 47214
"""The host's fixed port: the namespaces are new, so nothing else can hold it."""
FORWARDER = Path(__file__).with_name("lossy_link.py")
SILKROAD = Path(sys.executable).with_name("silkroad")
JOIN_TIMEOUT = 60.0
"""The joiner's ``--timeout``: far longer than the resends the lost packets need."""
GAME_DEADLINE = 120.0
"""How long the test waits for a process (a whole game takes about 20-40 s here)."""


class Proc:
    """A child process whose stdout lines are collected by a thread, so the test can wait
    on a line or on the exit (never on a fixed sleep); stderr goes to a file."""

    def __init__(self, cmd: list[str], name: str, log_dir: Path, *, cwd: Path | None = None,
                 stdin: int | None = None) -> None:
        self.name = name
        self.stderr_path = log_dir / f"{name}.stderr"
        self._stderr = self.stderr_path.open("w")
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self._stderr,
                                     stdin=stdin, text=True, cwd=cwd,
                                     start_new_session=True)
        self._reader = threading.Thread(target=self._read, args=(self.proc.stdout,),
                                        daemon=True)
        self._reader.start()

    def _read(self, stream: IO[str] | None) -> None:
        assert stream is not None
        for line in stream:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:  # end of output: the process is gone
            self._changed.notify_all()

    def events(self) -> list[dict[str, Any]]:
        """The JSON lines printed so far."""
        with self._changed:
            lines = list(self.lines)
        out = []
        for line in lines:
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
        return out

    def wait_event(self, pred: Callable[[dict[str, Any]], bool], timeout: float,
                   what: str) -> dict[str, Any]:
        """The first JSON line that satisfies ``pred``; fails naming ``what`` if the
        process ends or ``timeout`` passes first."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = [e for e in self.events() if pred(e)]
                if found:
                    return found[0]
                left = deadline - time.monotonic()
                if left <= 0 or not self._reader.is_alive():
                    break
                self._changed.wait(left)
        state = "timed out" if self.proc.poll() is None else f"exited {self.proc.returncode}"
        pytest.fail(f"{self.name} never printed {what} ({state}):\n{self.tail()}")

    def wait_exit(self, timeout: float) -> int | None:
        """The exit code, or None if the process is still running after ``timeout``."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self._reader.join(10)
        return code

    def tail(self, chars: int = 3000) -> str:
        """The end of stdout and stderr, for failure messages."""
        self._stderr.flush()
        with self._changed:
            out = "\n".join(self.lines)
        err = self.stderr_path.read_text(errors="replace")
        return f"--- {self.name} stdout ---\n{out[-chars:]}\n--- {self.name} stderr ---\n" \
               f"{err[-chars:]}"

    def stop(self) -> None:
        """Kill the process and its children (its own session: bots the host started)."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            pass
        self._reader.join(10)
        self._stderr.close()


def _ip(*args: str) -> None:
    try:
        subprocess.run(["ip", *args], check=True, capture_output=True, text=True, timeout=20)
    except subprocess.CalledProcessError as exc:
        pytest.fail(f"`ip {' '.join(args)}` failed: {exc.stderr.strip()}")


@dataclass
class Link:
    """The two namespaces and the forwarder between them."""

    host_ns: str
    join_ns: str
    forwarder: Proc


@contextmanager
def lossy_link(log_dir: Path, *, every_synack: bool = False) -> Iterator[Link]:
    """Two namespaces joined by two TUN devices and the lossy forwarder; all removed on
    exit, even on failure (the devices vanish with the forwarder, which owns them)."""
    if os.geteuid() != 0:
        pytest.fail("the lossy-door test needs root (ip netns, /dev/net/tun); CI runs it as "
                    "root")
    if shutil.which("ip") is None:
        pytest.fail("the lossy-door test needs iproute2's `ip` (apt-get install iproute2)")
    if not os.path.exists("/dev/net/tun"):
        pytest.fail("the lossy-door test needs /dev/net/tun (the tun kernel module)")
    tag = uuid.uuid4().hex[:6]
    host_dev, join_dev = f"srl{tag}h", f"srl{tag}j"
    host_ns, join_ns = f"srl{tag}H", f"srl{tag}J"
    made: list[str] = []
    cmd = [sys.executable, str(FORWARDER), "--host-dev", host_dev, "--join-dev", join_dev,
           "--port", str(PORT)] + (["--every-synack"] if every_synack else [])
    fwd = Proc(cmd, "forwarder", log_dir, stdin=subprocess.PIPE)
    try:
        fwd.wait_event(lambda e: e.get("event") == "ready", 20, "that its TUN devices are ready")
        for ns, dev, addr in ((host_ns, host_dev, HOST_ADDR), (join_ns, join_dev, JOIN_ADDR)):
            _ip("netns", "add", ns)
            made.append(ns)
            _ip("link", "set", dev, "netns", ns)
            _ip("-n", ns, "addr", "add", f"{addr}/{PREFIX}", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "route", "add", "224.0.0.0/4", "dev", dev)
        yield Link(host_ns, join_ns, fwd)
    finally:
        if fwd.proc.stdin is not None:
            fwd.proc.stdin.close()  # end of input: the forwarder prints its stats and exits
        fwd.wait_exit(10)
        fwd.stop()
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=20)
        for dev in (host_dev, join_dev):  # only if the forwarder somehow left them behind
            subprocess.run(["ip", "link", "del", dev], capture_output=True, timeout=20)


@dataclass
class Outcome:
    """What the processes did: exit codes, their JSON lines and the forwarder's log."""

    join_code: int | None
    host_code: int | None
    join_events: list[dict[str, Any]]
    host_events: list[dict[str, Any]]
    link_events: list[dict[str, Any]]
    join_tail: str
    host_tail: str
    seconds: float


def play_through_lossy_door(tmp_path: Path, *, join_timeout: float = JOIN_TIMEOUT,
                            every_synack: bool = False) -> Outcome:
    """Host a 3-seat table (one bot) in one namespace, join it from the other across the
    lossy forwarder, and collect what happened."""
    assert SILKROAD.exists(), f"no silkroad command next to {sys.executable}"
    host_dir, join_dir = tmp_path / "host", tmp_path / "join"
    host_dir.mkdir()
    join_dir.mkdir()
    started = time.monotonic()
    with lossy_link(tmp_path, every_synack=every_synack) as link:
        host = Proc(["ip", "netns", "exec", link.host_ns, str(SILKROAD), "host", "--headless",
                     "--json", "--verbose", "--interface", HOST_ADDR, "--port", str(PORT),
                     "--seats", "3", "--bots", "1", "--shuffle", "audit", "--name", "Host",
                     "--timeout", "60", "--folder", str(host_dir / "games"),
                     "--transcript", str(host_dir / "game.silkroad")],
                    "host", tmp_path, cwd=host_dir)
        join: Proc | None = None
        try:
            host.wait_event(lambda e: e.get("event") == "open", 30, "that its table is open")
            join = Proc(["ip", "netns", "exec", link.join_ns, str(SILKROAD), "join",
                         f"{HOST_ADDR}:{PORT}", "--headless", "--json", "--verbose",
                         "--interface", JOIN_ADDR, "--name", "Lossy",
                         "--timeout", f"{join_timeout:g}",
                         "--folder", str(join_dir / "games"),
                         "--transcript", str(join_dir / "game.silkroad")],
                        "joiner", tmp_path, cwd=join_dir)
            join_code = join.wait_exit(GAME_DEADLINE)
            # a joiner that failed leaves the host waiting for its seat: do not wait for it
            host_code = host.wait_exit(GAME_DEADLINE) if join_code == 0 else None
            seconds = time.monotonic() - started
            return Outcome(join_code, host_code, join.events(), host.events(),
                           link.forwarder.events(), join.tail(), host.tail(), seconds)
        finally:
            if join is not None:
                join.stop()
            host.stop()


def check_outcome(out: Outcome) -> dict[str, Any]:
    """Assert the drops happened and the game got through them fair; returns the facts the
    forwarder showed about how TCP recovered."""
    log = out.link_events
    lines = [json.dumps(e) for e in log if e.get("event") != "ready"]
    shown = "\n".join(lines[:30] + ([f"... {len(lines) - 30} more"] if len(lines) > 30 else []))
    drops = {e["what"]: e for e in log if e.get("event") == "drop"}
    assert "syn-ack" in drops, f"the forwarder never dropped the host's SYN-ACK:\n{shown}"
    assert out.join_code == 0, (
        f"the joiner did not get through the lossy door (exit {out.join_code}) after the "
        f"forwarder dropped the host's first SYN-ACK"
        f"{' and the hello' if 'hello' in drops else ''}:\n{out.join_tail}\n"
        f"--- forwarder log ---\n{shown}")
    assert "hello" in drops, (
        f"the forwarder never dropped the joiner's hello (first segment with payload to port "
        f"{PORT}):\n{shown}")
    assert out.host_code == 0, f"the host failed (exit {out.host_code}):\n{out.host_tail}"
    final = [e for e in out.join_events if "audit" in e]
    assert final, f"the joiner printed no result:\n{out.join_tail}"
    audit = final[-1]["audit"]
    assert audit["status"] == "certified" and audit["fair"] is True, (
        f"the joiner's game did not end certified fair: {audit['text']}")
    assert final[-1]["verdict"] == "fair", final[-1]
    host_final = [e for e in out.host_events if "audit" in e]
    assert host_final and host_final[-1]["audit"]["status"] == "certified", out.host_tail
    assert host_final[-1]["audit"]["final_hash"] == audit["final_hash"], (
        "host and joiner certified different final states")
    assert sorted(audit["closed_by"]) == [0, 1, 2], audit
    first = [e for e in log if e.get("what") in ("answer", "closed")]
    assert first, f"the host never answered on the joiner's first connection:\n{shown}"
    assert first[0]["what"] == "answer", (
        f"the host closed the joiner's first connection {first[0]['t'] - drops['hello']['t']:.1f}"
        f" s after the hello was dropped, before answering it: its hello deadline left no "
        f"room for TCP's resend, and the joiner got in only by dialling again:\n{shown}")
    resent = [e for e in log if e.get("what") == "hello-resent"]
    assert resent, f"the hello got through but TCP never resent the dropped one:\n{shown}"
    return {"hello_resent_after_s": round(resent[0]["t"] - drops["hello"]["t"], 3),
            "syn_resends": sum(1 for e in log if e.get("what") == "syn" and e["again"]),
            "syn_acks_passed": sum(1 for e in log if e.get("what") == "syn-ack"
                                   and e["event"] == "pass"),
            "answer_after_drop_s": round(first[0]["t"] - drops["hello"]["t"], 3),
            "seconds": round(out.seconds, 1)}


@pytest.mark.timeout(240)
def test_join_survives_a_lost_syn_ack_and_a_lost_hello(tmp_path: Path) -> None:
    facts = check_outcome(play_through_lossy_door(tmp_path))
    print("lossy door:", json.dumps(facts))
