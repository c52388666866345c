"""Tiny local HTTP servers that are no CardDAV server, for the client's limits.

Each listens on a loopback port, answers in threads of its own, and stops when
its `with` block ends; a trickling answer also stops by itself after a bounded
number of lines.
"""

import contextlib
import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Seen:
    """What a server received: one header block per request."""

    url: str
    requests: list[dict[str, str]] = field(default_factory=list)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    block_on_close = False


def _read_head(stream) -> dict[str, str]:
    """Read a request line and headers; return the headers by lower-case name."""
    headers: dict[str, str] = {}
    stream.readline()
    for _ in range(100):
        line = stream.readline().decode("latin-1").strip()
        if not line:
            break
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return headers


@contextmanager
def _serving(handle) -> Iterator[Seen]:
    seen = Seen(url="")

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            seen.requests.append(_read_head(self.rfile))
            with contextlib.suppress(OSError):  # the client hung up
                handle(self.wfile)

    server = _Server(("127.0.0.1", 0), Handler)
    seen.url = f"http://127.0.0.1:{server.server_address[1]}/"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def recording_server() -> Iterator[Seen]:
    """Answer 404 to every request and record its headers."""

    def answer(out) -> None:
        out.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")

    with _serving(answer) as seen:
        yield seen


@contextmanager
def trickling_server(*, every: float, lines: int = 40) -> Iterator[Seen]:
    """Send a status line, then one header line every `every` seconds."""

    def answer(out) -> None:
        out.write(b"HTTP/1.1 207 Multi-Status\r\n")
        for number in range(lines):
            out.write(f"X-Slow-{number}: {number}\r\n".encode())
            out.flush()
            time.sleep(every)
        out.write(b"Content-Length: 0\r\n\r\n")

    with _serving(answer) as seen:
        yield seen


def closed_port_url() -> str:
    """Return a loopback URL on which nothing listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/"
