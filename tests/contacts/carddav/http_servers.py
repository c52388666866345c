"""Tiny local HTTP servers that are no CardDAV server, for the client's limits.

Each listens on a loopback port (over TLS when given a certificate), answers
in threads of its own, and stops when its `with` block ends; a trickling
answer also stops by itself after a bounded number of lines. A connection
reads one whole request, answers it and says so (`Connection: close`): a
client that kept it for the next would race the server closing it.
"""

import contextlib
import datetime
import socket
import socketserver
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass
class Seen:
    """What a server received: one header block per request."""

    url: str
    port: int = 0
    requests: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Certificate:
    """A self-signed certificate for one host name, and where it listens."""

    name: str
    address: str  # the first address the name resolves to
    cert: Path
    key: Path


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    block_on_close = False


class _Server6(_Server):
    address_family = socket.AF_INET6


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
def _serving(handle, tls: Certificate | None = None) -> Iterator[Seen]:
    seen = Seen(url="")

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            head = _read_head(self.rfile)
            seen.requests.append(head)
            # Read to the end of the request: closing a connection with its
            # body unread resets it, and the client may lose the answer.
            self.rfile.read(int(head.get("content-length") or 0))
            with contextlib.suppress(OSError):  # the client hung up
                handle(self.wfile)

    if tls is None:
        server = _Server(("127.0.0.1", 0), Handler)
    else:
        server_class = _Server6 if ":" in tls.address else _Server
        server = server_class((tls.address, 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(tls.cert, tls.key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    seen.port = server.server_address[1]
    seen.url = (
        f"http://127.0.0.1:{seen.port}/"
        if tls is None
        else f"https://{tls.name}:{seen.port}/"
    )
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield seen
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def recording_server(tls: Certificate | None = None) -> Iterator[Seen]:
    """Answer 404 to every request and record its headers."""

    def answer(out) -> None:
        out.write(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )

    with _serving(answer, tls) as seen:
        yield seen


@contextmanager
def trickling_server(
    *, every: float, lines: int = 40, tls: Certificate | None = None
) -> Iterator[Seen]:
    """Send a status line, then one header line every `every` seconds."""

    def answer(out) -> None:
        out.write(b"HTTP/1.1 207 Multi-Status\r\n")
        for number in range(lines):
            out.write(f"X-Slow-{number}: {number}\r\n".encode())
            out.flush()
            time.sleep(every)
        out.write(b"Content-Length: 0\r\nConnection: close\r\n\r\n")

    with _serving(answer, tls) as seen:
        yield seen


def self_signed_certificate(folder: Path, name: str = "localhost") -> Certificate:
    """Write a certificate valid for the host name only, and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    public = key.public_key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .add_extension(
            x509.KeyUsage(True, False, False, False, False, True, False, False, False),
            True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(public), False
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / f"{name}.pem", folder / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    address = socket.getaddrinfo(name, 0, type=socket.SOCK_STREAM)[0][4][0]
    return Certificate(name=name, address=address, cert=cert_path, key=key_path)


def closed_port_url() -> str:
    """Return a loopback URL on which nothing listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/"
