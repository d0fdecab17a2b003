"""The shared HTTP client: plain-http endpoints skip loading CA certificates, TLS ones keep verification."""

from __future__ import annotations

import ssl

import pytest

from catui.models.http_api.httpx_transport import http_client
from catui.models.http_api.post import aclose_http_client


def _ssl_context(client: object) -> ssl.SSLContext:
    # httpx2 keeps the context on the connection pool of the client's default transport.
    return client._transport._pool._ssl_context  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _no_proxy_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)


async def test_plain_http_urls_share_a_client_that_loads_no_ca_certificates() -> None:
    plain = http_client("http://127.0.0.1:9")
    assert http_client("HTTP://localhost:8080/v1") is plain
    assert _ssl_context(plain).cert_store_stats()["x509_ca"] == 0
    # The bare context still verifies: an https URL routed through it would fail rather than go unchecked.
    assert _ssl_context(plain).verify_mode == ssl.CERT_REQUIRED
    await aclose_http_client()


async def test_https_and_unknown_urls_get_the_verifying_client() -> None:
    secure = http_client("https://api.anthropic.com")
    assert http_client() is secure
    assert secure is not http_client("http://127.0.0.1:9")
    assert _ssl_context(secure).verify_mode == ssl.CERT_REQUIRED
    assert _ssl_context(secure).cert_store_stats()["x509_ca"] > 0
    await aclose_http_client()


async def test_a_proxy_in_the_environment_keeps_the_verifying_client(monkeypatch: pytest.MonkeyPatch) -> None:
    secure = http_client("https://api.anthropic.com")
    monkeypatch.setenv("HTTPS_PROXY", "https://proxy.example:3128")
    assert http_client("http://127.0.0.1:9") is secure
    await aclose_http_client()


async def test_closing_closes_every_client_of_the_loop() -> None:
    clients = [http_client("http://127.0.0.1:9"), http_client("https://api.anthropic.com")]
    await aclose_http_client()
    assert all(client.is_closed for client in clients)
    assert http_client("http://127.0.0.1:9") is not clients[0]
    await aclose_http_client()
