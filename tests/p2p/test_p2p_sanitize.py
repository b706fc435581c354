"""Strings from the network are cleaned where they enter.

A table advertised with terminal escape sequences in its name retitled and cleared the
terminal of ``silkroad tables``.  :func:`p2p.sanitize.clean` is applied at the boundary
(discovery, lobby, handshake, mesh goodbyes, stop details), so screens and logs only ever
see harmless text.  Everything here binds to 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest
from p2p_testutil import LOOPBACK, run
from zeroconf.asyncio import AsyncServiceInfo

from p2p.errors import LobbyError
from p2p.identity import Identity
from p2p.lobby.discovery import SERVICE_TYPE, Discovery
from p2p.lobby.seating import LobbyTable, join_table
from p2p.net.connection import Listener
from p2p.net.framing import frame, pack
from p2p.sanitize import clean, is_clean

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[H\u202eevil\u202c\x9b31m\r\nforged log line\x00"


def _safe(text: str) -> bool:
    """Nothing a terminal would act on: no C0/C1 controls, DEL or bidi controls."""
    return not any(ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 or c in "\u202a\u202b\u202c"
                   "\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c" for c in text)


def test_clean_removes_escapes_controls_bidi_and_length() -> None:
    out = clean(HOSTILE)
    assert _safe(out)
    assert "pwned" not in out  # an OSC title goes whole, payload included
    assert "evil" in out and "forged log line" in out and "\n" not in out
    assert clean("\x1b[31mred\x1b[0m tea") == "red tea"
    assert clean("a\tb\n\nc") == "a b c"
    assert clean("x" * 500, 40) == "x" * 39 + "…" and len(clean("y" * 10**6)) == 200
    for plain in ("Friday tea", "Zhang 张伟", "Leyla’s table", "👨\u200d👩\u200d👧 fun"):
        assert clean(plain) == plain and is_clean(plain)
    assert not is_clean("a\u202eb") and not is_clean("a\x1b[2Jb")
    assert clean(42) == "42" and _safe(clean(b"\xff\x1b[2J"))


@pytest.mark.timeout(40)
def test_silkroad_tables_prints_a_hostile_advertisement_harmlessly(fast_zeroconf: None) -> None:
    """A real zeroconf record on 127.0.0.1 whose instance and TXT names carry escape
    sequences and a bidi override, listed by ``silkroad tables`` (a separate process)."""
    fp = Identity.generate().fingerprint
    marker = f"Tea{os.urandom(3).hex()}"
    bad_name = f"{HOSTILE[:20]}{marker}\u202e"

    async def body() -> tuple[bytes, bytes, str]:
        async with Discovery([LOOPBACK]) as host_side:
            info = AsyncServiceInfo(
                # zeroconf refuses C0 controls in an instance name it registers, not the
                # 8-bit CSI (C1) or a bidi override; the TXT name carries the 7-bit ones
                SERVICE_TYPE, f"\x9b2J\u202e{marker} [{fp[:8]}].{SERVICE_TYPE}", port=45999,
                properties={"v": "4", "name": bad_name, "seats": "1/4", "phase": "lobby",
                            "fp": fp, "code": "0", "var": "base\x1b[2J"},
                server=f"silkroad-{fp[:12]}.local.", parsed_addresses=[LOOPBACK])
            await (await host_side.aiozc.async_register_service(info))
            async with Discovery([LOOPBACK]) as browser_side, browser_side.browse() as br:
                async with asyncio.timeout(10):
                    while not any(marker in i for i in br.tables):
                        await br.next_event()
                seen = next(t for i, t in br.tables.items() if marker in i)
                assert _safe(seen.instance) and _safe(seen.ad.name) and _safe(seen.ad.variant)
                assert marker in seen.ad.name
            outs = []
            for extra in ([], ["--json"]):
                proc = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "cli.main", "tables", "--interface", LOOPBACK,
                    "--timeout", "4", *extra, stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE)
                out, err = await asyncio.wait_for(proc.communicate(), 25)
                assert proc.returncode == 0, err
                outs.append(out)
            return outs[0], outs[1], err.decode()

    text, as_json, _err = run(body, 35)
    listed = text.decode()
    assert marker in listed, listed  # the table is listed…
    assert _safe(listed.replace("\n", "")) and b"\x1b" not in text  # …and nothing acts
    assert "pwned" not in listed
    rows = [r for r in json.loads(as_json) if marker in r["name"]]
    assert rows and all(_safe(r["name"]) and _safe(r["variant"]) for r in rows)
    assert b"\x1b" not in as_json and "\\u001b" not in as_json.decode()


@pytest.mark.timeout(20)
def test_lobby_names_and_reasons_are_cleaned() -> None:
    """A joiner's name is seated cleaned (so every screen and the roster show it clean);
    a refusal a table sends is shown cleaned by the joiner."""
    async def body() -> None:
        host = await Listener(Identity.generate(), host=LOOPBACK).start()
        table = await LobbyTable(host, name="Tea", seats=3).open()
        joiner = await Listener(Identity.generate(), host=LOOPBACK).start()
        seen: list[list[tuple[str, str]]] = []
        task = asyncio.create_task(join_table(
            joiner, LOOPBACK, host.port, name=f"Ann{HOSTILE}", start_timeout=5,
            on_lobby=lambda s, _n: seen.append(s)))
        try:
            await table.wait_for_players(2, timeout=5)
            name = table.seated[1].name
            assert _safe(name) and name.startswith("Ann") and "pwned" not in name
            async with asyncio.timeout(5):
                while not seen:
                    await asyncio.sleep(0.01)
            assert all(_safe(n) for n, _fp in seen[-1])
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await table.close()
            await joiner.close()
            await host.close()

        # a "table" that refuses with escape sequences in its reason
        async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.read(4096)
            writer.write(frame(pack(["refuse", HOSTILE])))
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(refuse, LOOPBACK, 0)
        port = server.sockets[0].getsockname()[1]
        joiner = await Listener(Identity.generate(), host=LOOPBACK).start()
        try:
            with pytest.raises(LobbyError) as err:
                await join_table(joiner, LOOPBACK, port, name="Bo", timeout=5)
            assert "refused by peer" in err.value.reason and _safe(err.value.reason)
            assert "evil" in err.value.reason and "pwned" not in err.value.reason
        finally:
            await joiner.close()
            server.close()
            await server.wait_closed()

    run(body)
