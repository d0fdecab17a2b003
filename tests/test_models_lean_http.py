"""The lean HTTP/1.1 transport: body framings, keep-alive, TLS, proxies and the choice of transport.

The provider tests (test_models_anthropic.py, test_models_openai.py) run on both
transports already; these tests cover what is particular to the lean client.
"""

from __future__ import annotations

import asyncio
import collections
import datetime
import ipaddress
import json
import os
import re
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from catui.errors import ProviderError
from catui.models.base import ModelRequest, StreamEvent
from catui.models.http_api import lean_http
from catui.models.http_api.accumulate import MessageAccumulator
from catui.models.http_api.anthropic import AnthropicProvider
from catui.models.http_api.post import aclose_http_client, proxy_for, uses_lean_transport
from catui.models.http_api.retry import RetryPolicy
from catui.models.http_api.transport_settings import proxies_from_env
from catui.models.resolve import create_provider, resolve_model
from tests.support.anthropic_server import AnthropicTestServer, Fault

ROOT = Path(__file__).resolve().parents[1]
FAST = RetryPolicy(max_retries=3, base_delay_s=0.001, max_delay_s=0.002)
NO_RETRY = RetryPolicy(max_retries=0)
SCRIPT: dict[str, Any] = {
    "turns": [{"repeat": True, "content": [{"type": "text", "text": "framed in every way"}]}]
}
REQUEST = ModelRequest(
    model="claude-sonnet-4-6", system=[], messages=[{"role": "user", "content": "hi"}], max_tokens=64
)
TIMEOUTS = lean_http.Timeouts(connect=5.0, read=5.0, write=5.0, pool=5.0)


@pytest.fixture(autouse=True)
def _lean_without_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.lower().endswith("_proxy") or name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("CATUI_HTTP_CLIENT", "lean")


def provider_for(
    url: str, retry: RetryPolicy = FAST, env: dict[str, str] | None = None, **options: Any
) -> AnthropicProvider:
    """A provider whose environment is ``env`` alone (the process environment plays no part)."""
    return AnthropicProvider(base_url=url, api_key="sk-ant-test-key", env=env or {}, retry=retry, **options)


async def collect(provider: AnthropicProvider) -> list[StreamEvent]:
    return [event async for event in provider.stream(REQUEST)]


def text_of(events: list[StreamEvent]) -> str:
    accumulator = MessageAccumulator()
    for event in events:
        accumulator.feed(event)
    assert accumulator.done
    return "".join(b.get("text", "") for b in accumulator.message["content"])


def started(framing: str = "chunked", tls: ssl.SSLContext | None = None) -> AnthropicTestServer:
    server = AnthropicTestServer(SCRIPT)
    server.framing = framing
    server.tls_context = tls
    server.start()
    return server


# -- framings and keep-alive -------------------------------------------------------------------


@pytest.mark.parametrize(("framing", "connections"), [("chunked", 1), ("length", 1), ("close", 2)])
async def test_every_body_framing_streams_and_only_framed_bodies_keep_the_connection(
    framing: str, connections: int
) -> None:
    server = started(framing)
    try:
        first = await collect(provider_for(server.url))
        second = await collect(provider_for(server.url))
    finally:
        server.stop()
    assert text_of(first) == text_of(second) == "framed in every way"
    assert len(server.connections) == connections
    headers = server.requests[0].headers
    assert headers["host"] == f"127.0.0.1:{server.port}"
    assert headers["accept-encoding"] == "identity"
    assert headers["content-type"] == "application/json"
    assert server.requests[0].body["stream"] is True


@pytest.mark.parametrize(
    ("framing", "message"),
    [("chunked", "dropped .*incomplete chunked read"), ("close", "ended before message_stop")],
)
async def test_a_cut_stream_fails_in_each_framing_and_the_connection_is_not_reused(
    framing: str, message: str
) -> None:
    server = started(framing)
    try:
        server.inject(Fault(cut_after_events=3))
        seen: list[StreamEvent] = []
        with pytest.raises(ProviderError, match=message):
            async for event in provider_for(server.url, retry=NO_RETRY).stream(REQUEST):
                seen.append(event)
        assert seen and seen[0]["type"] == "message_start"
        assert lean_http.pool().idle_count() == 0
        await collect(provider_for(server.url))
    finally:
        server.stop()
    assert len(server.requests) == 2 and len(server.connections) == 2


