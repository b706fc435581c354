"""A player who quits says goodbye; a dropped link does not.  The table screen tells the
two apart: "Marco left the table (… silkroad join --resume …)" against "Leyla lost the
connection".

Real meshes over loopback (the links, the goodbye and the drop are real); the table over
them is a stand-in with the surface the session's :class:`p2p.handle.TableHandle` reads,
so nothing waits for a game to be dealt."""

from __future__ import annotations

import asyncio
from typing import Any

from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input

from cli.table.app import TableApp
from cli.table.net_session import NetSession, RunOutcome
from cli.table.session import SeatInfo
from p2p.handle import TableHandle
from p2p.net.mesh import Mesh
from tests.cli.helpers import Output80x24, StandInTable, screen_text, until
from tests.p2p.p2p_testutil import start_mesh, stop_all

NAMES = ["Ann", "Marco", "Leyla"]


class QuietTable(StandInTable):
    """A table that plays nothing and waits for nobody, over a real mesh."""

    def waiting_for(self) -> None:
        return None

    def abandon(self, reason: str = "") -> None:
        self.stopped.set()


def crash(mesh: Mesh) -> None:
    """Drop every link of ``mesh`` as a killed process does: no goodbye, sockets reset."""
    mesh._closed = True
    for task in list(mesh._tasks):
        task.cancel()
    for link in mesh._links.values():
        if link.reader is not None:
            link.reader.cancel()
        if link.conn is not None:
            link.conn._writer.transport.abort()


def test_a_player_who_quits_left_the_table_one_who_drops_lost_the_connection() -> None:
    async def body() -> None:
        meshes, listeners, _ = await start_mesh(3)
        table = QuietTable(meshes[0])

        async def runner(human: Any, handle: TableHandle) -> RunOutcome:
            handle.attach(table)  # type: ignore[arg-type]  # the stand-in is not a LockstepTable
            await table.stopped.wait()
            return RunOutcome(None)

        seats = [SeatInfo(n, "human" if i == 0 else "peer") for i, n in enumerate(NAMES)]
        with create_pipe_input() as inp, create_app_session(input=inp,
                                                            output=Output80x24()):
            session = NetSession(seats, 0, runner)
            app = TableApp(session, input=inp)
            task = asyncio.create_task(app.run())
            await until(lambda: app.app.is_running and session.handle.ready, 5)
            await until(lambda: session._links == {1: True, 2: True}, 5)
            await meshes[1].close("leaving the table")  # Marco quits: a goodbye
            await until(lambda: 1 in app.away, 5)
            assert app.log[-1].startswith("Marco left the table") and \
                "silkroad join --resume" in app.log[-1]
            text = "\n".join(screen_text(app))
            assert "Marco left the table" in text and "lost the connection" not in text
            crash(meshes[2])  # Leyla's machine dies: no goodbye
            await until(lambda: 2 in app.away, 10)
            assert app.log[-1] == "Leyla lost the connection."
            banner = screen_text(app)[1]
            assert "Marco left the table" in banner and "Leyla disconnected" in banner
            app.app.exit(result="quit")
            await task
            table.stopped.set()
            await session.close()
        await stop_all(meshes[:1], listeners)

    asyncio.run(asyncio.wait_for(body(), 30))
