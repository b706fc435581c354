"""Three hosts: network namespaces on a bridge, real multicast mDNS, a full game.

Needs root and iproute2 (CI has both); without them the test fails with a clear message —
it is never skipped.  Addresses live in 10.213.0.0/24, which exists only inside the
namespaces; everything is removed in teardown even on failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from p2p.judge.game_audit import audit_game

SUBNET = "10.213.0"
PEERS = 3


def _ip(*args: str, ns: str | None = None) -> None:
    cmd = ["ip", *args] if ns is None else ["ip", "netns", "exec", ns, "ip", *args]
    subprocess.run(cmd, check=True, capture_output=True, timeout=20)


@pytest.fixture
def namespaces() -> Iterator[list[tuple[str, str]]]:
    if os.geteuid() != 0:
        pytest.fail("the multi-host test needs root (ip netns); CI runs it as root")
    if shutil.which("ip") is None:
        pytest.fail("the multi-host test needs iproute2's `ip` (apt-get install iproute2)")
    tag = uuid.uuid4().hex[:6]
    bridge = f"srbr{tag}"
    made: list[str] = []
    out: list[tuple[str, str]] = []
    try:
        _ip("link", "add", bridge, "type", "bridge")
        _ip("link", "set", bridge, "up")
        for i in range(PEERS):
            ns, host_end = f"sr{tag}n{i}", f"srv{tag}{i}"
            _ip("netns", "add", ns)
            made.append(ns)
            _ip("link", "add", host_end, "type", "veth", "peer", "name", "eth0", "netns", ns)
            _ip("link", "set", host_end, "master", bridge)
            _ip("link", "set", host_end, "up")
            addr = f"{SUBNET}.{10 + i}"
            _ip("addr", "add", f"{addr}/24", "dev", "eth0", ns=ns)
            _ip("link", "set", "eth0", "up", ns=ns)
            _ip("link", "set", "eth0", "multicast", "on", ns=ns)
            _ip("link", "set", "lo", "up", ns=ns)
            _ip("route", "add", "224.0.0.0/4", "dev", "eth0", ns=ns)
            out.append((ns, addr))
        yield out
    finally:
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=20)
        subprocess.run(["ip", "link", "del", bridge], capture_output=True, timeout=20)


@pytest.mark.timeout(150)
def test_three_namespaces_discover_by_mdns_and_finish_a_game(
        namespaces: list[tuple[str, str]], tmp_path: Path) -> None:
    script = Path(__file__).with_name("netns_peer.py")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    procs = []
    try:
        for i, (ns, addr) in enumerate(namespaces):
            role = "host" if i == 0 else "join"
            procs.append(subprocess.Popen(
                ["ip", "netns", "exec", ns, sys.executable, str(script), role, addr,
                 str(tmp_path / f"peer{i}")], stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, env=env))
        outs = [p.communicate(timeout=130) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(5)
    done = []
    for out, err in outs:
        lines = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
        assert lines, f"a peer did not finish:\n{err[-3000:]}"
        done.append(lines[-1])
    assert len({d["hash"] for d in done}) == 1, done
    assert sorted(d["seat"] for d in done) == list(range(PEERS))
    assert all(audit_game(d["export"]).fair for d in done)
