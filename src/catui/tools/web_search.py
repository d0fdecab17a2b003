"""WebSearch: search the web through whichever backend the session has (observed schema, section 12).

The backends live in :mod:`catui.tools.web_search_backends`: the Anthropic API's
server-side search tool, or a SearXNG-compatible JSON endpoint named in settings.
Without either the tool is not offered at all (:func:`web_search_unavailable_reason`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol
from urllib.parse import urlparse

from catui.errors import CatuiError
from catui.messages import Block
from catui.permissions.context import PermissionRequest
from catui.tools.base import Tool, ToolContext, ToolResult

DESCRIPTION = """\
Search the web and get back result titles and links (with a short summary where the backend gives one). \
Use it for information newer than your training data or outside the project: current versions, \
documentation, error messages, news.

- query needs at least two characters.
- allowed_domains keeps only results from those domains; blocked_domains drops results from them \
(subdomains count: "python.org" matches "docs.python.org").
- After answering from search results, list the sources you used as Markdown links, under "Sources:".
- To read a result in full, call WebFetch with its URL."""


@dataclass
class SearchHit:
    """One result: its title and URL, and a snippet when the backend gives one."""

    title: str
    url: str
    snippet: str = ""


@dataclass
class SearchOutcome:
    """What a backend found. ``server_blocks`` are the API's ``server_tool_use`` / ``web_search_tool_result``
    blocks (Anthropic backend), kept in the call's structured result and so in the transcript."""

    hits: list[SearchHit]
    summary: str = ""
    server_blocks: list[Block] = field(default_factory=list)
    searches: int = 1


class SearchBackend(Protocol):
    """Where WebSearch sends its queries."""

    name: str

    async def search(self, query: str, allowed: list[str], blocked: list[str]) -> SearchOutcome:
        """Run ``query``; raises :class:`catui.errors.CatuiError` with a one-line reason on failure."""
        ...


def domain_matches(url: str, domains: list[str]) -> bool:
    """Whether ``url``'s host is one of ``domains`` or a subdomain of one."""
    host = (urlparse(url).hostname or "").lower()
    return any(host == d.lower().lstrip(".") or host.endswith("." + d.lower().lstrip(".")) for d in domains)


def filter_hits(hits: list[SearchHit], allowed: list[str], blocked: list[str]) -> list[SearchHit]:
    """Apply the call's domain lists (backends that cannot filter server-side rely on this)."""
    return [h for h in hits if (not allowed or domain_matches(h.url, allowed)) and not domain_matches(h.url, blocked)]


class WebSearchTool(Tool):
    name = "WebSearch"
    input_model_ref: ClassVar[str] = "catui.tools.web_search_input:WebSearchInput"
    read_only = True

    def __init__(self, backend: SearchBackend) -> None:
        self.backend = backend

    @property
    def description(self) -> str:
        return DESCRIPTION

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        return PermissionRequest(tool_name=self.name, tool_input=args.model_dump(by_alias=True), read_only=True)

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.web_search_input import WebSearchInput
        assert isinstance(args, WebSearchInput)
        allowed, blocked = args.allowed_domains or [], args.blocked_domains or []
        if allowed and blocked:
            return ToolResult(
                "Give either allowed_domains or blocked_domains in one WebSearch call, not both.", is_error=True
            )
        try:
            outcome = await self.backend.search(args.query, allowed, blocked)
        except CatuiError as exc:
            return ToolResult(f"Web search for {args.query!r} failed: {exc}", is_error=True)
        hits = filter_hits(outcome.hits, allowed, blocked)
        lines = [f'Web search results for query: "{args.query}"', ""]
        if hits:
            lines += [f"- [{h.title or h.url}]({h.url})" + (f": {h.snippet}" if h.snippet else "") for h in hits]
        else:
            lines.append("No results.")
        if outcome.summary:
            lines += ["", outcome.summary]
        lines += ["", "Cite the sources you use as Markdown links under \"Sources:\" in your answer."]
        data = {
            "query": args.query,
            "backend": self.backend.name,
            "results": [{"title": h.title, "url": h.url} for h in hits],
            "searches": outcome.searches,
        }
        if outcome.server_blocks:
            data["server_blocks"] = outcome.server_blocks
        counted = {"web_search_requests": outcome.searches} if outcome.searches else None
        return ToolResult("\n".join(lines), data=data, server_tool_use=counted)
