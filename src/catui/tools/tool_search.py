"""Deferred tools and ToolSearch: send some tools by name only, load them on request (observed-cc-now.md §1).

A :class:`DeferredToolView` decides which of a session's tools a request sends
(``SessionConfig.tool_view``). Deferred tools are left out; their names are
listed in ToolSearch's description, and a ``DeferredToolPlaceholder`` (no
properties, ``defer_loading: true``) stands in the list for them. The model
loads tools with ToolSearch: ``select:A,B`` by name, or words matched against
names and descriptions; the result is one ``tool_reference`` block per tool and
``Tool loaded.``, and from the next request the tools are sent at their
name-sorted place. A deferred tool called without being loaded still runs.

Two modes:

- ``current`` (the current contract, catui.config.compat): every tool outside
  :data:`ALWAYS_LOADED` is deferred;
- ``auto`` (the 2.1.92 profile): nothing is deferred until MCP tools would take
  more than :data:`AUTO_SHARE` of the model's context window; then the MCP tools
  are, so that a session with hundreds of them still fits. Below the threshold
  the request is exactly what it was without this view (ToolSearch not sent).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Literal

from catui.permissions.context import PermissionRequest
from catui.tools.base import Tool, ToolContext, ToolResult

TOOL_SEARCH = "ToolSearch"
PLACEHOLDER_NAME = "DeferredToolPlaceholder"
ALWAYS_LOADED: frozenset[str] = frozenset({
    "Agent", "Bash", "Edit", "ListAgents", "Read", "ReportFindings", "ScheduleWakeup", "Skill", TOOL_SEARCH,
    "Workflow", "Write", "StructuredOutput",
})
"""The tools the current contract sends in full (2.1.332's twelve, less the placeholder; StructuredOutput is
catui's typed-result tool and must be callable at once)."""

AUTO_SHARE = 0.10
"""The 2.1.92 profile defers MCP tools once their schemas would take more than this share of the context window
(docs/decisions.md)."""

CHARS_PER_TOKEN = 4

PLACEHOLDER: dict[str, Any] = {
    "name": PLACEHOLDER_NAME,
    "description": "Stands for the deferred tools named in ToolSearch's description; load them with ToolSearch.",
    "input_schema": {"type": "object", "properties": {}},
    "defer_loading": True,
}

Mode = Literal["current", "auto"]

SEARCH_ENV = "ENABLE_TOOL_SEARCH"


def auto_share(env: Mapping[str, str]) -> float | None:
    """The 2.1.92 profile's threshold from Claude Code's ``ENABLE_TOOL_SEARCH``: ``auto`` (default, 10%),
    ``auto:N`` (N percent), ``true`` (always defer MCP tools), ``false`` (never). A bad value keeps the default."""
    raw = (env.get(SEARCH_ENV) or "").strip().lower()
    if raw in ("1", "true", "yes", "on"):
        return 0.0
    if raw in ("0", "false", "no", "off"):
        return None
    if raw.startswith("auto:"):
        try:
            return max(0.0, float(raw[5:])) / 100
        except ValueError:
            return AUTO_SHARE
    return AUTO_SHARE


class DeferredToolView:
    """Which tools a session's requests send; remembers what ToolSearch loaded. One per session."""

    def __init__(self, mode: Mode, *, context_window: Callable[[], int] | None = None,
                 share: float | None = AUTO_SHARE) -> None:
        self.mode = mode
        self.context_window = context_window or (lambda: 200_000)
        self.share = share
        """``auto`` mode: the share of the window past which MCP tools are deferred (0: always; None: never)."""
        self.loaded: set[str] = set()

    def fork(self) -> DeferredToolView:
        """A view for a child session: same mode, nothing loaded yet."""
        return DeferredToolView(self.mode, context_window=self.context_window, share=self.share)

    def deferred(self, tools: Iterable[Tool]) -> list[Tool]:
        """The tools held back now (loaded ones excluded), by name."""
        tools = list(tools)
        if self.mode == "current":
            held = [t for t in tools if t.name not in ALWAYS_LOADED]
        else:
            mcp = [t for t in tools if t.name.startswith("mcp__")]
            size = sum(t.api_chars() for t in mcp) / CHARS_PER_TOKEN
            over = self.share is not None and size > self.share * self.context_window()
            held = mcp if mcp and over else []
        return sorted((t for t in held if t.name not in self.loaded), key=lambda t: t.name)

    def __call__(self, tools: list[Tool]) -> list[dict[str, Any]]:
        """The ``tools`` of the next request."""
        held = {t.name for t in self.deferred(tools)}
        if not held:
            return [t.to_api() for t in tools if t.name != TOOL_SEARCH]
        sent = sorted((t for t in tools if t.name not in held), key=lambda t: t.name)
        api = [t.to_api() for t in sent]
        # 2.1.332 sends the placeholder just before the last tool of the sorted list.
        api.insert(max(0, len(api) - 1), PLACEHOLDER)
        return api

    def load(self, names: Iterable[str]) -> None:
        self.loaded.update(names)


class ToolSearchTool(Tool):
    """Loads deferred tools (see the module docstring). ``view`` and ``session_tools`` (the main session's) name
    the deferred tools in the description; a call loads into the calling session's own view."""

    name: ClassVar[str] = TOOL_SEARCH
    input_model_ref: ClassVar[str] = "catui.tools.tool_search_input:ToolSearchInput"
    read_only: ClassVar[bool] = True

    def __init__(self, view: DeferredToolView | None = None,
                 session_tools: Callable[[], list[Tool]] | None = None) -> None:
        self.view = view
        self.session_tools = session_tools

    @property
    def description(self) -> str:
        text = ("Load tools that are available but not yet described to you. Their names are listed below; call "
                'ToolSearch with query "select:<name>[,<name>…]" to load those tools, or with words describing '
                "what you need to load the best matches. A loaded tool can be called from your next message on.")
        if self.view is not None and self.session_tools is not None:
            names = deferred_names_note(self.view, self.session_tools())
            if names:
                text += f"\n\nDeferred tools:\n{names}"
        return text

    def input_schema(self) -> dict[str, Any]:
        schema = super().input_schema()
        schema.pop("description", None)
        schema["properties"]["max_results"]["type"] = "number"
        schema["required"] = ["query"]
        return schema

    def is_concurrency_safe(self, args: Any) -> bool:
        return True

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        return PermissionRequest(tool_name=self.name, tool_input=args.model_dump(exclude_none=True), read_only=True,
                                 subject="")

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.tool_search_input import ToolSearchInput
        assert isinstance(args, ToolSearchInput)
        session = ctx.session
        view = getattr(getattr(session, "config", None), "tool_view", None)
        tools: list[Tool] = list(getattr(session, "tools", []) or [])
        if not isinstance(view, DeferredToolView):
            return ToolResult("Every tool of this session is already loaded; call it directly.")
        held = view.deferred(tools)
        query = args.query.strip()
        if query.lower().startswith("select:"):
            wanted = [n.strip() for n in query[len("select:"):].split(",") if n.strip()]
            by_name = {t.name: t for t in tools}
            found = [n for n in wanted if n in by_name]
            missing = [n for n in wanted if n not in by_name]
            if not found:
                return ToolResult(f"No tool named {', '.join(missing)}. Deferred tools: "
                                  f"{', '.join(t.name for t in held) or 'none'}.", is_error=True)
        else:
            found = rank(held, query)[: max(1, int(args.max_results))]
            if not found:
                return ToolResult(f"No deferred tool matches {query!r}. Deferred tools: "
                                  f"{', '.join(t.name for t in held) or 'none'}.")
        view.load(found)
        blocks: list[dict[str, Any]] = [{"type": "tool_reference", "tool_name": n} for n in found]
        blocks.append({"type": "text", "text": "Tool loaded."})
        return ToolResult(blocks, data={"loaded": found})


def rank(tools: list[Tool], query: str) -> list[str]:
    """Tool names by how many of the query's words their name (counted twice) and description contain."""
    words = [w for w in re.split(r"[^a-z0-9_]+", query.lower()) if w]
    scored = []
    for tool in tools:
        name = tool.name.lower()
        text = f"{name} {tool.description.lower()}"
        score = sum(2 * (w in name) + (w in text) for w in words)
        if score:
            scored.append((-score, tool.name))
    return [name for _, name in sorted(scored)]


def deferred_names_note(view: DeferredToolView, tools: list[Tool]) -> str:
    """The names of the deferred tools, one a line (what ToolSearch's description ends with)."""
    return "\n".join(t.name for t in view.deferred(tools))
