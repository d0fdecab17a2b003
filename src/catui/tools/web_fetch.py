"""WebFetch: fetch a URL and return its content as Markdown, with the model's prompt noted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import urljoin, urlparse

from catui.permissions.context import PermissionRequest
from catui.tools.base import Tool, ToolContext, ToolResult

MAX_CONTENT_CHARS = 100_000
MAX_DOWNLOAD_BYTES = 10 * 1024 * 1024
MAX_REDIRECTS = 10
TIMEOUT_S = 30.0
USER_AGENT = "catui-webfetch/0.1 (+https://github.com/catui)"

DESCRIPTION = """\
Fetch a web page (or any text URL) and return its content, converted from HTML to Markdown.

- url must be a complete http:// or https:// URL.
- prompt says what you want from the page. catui does not run a second model over the page: the converted \
content (cut at 100000 characters) comes back to you with your prompt noted, and you extract the answer \
yourself.
- Redirects within the same host are followed; a redirect to another host is reported with its target, so \
that you can fetch that URL in a new call.
- Read-only; it never changes anything. For authenticated or private pages (logins, private repositories) it \
will fail: use a dedicated tool (for example `gh` through Bash for GitHub) instead."""


class WebFetchTool(Tool):
    name = "WebFetch"
    input_model_ref: ClassVar[str] = "catui.tools.web_fetch_input:WebFetchInput"
    read_only = True

    @property
    def description(self) -> str:
        return DESCRIPTION

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        host = urlparse(args.url).hostname or ""
        return PermissionRequest(
            tool_name=self.name,
            tool_input=args.model_dump(by_alias=True),
            read_only=True,
            subject=f"domain:{host}",
        )

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.web_fetch_input import WebFetchInput
        assert isinstance(args, WebFetchInput)
        parsed = urlparse(args.url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            return ToolResult(
                f"Invalid URL {args.url!r}: give a complete http:// or https:// URL.", is_error=True
            )
        import httpx2  # lazy: ~80 ms, paid only by a WebFetch call, never at start-up

        url = args.url
        try:
            async with httpx2.AsyncClient(timeout=TIMEOUT_S, follow_redirects=False) as client:
                for _ in range(MAX_REDIRECTS + 1):
                    fetched = await _get(client, url)
                    if fetched.redirect is None:
                        break
                    target = urljoin(url, fetched.redirect)
                    if urlparse(target).hostname != urlparse(url).hostname:
                        return ToolResult(
                            f"{url} redirects to another host: {target}\n"
                            f"To follow it, call WebFetch again with url={target!r} and the same prompt.",
                            data={"url": url, "redirect": target, "status": fetched.status},
                        )
                    url = target
                else:
                    return ToolResult(f"Too many redirects fetching {args.url}.", is_error=True)
        except httpx2.TimeoutException:
            return ToolResult(f"Fetching {url} timed out after {TIMEOUT_S:.0f} s.", is_error=True)
        except httpx2.HTTPError as exc:
            return ToolResult(
                f"Could not fetch {url}: {type(exc).__name__}: {exc or 'network unreachable'}. "
                "Check the URL and that the network is reachable.",
                is_error=True,
            )
        return _render(url, fetched, args.prompt)


@dataclass
class _Fetched:
    status: int
    reason: str
    content_type: str
    encoding: str | None
    body: bytes
    redirect: str | None


async def _get(client: Any, url: str) -> _Fetched:
    """One GET, reading at most MAX_DOWNLOAD_BYTES of the body (a huge download is cut, not buffered)."""
    headers = {"User-Agent": USER_AGENT, "Accept": "text/html, */*"}
    async with client.stream("GET", url, headers=headers) as response:
        if response.is_redirect and "location" in response.headers:
            return _Fetched(
                response.status_code, response.reason_phrase, "", None, b"", response.headers["location"]
            )
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size >= MAX_DOWNLOAD_BYTES:
                break
        content_type = response.headers.get("content-type", "")
        return _Fetched(
            response.status_code,
            response.reason_phrase,
            content_type,
            response.charset_encoding,
            b"".join(chunks)[:MAX_DOWNLOAD_BYTES],
            None,
        )


def _render(url: str, fetched: _Fetched, prompt: str) -> ToolResult:
    status = fetched.status
    content_type = fetched.content_type
    if status >= 400:
        return ToolResult(
            f"{url} answered HTTP {status} {fetched.reason}.",
            is_error=True,
            data={"url": url, "status": status},
        )
    raw = fetched.body
    try:
        text = raw.decode(fetched.encoding or "utf-8", errors="replace")
    except LookupError:  # an unknown charset name in the header
        text = raw.decode("utf-8", errors="replace")
    if "html" in content_type or (
        not content_type and text.lstrip().lower().startswith(("<!doctype", "<html"))
    ):
        from catui.tools.html_markdown import html_to_markdown  # lazy (catui.lazy): the HTML parser

        text = html_to_markdown(text, base_url=url)
    elif not (
        content_type.startswith("text/")
        or "json" in content_type
        or "xml" in content_type
        or not content_type
    ):
        return ToolResult(
            f"{url} returned {content_type} content, which WebFetch cannot show as text.",
            is_error=True,
            data={"url": url, "status": status, "content_type": content_type},
        )
    truncated = len(text) > MAX_CONTENT_CHARS
    if truncated:
        text = text[:MAX_CONTENT_CHARS] + f"\n\n[Content cut at {MAX_CONTENT_CHARS} characters.]"
    body = (
        f"Fetched {url} (HTTP {status}, {content_type or 'unknown type'}).\n"
        f"Your prompt: {prompt}\n"
        "The page content follows (no second model ran over it); answer the prompt from it.\n\n"
        f"{text}"
    )
    return ToolResult(
        body,
        data={
            "url": url,
            "status": status,
            "content_type": content_type,
            "bytes": len(raw),
            "truncated": truncated,
        },
    )
