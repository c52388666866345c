"""A small CardDAV client (RFC 6352) over requests: what a two-way sync needs.

It finds the address book (the URL itself, else `current-user-principal` and
`addressbook-home-set` from the URL or from `/.well-known/carddav`), lists
changes with `sync-collection` (RFC 6578) when the address book offers it and
the ETags of all cards otherwise, fetches changed cards in batches with
`addressbook-multiget`, and writes one card with `If-Match` on the ETag last
seen or `If-None-Match: *` for a new one.

Requests go only where contacts.carddav.network allows, each within
`timeout` seconds in all, and all of a client's within `time_limit`.

Faults are exceptions: CardDavUnavailable for anything that may pass (no
connection, a timeout, a 5xx), CardDavError for an answer that will not
(a refused login, no address book, a server on a private address),
PreconditionFailed for a 412, and CardRejected when the server refuses one
card; their messages are in the active language. Bodies are parsed with
defusedxml, since they come from another machine.
"""

import socket
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import quote, unquote, urljoin, urlsplit
from xml.etree.ElementTree import Element  # only the type; defusedxml parses

import requests
from defusedxml.ElementTree import ParseError, fromstring
from django.utils.translation import gettext

from contacts.carddav.network import (
    Deadline,
    DeadlinePassed,
    GuardedAdapter,
    RefusedAddress,
)

DAV = "DAV:"
CARDDAV = "urn:ietf:params:xml:ns:carddav"
VCARD_TYPE = "text/vcard; charset=utf-8"
REDIRECTS = (301, 302, 303, 307, 308)
MAX_REDIRECTS = 5
# Cards per addressbook-multiget; servers handle a few hundred at once.
MULTIGET_BATCH = 100


def _plain_cause(error: requests.RequestException) -> str:
    """Return why a request failed in the admin's words, not the library's.

    The exception and its chain stay on the raised error for the log.
    """
    if isinstance(error, requests.exceptions.SSLError):
        return gettext("the secure connection failed")
    if isinstance(error, requests.exceptions.Timeout):
        return gettext("no answer in time")
    if isinstance(error, requests.exceptions.ConnectionError):
        if any(isinstance(arg, socket.gaierror) for arg in error.args):
            return gettext("the server's name is unknown")
        return gettext("the connection was refused or broken off")
    return gettext("the request failed")


class CardDavError(Exception):
    """The server refused or did not understand what a sync needs."""


class CardDavUnavailable(CardDavError):
    """The server could not be reached, timed out or failed (5xx)."""


class PreconditionFailed(CardDavError):
    """412: the card changed on the server since its ETag was read."""


class CardRejected(CardDavError):
    """The server refused to store one card (a 4xx other than 412)."""


class SyncTokenInvalid(CardDavError):
    """The server no longer knows the sync token; list everything again."""


def _tag(namespace: str, name: str) -> str:
    return f"{{{namespace}}}{name}"


@dataclass(frozen=True)
class Listing:
    """Cards by href with their ETags; `deleted` only from sync-collection."""

    etags: dict[str, str]
    deleted: list[str] = field(default_factory=list)
    token: str = ""


@dataclass(frozen=True)
class AddressBook:
    url: str
    supports_sync: bool
    # Versions from supported-address-data; empty when the server says nothing.
    versions: frozenset[str]


