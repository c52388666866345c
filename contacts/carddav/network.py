"""Where a CardDAV request may go, and how long it may take.

A household admin names the address book's server, so Yorik must not become
their probe of its own network: a host name must resolve to public addresses
only (unless the operator allows private ones), and the connection goes to
the address that was checked, not to what a second lookup might answer. Each
redirect is a request of its own and is checked the same way. Requests go
straight to the server, never through a proxy from the environment, which
would connect to an address nobody checked.

requests bounds each read of a socket, not a request: a server sending one
header line every few seconds could hold a caller for as long as it liked.
So each request carries a Deadline for all of it (the lookup, connecting,
the TLS handshake, sending, and the whole answer), and a watchdog shuts its
sockets down when the deadline passes.
"""

import contextlib
import ipaddress
import queue
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from requests.certs import where as default_ca_bundle
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.util.connection import allowed_gai_family

DEFAULT_PORTS = {"http": 80, "https": 443}

OnSocket = Callable[[socket.socket], None]


class RefusedAddress(requests.exceptions.ConnectionError):
    """The host has an address CardDAV requests may not reach."""


class DeadlinePassed(requests.exceptions.Timeout):
    """The request was not done by its deadline."""


@dataclass(frozen=True)
class Deadline:
    """The time.monotonic() by which a request must be done.

    Passed as a request's `timeout`; the adapter below reads it.
    """

    at: float

    def remaining(self) -> float:
        return self.at - time.monotonic()


def is_public_address(address: str) -> bool:
    """Whether an IP address is public: not loopback, private, link-local,
    multicast, reserved or unspecified (an IPv4 address inside IPv6 counts
    as itself)."""
    ip = ipaddress.ip_address(address.partition("%")[0])
    if isinstance(ip, ipaddress.IPv6Address):
        ip = ip.ipv4_mapped or ip.sixtofour or ip
    return ip.is_global and not (ip.is_multicast or ip.is_reserved)