async def test_a_complete_answer_returns_the_connection_and_a_cut_one_does_not() -> None:
    server = started()
    try:
        await collect(provider_for(server.url))
        assert lean_http.pool().idle_count() == 1
        server.inject(Fault(cut_after_events=2))
        with pytest.raises(ProviderError, match="dropped"):
            await collect(provider_for(server.url, retry=NO_RETRY))
        assert lean_http.pool().idle_count() == 0
        await collect(provider_for(server.url))
        await collect(provider_for(server.url))
    finally:
        server.stop()
    # The first connection carried answers 1 and 2 (cut); a new one carried answers 3 and 4.
    assert len(server.requests) == 4 and len(server.connections) == 2


async def test_an_error_status_with_a_body_keeps_the_connection_for_the_retry() -> None:
    server = started()
    try:
        server.inject(Fault(status=529, error_type="overloaded_error", headers={"retry-after": "0"}))
        await collect(provider_for(server.url))
    finally:
        server.stop()
    assert len(server.requests) == 2 and len(server.connections) == 1


async def test_a_response_left_unread_discards_its_connection() -> None:
    server = started()
    try:
        pool = lean_http.pool()
        body = json.dumps({"model": "m", "max_tokens": 5, "messages": [], "stream": True}).encode()
        url = f"{server.url}/v1/messages"
        response = await pool.post(url, headers={"x-api-key": "k"}, body=body, timeouts=TIMEOUTS)
        async for _ in response.aiter_bytes():
            break
        response.close()
        assert pool.idle_count() == 0
        response = await pool.post(url, headers={"x-api-key": "k"}, body=body, timeouts=TIMEOUTS)
        assert b"message_stop" in await response.aread()
        assert pool.idle_count() == 1
    finally:
        server.stop()
    assert pool.connections_opened == 2


async def test_a_connect_the_loop_saw_late_is_kept_not_abandoned() -> None:
    """A starved process sees its connect try's timer and the accepted connection in the same loop iteration.

    The timer used to win: the try was abandoned and a second connection opened, although the server had
    accepted the first at once (a flake of the connection counts on a loaded machine). The stall here is a
    blocking call longer than the first connect try, as a busy machine makes it.
    """
    import time

    from catui.models.http_api.connection_limits import CONNECT_ATTEMPT_S

    server = started()
    try:
        pool = lean_http.pool()
        body = json.dumps({"model": "m", "max_tokens": 5, "messages": [], "stream": True}).encode()
        asyncio.get_running_loop().call_soon(time.sleep, CONNECT_ATTEMPT_S[0] + 0.2)  # runs while the connect waits
        response = await pool.post(f"{server.url}/v1/messages", headers={"x-api-key": "k"}, body=body,
                                   timeouts=TIMEOUTS)  # fmt: skip
        assert b"message_stop" in await response.aread()
    finally:
        server.stop()
    assert pool.connections_opened == 1
    assert len(server.connections) == 1


async def test_closing_the_shared_clients_closes_the_lean_pool() -> None:
    server = started()
    try:
        await collect(provider_for(server.url))
        old = lean_http.pool()
        assert old.idle_count() == 1
        await aclose_http_client()
        assert old.closed and old.idle_count() == 0
        assert lean_http.pool() is not old
        await collect(provider_for(server.url))
    finally:
        server.stop()
    assert len(server.connections) == 2


# -- framing details, against a raw server ------------------------------------------------------


class RawServer:
    """An asyncio server that answers each request with the next list of byte pieces, sent one by one.

    An answer whose last piece is ``b""`` closes the connection after it.
    """

    def __init__(self, *answers: list[bytes]) -> None:
        self.answers = collections.deque(answers)
        self.connections = 0
        self.requests: list[bytes] = []
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> RawServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in self._handlers:
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/v1/messages"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            while self.answers:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                match = re.search(rb"content-length: (\d+)", head, re.IGNORECASE)
                body = await reader.readexactly(int(match.group(1)) if match else 0)
                self.requests.append(head + body)
                pieces = self.answers.popleft()
                for piece in pieces:
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(0.002)  # so that pieces tend to arrive in separate reads
                if pieces and pieces[-1] == b"":
                    return
        finally:
            writer.close()