class CardDavClient:
    """One account's connection; `traffic` counts requests and card bodies.

    Each request (its redirects included) has `timeout` seconds in all, and
    every request of the client must be done `time_limit` seconds after it
    was made. Private and local addresses are refused unless allow_private.
    """

    def __init__(
        self,
        url: str,
        *,
        username: str,
        password: str,
        timeout: float,
        time_limit: float,
        allow_private: bool,
        session: requests.Session | None = None,
    ) -> None:
        self.url = url
        self.session = session or requests.Session()
        self.session.auth = (username, password)
        adapter = GuardedAdapter(allow_private=allow_private)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.timeout = timeout
        self.time_limit = time_limit
        self.ends_at = time.monotonic() + time_limit
        self.traffic: Counter[str] = Counter()

    # Requests

    def _request(
        self,
        method: str,
        url: str,
        *,
        body: str | None = None,
        headers: dict[str, str] | None = None,
        ok: Iterable[int] = (200, 207),
    ) -> requests.Response:
        all_headers = dict(headers or {})
        if body is not None and "Content-Type" not in all_headers:
            all_headers["Content-Type"] = "application/xml; charset=utf-8"
        exchange_ends = time.monotonic() + self.timeout
        deadline = Deadline(min(exchange_ends, self.ends_at))
        # Redirects are followed here: requests would drop a PROPFIND's body
        # on a 301 or 302 (as /.well-known/carddav answers).
        for _hop in range(MAX_REDIRECTS + 1):
            self.traffic["requests"] += 1
            try:
                response = self.session.request(
                    method,
                    url,
                    data=body.encode() if body is not None else None,
                    headers=all_headers,
                    timeout=deadline,
                    allow_redirects=False,
                )
            except RefusedAddress as error:
                # The same words for every such address and port: the answer
                # must not tell which ports of the network are open.
                raise CardDavError(
                    gettext(
                        "The address book's server is on a private or local "
                        "network address; Yorik connects only to public ones."
                    )
                ) from error
            except DeadlinePassed as error:
                raise self._too_late(f"{method} {_path(url)}", exchange_ends) from error
            except requests.RequestException as error:
                raise CardDavUnavailable(
                    gettext(
                        "The address book's server could not be reached (%(cause)s)."
                    )
                    % {"cause": _plain_cause(error)}
                ) from error
            target = urljoin(url, response.headers.get("Location", ""))
            if response.status_code not in REDIRECTS or not _may_follow(url, target):
                break
            url = target
        status = response.status_code
        if status in set(ok):
            return response
        said = {"request": f"{method} {_path(url)}", "status": status}
        answered = gettext("%(request)s: the server answered %(status)d") % said
        if status >= 500:
            raise CardDavUnavailable(answered)
        if status == 401:
            raise CardDavError(
                gettext("%(request)s: the server refused the login (%(status)d)") % said
            )
        if status == 412:
            raise PreconditionFailed(
                gettext("%(request)s: the card changed on the server") % said
            )
        raise CardRejected(answered)

    def _too_late(self, request: str, exchange_ends: float) -> CardDavUnavailable:
        if self.ends_at < exchange_ends:
            return CardDavUnavailable(
                gettext("%(request)s: the time allowed (%(seconds)s s) is up")
                % {"request": request, "seconds": f"{self.time_limit:g}"}
            )
        return CardDavUnavailable(
            gettext(
                "%(request)s: the server sent no complete answer within %(seconds)s s"
            )
            % {"request": request, "seconds": f"{self.timeout:g}"}
        )

    def _xml(
        self, method: str, url: str, body: str, *, depth: str
    ) -> tuple[str, list[Element]]:
        """Send a WebDAV request; return the URL that answered and its responses."""
        response = self._request(method, url, body=body, headers={"Depth": depth})
        return response.url, _responses(_parse(response.content, url))

    # Discovery

    def find_address_book(self) -> AddressBook:
        """Return the address book at the URL, or the first of the user's."""
        root = urljoin(self.url, "/.well-known/carddav")
        for start in dict.fromkeys([self.url, root]):
            try:
                found = self._address_book_from(start)
            except CardRejected:  # not a WebDAV resource: try the next
                continue
            if found is not None:
                return self.describe(found)
        raise CardDavError(
            gettext("no address book found at %(url)s or %(root)s")
            % {"url": self.url, "root": root}
        )

    def _address_book_from(self, url: str) -> str | None:
        props = "<d:resourcetype/><d:current-user-principal/><c:addressbook-home-set/>"
        answers = self._propfind(url, props, depth="0")
        for href, found in answers.items():
            if _is_address_book(found):
                return href
        home = _first_href(answers, _tag(CARDDAV, "addressbook-home-set"))
        principal = _first_href(answers, _tag(DAV, "current-user-principal"))
        if home is None and principal is not None:
            home = _first_href(
                self._propfind(principal, "<c:addressbook-home-set/>", depth="0"),
                _tag(CARDDAV, "addressbook-home-set"),
            )
        if home is None:
            return None
        children = self._propfind(home, "<d:resourcetype/>", depth="1")
        books = sorted(
            href for href, found in children.items() if _is_address_book(found)
        )
        return books[0] if books else None

    def describe(self, url: str) -> AddressBook:
        """Return what the address book at url offers."""
        props = "<d:supported-report-set/><c:supported-address-data/>"
        answers = self._propfind(url, props, depth="0")
        found = next(iter(answers.values()), {})
        reports = found.get(_tag(DAV, "supported-report-set"))
        supports_sync = reports is not None and (
            reports.find(f".//{_tag(DAV, 'sync-collection')}") is not None
        )
        data = found.get(_tag(CARDDAV, "supported-address-data"))
        versions = frozenset(
            item.get("version", "")
            for item in (data if data is not None else [])
            if item.get("version")
        )
        return AddressBook(url=url, supports_sync=supports_sync, versions=versions)

    def _propfind(self, url: str, props: str, *, depth: str) -> dict[str, dict]:
        """Return {absolute URL: {property tag: element}} of the 200 propstats."""
        body = (
            f'<?xml version="1.0" encoding="utf-8"?>'
            f'<d:propfind xmlns:d="{DAV}" xmlns:c="{CARDDAV}"><d:prop>{props}'
            f"</d:prop></d:propfind>"
        )
        answered, responses = self._xml("PROPFIND", url, body, depth=depth)
        return {
            urljoin(answered, quote(href)): props
            for href, _status, props in map(_read_response, responses)
        }

    # Listing

    def changes_since(self, address_book: str, token: str) -> Listing:
        """Return what changed since the token (everything for an empty one)."""
        etags: dict[str, str] = {}
        deleted: list[str] = []
        own = _path(address_book)
        while True:
            body = (
                f'<?xml version="1.0" encoding="utf-8"?>'
                f'<d:sync-collection xmlns:d="{DAV}">'
                f"<d:sync-token>{_escape(token)}</d:sync-token>"
                f"<d:sync-level>1</d:sync-level>"
                f"<d:prop><d:getetag/></d:prop></d:sync-collection>"
            )
            # A server that forgot the token answers 403 or 409 (RFC 6578 3.2).
            response = self._request(
                "REPORT",
                address_book,
                body=body,
                headers={"Depth": "0"},
                ok=(207, 403, 409),
            )
            if response.status_code != 207:
                if token:
                    raise SyncTokenInvalid(
                        gettext("the server forgot the sync token %(token)s")
                        % {"token": token}
                    )
                raise CardDavError(
                    gettext(
                        "%(request)s: the server refused sync-collection (%(status)d)"
                    )
                    % {
                        "request": f"REPORT {_path(address_book)}",
                        "status": response.status_code,
                    }
                )
            root = _parse(response.content, address_book)
            truncated = False
            for element in _responses(root):
                href, status, props = _read_response(element)
                if _path(href) == own:
                    truncated = truncated or status == 507
                elif status == 404:
                    deleted.append(href)
                    etags.pop(href, None)
                elif _tag(DAV, "getetag") in props:
                    etags[href] = props[_tag(DAV, "getetag")].text or ""
            new_token = root.findtext(_tag(DAV, "sync-token")) or ""
            if not truncated or not new_token or new_token == token:
                return Listing(etags=etags, deleted=deleted, token=new_token)
            token = new_token

    def all_etags(self, address_book: str) -> Listing:
        """Return every card's ETag, for servers without sync-collection."""
        found = self._propfind(address_book, "<d:resourcetype/><d:getetag/>", depth="1")
        own = _path(address_book)
        return Listing(
            etags={
                _path(url): props[_tag(DAV, "getetag")].text or ""
                for url, props in found.items()
                if _path(url) != own
                and _tag(DAV, "getetag") in props
                and not _is_collection(props)
            }
        )

    # Cards

    def fetch(self, address_book: str, hrefs: list[str]) -> dict[str, tuple[str, str]]:
        """Return {href: (etag, vCard text)} of the cards the server still has."""
        cards: dict[str, tuple[str, str]] = {}
        for start in range(0, len(hrefs), MULTIGET_BATCH):
            wanted = "".join(
                f"<d:href>{_escape(quote(href))}</d:href>"
                for href in hrefs[start : start + MULTIGET_BATCH]
            )
            body = (
                f'<?xml version="1.0" encoding="utf-8"?>'
                f'<c:addressbook-multiget xmlns:d="{DAV}" xmlns:c="{CARDDAV}">'
                f"<d:prop><d:getetag/><c:address-data/></d:prop>{wanted}"
                f"</c:addressbook-multiget>"
            )
            _, responses = self._xml("REPORT", address_book, body, depth="1")
            for element in responses:
                href, status, props = _read_response(element)
                data = props.get(_tag(CARDDAV, "address-data"))
                if status == 200 and data is not None and data.text:
                    etag = props.get(_tag(DAV, "getetag"))
                    cards[href] = (
                        etag.text or "" if etag is not None else "",
                        data.text,
                    )
                    self.traffic["cards"] += 1
        return cards

    def put(self, address_book: str, href: str, text: str, *, etag: str | None) -> str:
        """Write a card; return its new ETag. etag None creates a new card."""
        url = urljoin(address_book, quote(href))
        headers = {"Content-Type": VCARD_TYPE}
        if etag is None:
            headers["If-None-Match"] = "*"
        else:
            headers["If-Match"] = etag
        response = self._request(
            "PUT", url, body=text, headers=headers, ok=(200, 201, 204)
        )
        new_etag = response.headers.get("ETag")
        if new_etag and not new_etag.startswith("W/"):
            return new_etag
        # The server changed the card on the way in: ask for its ETag.
        answers = self._propfind(url, "<d:getetag/>", depth="0")
        props = next(iter(answers.values()), {})
        element = props.get(_tag(DAV, "getetag"))
        return element.text or "" if element is not None else ""


