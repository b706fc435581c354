"""``silkroad join HOST:PORT`` at an address that is not a silkroad table.

It used to say "frame of 1213486160 bytes exceeds the limit of 4096" (the bytes "HTTP"
read as a frame length); it now says, at once, that the address answered but is not a
silkroad table.  The server is a plain TCP server on 127.0.0.1 answering like a web
server.  An address where nothing listens is named with its reason, never an empty one.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from argparse import Namespace

import pytest

from cli.commands.net import explain
from cli.main import main

HTTP_REPLY = (b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n"
              b"Connection: close\r\n\r\nbad request")


def _http_server(stop: threading.Event) -> tuple[socket.socket, threading.Thread]:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)

    def serve() -> None:
        for _ in range(200):  # bounded: at most 40 s, ended by ``stop`` long before
            if stop.is_set():
                return
            try:
                conn, _addr = srv.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    conn.recv(4096)  # the hello
                    conn.sendall(HTTP_REPLY)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return srv, thread


@pytest.mark.timeout(30)
def test_join_an_http_server_says_it_is_not_a_table(capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    stop = threading.Event()
    srv, thread = _http_server(stop)
    port = srv.getsockname()[1]
    try:
        t0 = time.monotonic()
        code = main(["join", f"127.0.0.1:{port}", "--headless", "--interface", "127.0.0.1",
                     "--name", "Ann", "--timeout", "20"])
        took = time.monotonic() - t0
    finally:
        stop.set()
        thread.join(5)
        srv.close()
    err = capsys.readouterr().err
    assert code == 1
    assert f"127.0.0.1:{port} answered, but it is not a silkroad table" in err, err
    assert "1213486160" not in err and "frame of" not in err
    assert took < 5.0, took  # at once: an answer that is not ours is not dialled again


@pytest.mark.timeout(30)
def test_join_a_closed_port_names_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = main(["join", f"127.0.0.1:{port}", "--headless", "--interface", "127.0.0.1",
                 "--name", "Ann", "--timeout", "1.5"])
    err = capsys.readouterr().err
    assert code == 1
    assert f"could not reach 127.0.0.1:{port}: connection refused" in err, err
    assert not re.search(r":\s*$", err.strip()), err


def test_explain_keeps_other_reasons() -> None:
    args = Namespace(code=None)
    assert "not a silkroad table" in explain(
        "could not join 10.0.0.9:80: bad handshake frame from 10.0.0.9:80: frame of "
        "1213486160 bytes exceeds the limit of 4096", args)
    assert explain("the table is full", args) == "the table is full"
    assert "--code" in explain("refused by peer: wrong or missing join code", args)