async def post(url: str) -> lean_http.LeanResponse:
    return await lean_http.pool().post(url, headers={"x-test": "1"}, body=b"{}", timeouts=TIMEOUTS)


CHUNKED_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


async def test_chunk_extensions_trailers_and_byte_by_byte_delivery_decode_to_the_body() -> None:
    framed = b"5;name=value\r\nhello\r\n1\r\n \r\nC\r\nworld, again\r\n0\r\nx-trailer: yes\r\n\r\n"
    dribbled = [CHUNKED_HEAD, *[framed[i : i + 1] for i in range(len(framed))]]
    async with RawServer(dribbled, [CHUNKED_HEAD, framed]) as server:
        first = await post(server.url)
        assert first.status_code == 200 and first.headers["transfer-encoding"] == "chunked"
        assert await first.aread() == b"hello world, again"
        second = await post(server.url)
        assert await second.aread() == b"hello world, again"
    assert server.connections == 1
    assert server.requests[0].startswith(b"POST /v1/messages HTTP/1.1\r\n")


async def test_interim_answers_are_skipped_and_repeated_headers_joined() -> None:
    answer = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 429 Too Many Requests\r\nretry-after: 3\r\nx-note: a\r\nX-Note: b\r\n"
        b"content-length: 2\r\n\r\n{}"
    )
    async with RawServer([answer]) as server:
        response = await post(server.url)
        assert response.status_code == 429 and response.reason == "Too Many Requests"
        assert response.headers["retry-after"] == "3" and response.headers["x-note"] == "a, b"
        assert await response.aread() == b"{}"


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok",
        b"HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok",
        CHUNKED_HEAD + b"2\r\nok\r\n0\r\n\r\nunasked-for bytes",
    ],
    ids=["connection-close", "http-1.0", "bytes-after-the-body"],
)
async def test_answers_that_end_the_conversation_are_not_reused(answer: bytes) -> None:
    ok = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
    async with RawServer([answer], [ok]) as server:
        assert await (await post(server.url)).aread() == b"ok"
        assert lean_http.pool().idle_count() == 0
        assert await (await post(server.url)).aread() == b"ok"
    assert server.connections == 2


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        # h11's words: it does the framing.
        (CHUNKED_HEAD + b"zz\r\nhello\r\n", "illegal chunk header"),
        (CHUNKED_HEAD + b"2\r\nhello\r\n0\r\n\r\n", "malformed chunk footer"),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort", r"received 5 bytes, expected 10"),
        (b"SMTP ready\r\n\r\n", "illegal status line"),
    ],
)
async def test_malformed_bodies_raise_a_protocol_error(answer: bytes, problem: str) -> None:
    async with RawServer([answer, b""]) as server:
        with pytest.raises(lean_http.RemoteProtocolError, match=problem):
            response = await post(server.url)
            await response.aread()
    assert lean_http.pool().idle_count() == 0


async def test_a_malformed_stream_reaches_the_provider_as_a_dropped_connection() -> None:
    async with RawServer([CHUNKED_HEAD + b"zz\r\n", b""]) as server:
        base = server.url.removesuffix("/v1/messages")
        with pytest.raises(
            ProviderError, match=r"connection to the Anthropic API .* dropped \(RemoteProtocol"
        ):
            await collect(provider_for(base, NO_RETRY))


async def test_a_header_that_would_split_the_request_is_refused_before_sending() -> None:
    with AnthropicTestServer(SCRIPT) as server:
        provider = provider_for(server.url, extra_headers={"x-custom": "a\r\nx-injected: b"})
        with pytest.raises(ProviderError, match=r"cannot send the request .* 'x-custom'"):
            await collect(provider)
    assert server.requests == []


@pytest.mark.parametrize("transport", ["lean", "httpx"])
async def test_a_silent_server_times_out_on_both_transports(transport: str) -> None:
    env = {"CATUI_HTTP_CLIENT": transport, "CATUI_API_TIMEOUT_MS": "150"}
    slow = {"turns": [{"repeat": True, "delay_ms": 2000, "content": [{"type": "text", "text": "late"}]}]}
    with AnthropicTestServer(slow) as server:
        with pytest.raises(ProviderError, match=r"timed out \(ReadTimeout\)") as caught:
            await collect(provider_for(server.url, NO_RETRY, env))
        await aclose_http_client()
    assert caught.value.retryable