def _may_follow(url: str, target: str) -> bool:
    """Follow a redirect on the same host, or to HTTPS (the login goes along)."""
    here, there = urlsplit(url), urlsplit(target)
    return target != url and (
        there.scheme == "https"
        or (there.hostname, there.scheme) == (here.hostname, here.scheme)
    )


def _parse(content: bytes, url: str) -> Element:
    try:
        return fromstring(content)
    except ParseError as error:
        raise CardDavError(
            gettext("%(url)s: the answer is not WebDAV XML") % {"url": _path(url)}
        ) from error


def _responses(root: Element) -> list[Element]:
    return root.findall(_tag(DAV, "response"))


def _read_response(element: Element) -> tuple[str, int, dict[str, Element]]:
    """Return a response's href, status and the properties found (status 200)."""
    href = _path((element.findtext(_tag(DAV, "href")) or "").strip())
    status = _status(element.findtext(_tag(DAV, "status")))
    props: dict[str, Element] = {}
    for propstat in element.findall(_tag(DAV, "propstat")):
        if _status(propstat.findtext(_tag(DAV, "status"))) == 200:
            for prop in propstat.iterfind(f"{_tag(DAV, 'prop')}/*"):
                props[prop.tag] = prop
            status = status or 200
    return href, status, props


def _path(url: str) -> str:
    """Return a URL's or href's path unescaped, the same however it was escaped."""
    return unquote(urlsplit(url).path)


def _status(line: str | None) -> int:
    # "HTTP/1.1 200 OK"
    parts = (line or "").split()
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


def _first_href(answers: dict[str, dict], tag: str) -> str | None:
    for url, props in answers.items():
        element = props.get(tag)
        href = element.findtext(_tag(DAV, "href")) if element is not None else None
        if href:
            return urljoin(url, href.strip())
    return None


def _is_collection(props: dict[str, Element]) -> bool:
    kind = props.get(_tag(DAV, "resourcetype"))
    return kind is not None and kind.find(_tag(DAV, "collection")) is not None


def _is_address_book(props: dict[str, Element]) -> bool:
    kind = props.get(_tag(DAV, "resourcetype"))
    return kind is not None and kind.find(_tag(CARDDAV, "addressbook")) is not None


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
