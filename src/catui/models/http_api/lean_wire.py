"""The lean transport's request side: a URL as a request target, and a POST framed by h11."""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import h11

from catui.models.http_api.transport import InvalidHeader, InvalidURL, TransportError

Origin = tuple[str, str, int, tuple[str | None, str | None]]
"""(scheme, host, port, CA file and directory): connections are shared only within one."""


@dataclass(frozen=True)
class RequestTarget:
    """Where a request goes: the connection's scheme, host and port, and what the request line and Host say."""

    scheme: str
    host: str
    port: int
    host_header: str
    target: str  # path and query, as sent on the request line


def parse_url(url: str) -> RequestTarget:
    """The request target of ``url``; InvalidURL names what is wrong with it."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as err:
        raise InvalidURL(f"{err}") from err
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise InvalidURL("the URL must start with http:// or https://")
    host = parts.hostname
    if not host:
        raise InvalidURL("the URL has no host")
    default_port = 443 if scheme == "https" else 80
    port = port or default_port
    try:
        header_host = host.encode("ascii").decode()
    except UnicodeEncodeError:
        try:
            header_host = host.encode("idna").decode("ascii")
        except UnicodeError as err:
            raise InvalidURL(f"the host {host!r} cannot be encoded ({err})") from err
    if ":" in header_host:  # an IPv6 literal
        header_host = f"[{header_host}]"
    if port != default_port:
        header_host = f"{header_host}:{port}"
    target = parts.path or "/"
    if parts.query:
        target = f"{target}?{parts.query}"
    return RequestTarget(scheme, host, port, header_host, target)


# Headers this client always sets itself; a caller's copy is dropped.
OWN_HEADERS = frozenset({"host", "content-length", "accept-encoding", "transfer-encoding", "connection"})


def header_bytes(value: str) -> bytes:
    """A header name or value as bytes: latin-1 when it fits, else UTF-8."""
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        return value.encode("utf-8")


def encode_request(connection: h11.Connection, request: h11.Request, body: bytes) -> bytes:
    """The request's bytes (its :func:`request_head` and ``body``), as h11 frames them."""
    return (
        connection.send(request) + connection.send(h11.Data(data=body)) + connection.send(h11.EndOfMessage())
    )


def request_head(target: RequestTarget, headers: Mapping[str, str], body_length: int) -> h11.Request:
    """The request line and headers; raises :class:`TransportError` naming a header HTTP cannot carry."""
    fields = [(b"host", target.host_header.encode("ascii"))]
    fields += [
        (header_bytes(name), header_bytes(value))
        for name, value in headers.items()
        if name.lower() not in OWN_HEADERS
    ]
    fields.append((b"content-length", str(body_length).encode("ascii")))
    # Compression buys nothing for small, latency-bound event streams and costs CPU to undo.
    fields.append((b"accept-encoding", b"identity"))
    try:
        return h11.Request(method=b"POST", target=header_bytes(target.target), headers=fields)
    except h11.LocalProtocolError as err:
        raise refused_header(headers, err) from err


def refused_header(headers: Mapping[str, str], err: h11.LocalProtocolError) -> TransportError:
    """Which header h11 refused (checked one by one, only on this failure path), or the target."""
    for name, value in headers.items():
        try:
            h11.Request(
                method=b"POST",
                target=b"/",
                headers=[(b"host", b"h"), (header_bytes(name), header_bytes(value))],
            )
        except h11.LocalProtocolError:
            return InvalidHeader(
                f"the request header {name!r} has a name or value HTTP cannot carry "
                "(a line break, a NUL, or a space or colon in the name)"
            )
    return InvalidURL(f"the URL's path cannot be sent ({err})")


def is_ip_literal(host: str) -> bool:
    """Whether ``host`` is an IPv4 or IPv6 address (no name to resolve, so no Happy Eyeballs)."""
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
            return True
        except OSError:
            continue
    return False
