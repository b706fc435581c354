"""Discovery with real python-zeroconf on 127.0.0.1 (fast timings, nothing leaves lo)."""

from __future__ import annotations

import asyncio
import os

import pytest
from p2p_testutil import LOOPBACK, run

from p2p.identity import Identity
from p2p.lobby.discovery import (
    MAX_TXT,
    Discovery,
    TableAd,
    TableBrowser,
    TableEvent,
    TableInfo,
    instance_name,
)


async def next_for(browser: TableBrowser, instance: str, timeout: float = 5.0) -> TableEvent:
    async with asyncio.timeout(timeout):
        while True:
            event = await browser.next_event()
            if event.instance == instance:
                return event


@pytest.mark.timeout(20)
def test_advertise_browse_update_remove(fast_zeroconf: None) -> None:
    fp = Identity.generate().fingerprint
    name = f"Tea {os.urandom(3).hex()}"

    async def body() -> None:
        async with Discovery([LOOPBACK]) as host_side, Discovery([LOOPBACK]) as browser_side:
            ad = TableAd(name, 1, 4, fp, code_required=True, variant="base")
            adv = await host_side.advertise(ad, 45678)
            assert adv.instance == f"{name} [{fp[:8]}]._silkroad._tcp.local."
            async with browser_side.browse() as browser:
                added = await next_for(browser, adv.instance)
                assert added.kind == "added" and added.table is not None
                assert (added.table.host, added.table.port) == (LOOPBACK, 45678)
                assert added.table.ad == ad

                await adv.update(seats_taken=3)
                updated = await next_for(browser, adv.instance)
                assert updated.kind == "updated" and updated.table is not None
                assert updated.table.ad.seats_taken == 3

                await adv.update(phase="playing", seats_taken=4)
                updated = await next_for(browser, adv.instance)
                assert updated.table is not None and updated.table.ad.phase == "playing"

                await adv.withdraw()
                removed = await next_for(browser, adv.instance)
                assert removed.kind == "removed" and adv.instance not in browser.tables

    run(body)


@pytest.mark.timeout(20)
def test_same_table_name_gets_distinct_instances(fast_zeroconf: None) -> None:
    name = f"Same {os.urandom(3).hex()}"

    async def body() -> None:
        async with (
            Discovery([LOOPBACK]) as a,
            Discovery([LOOPBACK]) as b,
            Discovery([LOOPBACK]) as watcher,
        ):
            fps = [Identity.generate().fingerprint for _ in range(2)]
            ads = [
                await d.advertise(TableAd(name, 1, 3, fp), 40000 + i)
                for i, (d, fp) in enumerate(zip((a, b), fps, strict=True))
            ]
            assert ads[0].instance != ads[1].instance
            async with watcher.browse() as browser:
                seen = set()
                async with asyncio.timeout(5):
                    while len(seen) < 2:
                        event = await browser.next_event()
                        if event.table and event.table.ad.name == name:
                            seen.add(event.table.ad.fingerprint)
                assert seen == set(fps)

    run(body)


def test_txt_record_is_small_and_strictly_parsed() -> None:
    ad = TableAd("x" * 300, 6, 6, "f" * 32, phase="playing", code_required=True, variant="v" * 50)
    props = ad.to_properties()
    assert sum(1 + len(k) + 1 + len(v.encode()) for k, v in props.items()) <= MAX_TXT
    raw = {k.encode(): v.encode() for k, v in props.items()}
    assert TableAd.from_properties(raw).name == "x" * 40
    for key, bad in [(b"seats", b"7/6"), (b"phase", b"over"), (b"fp", b"zz"), (b"v", b"x")]:
        with pytest.raises(ValueError):
            TableAd.from_properties({**raw, key: bad})
    with pytest.raises(ValueError, match="missing"):
        TableAd.from_properties({k: v for k, v in raw.items() if k != b"fp"})
    assert instance_name("a.b", "0123456789") == "a b [01234567]"


@pytest.mark.timeout(30)
def test_a_filter_keeps_other_runs_tables_out(fast_zeroconf: None) -> None:
    """Two tables of one name on 127.0.0.1 — ours and someone else's (another copy of the
    suite, a real game): an unfiltered browser sees both, a browser filtered on our key
    sees only ours, and finding the table by name picks ours."""
    from p2p.front_door import browse_tables, find_table

    name = "Shared tea"
    ours, theirs = Identity.generate().fingerprint, Identity.generate().fingerprint

    def mine(ad: TableAd) -> bool:
        return ad.fingerprint == ours

    async def body() -> None:
        async with Discovery([LOOPBACK]) as a, Discovery([LOOPBACK]) as b:
            await a.advertise(TableAd(name, 1, 3, theirs), 40001)
            await b.advertise(TableAd(name, 1, 3, ours), 40002)
            everything = await browse_tables(LOOPBACK, 10, until=lambda t: {
                i.ad.fingerprint for i in t.values()} >= {ours, theirs})
            assert {i.ad.fingerprint for i in everything.values()} >= {ours, theirs}
            only = await browse_tables(LOOPBACK, 1.5, match=mine)
            assert [i.port for i in only.values()] == [40002]
            found = await find_table(LOOPBACK, name, 5, match=mine)
            assert found.port == 40002 and found.ad.fingerprint == ours

    run(body, timeout=25)


def test_the_ad_says_when_a_table_plays_reverse_with_hidden_money() -> None:
    """`silkroad tables` and the joiner's lobby list a table's rules: the reverse variant
    and hidden money.  A table of the base rules advertises the record it always did."""
    from cli.commands.net import describe

    fp = "ab" * 16
    plain = TableAd("Tea", 1, 3, fp)
    assert "money" not in plain.to_properties()
    ad = TableAd("Tea", 1, 3, fp, variant="reverse", money="hidden")
    raw = {k.encode(): v.encode() for k, v in ad.to_properties().items()}
    back = TableAd.from_properties(raw)
    assert back == ad
    line = describe(TableInfo("Tea [abababab]", back, "127.0.0.1", 1, ("127.0.0.1",)))
    assert "reverse" in line and "hidden money" in line, line
    assert "money" not in describe(TableInfo("Tea", plain, "127.0.0.1", 1, ()))


def test_the_watch_count_is_optional_in_the_record() -> None:
    """No watchers: the record is the one a table always sent (an older peer reads it as
    before); watchers: a ``watch`` key, read back; a record without it reads as 0; a bad
    count is refused naming the field."""
    from dataclasses import replace

    ad = TableAd("t", 1, 3, "0" * 32)
    plain = ad.to_properties()
    assert "watch" not in plain
    two = replace(ad, watchers=2).to_properties()
    assert two["watch"] == "2" and {k: v for k, v in two.items() if k != "watch"} == plain

    def raw(props: dict[str, str]) -> dict[bytes, bytes | None]:
        return {k.encode(): v.encode() for k, v in props.items()}

    assert TableAd.from_properties(raw(two)).watchers == 2
    assert TableAd.from_properties(raw(plain)).watchers == 0
    for bad in ("-1", "x", "9999", ""):
        with pytest.raises(ValueError, match="watch"):
            TableAd.from_properties(raw({**plain, "watch": bad}))
