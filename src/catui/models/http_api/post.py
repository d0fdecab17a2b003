"""How every provider sends its streamed POST: :func:`post_sse`, and the one place a transport is chosen.

Two transports implement :class:`~catui.models.http_api.transport.HttpTransport`: the
lean asyncio-streams client of :mod:`catui.models.http_api.lean_http` (cheap to
import, and several times cheaper in CPU when many sub-agents stream at
once) and httpx2 (:mod:`catui.models.http_api.httpx_transport`), which knows how to
speak to proxies. :func:`transport_for` picks one from the provider's
:class:`~catui.models.http_api.transport_settings.TransportSettings`, which come from
the environment the provider was built with (for a run, the app's merged
environment): the lean one unless a proxy applies to the URL, or whichever
``CATUI_HTTP_CLIENT`` names. Whichever ran, its failures are turned into
:class:`ProviderError`\\ s here, by one mapping (:func:`transport_failure`,
:func:`status_error`), which the retry layer of :mod:`catui.models.http_api.retry`
then classifies.

Transports are created on first use (so ``import catui`` never pays for
them) and their connections are kept per event loop: pooled connections
belong to the loop that opened them, and a program may run several loops in
turn (``asyncio.run`` twice, or one loop per test).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Mapping
from typing import Any

from catui.errors import ProviderError
from catui.models.http_api import transport as errors
from catui.models.http_api.retry import RetryableFailure, parse_retry_after, should_retry_status
from catui.models.http_api.sse import ServerSentEvent, SSEDecoder, SSEStreamError
from catui.models.http_api.transport import HttpTransport
from catui.models.http_api.transport_settings import HTTP_CLIENT_VARIABLE, TransportSettings

__all__ = [
    "HTTP_CLIENT_VARIABLE",
    "aclose_http_client",
    "post_sse",
    "proxy_for",
    "status_error",
    "transport_failure",
    "transport_for",
    "uses_lean_transport",
]


def proxy_for(url: str, env: Mapping[str, str] | None = None) -> str | None:
    """The proxy ``env`` (None: the process environment) routes ``url`` through, or None."""
    return TransportSettings.from_env(env).proxy_for(url)


def uses_lean_transport(url: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether :func:`post_sse` sends ``url`` through the lean client under ``env`` (None: the process's)."""
    return TransportSettings.from_env(env).uses_lean(url)


def transport_for(url: str, settings: TransportSettings) -> HttpTransport:
    """The transport that carries a request to ``url`` under ``settings``: the one place it is chosen.

    The lean client unless a proxy applies to ``url`` or ``CATUI_HTTP_CLIENT``
    says otherwise (see :meth:`TransportSettings.uses_lean`). The transports
    are thin views on the running loop's pools, so making one is cheap.
    """
    if settings.uses_lean(url):
        from catui.models.http_api.lean_http import LeanTransport

        return LeanTransport(settings)
    from catui.models.http_api.httpx_transport import HttpxTransport

    return HttpxTransport(settings)


async def aclose_http_client() -> None:
    """Close the running loop's connections of both transports, if any were opened."""
    # A module never imported has no connections to close (and importing it would cost start-up time).
    httpx_transport = sys.modules.get("catui.models.http_api.httpx_transport")
    if httpx_transport is not None:
        await httpx_transport.aclose_clients()
    lean = sys.modules.get("catui.models.http_api.lean_http")
    if lean is not None:
        await lean.aclose_pool()


def _error_detail(raw: bytes) -> tuple[str | None, str]:
    """The (type, message) of an error body in the Anthropic or OpenAI shape, else its text."""
    text = raw.decode("utf-8", "replace").strip()
    try:
        payload = json.loads(text)
    except ValueError:
        return None, text[:300]
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict):
        kind = error.get("type") or error.get("code")
        return (str(kind) if kind else None), str(error.get("message") or text[:300])
    if isinstance(error, str):
        return None, error
    return None, text[:300]


def status_error(
    status: int, headers: Mapping[str, str], raw: bytes, *, service: str, url: str, credential_hint: str
) -> ProviderError:
    """The error to raise for an HTTP error response: retryable or final, with a one-line message."""
    kind, message = _error_detail(raw)
    what = f"{status} {kind}: {message}" if kind else f"{status}: {message}"
    if status in (401, 403):
        return ProviderError(
            f"{service} at {url} refused the credentials ({what}). {credential_hint}", status=status
        )
    if should_retry_status(status, headers):
        return RetryableFailure(
            f"{service} at {url} answered {what}", status=status, retry_after=parse_retry_after(headers)
        )
    return ProviderError(f"{service} at {url} answered {what}", status=status, api_message=message)


def post_sse(
    url: str,
    *,
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    service: str,
    credential_hint: str,
    base_var: str,
    settings: TransportSettings | None = None,
) -> AsyncIterator[ServerSentEvent]:
    """POST ``body`` as JSON and yield the server-sent events of the answer.

    HTTP errors, unreachable hosts and dropped connections are raised as
    :class:`ProviderError` (a :class:`RetryableFailure` where a retry could
    help), each naming ``service`` and ``url``; ``base_var`` is the variable
    that sets the endpoint, named when it cannot be reached. ``settings`` are
    the provider's (None: from the process environment); they choose the
    transport (:func:`transport_for`) and its timeouts, proxy and CA certificates.
    """
    settings = TransportSettings.from_env() if settings is None else settings
    return _post_sse(Described(url, service, credential_hint, base_var), settings, headers, body)