# -- TLS ---------------------------------------------------------------------------------------


@pytest.fixture
def certificate(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A self-signed certificate for localhost and 127.0.0.1, and its key, as PEM files."""
    pytest.importorskip(
        "cryptography", reason="the cryptography package is needed to make a test certificate"
    )
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "catui loopback test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    yield cert_path, key_path


def server_tls(certificate: tuple[Path, Path], names: list[str | None]) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    context.sni_callback = lambda _sock, name, _ctx: names.append(name)
    return context


@pytest.mark.parametrize("transport", ["lean", "httpx"])
async def test_https_to_a_trusted_self_signed_server_sends_sni_and_keeps_the_connection(
    transport: str, certificate: tuple[Path, Path]
) -> None:
    env = {"CATUI_HTTP_CLIENT": transport, "SSL_CERT_FILE": str(certificate[0])}
    names: list[str | None] = []
    server = started(tls=server_tls(certificate, names))
    try:
        base = f"https://localhost:{server.port}"
        first = await collect(provider_for(base, env=env))
        second = await collect(provider_for(base, env=env))
        await aclose_http_client()
    finally:
        server.stop()
    assert text_of(first) == text_of(second) == "framed in every way"
    assert names == ["localhost"] and len(server.connections) == 1
    assert server.requests[0].headers["host"] == f"localhost:{server.port}"


async def test_https_to_an_untrusted_server_fails_verification(certificate: tuple[Path, Path]) -> None:
    names: list[str | None] = []
    server = started(tls=server_tls(certificate, names))
    try:
        with pytest.raises(
            ProviderError, match=r"cannot reach the Anthropic API .*CERTIFICATE_VERIFY_FAILED"
        ):
            await collect(provider_for(server.url, NO_RETRY))
    finally:
        server.stop()
    assert server.requests == []


async def test_a_missing_ca_file_is_a_clear_error(tmp_path: Path) -> None:
    env = {"SSL_CERT_FILE": str(tmp_path / "missing.pem")}
    with pytest.raises(ProviderError, match=r"cannot load the CA certificates for https .*No such file"):
        await collect(provider_for("https://127.0.0.1:9", NO_RETRY, env))


async def test_plain_http_never_builds_a_tls_context(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lean_http, "_ssl_contexts", {})
    with AnthropicTestServer(SCRIPT) as server:
        await collect(provider_for(server.url))
    assert lean_http._ssl_contexts == {}


# -- choosing the transport --------------------------------------------------------------------


def test_proxy_variables_apply_by_scheme_and_no_proxy_exempts_hosts() -> None:
    assert proxy_for("https://api.anthropic.com/v1", {}) is None
    assert proxy_for("https://api.anthropic.com", {"HTTPS_PROXY": "http://p:1"}) == "http://p:1"
    assert proxy_for("http://api.example", {"HTTPS_PROXY": "http://p:1"}) is None
    assert proxy_for("http://api.example", {"ALL_PROXY": "socks5://p:2"}) == "socks5://p:2"
    assert (
        proxy_for("http://x", {"http_proxy": "http://lower", "HTTP_PROXY": "http://upper"}) == "http://lower"
    )
    proxied = {"HTTPS_PROXY": "http://p:1", "HTTP_PROXY": "http://p:1"}
    for no_proxy, url, exempt in [
        ("*", "https://api.anthropic.com", True),
        ("anthropic.com", "https://api.anthropic.com", True),
        (".anthropic.com", "https://api.anthropic.com", True),
        ("thropic.com", "https://api.anthropic.com", False),
        ("localhost, 127.0.0.1", "http://127.0.0.1:8080", True),
        ("127.0.0.1:9000", "http://127.0.0.1:8080", False),
        ("127.0.0.1:8080", "http://127.0.0.1:8080", True),
        ("LOCALHOST", "http://localhost:8080", True),
        ("[::1]", "http://[::1]:8080", True),
        # The standard library's matching (urllib.request.proxy_bypass_environment) knows no CIDR
        # networks, and an IPv6 entry matches the bracketed form the URL has.
        ("10.0.0.0/8", "http://10.1.2.3", False),
        ("::1", "http://[::1]:8080", False),
    ]:
        assert (proxy_for(url, {**proxied, "NO_PROXY": no_proxy}) is None) is exempt, (no_proxy, url)


@pytest.mark.parametrize(
    "variables",
    [
        {"HTTP_PROXY": "http://upper:1", "http_proxy": "http://lower:2", "NO_PROXY": "a", "no_proxy": "b"},
        {"HTTPS_PROXY": "http://p:1", "https_proxy": ""},
        {"HTTP_PROXY": "http://cgi:1", "REQUEST_METHOD": "GET", "ALL_PROXY": "socks5://s:3"},
        {"http_proxy": "http://lower-cgi:1", "REQUEST_METHOD": "POST", "FTP_PROXY": "http://f:4"},
    ],
)
def test_proxy_variables_are_read_as_the_standard_library_reads_them(
    variables: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import urllib.request

    monkeypatch.delenv("REQUEST_METHOD", raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert proxies_from_env(variables) == urllib.request.getproxies_environment()


def test_providers_with_other_transport_settings_are_not_shared() -> None:
    resolved = resolve_model("claude-sonnet-4-6", {}, {})
    base = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "k"}
    default = create_provider(resolved, {}, base)
    assert create_provider(resolved, {}, dict(base)) is default
    quick = create_provider(resolved, {}, {**base, "CATUI_API_TIMEOUT_MS": "100"})
    proxied = create_provider(resolved, {}, {**base, "HTTP_PROXY": "http://127.0.0.1:8"})
    assert len({id(default), id(quick), id(proxied)}) == 3
    assert isinstance(quick, AnthropicProvider) and quick.transport_settings.timeouts.read == 0.1
    assert isinstance(proxied, AnthropicProvider)
    assert proxied.transport_settings.proxy_for("http://127.0.0.1:9/v1/messages") == "http://127.0.0.1:8"


def test_the_transport_follows_catui_http_client_then_the_proxy_settings() -> None:
    url = "https://api.anthropic.com/v1/messages"
    assert uses_lean_transport(url, {})
    assert not uses_lean_transport(url, {"HTTPS_PROXY": "http://p:1"})
    assert uses_lean_transport(url, {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "api.anthropic.com"})
    assert uses_lean_transport(url, {"HTTPS_PROXY": "http://p:1", "CATUI_HTTP_CLIENT": "lean"})
    assert not uses_lean_transport(url, {"CATUI_HTTP_CLIENT": "httpx"})
    with pytest.raises(ProviderError, match=r"CATUI_HTTP_CLIENT is 'curl'; set it to 'lean' or 'httpx'"):
        uses_lean_transport(url, {"CATUI_HTTP_CLIENT": "curl"})


async def test_a_proxy_variable_of_the_providers_env_sends_the_request_through_httpx_and_the_proxy() -> None:
    with AnthropicTestServer(SCRIPT) as target, AnthropicTestServer(SCRIPT) as proxy:
        # The test server is no proxy: it answers the absolute-form request line with a 404.
        with pytest.raises(ProviderError, match="404 not_found_error"):
            await collect(provider_for(target.url, env={"HTTP_PROXY": proxy.url}))
        await collect(provider_for(target.url, env={"HTTP_PROXY": proxy.url, "NO_PROXY": "127.0.0.1"}))
        await aclose_http_client()
    assert [r.path for r in proxy.requests] == [f"{target.url}/v1/messages"]
    assert [r.path for r in target.requests] == ["/v1/messages"]


LEAN_CLIENT = """
import asyncio, json, sys
from catui.models.http_api.anthropic import AnthropicProvider
from catui.models.base import ModelRequest
from catui.models.http_api import lean_http

async def main():
    provider = AnthropicProvider(base_url=sys.argv[1], api_key="k", env={})
    request = ModelRequest(model="claude-sonnet-4-6", system=[], messages=[{"role": "user", "content": "hi"}])
    events = [event async for event in provider.stream(request)]
    print(json.dumps({
        "last": events[-1]["type"],
        "httpx2": "httpx2" in sys.modules,
        "tls_contexts": len(lean_http._ssl_contexts),
    }))

asyncio.run(main())
"""


def test_the_lean_path_imports_no_httpx2_and_builds_no_tls_context() -> None:
    with AnthropicTestServer(SCRIPT) as server:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(ROOT / "src")}
        out = subprocess.run(
            [sys.executable, "-c", LEAN_CLIENT, server.url],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"last": "message_stop", "httpx2": False, "tls_contexts": 0}