class GuardedAdapter(HTTPAdapter):
    """Send each request to a checked address of its host, within its Deadline.

    One adapter serves one client, one request at a time; it remembers the
    address each host was found at for its whole life, so a host cannot
    change its address halfway through a sync.
    """

    def __init__(self, *, allow_private: bool) -> None:
        self.allow_private = allow_private
        self.addresses: dict[tuple[str, int], str] = {}
        self.tls_contexts: dict[Any, ssl.SSLContext] = {}
        self.watch: _Watch | None = None
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        # Connections hand each socket they use to the running request's watch.
        self.poolmanager.pool_classes_by_scheme = {
            "http": partial(_HTTPPool, on_socket=self._watched),
            "https": partial(_HTTPSPool, on_socket=self._watched),
        }

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: Any = True,
        cert: Any = None,
        proxies: Any = None,
    ) -> requests.Response:
        """Send the request and read its answer, all before timeout (a Deadline)."""
        remaining = timeout.remaining()
        if remaining <= 0:
            raise DeadlinePassed(request=request)
        self.watch = watch = _Watch(timeout)
        try:
            response = super().send(
                request, stream=stream, timeout=remaining, verify=verify, cert=cert
            )
            if not stream:
                response.content  # noqa: B018 (read the body before the deadline)
        except requests.RequestException as error:
            # A read that timed out with the time that was left passed it too.
            if watch.fired or timeout.remaining() <= 0:
                raise DeadlinePassed(request=request) from error
            raise
        finally:
            watch.stop()
            self.watch = None
        # A socket shut down mid-answer can look like an answer that ended.
        if watch.fired:
            raise DeadlinePassed(request=request)
        return response

    def build_connection_pool_key_attributes(
        self, request: requests.PreparedRequest, verify: Any, cert: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Connect to the checked address; TLS still names and verifies the host."""
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(
            request, verify, cert
        )
        name, scheme = host_params["host"], host_params["scheme"]
        port = host_params["port"] or DEFAULT_PORTS[scheme]
        host_params["host"] = self._address(name, port, request)
        if scheme == "https":
            pool_kwargs["server_hostname"] = name
            pool_kwargs["ssl_context"] = self._tls_context(verify)
        return host_params, pool_kwargs

    def add_headers(self, request: requests.PreparedRequest, **kwargs: Any) -> None:
        # The connection is to an address: Host names the server.
        request.headers["Host"] = urlsplit(request.url).netloc.rpartition("@")[2]

    def _address(self, name: str, port: int, request: requests.PreparedRequest) -> str:
        """Return the address to connect to; refuse a host with a private one."""
        key = (name, port)
        if key not in self.addresses:
            found = _look_up(name, port, self.watch.deadline, request)
            if not self.allow_private and not all(map(is_public_address, found)):
                raise RefusedAddress(request=request)
            self.addresses[key] = found[0]
        return self.addresses[key]

    def _tls_context(self, verify: Any) -> ssl.SSLContext:
        """Return a context that verifies the server and watches handshakes.

        It trusts what requests trusts: its own CA bundle, or the one the
        environment names (REQUESTS_CA_BUNDLE), which urllib3 loads from the
        pool's `ca_certs`.
        """
        if verify not in self.tls_contexts:
            context = _WatchedTLSContext(ssl.PROTOCOL_TLS_CLIENT)
            context.on_socket = self._watched
            if verify is True:
                context.load_verify_locations(default_ca_bundle())
            self.tls_contexts[verify] = context
        return self.tls_contexts[verify]

    def _watched(self, sock: socket.socket) -> None:
        if self.watch is not None:
            self.watch.add(sock)


def _look_up(
    name: str, port: int, deadline: Deadline, request: requests.PreparedRequest
) -> list[str]:
    """Return the addresses of a host name, or raise by the deadline.

    The lookup runs in a thread of its own: a resolver can take its time,
    and nothing else can stop it.
    """
    try:
        return [str(ipaddress.ip_address(name.strip("[]")))]
    except ValueError:
        pass
    answers: queue.SimpleQueue = queue.SimpleQueue()

    def look_up() -> None:
        try:
            found = socket.getaddrinfo(
                name, port, allowed_gai_family(), socket.SOCK_STREAM
            )
            answers.put([info[4][0] for info in found])
        except OSError as error:
            answers.put(error)

    threading.Thread(target=look_up, daemon=True).start()
    try:
        answer = answers.get(timeout=max(deadline.remaining(), 0))
    except queue.Empty:
        raise DeadlinePassed(request=request) from None
    if isinstance(answer, OSError) or not answer:
        raise requests.exceptions.ConnectionError(answer, request=request)
    return answer


class _Watch:
    """Shut down the sockets of one request when its deadline passes."""

    def __init__(self, deadline: Deadline) -> None:
        self.deadline = deadline
        self.fired = False
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        self.timer = threading.Timer(max(deadline.remaining(), 0), self.fire)
        self.timer.daemon = True
        self.timer.start()

    def add(self, sock: socket.socket) -> None:
        with self.lock:
            self.sockets.append(sock)
            if self.fired:
                _shut_down(sock)

    def fire(self) -> None:
        with self.lock:
            self.fired = True
            for sock in self.sockets:
                _shut_down(sock)

    def stop(self) -> None:
        self.timer.cancel()


def _shut_down(sock: socket.socket) -> None:
    """Wake whatever waits on the socket: its reads end as if the server hung up.

    The plain socket's shutdown, also for a TLS socket: SSLSocket's own drops
    the TLS state, which the thread still reading would trip over.
    """
    with contextlib.suppress(OSError):  # closed already
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _WatchedTLSContext(ssl.SSLContext):
    """Hand each TLS socket to the watch before its handshake, which reads too."""

    on_socket: OnSocket

    def wrap_socket(  # type: ignore[override]
        self,
        sock: socket.socket,
        server_side: bool = False,
        do_handshake_on_connect: bool = True,
        suppress_ragged_eofs: bool = True,
        server_hostname: str | None = None,
        session: ssl.SSLSession | None = None,
    ) -> ssl.SSLSocket:
        tls = super().wrap_socket(
            sock,
            server_side=server_side,
            do_handshake_on_connect=False,
            suppress_ragged_eofs=suppress_ragged_eofs,
            server_hostname=server_hostname,
            session=session,
        )
        self.on_socket(tls)
        if do_handshake_on_connect:
            tls.do_handshake()
        return tls


class _WatchedConnection:
    """A urllib3 connection that hands its socket to the watch at each use."""

    def __init__(self, *args: Any, on_socket: OnSocket, **kwargs: Any) -> None:
        self.on_socket = on_socket
        super().__init__(*args, **kwargs)

    def connect(self) -> None:
        super().connect()
        self.on_socket(self.sock)

    def request(self, *args: Any, **kwargs: Any) -> None:
        if self.sock is not None:  # kept alive from an earlier request
            self.on_socket(self.sock)
        super().request(*args, **kwargs)


class _WatchedHTTPConnection(_WatchedConnection, HTTPConnection):
    pass


class _WatchedHTTPSConnection(_WatchedConnection, HTTPSConnection):
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection
