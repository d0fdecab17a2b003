"""The backends of WebSearch and the choice between them.

- :class:`AnthropicServerSearch`: one request to the session's Anthropic model
  offering only the API's server-side ``web_search_20250305`` tool; the server
  runs the searches and answers with ``server_tool_use`` / ``web_search_tool_result``
  blocks. A ``pause_turn`` answer is sent back as the assistant turn (server
  blocks included), as the API requires, until the model finishes.
- :class:`SearxngSearch`: ``GET <url>?q=<query>&format=json`` on a
  SearXNG-compatible endpoint (setting ``webSearch.searxngUrl``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from catui.errors import CatuiError, ProviderError
from catui.messages import Block
from catui.models.base import ModelProvider, ModelRequest
from catui.models.http_api.accumulate import MessageAccumulator
from catui.tools.web_search import SearchHit, SearchOutcome

SERVER_TOOL_TYPE = "web_search_20250305"
MAX_SERVER_SEARCHES = 8
"""How many searches the server may run for one WebSearch call (the API's ``max_uses``)."""
MAX_CONTINUATIONS = 4
"""How many ``pause_turn`` answers one call follows before it takes what it has."""
SEARXNG_TIMEOUT_S = 20.0
MAX_SEARXNG_RESULTS = 10

NO_BACKEND_REASON = (
    "WebSearch needs the Anthropic provider (server-side web search) or a search endpoint: set "
    '"webSearch": {"searxngUrl": "http://host:8888/search"} in settings'
)


class AnthropicServerSearch:
    """Searches through the Anthropic API's server-side web search tool."""

    name = "anthropic"

    def __init__(self, provider: ModelProvider, model: str, record_usage: Callable[[str, Mapping[str, Any]], None]):
        self.provider = provider
        self.model = model
        self.record_usage = record_usage

    async def search(self, query: str, allowed: list[str], blocked: list[str]) -> SearchOutcome:
        server_tool: dict[str, Any] = {"type": SERVER_TOOL_TYPE, "name": "web_search", "max_uses": MAX_SERVER_SEARCHES}
        if allowed:
            server_tool["allowed_domains"] = allowed
        if blocked:
            server_tool["blocked_domains"] = blocked
        messages: list[dict[str, Any]] = [
            {"role": "user", "content": f"Perform a web search for the query: {query}"}
        ]
        blocks: list[Block] = []
        searches = 0
        for _ in range(MAX_CONTINUATIONS + 1):
            request = ModelRequest(
                model=self.model, messages=messages, tools=[server_tool], max_tokens=4096,
                metadata={"query_source": "web_search"},
            )
            accumulator = MessageAccumulator()
            try:
                async for event in self.provider.stream(request):
                    accumulator.feed(event)
            except ProviderError as exc:
                raise CatuiError(str(exc)) from exc
            message = accumulator.message
            usage = message.get("usage") or {}
            self.record_usage(self.model, usage)
            searches += int((usage.get("server_tool_use") or {}).get("web_search_requests") or 0)
            content = list(message.get("content") or [])
            blocks.extend(content)
            if message.get("stop_reason") != "pause_turn":
                break
            # the server paused a long turn: send its blocks back unchanged so that it continues
            messages = [*messages, {"role": "assistant", "content": content}]
        return SearchOutcome(
            hits=_hits_of(blocks), summary=_text_of(blocks), server_blocks=blocks, searches=searches
        )


def _hits_of(blocks: list[Block]) -> list[SearchHit]:
    hits: list[SearchHit] = []
    seen: set[str] = set()
    for block in blocks:
        if block.get("type") != "web_search_tool_result":
            continue
        content = block.get("content")
        if isinstance(content, Mapping):  # {"type": "web_search_tool_result_error", "error_code": ...}
            raise CatuiError(f"the search server reported {content.get('error_code', 'an error')}")
        for item in content or []:
            url = str(item.get("url") or "")
            if url and url not in seen:
                seen.add(url)
                hits.append(SearchHit(title=str(item.get("title") or ""), url=url))
    return hits


def _text_of(blocks: list[Block]) -> str:
    return "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text").strip()


class SearxngSearch:
    """Searches a SearXNG-compatible JSON endpoint."""

    name = "searxng"

    def __init__(self, url: str) -> None:
        self.url = url

    async def search(self, query: str, allowed: list[str], blocked: list[str]) -> SearchOutcome:
        import httpx2  # lazy: paid only by a search, never at start-up

        try:
            async with httpx2.AsyncClient(timeout=SEARXNG_TIMEOUT_S) as client:
                response = await client.get(self.url, params={"q": query, "format": "json"})
        except httpx2.HTTPError as exc:
            raise CatuiError(f"cannot reach the search endpoint {self.url}: {type(exc).__name__}: {exc}") from exc
        if response.status_code != 200:
            raise CatuiError(f"the search endpoint {self.url} answered HTTP {response.status_code}")
        try:
            payload = response.json()
            raw_results = payload["results"]
        except (ValueError, KeyError, TypeError) as exc:
            raise CatuiError(
                f"the search endpoint {self.url} did not answer SearXNG JSON with a 'results' list ({exc})"
            ) from exc
        hits = [
            SearchHit(title=str(r.get("title") or ""), url=str(r["url"]), snippet=str(r.get("content") or "").strip())
            for r in raw_results
            if isinstance(r, Mapping) and isinstance(r.get("url"), str)
        ]
        return SearchOutcome(hits=hits[:MAX_SEARXNG_RESULTS] if not (allowed or blocked) else hits)


def searxng_url(settings: Mapping[str, Any]) -> str | None:
    """The ``webSearch.searxngUrl`` setting; raises a one-line CatuiError when it is not an http(s) URL."""
    section = settings.get("webSearch")
    if section is None:
        return None
    url = section.get("searxngUrl") if isinstance(section, Mapping) else None
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise CatuiError(
            'settings: webSearch.searxngUrl must be an http:// or https:// URL of a SearXNG JSON endpoint, '
            'e.g. {"webSearch": {"searxngUrl": "http://localhost:8888/search"}}'
        )
    return url