class Described:
    """What error messages name: the URL, the service, how to fix credentials, the endpoint's variable."""

    __slots__ = ("base_var", "credential_hint", "service", "url")

    def __init__(self, url: str, service: str, credential_hint: str, base_var: str) -> None:
        self.url, self.service, self.credential_hint, self.base_var = url, service, credential_hint, base_var

    def status_error(self, status: int, headers: Mapping[str, str], raw: bytes) -> ProviderError:
        return status_error(
            status, headers, raw, service=self.service, url=self.url, credential_hint=self.credential_hint
        )

    def json_instead_of_stream(self, raw: bytes) -> ProviderError:
        # A proxy or an incompatible server answered with a plain JSON document instead of a stream.
        kind, message = _error_detail(raw)
        return ProviderError(
            f"{self.service} at {self.url} answered with JSON instead of an event stream: "
            f"{kind or ''} {message}".strip()
        )

    def invalid_url(self, err: Exception) -> ProviderError:
        return ProviderError(
            f"the URL of {self.service}, {self.url!r}, is invalid ({err}); check {self.base_var}"
        )

    def unreachable(self, err: Exception) -> ProviderError:
        return RetryableFailure(
            f"cannot reach {self.service} at {self.url} ({type(err).__name__}: {err or 'no detail'}); "
            f"check {self.base_var} and that the server is running",
            max_retries=2,
        )

    def timed_out(self, err: Exception) -> ProviderError:
        return RetryableFailure(f"{self.service} at {self.url} timed out ({type(err).__name__})")

    def dropped(self, err: Exception) -> ProviderError:
        return RetryableFailure(
            f"the connection to {self.service} at {self.url} dropped "
            f"({type(err).__name__}: {err or 'no detail'})"
        )


def _is_json_document(content_type: str) -> bool:
    return "json" in content_type and "event-stream" not in content_type


def transport_failure(err: errors.TransportError, described: Described) -> ProviderError:
    """The provider error for a transport's failure; the same for every transport."""
    if isinstance(err, errors.InvalidURL):
        return described.invalid_url(err)
    if isinstance(err, errors.InvalidHeader):
        return ProviderError(f"cannot send the request to {described.service} at {described.url}: {err}")
    if isinstance(err, (errors.ConnectError, errors.ConnectTimeout)):
        return described.unreachable(err)
    if isinstance(err, errors.TIMEOUT_ERRORS):
        return described.timed_out(err)
    return described.dropped(err)


async def post_json(
    url: str,
    *,
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    service: str,
    credential_hint: str,
    base_var: str,
    settings: TransportSettings | None = None,
) -> Any:
    """POST ``body`` as JSON and return the decoded JSON answer (a request without streaming).

    Errors are raised as :func:`post_sse` raises them; an answer that is not
    JSON is a :class:`RetryableFailure` (a proxy's error page, a cut body).
    """
    settings = TransportSettings.from_env() if settings is None else settings
    described = Described(url, service, credential_hint, base_var)
    transport = transport_for(url, settings)
    try:
        async with transport.stream_post(url, headers=_json_headers(headers), body=_payload(body)) as response:
            raw = await response.aread()
            if response.status_code >= 400:
                raise described.status_error(response.status_code, response.headers, raw)
    except errors.TransportError as err:
        raise transport_failure(err, described) from err
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise RetryableFailure(f"{service} at {url} answered with something that is not JSON: {raw[:200]!r}") from err


def _payload(body: Mapping[str, Any]) -> bytes:
    # Compact JSON, as the official SDKs send it. A lone surrogate (a non-UTF-8 file name, a prompt's broken
    # emoji) goes as a \uXXXX escape, as JavaScript's JSON.stringify writes it, instead of failing to encode.
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8", "backslashreplace")


def _json_headers(headers: Mapping[str, str]) -> dict[str, str]:
    sent_headers = dict(headers)
    if not any(name.lower() == "content-type" for name in sent_headers):
        sent_headers["content-type"] = "application/json"
    return sent_headers


async def _post_sse(
    described: Described, settings: TransportSettings, headers: Mapping[str, str], body: Mapping[str, Any]
) -> AsyncIterator[ServerSentEvent]:
    transport = transport_for(described.url, settings)
    payload = _payload(body)
    sent_headers = _json_headers(headers)
    try:
        async with transport.stream_post(described.url, headers=sent_headers, body=payload) as response:
            if response.status_code >= 400:
                raise described.status_error(response.status_code, response.headers, await response.aread())
            if _is_json_document(response.headers.get("content-type", "")):
                raise described.json_instead_of_stream(await response.aread())
            async for sse in SSEDecoder().aiter_events(response.aiter_bytes()):
                yield sse
    except errors.TransportError as err:
        raise transport_failure(err, described) from err
    except SSEStreamError as err:  # garbage in the body: a stream fault, retried like a cut stream
        raise RetryableFailure(f"{described.service} at {described.url} sent a broken event stream: {err}") from err
