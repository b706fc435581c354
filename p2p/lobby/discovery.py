"""Table discovery on the LAN with mDNS/DNS-SD (python-zeroconf, asyncio API).

A host advertises ``"{table} [{fp8}]._silkroad._tcp.local."`` with a small TXT record;
browsers see tables appear, change (seats filling, game starting) and disappear.  zeroconf
is used to *find* tables only: a crashed host's record can linger for many minutes, so
liveness is decided by TCP heartbeats, never by mDNS.

TXT record (all values ASCII/UTF-8 strings, total kept under 200 bytes):

=====  =======================================  ======================
key    meaning                                  example
=====  =======================================  ======================
v      p2p protocol version                     ``1``
name   table name (≤ 40 bytes UTF-8)            ``Friday tea``
seats  seats taken / total                      ``2/4``
phase  ``lobby`` or ``playing``                 ``lobby``
fp     host key fingerprint (32 hex)            ``6777b308…``
code   ``1`` if a join code is required         ``0``
var    rules variant                            ``base``
watch  watchers now (sent only when > 0)        ``2``
=====  =======================================  ======================

Optional keys (``money``, ``watch``) are sent only when they differ from the default, and
a missing one reads as the default: a peer of an older version never sees a key it does
not know from a table of the base rules, and ignores one it does (TXT keys are a map).

Interfaces are selectable: ``None`` means every IPv4 interface (production); tests pass
``["127.0.0.1"]`` so nothing leaves the loopback interface.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from zeroconf import InterfaceChoice, IPVersion, ServiceStateChange, Zeroconf, get_all_addresses
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

from ..net.handshake import PROTOCOL_VERSION
from ..sanitize import clean

log = logging.getLogger("p2p.discovery")

SERVICE_TYPE = "_silkroad._tcp.local."
MAX_TXT = 200
MAX_NAME = 40
PHASES = ("lobby", "playing")
MAX_TABLES = 256
"""Tables a browser keeps at most (the LAN, not this program, decides how many exist)."""
MAX_EVENTS = 256
MAX_WATCH = 64
"""Largest watcher count an advertisement may state (a table admits far fewer)."""
MAX_INSTANCE = 255
"""Longest instance name shown (a DNS name is at most 255 bytes anyway)."""
"""Unread browser events kept at most; :attr:`TableBrowser.tables` stays the truth."""


def _clip_utf8(text: str, limit: int) -> str:
    data = text.encode()[:limit]
    return data.decode("utf-8", "ignore")


@dataclass(frozen=True)
class TableAd:
    """What a table tells the LAN about itself."""

    name: str
    seats_taken: int
    seats_total: int
    fingerprint: str
    phase: str = "lobby"
    code_required: bool = False
    variant: str = "base"
    version: int = PROTOCOL_VERSION
    #: "hidden" when the table keeps money behind screens (sent only then: a table of the
    #: base rules advertises the record it always did)
    money: str = "open"
    #: watchers at the table now (:mod:`p2p.watch`); sent only when there are any
    watchers: int = 0

    def to_properties(self) -> dict[str, str]:
        props = {
            "v": str(self.version),
            "name": _clip_utf8(self.name, MAX_NAME),
            "seats": f"{self.seats_taken}/{self.seats_total}",
            "phase": self.phase,
            "fp": self.fingerprint,
            "code": "1" if self.code_required else "0",
            "var": _clip_utf8(self.variant, 16),
        }
        if self.money == "hidden":
            props["money"] = "hidden"
        if self.watchers > 0:
            props["watch"] = str(min(self.watchers, MAX_WATCH))
        size = sum(1 + len(k) + 1 + len(v.encode()) for k, v in props.items())
        if size > MAX_TXT:  # pragma: no cover - bounded by the clipping above
            raise ValueError(f"TXT record of {size} bytes exceeds {MAX_TXT}")
        return props

    @classmethod
    def from_properties(cls, props: dict[bytes, bytes | None]) -> TableAd:
        """Parse a received TXT record; raises ``ValueError`` naming the bad field.

        Free-text fields (name, variant) are cleaned (:func:`p2p.sanitize.clean`): the
        LAN chooses them, and they are printed by ``silkroad tables`` and the lobby."""

        def text(key: str) -> str:
            raw = props.get(key.encode())
            if raw is None:
                raise ValueError(f"TXT field {key!r} missing")
            return raw.decode("utf-8")

        version = int(text("v"))
        taken, _, total = text("seats").partition("/")
        ad = cls(
            name=clean(text("name"), MAX_NAME) or "?",
            seats_taken=int(taken),
            seats_total=int(total),
            fingerprint=text("fp"),
            phase=text("phase"),
            code_required=text("code") == "1",
            variant=clean(text("var"), 16),
            version=version,
            money="hidden" if props.get(b"money") == b"hidden" else "open",
            watchers=_watchers(props.get(b"watch")),
        )
        if ad.phase not in PHASES:
            raise ValueError(f"unknown phase {clean(repr(ad.phase), 40)}")
        if not 0 <= ad.seats_taken <= ad.seats_total <= 6:
            raise ValueError(f"bad seats {ad.seats_taken}/{ad.seats_total}")
        if len(ad.fingerprint) != 32 or any(c not in "0123456789abcdef" for c in ad.fingerprint):
            raise ValueError("bad fingerprint")
        return ad


def _watchers(raw: bytes | None) -> int:
    """The ``watch`` field: absent (an older host, or nobody watching) is 0."""
    if raw is None:
        return 0
    if not raw.isdigit() or len(raw) > 3 or int(raw) > MAX_WATCH:
        raise ValueError(f"bad watch count {clean(repr(raw), 20)}")
    return int(raw)


TableFilter = Callable[[TableAd], bool]
"""Which advertised tables a browser reports (e.g. only one test run's own tables)."""


@dataclass(frozen=True)
class TableInfo:
    """A resolved table: where to connect and what it advertised."""

    instance: str
    ad: TableAd
    host: str
    port: int
    addresses: tuple[str, ...]


@dataclass(frozen=True)
class TableEvent:
    """``added`` / ``updated`` carry the resolved table; ``removed`` only the instance name."""

    kind: Literal["added", "updated", "removed"]
    instance: str
    table: TableInfo | None = None


def instance_name(table: str, fingerprint: str) -> str:
    """``"{table} [{fp8}]"``: the key fingerprint keeps same-named tables apart."""
    clean = " ".join(table.replace(".", " ").split()) or "table"
    return f"{_clip_utf8(clean, 48)} [{fingerprint[:8]}]"


class Advertisement:
    """A registered table record; update it as seats fill, withdraw it when done."""

    def __init__(self, discovery: Discovery, info: AsyncServiceInfo, ad: TableAd) -> None:
        self._discovery = discovery
        self._info = info
        self.ad = ad

    @property
    def instance(self) -> str:
        """The registered name (zeroconf may have renamed it on a conflict)."""
        return self._info.name

    async def update(self, ad: TableAd | None = None, **changes: Any) -> None:
        """Publish a new TXT record (e.g. ``update(seats_taken=3)`` or ``phase="playing"``)."""
        self.ad = replace(ad or self.ad, **changes)
        self._info = AsyncServiceInfo(
            SERVICE_TYPE,
            self._info.name,
            port=self._info.port,
            properties=self.ad.to_properties(),
            server=self._info.server,
            parsed_addresses=self._info.parsed_addresses(),
        )
        self._discovery._registered[self._info.name] = self._info
        await (await self._discovery.aiozc.async_update_service(self._info))

    async def withdraw(self) -> None:
        """Send goodbye packets so browsers drop the table promptly."""
        await self._discovery.withdraw(self._info)


class Discovery:
    """Owns one ``AsyncZeroconf`` bound to the chosen interfaces."""

    def __init__(self, interfaces: Sequence[str] | None = None) -> None:
        self.interfaces = list(interfaces) if interfaces is not None else None
        self._aiozc: AsyncZeroconf | None = None
        self._registered: dict[str, AsyncServiceInfo] = {}

    @property
    def aiozc(self) -> AsyncZeroconf:
        if self._aiozc is None:
            raise RuntimeError("Discovery not started")
        return self._aiozc

    async def start(self) -> Discovery:
        choice = self.interfaces if self.interfaces is not None else InterfaceChoice.All
        self._aiozc = AsyncZeroconf(interfaces=choice, ip_version=IPVersion.V4Only)
        return self

    async def close(self) -> None:
        if self._aiozc is None:
            return
        for info in list(self._registered.values()):
            with contextlib.suppress(Exception):
                await self.withdraw(info)
        await self._aiozc.async_close()
        self._aiozc = None

    async def __aenter__(self) -> Discovery:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def local_addresses(self) -> list[str]:
        """Addresses to put in A records: the chosen interfaces, else all non-loopback IPv4."""
        if self.interfaces is not None:
            return [a for a in self.interfaces if ":" not in a]
        found = [a for a in get_all_addresses() if not a.startswith("127.")]
        return found or ["127.0.0.1"]

    async def advertise(
        self, ad: TableAd, port: int, *, addresses: Sequence[str] | None = None
    ) -> Advertisement:
        """Register the table (probing for a unique name; renamed on conflict)."""
        info = AsyncServiceInfo(
            SERVICE_TYPE,
            f"{instance_name(ad.name, ad.fingerprint)}.{SERVICE_TYPE}",
            port=port,
            properties=ad.to_properties(),
            server=f"silkroad-{ad.fingerprint[:12]}.local.",
            parsed_addresses=list(addresses or self.local_addresses()),
        )
        await (await self.aiozc.async_register_service(info, allow_name_change=True))
        self._registered[info.name] = info
        return Advertisement(self, info, ad)

    async def withdraw(self, info: AsyncServiceInfo) -> None:
        current = self._registered.pop(info.name, None)
        if current is not None:
            await (await self.aiozc.async_unregister_service(current))

    def browse(self, *, resolve_timeout: float = 3.0,
               match: TableFilter | None = None) -> TableBrowser:
        """A browser of tables; use ``async with`` and iterate its events.  ``match``
        keeps only the tables it accepts (the others are never reported)."""
        return TableBrowser(self, resolve_timeout, match)


class TableBrowser:
    """Streams :class:`TableEvent` and keeps :attr:`tables` (instance → TableInfo) current.

    Records with a malformed TXT (another program, another version's format) are logged and
    skipped; they never reach the caller as tables, and neither do tables ``match``
    rejects.  Both the table map and the event queue are bounded (:data:`MAX_TABLES`,
    :data:`MAX_EVENTS`): the LAN decides how many records arrive.
    """

    def __init__(self, discovery: Discovery, resolve_timeout: float,
                 match: TableFilter | None = None) -> None:
        self._discovery = discovery
        self._timeout_ms = int(resolve_timeout * 1000)
        self._match = match
        self._browser: AsyncServiceBrowser | None = None
        self._events: asyncio.Queue[TableEvent] = asyncio.Queue(MAX_EVENTS)
        self._pending: set[asyncio.Task[None]] = set()
        self.tables: dict[str, TableInfo] = {}

    async def start(self) -> TableBrowser:
        self._browser = AsyncServiceBrowser(
            self._discovery.aiozc.zeroconf, [SERVICE_TYPE], handlers=[self._on_change]
        )
        return self

    async def close(self) -> None:
        if self._browser is not None:
            await self._browser.async_cancel()
            self._browser = None
        for task in list(self._pending):
            task.cancel()
        for task in list(self._pending):
            with contextlib.suppress(BaseException):
                await task

    async def __aenter__(self) -> TableBrowser:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __aiter__(self) -> AsyncIterator[TableEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[TableEvent]:
        while True:
            yield await self._events.get()

    async def next_event(self) -> TableEvent:
        return await self._events.get()

    def _on_change(
        self,
        zeroconf: Zeroconf,
        service_type: str,
        name: str,
        state_change: ServiceStateChange,
    ) -> None:
        # zeroconf calls handlers synchronously inside the loop: never await here.
        # The instance name is the sender's choice: it is cleaned before it is kept,
        # logged or shown (p2p.sanitize); the raw one is only used to ask zeroconf.
        shown = clean(name, MAX_INSTANCE)
        if state_change is ServiceStateChange.Removed:
            if self.tables.pop(shown, None) is not None:
                self._event(TableEvent("removed", shown))
            return
        task = asyncio.get_running_loop().create_task(self._resolve(zeroconf, name, shown))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _resolve(self, zc: Zeroconf, name: str, shown: str) -> None:
        info = AsyncServiceInfo(SERVICE_TYPE, name)
        if not await info.async_request(zc, self._timeout_ms):
            log.info("could not resolve %s", shown)
            return
        try:
            ad = TableAd.from_properties(info.properties)
        except (ValueError, UnicodeDecodeError) as exc:
            log.info("ignoring %s: bad TXT record (%s)", shown, clean(str(exc)))
            return
        if self._match is not None and not self._match(ad):
            return
        addresses = tuple(a for a in info.parsed_addresses() if ":" not in a)
        if not addresses or info.port is None:
            log.info("ignoring %s: no IPv4 address or port", shown)
            return
        table = TableInfo(shown, ad, addresses[0], info.port, addresses)
        old = self.tables.get(shown)
        if old == table:
            return
        if old is None and len(self.tables) >= MAX_TABLES:
            log.info("ignoring %s: already %d tables in view", shown, MAX_TABLES)
            return
        self.tables[shown] = table
        self._event(TableEvent("updated" if old else "added", shown, table))

    def _event(self, event: TableEvent) -> None:
        """Queue an event; when nobody reads, the oldest goes (``tables`` keeps the state)."""
        if self._events.full():
            self._events.get_nowait()
        self._events.put_nowait(event)
